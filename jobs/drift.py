"""Drift of judge configurations against a benchmark's sentinels: what a configuration is, what a verdict is, how a
finished check is scored, and the refusal of a drifted configuration (``judge_run_create`` asks it).

Kept apart from ``jobs.sentinels`` (pinning, launching checks, accepting) because the judge-run service imports it:
this module imports no service.

- A **judge configuration** is what decides a judge's answers: the judge model, the endpoint it is asked at, the
  prompt template's version and the sampling parameters (temperature, token limit, sample). Its ``key`` is a short
  hash of them; two runs with equal configurations have equal keys whatever else differs (label, concurrency).
- A **verdict** is a stored answer's decision, whatever the protocol: the kind's ``recorded`` answers (the answers a
  replay gives: ``{"winner": "A", "main_reason": ...}``, ``{"verdict": ..., "reason": ...}``, ``{"answer": "yes"}``)
  without their prose (reasons, weaknesses, confidence), as canonical JSON. Two verdicts agree when equal.
- A check's **agreement** is the share of the frozen verdicts (one per sentinel subject and order) its run gave
  equally; a verdict it lacks (invalid, failed, a subject its plan no longer has) counts as a disagreement. Its
  agreement with the **previous check** of the same configuration is the share of the frozen (subject, order)
  keys on which both checks gave the same verdict. A check has **drifted** when either share is below the set's
  tolerance; a failed run's check is recorded but not judged (resume it: the step scores it again).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from django.urls import reverse
from django.utils import timezone

from arena.models import Benchmark, JudgeRun

from .lifecycle import RunError
from .models import SentinelCheck, SentinelItem, SentinelSet
from .subjects import subjects_named

#: The run parameter naming the sentinel set a check run re-judges.
SENTINEL_PARAMETER = "sentinels"
#: What a check's durable step does, as the run's page says it.
STEP_TITLE = "compare the verdicts with the frozen sentinel verdicts"
#: Parts of a recorded answer that explain a decision rather than make it.
PROSE = frozenset({"reason", "reasons", "main_reason", "weakness_a", "weakness_b", "confidence"})
CONFIG_FIELDS = ("judge_model", "endpoint", "prompt_version", "temperature", "max_tokens", "sample")


class DriftedConfiguration(RunError):
    """A benchmark that refuses drifted configurations refused a run from one."""


def configuration(
    *,
    judge_model: str,
    endpoint: str,
    prompt_version: str,
    temperature: float | None,
    max_tokens: int | None,
    sample: int = 0,
) -> dict[str, Any]:
    """A judge configuration as a JSON-able dict, with its ``key``."""
    config = {
        "judge_model": judge_model.strip(),
        "endpoint": endpoint.strip().rstrip("/"),
        "prompt_version": prompt_version,
        "temperature": None if temperature is None else float(temperature),
        "max_tokens": max_tokens,
        "sample": int(sample or 0),
    }
    text = json.dumps([config[f] for f in CONFIG_FIELDS], separators=(",", ":"), ensure_ascii=False)
    return {**config, "key": hashlib.sha256(text.encode()).hexdigest()[:12]}


def configuration_of(run: JudgeRun) -> dict[str, Any]:
    """The judge configuration a stored run was made with (a replay's endpoint is the run it replays)."""
    p = run.parameters or {}
    endpoint = p.get("base_url") or ""
    if run.provider == JudgeRun.Provider.RECORDED:
        endpoint = f"recorded:{p.get('replay_of')}"
    return configuration(
        judge_model=run.judge_model,
        endpoint=endpoint,
        prompt_version=run.prompt_version,
        temperature=p.get("temperature"),
        max_tokens=p.get("max_tokens"),
        sample=p.get("sample") or 0,
    )


def describe(config: dict[str, Any]) -> str:
    """ "Judge-X at http://host/v1, template v1, temperature 0.0, max 1024 tokens": how pages and refusals name it."""
    sample = f", sample {config['sample']}" if config.get("sample") else ""
    return (
        f"{config['judge_model']} at {config['endpoint']}, template {config['prompt_version']}, "
        f"temperature {config['temperature']}, max {config['max_tokens']} tokens{sample}"
    )


def verdict_of(answer: dict[str, Any]) -> str:
    """The decision of a recorded answer as canonical JSON (its prose left out)."""
    decision = {k: v for k, v in answer.items() if k not in PROSE}
    return json.dumps(decision, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def verdict_label(verdict: str) -> str:
    """A verdict as people read it: the value of a one-field decision ("A", "yes"), else the JSON."""
    try:
        decision = json.loads(verdict)
    except ValueError:
        return verdict
    if isinstance(decision, dict) and len(decision) == 1:
        return str(next(iter(decision.values())))
    return verdict


def run_verdicts(run: JudgeRun) -> dict[tuple[int, str], str]:
    """The run's accepted verdicts by (subject id, order), through its kind's ``recorded`` answers."""
    kind = subjects_named(run.subjects)
    if kind is None:
        return {}
    return {key: verdict_of(answer) for key, answer in kind.recorded(run).items()}


# --------------------------------------------------------------------------- scoring a check (the durable step)


def check_of(run: JudgeRun) -> int | None:
    """The sentinel set a run re-checks, or None for an ordinary run."""
    value = (run.parameters or {}).get(SENTINEL_PARAMETER)
    return int(value) if value else None


def check_record(run: JudgeRun) -> None:
    """Score a check run that just ended (inside the transaction that ends it: ``jobs.steps``). Idempotent: a check
    already scored for a completed run is left alone; a failed run's check is scored again when it ends again."""
    sentinel_set = SentinelSet.objects.filter(pk=check_of(run)).first()
    if sentinel_set is None:
        return  # pinned anew since: there is nothing this run can be compared with
    config = configuration_of(run)
    check, _ = SentinelCheck.objects.select_for_update().get_or_create(
        run=run, defaults={"sentinel_set": sentinel_set, "config_key": config["key"], "configuration": config}
    )
    if check.done_at is not None and check.run_status == JudgeRun.Status.COMPLETED:
        return
    frozen = dict(
        (
            ((s, o), v)
            for s, o, v in SentinelItem.objects.filter(sentinel_set=sentinel_set).values_list("subject_id", "order", "verdict")
        )
    )
    got = run_verdicts(run)
    check.compared = len(frozen)
    check.agreed = sum(1 for key, verdict in frozen.items() if got.get(key) == verdict)
    check.missing = sum(1 for key in frozen if key not in got)
    check.agreement = check.agreed / len(frozen) if frozen else None
    check.previous = (
        SentinelCheck.objects.filter(sentinel_set=sentinel_set, config_key=check.config_key, done_at__isnull=False)
        .exclude(pk=check.pk)
        .filter(run_status=JudgeRun.Status.COMPLETED)
        .order_by("-done_at", "-id")
        .select_related("run")
        .first()
    )
    check.previous_agreement = None
    if check.previous is not None and frozen:
        before = run_verdicts(check.previous.run)
        check.previous_agreement = sum(1 for key in frozen if key in got and got.get(key) == before.get(key)) / len(frozen)
    check.run_status = run.status
    shares = [s for s in (check.agreement, check.previous_agreement) if s is not None]
    check.drifted = run.status == JudgeRun.Status.COMPLETED and any(s < sentinel_set.tolerance for s in shares)
    check.done_at = timezone.now()
    check.save()


# --------------------------------------------------------------------------- the refusal


def scored_checks() -> QuerySet[SentinelCheck]:
    """Checks scored from a completed run, latest first: what "a configuration's last check" means (the refusal,
    the sentinels page, the dashboard's alert)."""
    return SentinelCheck.objects.filter(done_at__isnull=False, run_status=JudgeRun.Status.COMPLETED).order_by("-done_at", "-id")


def last_check(sentinel_set: SentinelSet, config_key: str) -> SentinelCheck | None:
    """The configuration's latest scored check of a completed run."""
    return scored_checks().filter(sentinel_set=sentinel_set, config_key=config_key).first()


def refuse_drifted(benchmark: Benchmark, config: dict[str, Any]) -> None:
    """Raise :class:`DriftedConfiguration` when the benchmark refuses drifted configurations and this one's last check
    drifted and has not been accepted; the message names the check, its agreement and how to accept it."""
    sentinel_set = SentinelSet.objects.filter(benchmark=benchmark, refuse_drifted=True).first()
    if sentinel_set is None:
        return
    check = last_check(sentinel_set, config["key"])
    if check is None or not check.drifted or check.accepted_at is not None:
        return
    page = reverse("jobs:sentinels", args=[benchmark.pk])
    agreement = "none" if check.agreement is None else f"{check.agreement:.0%}"
    previous = "" if check.previous_agreement is None else f" and {check.previous_agreement:.0%} with its previous check"
    raise DriftedConfiguration(
        f"{benchmark} refuses drifted judge configurations, and configuration {config['key']} ({describe(config)}) "
        f"drifted: sentinel check {check.pk} (run {check.run_id}, {check.done_at:%Y-%m-%d %H:%M} UTC) agreed with the "
        f"frozen verdicts on {agreement} of {check.compared}{previous}, below the tolerance of "
        f"{sentinel_set.tolerance:.0%}. A researcher accepts it on the sentinels page ({page}) or with "
        f"`manage.py sentinels {benchmark.pk} --accept {config['key']}`; or re-check it after fixing the endpoint."
    )


def check_created(*, run: JudgeRun, sentinel_set: SentinelSet, scheduled: bool) -> SentinelCheck:
    """The check row of a check run just made (the step makes it too, if the launch died before this)."""
    config = configuration_of(run)
    with transaction.atomic():
        check, _ = SentinelCheck.objects.get_or_create(
            run=run,
            defaults={"sentinel_set": sentinel_set, "config_key": config["key"], "configuration": config, "scheduled": scheduled},
        )
    return check


def request_configuration(request: Any, prompt_version: str) -> dict[str, Any]:  # noqa: ANN401
    """The judge configuration of a run request (``jobs.services.JudgeRunRequest``) with its resolved template."""
    endpoint = request.base_url or ""
    if request.provider == JudgeRun.Provider.RECORDED:
        endpoint = f"recorded:{request.replay_of.pk if request.replay_of else ''}"
    return configuration(
        judge_model=request.judge_model,
        endpoint=endpoint,
        prompt_version=prompt_version,
        temperature=request.temperature,
        max_tokens=request.max_tokens,
        sample=request.sample,
    )


def sentinel_tasks(make_tasks: Any, *, subject_field: str, set_id: int) -> Any:  # noqa: ANN401
    """A check run's task factory: the kind's own plan, kept to the sentinel subjects."""
    keep = set(SentinelItem.objects.filter(sentinel_set_id=set_id).values_list("subject_id", flat=True))
    if not keep:
        raise RunError(f"sentinel set {set_id} has no sentinels (pin them again with `manage.py sentinels BENCHMARK --pin RUN`)")
    attribute = f"{subject_field}_id"
    return lambda run: [task for task in make_tasks(run) if getattr(task, attribute) in keep]
