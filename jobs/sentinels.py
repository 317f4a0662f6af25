"""Drift sentinels (issue 27): a benchmark's pinned sentinel set, re-checks of it by judge configurations (by hand or on
a schedule), acceptance of a drifted configuration, and what the sentinels page and ``manage.py sentinels`` show.

For every protocol alike: the sentinels are subjects of a completed judge run of any registered judging task kind
(``jobs.subjects``), with the verdicts that run gave them frozen (``jobs.drift``). A **check** is an ordinary judge run
made through ``judge_run_create`` with the reference run's run type, kind, selection, seed, orders and options, whose
tasks are kept to the sentinel subjects (``JudgeRunRequest.sentinels``); the engine's durable step scores it once its
verdicts are in. Scheduled checks are launched by Celery beat (``jobs.tasks.sentinels_check_due_task``): one per set
and schedule slot, made idempotent by the run's unique launch key.

What is judged, how verdicts compare and when a configuration has drifted: ``jobs.drift``.
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import F, OuterRef, Subquery
from django.utils import timezone

from arena.launch import without_credentials
from arena.models import Benchmark, JudgeRun

from . import drift
from .lifecycle import AlreadyLaunched, RunError, endpoint_url_required
from .models import SentinelCheck, SentinelItem, SentinelSet
from .services import JudgeRunRequest, judge_run_create, judge_run_launch
from .subjects import subjects_of

log = logging.getLogger(__name__)

#: The tolerance a benchmark's sentinels start with: a check agreeing on fewer of the frozen verdicts has drifted.
DEFAULT_TOLERANCE = 0.9
#: The checks shown per configuration (page, chart, --status): the newest ones.
HISTORY = 50
#: How often a schedule may check, at most and at least: a check is a judge run, and beat looks every minute.
CHECK_EVERY_MIN = timedelta(minutes=5)
CHECK_EVERY_MAX = timedelta(days=365)


def sentinels_pin(*, benchmark: Benchmark, run: JudgeRun, size: int, seed: int = 0, by: Any = None) -> SentinelSet:  # noqa: ANN401
    """Pin ``size`` subjects of a completed run of the benchmark (drawn with ``seed``) as its sentinels, with the
    verdicts the run gave them in each order frozen. Replaces the benchmark's sentinels and their checks, keeping
    its settings (tolerance, refusal, schedule)."""
    if run.benchmark_id != benchmark.pk:
        raise RunError(f"run {run.pk} judged {run.benchmark}, not {benchmark}: pin sentinels from a run of {benchmark}")
    if run.status != JudgeRun.Status.COMPLETED:
        raise RunError(f"run {run.pk} is {run.status}: sentinels are pinned from a completed run (its verdicts are frozen)")
    if size < 1:
        raise RunError(f"--size must be at least 1, got {size}")
    verdicts = drift.run_verdicts(run)
    subjects = sorted({subject for subject, _ in verdicts})
    if not subjects:
        raise RunError(f"run {run.pk} has no accepted verdicts to freeze; pin a run that has")
    chosen = set(random.Random(seed).sample(subjects, min(size, len(subjects))))
    p = run.parameters or {}
    kind = subjects_of(run)
    plan = {
        "run_type": run.run_type,
        "selection": p.get(kind.selection_key) or "all",
        "seed": p.get("seed") or 0,
        "orders": p.get("orders") or ["original", "reverse"],
        "options": p.get("options") or {},
        "orders_judged": sorted({order for _, order in verdicts}),
    }
    with transaction.atomic():
        old = SentinelSet.objects.select_for_update().filter(benchmark=benchmark).first()
        settings = {"tolerance": DEFAULT_TOLERANCE, "refuse_drifted": False, "check_every": None, "scheduled": {}}
        if old is not None:
            settings = {name: getattr(old, name) for name in settings}
            old.delete()
        sentinel_set = SentinelSet.objects.create(
            benchmark=benchmark,
            subjects=run.subjects,
            reference_run=run,
            reference=drift.configuration_of(run),
            plan=plan,
            seed=seed,
            pinned_by=by,
            **settings,
        )
        SentinelItem.objects.bulk_create(
            SentinelItem(sentinel_set=sentinel_set, subject_id=subject, order=order, verdict=verdict)
            for (subject, order), verdict in sorted(verdicts.items())
            if subject in chosen
        )
    return sentinel_set


def sentinels_of(benchmark: Benchmark) -> SentinelSet:
    found = SentinelSet.objects.filter(benchmark=benchmark).first()
    if found is None:
        raise RunError(f"{benchmark} has no sentinels; pin them with `manage.py sentinels {benchmark.pk} --pin RUN --size N`")
    return found


@dataclass(frozen=True)
class CheckConfig:
    """The judge configuration a check asks (what ``--check`` and a schedule name)."""

    judge_model: str
    base_url: str
    api_key_env: str | None = None
    prompt_version: str | None = None  # None: the reference's template
    temperature: float | None = 0.0
    max_tokens: int | None = 1024
    sample: int = 0

    def __post_init__(self) -> None:
        # Every way to a configuration (the command's --check and --every, a schedule read back by beat) comes here,
        # so a URL holding a key (user:key@host, ?api_key=...) is refused before it is stored in the schedule or
        # shown by --status; the message never repeats the URL's secret part (arena.launch.endpoint_url_problem).
        if not str(self.judge_model or "").strip():
            raise RunError("the judge model (--model) is empty; give the model the endpoint serves, e.g. --model judge-x")
        object.__setattr__(self, "base_url", endpoint_url_required(self.base_url, what="the judge's base URL (--base-url)"))

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def sentinel_check_launch(
    *,
    sentinel_set: SentinelSet,
    config: CheckConfig,
    launched_by: Any = None,  # noqa: ANN401
    launch_key: str = "",
    scheduled: bool = False,
) -> JudgeRun:
    """Make and launch a judge run over the sentinels with ``config`` (``judge_run_create``: every check it makes of a
    run holds); its step scores it when it ends. A ``launch_key`` already used raises ``AlreadyLaunched``."""
    plan = sentinel_set.plan
    request = JudgeRunRequest(
        benchmark=sentinel_set.benchmark,
        judge_model=config.judge_model,
        base_url=config.base_url,
        api_key_env=config.api_key_env or None,
        run_type=plan.get("run_type") or "holistic",
        task_kind=sentinel_set.subjects,
        prompt_version=config.prompt_version or sentinel_set.reference.get("prompt_version") or None,
        select=plan.get("selection") or "all",
        seed=int(plan.get("seed") or 0),
        orders=tuple(plan.get("orders") or ("original", "reverse")),
        options=dict(plan.get("options") or {}),
        temperature=config.temperature,
        max_tokens=config.max_tokens,
        sample=config.sample,
        label=f"sentinels-{timezone.now():%Y%m%d-%H%M%S%f}",
        launch_key=launch_key,
        sentinels=sentinel_set.pk,
    )
    with transaction.atomic():
        run, _ = judge_run_create(request=request, launched_by=launched_by)
        drift.check_created(run=run, sentinel_set=sentinel_set, scheduled=scheduled)
        judge_run_launch(run=run)  # its driver is enqueued once this commits
    return run


def sentinels_settings_update(
    *,
    sentinel_set: SentinelSet,
    tolerance: float | None = None,
    refuse_drifted: bool | None = None,
    check_every: timedelta | None = None,
    scheduled: CheckConfig | None = None,
    unschedule: bool = False,
) -> SentinelSet:
    """Change the benchmark's drift settings; what is None is left as it is."""
    if tolerance is not None:
        if not 0 <= tolerance <= 1:
            raise RunError(f"the tolerance is a share of verdicts between 0 and 1, got {tolerance}")
        sentinel_set.tolerance = tolerance
    if refuse_drifted is not None:
        sentinel_set.refuse_drifted = refuse_drifted
    if unschedule:
        sentinel_set.check_every, sentinel_set.scheduled = None, {}
    elif check_every is not None:
        if scheduled is None and not sentinel_set.scheduled:
            raise RunError("a schedule needs the judge configuration it checks: give --model and --base-url with --every")
        if not CHECK_EVERY_MIN <= check_every <= CHECK_EVERY_MAX:
            raise RunError(
                f"--every is the minutes between scheduled checks, from {CHECK_EVERY_MIN.total_seconds() / 60:g} to "
                f"{CHECK_EVERY_MAX.total_seconds() / 60:g} (a year); got {check_every.total_seconds() / 60:g} minutes"
            )
        sentinel_set.check_every = check_every
    if scheduled is not None:
        sentinel_set.scheduled = scheduled.as_dict()
    sentinel_set.save()
    return sentinel_set


def sentinels_accept(*, sentinel_set: SentinelSet, config: str, by: Any) -> SentinelCheck:  # noqa: ANN401
    """Accept the drifted last check of a configuration (its key, or its judge model when that names one): the
    benchmark takes runs from it again. Records who accepted it and when."""
    keys = set(sentinel_set.checks.values_list("config_key", flat=True))
    if config not in keys:
        by_model = {c.config_key for c in sentinel_set.checks.all() if c.configuration.get("judge_model") == config}
        if len(by_model) > 1:
            raise RunError(f"judge {config!r} has several configurations here ({', '.join(sorted(by_model))}); name one")
        keys_named = by_model
    else:
        keys_named = {config}
    if not keys_named:
        raise RunError(f"no sentinel check of {config!r} on {sentinel_set.benchmark}; `--status` lists the configurations")
    key = keys_named.pop()
    with transaction.atomic():
        check = drift.last_check(sentinel_set, key)
        if check is None or not check.drifted:
            raise RunError(f"configuration {key}'s last check did not drift: there is nothing to accept")
        check = SentinelCheck.objects.select_for_update().get(pk=check.pk)
        if check.accepted_at is None:
            check.accepted_by, check.accepted_at = by, timezone.now()
            check.save(update_fields=["accepted_by", "accepted_at"])
    return check


# --------------------------------------------------------------------------- the schedule (Celery beat)


def schedule_slot(sentinel_set: SentinelSet, now: datetime) -> int | None:
    """The schedule's slot ``now`` falls in (its number of whole intervals since the epoch); None: not scheduled."""
    if sentinel_set.check_every is None or not sentinel_set.scheduled:
        return None
    return int(now.timestamp() // max(sentinel_set.check_every.total_seconds(), 1))


def sentinels_check_due(*, now: datetime | None = None) -> list[int]:
    """Launch the scheduled check of every set whose current slot has none yet; returns the runs launched. Idempotent:
    a slot's check has the launch key ``sentinels-SET-SLOT``, so a second call (or a second beat) launches nothing."""
    now = now or timezone.now()
    launched = []
    for sentinel_set in SentinelSet.objects.filter(check_every__isnull=False).select_related("benchmark"):
        slot = schedule_slot(sentinel_set, now)
        if slot is None:
            continue
        key = f"sentinels-{sentinel_set.pk}-{slot}"
        if JudgeRun.objects.filter(launch_key=key).exists():
            continue
        try:
            run = sentinel_check_launch(
                sentinel_set=sentinel_set, config=CheckConfig(**sentinel_set.scheduled), launch_key=key, scheduled=True
            )
        except AlreadyLaunched:
            continue
        except (RunError, TypeError) as exc:  # a schedule that cannot run says why in the log and leaves the others be
            log.warning("the scheduled sentinel check of %s could not be launched: %s", sentinel_set.benchmark, exc)
            continue
        launched.append(run.pk)
    return launched


# --------------------------------------------------------------------------- what pages and --status show


def _check_row(check: SentinelCheck) -> dict[str, Any]:
    return {
        "check": check.pk,
        "run": check.run_id,
        "scheduled": check.scheduled,
        "created_at": check.created_at.isoformat(),
        "done_at": check.done_at.isoformat() if check.done_at else None,
        "run_status": check.run_status or "pending",
        "compared": check.compared,
        "agreed": check.agreed,
        "missing": check.missing,
        "agreement": check.agreement,
        "previous_check": check.previous_id,
        "previous_agreement": check.previous_agreement,
        "drifted": check.drifted,
        "accepted_by": check.accepted_by.get_username() if check.accepted_by else None,
        "accepted_at": check.accepted_at.isoformat() if check.accepted_at else None,
    }


def _scheduled_shown(scheduled: dict[str, Any]) -> dict[str, Any]:
    """The stored schedule as shown: its endpoint without a user name, password, query or fragment, in case a schedule
    stored before :class:`CheckConfig` refused them holds a key (such a schedule no longer launches; beat logs why)."""
    if not scheduled.get("base_url"):
        return scheduled
    return {**scheduled, "base_url": without_credentials(str(scheduled["base_url"]))}


def sentinels_status(sentinel_set: SentinelSet) -> dict[str, Any]:
    """The sentinels, the settings and, per judge configuration, its checks over time (oldest first) and whether it
    is refused now: what ``--status --json`` prints and the sentinels page shows."""
    checks = list(sentinel_set.checks.select_related("accepted_by").order_by("created_at", "id"))
    configurations: dict[str, dict[str, Any]] = {}
    for check in checks:
        entry = configurations.setdefault(
            check.config_key,
            {"key": check.config_key, "configuration": check.configuration, "label": drift.describe(check.configuration)},
        )
        entry.setdefault("checks", []).append(_check_row(check))
    for key, entry in configurations.items():
        entry["checks"] = entry["checks"][-HISTORY:]
        last = drift.last_check(sentinel_set, key)
        entry["last"] = _check_row(last) if last is not None else None
        entry["alert"] = bool(last is not None and last.drifted and last.accepted_at is None)
        entry["refused"] = entry["alert"] and sentinel_set.refuse_drifted
    items = list(sentinel_set.items.order_by("subject_id", "order").values("subject_id", "order", "verdict"))
    return {
        "benchmark": sentinel_set.benchmark_id,
        "subjects": sentinel_set.subjects,
        "reference_run": sentinel_set.reference_run_id,
        "reference": sentinel_set.reference,
        "seed": sentinel_set.seed,
        "pinned_at": sentinel_set.pinned_at.isoformat(),
        "tolerance": sentinel_set.tolerance,
        "refuse_drifted": sentinel_set.refuse_drifted,
        "check_every_seconds": sentinel_set.check_every.total_seconds() if sentinel_set.check_every else None,
        "scheduled": _scheduled_shown(sentinel_set.scheduled),
        "sentinels": [{**item, "verdict": drift.verdict_label(item["verdict"])} for item in items],
        "subject_count": len({item["subject_id"] for item in items}),
        "configurations": list(configurations.values()),
    }


def sentinel_alerts() -> list[dict[str, Any]]:
    """Every configuration whose last check drifted and is not accepted, over all benchmarks (the dashboard's alert).

    One query whatever the number of benchmarks and configurations: each drifted, unaccepted check is kept when it
    is its configuration's latest scored check (``jobs.drift.scored_checks``, as a subquery)."""
    latest = drift.scored_checks().filter(sentinel_set=OuterRef("sentinel_set"), config_key=OuterRef("config_key"))
    checks = (
        drift.scored_checks()
        .filter(drifted=True, accepted_at__isnull=True)
        .annotate(latest=Subquery(latest.values("id")[:1]))
        .filter(id=F("latest"))
        .select_related("sentinel_set__benchmark")
        .order_by("sentinel_set_id", "config_key")
    )
    return [{"set": c.sentinel_set, "benchmark": c.sentinel_set.benchmark, "check": c} for c in checks]


# --------------------------------------------------------------------------- the chart (server-rendered SVG)

#: Colours of the configurations' lines, in turn (readable on white, told apart by their markers too).
COLOURS = ("#1f5fa8", "#b3541e", "#2e7d32", "#7b3fa0", "#8a6d00", "#00838f")
MARKERS = ("circle", "square")


@dataclass(frozen=True)
class ChartPoint:
    x: float
    y: float
    text: str


@dataclass(frozen=True)
class ChartLine:
    key: str
    label: str
    colour: str
    marker: str
    path: str
    points: list[ChartPoint]
    legend_x: float


@dataclass(frozen=True)
class AgreementChart:
    width: int
    height: int
    left: int
    right: int
    top: int
    bottom: int
    tolerance_y: float
    ticks: list[tuple[float, str]]
    lines: list[ChartLine]


def agreement_chart(status: dict[str, Any], *, width: int = 760, height: int = 260) -> AgreementChart | None:
    """Agreement with the frozen verdicts (0–100%) of each configuration's scored checks, in check order along x, and
    the tolerance as a dashed line; None when no check is scored yet."""
    series = [(c, [r for r in c["checks"] if r["agreement"] is not None]) for c in status["configurations"]]
    series = [(c, rows) for c, rows in series if rows]
    if not series:
        return None
    left, right, top, bottom = 56, width - 20, 16, height - 40
    order = sorted({r["done_at"] for _, rows in series for r in rows})
    step = (right - left) / max(len(order) - 1, 1)

    def sx(done_at: str) -> float:
        return round(left + order.index(done_at) * step if len(order) > 1 else (left + right) / 2, 1)

    def sy(share: float) -> float:
        return round(bottom - share * (bottom - top), 1)

    lines = []
    for i, (config, rows) in enumerate(series):
        points = [
            ChartPoint(sx(r["done_at"]), sy(r["agreement"]), f"check {r['check']}, {r['done_at'][:16]}: {r['agreement']:.0%}")
            for r in rows
        ]
        path = " ".join(f"{'M' if n == 0 else 'L'}{p.x},{p.y}" for n, p in enumerate(points))
        colour, marker = COLOURS[i % len(COLOURS)], MARKERS[i % 2]
        lines.append(ChartLine(config["key"], config["label"], colour, marker, path, points, left + 8 + i * 150))
    ticks = [(sy(v / 4), f"{v * 25}%") for v in range(5)]
    return AgreementChart(width, height, left, right, top, bottom, sy(status["tolerance"]), ticks, lines)
