"""Writes of diagnostic controls: generation (templates, and the model path of ``controls.llm``) and review.

Every write checks everything first and then writes in one transaction. A variant is checked against its
clean source the same way wherever it comes from (:func:`variant_problems`: generation, review, and the JSONL
import of :mod:`controls.import_export`): a targeted kind changes its target field and only that one,
``falsifier_off`` empties ``falsifying_result`` and changes nothing else, a rendering has prose instead of fields.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.utils import timezone

from arena.blindness import benchmark_matcher, proposal_blind_content
from arena.errors import AppError
from arena.jsonl import LISTED, json_type, names_listed
from arena.launch import endpoint_url_problem
from arena.models import Benchmark, Context, Proposal
from arena.prompting import render_context
from arena.schemas import SIX_FIELD
from jobs.providers import PermanentError, api_key_from_env

from . import llm, prompts, variants
from .models import TARGET_FIELD, ControlAttempt, ControlVariant

KINDS: tuple[str, ...] = tuple(ControlVariant.Kind.values)
TARGETS: tuple[str, ...] = tuple(ControlVariant.Target.values)
STATUSES: tuple[str, ...] = tuple(ControlVariant.Status.values)
TARGETED: tuple[str, ...] = tuple(str(k) for k in ControlVariant.TARGETED_KINDS)
#: Kinds a model must write (naturalness matters); the others have deterministic templates.
LLM_KINDS: tuple[str, ...] = ("subtle", "sham")
TEMPLATE_KINDS: tuple[str, ...] = ("clear", "rendering", "falsifier_off", "naive")
# A rendering holds six fields' worth of text plus the connecting phrases.
MAX_PROSE_CHARS = 6 * SIX_FIELD.max_chars + 2_000
# How the model path shows a context: with each paper's source id, as the v2 judge prompts do, so that a grounding
# edit can keep (or misuse) the citations proposals make by source id.
CONTEXT_FORMAT = 2


class ControlError(AppError):
    """A request about controls that cannot be carried out; nothing was written. An :class:`~arena.errors.AppError`,
    so a page, a command and the API all show its message to the person who asked."""


_names = names_listed


# --------------------------------------------------------------------------- checks shared by every path


def variant_problems(
    *, kind: str, target: str | None, content: Mapping[str, Any] | None, prose: str | None, source: Mapping[str, Any] | None
) -> list[tuple[str, str]]:
    """What is wrong with a variant, as (field, message); empty when nothing is.

    ``source`` is the clean proposal's content (None when unknown: the comparisons are skipped). Field names in
    messages are the file's: ``proposal.<field>``, ``prose``, ``target``. The steps run in this order so that a
    person reads the problems as before: the target, then the text's shape, then (only for a well-formed variant)
    how it relates to its source, which would say little about a malformed one.
    """
    problems = _target_problems(kind, target)
    if kind == "rendering":
        return problems + _rendering_problems(content, prose)
    if prose is not None:
        problems.append(("prose", f'only a rendering variant has prose; a {kind} variant has "proposal"'))
    problems += _content_problems(kind, content)
    if problems or source is None or kind == "naive" or content is None:
        return problems
    return _source_problems(kind, target, content, source)


def _target_problems(kind: str, target: str | None) -> list[tuple[str, str]]:
    """A targeted kind names the dimension it corrupts; the other kinds name none."""
    problems: list[tuple[str, str]] = []
    if kind in TARGETED and target is None:
        problems.append(("target", f"a {kind} variant needs a target: one of {_names(TARGETS)}"))
    if kind not in TARGETED and target is not None:
        problems.append(("target", f"must be null for a {kind} variant (only {', '.join(TARGETED)} have a target)"))
    return problems


def _rendering_problems(content: Mapping[str, Any] | None, prose: str | None) -> list[tuple[str, str]]:
    """A rendering is the six fields as one prose text: it has ``prose`` (non-blank, within the limit), no fields."""
    problems: list[tuple[str, str]] = []
    if content is not None:
        problems.append(("proposal", 'a rendering variant has "prose" instead of "proposal"'))
    if not isinstance(prose, str) or not prose.strip():
        problems.append(("prose", "missing" if prose is None else ("must be text" if not isinstance(prose, str) else "empty")))
    elif len(prose) > MAX_PROSE_CHARS:
        problems.append(("prose", f"has {len(prose)} characters; the limit is {MAX_PROSE_CHARS}"))
    return problems


def _content_problems(kind: str, content: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """Every other kind has the six fields and nothing else, each text (empty only where the kind empties it)."""
    if content is None:
        return [("proposal", "missing")]
    if not isinstance(content, Mapping):
        return [("proposal", f"must be an object with the six fields, got {json_type(content)}")]
    problems = [
        (f"proposal.{key}", f"is not one of the six fields ({', '.join(variants.SIX)})")
        for key in sorted(set(content) - set(variants.SIX))
    ]
    for name in variants.SIX:
        message = _field_problem(kind, name, content.get(name))
        if message is not None:
            problems.append((f"proposal.{name}", message))
    return problems


def _field_problem(kind: str, name: str, value: Any) -> str | None:  # noqa: ANN401
    """What is wrong with one of the six fields' value, or None. ``falsifier_off`` is the kind whose falsifying
    result must be empty; every other field of every kind must be filled."""
    empty_wanted = kind == "falsifier_off" and name == "falsifying_result"
    if not isinstance(value, str):
        return "missing" if value is None else f"must be text, got {json_type(value)}"
    if empty_wanted and value.strip():
        return 'must be empty ("") in a falsifier_off variant'
    if not empty_wanted and not value.strip():
        return "empty"
    if len(value) > SIX_FIELD.max_chars:
        return f"has {len(value)} characters; the limit is {SIX_FIELD.max_chars}"
    return None


def _source_problems(
    kind: str, target: str | None, content: Mapping[str, Any], source: Mapping[str, Any]
) -> list[tuple[str, str]]:
    """A variant changes exactly the field its kind changes (a targeted kind's target field, ``falsifier_off``'s
    falsifying result) and keeps the others verbatim, so that a verdict that moves can only have moved for it."""
    changed = TARGET_FIELD.get(target or "") if kind in TARGETED else ("falsifying_result" if kind == "falsifier_off" else None)
    problems: list[tuple[str, str]] = []
    for name in variants.SIX:
        same = content.get(name) == source.get(name)
        if name == changed and same and kind != "falsifier_off":
            problems.append(
                (f"proposal.{name}", f"is the source proposal's text unchanged; a {kind} variant must change its target field")
            )
        elif name != changed and not same:
            problems.append((f"proposal.{name}", f"differs from the source proposal; a {kind} variant changes only {changed}"))
    return problems


# --------------------------------------------------------------------------- template generation


@dataclass
class ModelTally:
    """What the model path did for one kind and target."""

    by_model: int = 0
    by_reserve: int = 0
    stopped: int = 0  # ended by a call error or the blindness gate: no variant (running again retries them)
    existing: int = 0
    rounds: int = 0  # model rounds used, over all variants
    outcomes: Counter = field(default_factory=Counter)  # attempts by outcome, every step

    def line(self, kind: str, target: str) -> str:
        outcomes = ", ".join(f"{n} {o}" for o, n in sorted(self.outcomes.items())) or "none"
        text = f"{kind} {target}: {self.by_model} made by model, {self.by_reserve} made by reserve"
        text += f", {self.stopped} not made (see below)" if self.stopped else ""
        text += f", {self.existing} already there; {self.rounds} round(s) used; attempts: {outcomes}"
        return text


@dataclass
class GenerateSummary:
    benchmark: Benchmark
    cases: list[tuple[str, str]]
    created: Counter = field(default_factory=Counter)  # by kind
    unchanged: int = 0
    kept: list[str] = field(default_factory=list)  # stored with other content (a researcher's edit): left alone
    asked: int = 0  # the contexts asked for; fewer cases when fewer contexts have a usable source
    model: dict[tuple[str, str], ModelTally] = field(default_factory=dict)  # (kind, target) of the model path
    stopped: list[tuple[str, str]] = field(default_factory=list)  # (control_id, why) of model variants not made

    def line(self) -> str:
        kinds = ", ".join(f"{n} {k}" for k, n in sorted(self.created.items())) or "none"
        text = f"{len(self.cases)} case(s) in {self.benchmark}: created {sum(self.created.values())} control(s) ({kinds}), {self.unchanged} already there"
        text += f", {len(self.kept)} kept as edited" if self.kept else ""
        if self.asked > len(self.cases):
            text += f" (asked for {self.asked} contexts; only {len(self.cases)} have a valid six-field proposal, all used)"
        lines = [text] + [tally.line(kind, target) for (kind, target), tally in self.model.items()]
        for control_id, why in self.stopped[:LISTED]:
            lines.append(f"not made: {control_id}: {why}")
        if len(self.stopped) > LISTED:
            lines.append(f"... and {len(self.stopped) - LISTED} more not made; run the command again to retry them")
        return "\n".join(lines)


def _naive_content(context: Context) -> dict[str, str]:
    from arena import naive  # the human study's naive baseline; a pure module (no models)

    words = naive.context_words(context)
    return naive.naive_proposal(words)


def _template_variants(kind: str, source: Proposal) -> list[tuple[str | None, dict[str, str] | None, str, str, str]]:
    """(target, content, prose, generator, version) of each variant of ``kind`` made from ``source``."""
    if kind == "falsifier_off":
        g = variants.FALSIFIER_OFF
        return [(None, variants.falsifier_off(source.content), "", g.name, g.version)]
    if kind == "rendering":
        g = variants.RENDERING
        return [(None, None, variants.render_prose(source.content), g.name, g.version)]
    if kind == "clear":
        return [
            (t, variants.clear_corruption(source.content, t), "", variants.CLEAR[t].name, variants.CLEAR[t].version)
            for t in TARGETS
        ]
    if kind == "subtle":  # only with templates_only: the model path is the default for subtle and sham
        return [
            (
                t,
                variants.reserve_subtle(source.content, t),
                "",
                variants.RESERVE_SUBTLE[t].name,
                variants.RESERVE_SUBTLE[t].version,
            )
            for t in TARGETS
        ]
    if kind == "sham":
        g = variants.RESERVE_SHAM
        return [(t, variants.reserve_sham(source.content, t), "", g.name, g.version) for t in TARGETS]
    if kind == "naive":
        from arena import naive

        return [(None, _naive_content(source.context), "", "naive-keyword-template", naive.VERSION)]
    raise ControlError(f"no template makes {kind!r} variants")


def llm_kinds_error(kinds: Sequence[str], missing: Sequence[str] = ("--model", "--base-url")) -> str:
    return (
        f"{' and '.join(kinds)} variants are written by a language model: they need --model (the model that writes them), "
        "--base-url (its OpenAI-compatible endpoint) and, unless the endpoint takes no key, --api-key-env (the environment "
        f"variable holding the key); missing: {' and '.join(missing)}. Or generate only the template kinds "
        f"({', '.join(TEMPLATE_KINDS)}), make {' and '.join(kinds)} from the reserve templates with --templates-only (no model; "
        "weaker edits), or import model-made variants with import_controls"
    )


def _model_settings_problem(kinds: Sequence[str], settings: llm.LlmSettings | None) -> str | None:
    """Why the model path cannot start (checked before anything is written), or None."""
    missing = [
        option
        for option, value in (("--model", settings and settings.model), ("--base-url", settings and settings.base_url))
        if not value
    ]
    if missing:
        return llm_kinds_error(kinds, missing)
    assert settings is not None
    problem = endpoint_url_problem(settings.base_url or "")
    if problem:
        return "--base-url: " + problem
    if settings.concurrency < 1:
        return f"--concurrency must be 1 or more, got {settings.concurrency}"
    try:
        api_key_from_env(settings.api_key_env)  # read again by the providers; never kept
    except PermanentError as exc:
        return f"--api-key-env: {exc}; export it in the environment that runs generate_controls"
    return None


def controls_generate(
    *,
    benchmark: Benchmark,
    kinds: Sequence[str],
    contexts: int,
    seed: int = 0,
    llm_settings: llm.LlmSettings | None = None,
    templates_only: bool = False,
) -> GenerateSummary:
    """Make variants for a seeded choice of ``contexts`` contexts, one source proposal each.

    Only valid proposals whose six fields are all filled are sources (a corruption of an empty field would not be
    one). The same benchmark, kinds, count and seed make the same cases: running it again creates nothing; a
    variant a researcher has edited since is left as edited. Template variants are stored ``approved`` (their text
    is fixed and tested; a researcher may still reject one).

    ``subtle`` and ``sham`` are written by the model ``llm_settings`` names (:mod:`controls.llm`), one per case and
    target, and stored as ``draft`` for a researcher's review; see :func:`_model_variants`. With ``templates_only`` they
    are made by the reserve templates instead (``controls.variants.reserve_subtle`` / ``reserve_sham``: no model, weaker
    and less natural edits, stored ``approved`` like the other templates): for offline use and the demo. Raises
    :class:`ControlError` for unknown kinds, or model kinds without a model and base URL or with an API-key variable
    that is not set; nothing is written then.
    """
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise ControlError(f"unknown kind(s) {', '.join(map(repr, unknown))}; the kinds are {', '.join(KINDS)}")
    needs_model = [] if templates_only else [k for k in dict.fromkeys(kinds) if k in LLM_KINDS]
    if needs_model:
        problem = _model_settings_problem(needs_model, llm_settings)
        if problem:
            raise ControlError(problem)
    if contexts < 1:
        raise ControlError("--contexts must be 1 or more")
    sources = [
        p
        for p in Proposal.objects.filter(
            context__benchmark=benchmark, context__has_text=True, validation_status=Proposal.Status.VALID
        ).select_related("context", "participant")
        if not SIX_FIELD.validate(p.content)
    ]
    if not sources:
        raise ControlError(f"{benchmark} has no valid six-field proposal to make controls from")
    by_key = {(p.context.external_id, p.participant.name): p for p in sources}
    candidates: dict[str, list[str]] = {}
    for context_id, model in by_key:
        candidates.setdefault(context_id, []).append(model)
    cases = variants.choose_cases(candidates, contexts=contexts, seed=seed)
    summary = GenerateSummary(benchmark=benchmark, cases=cases, asked=contexts)
    planned: list[ControlVariant] = []
    for context_id, source_model in cases:
        source = by_key[(context_id, source_model)]
        for kind in dict.fromkeys(kinds):
            if kind in needs_model:
                continue
            for target, content, prose, generator, version in _template_variants(kind, source):
                planned.append(
                    ControlVariant(
                        benchmark=benchmark,
                        context=source.context,
                        source=source,
                        control_id=variants.control_id(context_id, source_model, kind, target),
                        kind=kind,
                        target=target,
                        content=content,
                        prose=prose,
                        origin=ControlVariant.Origin.TEMPLATE,
                        generator=generator,
                        generator_version=version,
                        provenance={"seed": seed},
                        status=ControlVariant.Status.APPROVED,
                    )
                )
    with transaction.atomic():
        # Runs of one benchmark queue here (PostgreSQL): the second sees the variants the first made (locking the
        # variants themselves cannot make it wait for rows that do not exist yet).
        benchmark.lock()
        stored = {
            v.control_id: v
            for v in ControlVariant.objects.select_for_update().filter(
                benchmark=benchmark, control_id__in=[v.control_id for v in planned]
            )
        }
        new = []
        for variant in planned:
            existing = stored.get(variant.control_id)
            if existing is None:
                new.append(variant)
                summary.created[variant.kind] += 1
            elif (existing.content, existing.prose) == (variant.content, variant.prose):
                summary.unchanged += 1
            else:
                summary.kept.append(variant.control_id)
        ControlVariant.objects.bulk_create(new)
    if needs_model:
        assert llm_settings is not None
        _model_variants(
            benchmark=benchmark,
            sources=[by_key[case] for case in cases],
            kinds=needs_model,
            seed=seed,
            settings=llm_settings,
            summary=summary,
        )
    return summary


# --------------------------------------------------------------------------- model-made variants (subtle, sham)

# Variants run together, then stored in one transaction. Four per call slot keeps every slot busy while some
# variants are between their steps; a bounded batch keeps each transaction small and limits what an interrupted
# run loses to one batch (what was stored stays: running again skips it).
BATCH_PER_SLOT = 4


def _model_variants(
    *,
    benchmark: Benchmark,
    sources: Sequence[Proposal],
    kinds: Sequence[str],
    seed: int,
    settings: llm.LlmSettings,
    summary: GenerateSummary,
) -> None:
    """The model path of :func:`controls_generate`: one variant per source, kind and target, each generated and
    validated in up to ``llm.MAX_ROUNDS`` rounds, else the kind's reserve template; every attempt stored.

    A control id that is already stored is skipped (a second run adds nothing; a researcher's edit stays). The
    model sees each source as blind readers do (``proposal_blind_content``); the variant is the stored source with
    the target field replaced, so its other five fields are the source's. Model-made variants are stored with
    ``origin=model`` (generator: the model, version: the prompt version), reserves with ``origin=template`` and
    ``provenance["reserve"]``; both as ``draft``.

    A variant that ended without one (a call error, the blindness gate) keeps its attempts until the next run
    retries it: the next run replaces them.
    """
    matcher = benchmark_matcher(benchmark_id=benchmark.pk)
    forbidden = list(benchmark.participants.values_list("name", flat=True))
    planned: list[tuple[str, str, Proposal]] = [
        (kind, target, source) for source in sources for kind in kinds for target in TARGETS
    ]
    ids = [variants.control_id(s.context.external_id, s.participant.name, kind, target) for kind, target, s in planned]
    stored = set(ControlVariant.objects.filter(benchmark=benchmark, control_id__in=ids).values_list("control_id", flat=True))
    for kind in kinds:
        for target in TARGETS:
            summary.model[(kind, target)] = ModelTally()
    context_texts: dict[int, str] = {}
    work: list[tuple[llm.Job, Proposal]] = []
    for (kind, target, source), control_id in zip(planned, ids, strict=True):
        if control_id in stored:
            summary.model[(kind, target)].existing += 1
            summary.unchanged += 1
            continue
        if source.context_id not in context_texts:
            context_texts[source.context_id] = render_context(source.context, context_format=CONTEXT_FORMAT)
        blind = proposal_blind_content(source, matcher=matcher)
        job = llm.Job(
            control_id=control_id,
            kind=kind,
            target=target,
            field=TARGET_FIELD[target],
            context_text=context_texts[source.context_id],
            blind_source={name: str(blind.get(name, "")) for name in variants.SIX},
            source={name: str(source.content[name]) for name in variants.SIX},
            forbidden=[*forbidden, control_id],
        )
        work.append((job, source))
    size = BATCH_PER_SLOT * settings.concurrency
    for start in range(0, len(work), size):
        batch = work[start : start + size]
        results = llm.jobs_run([job for job, _ in batch], settings=settings, matcher=matcher)
        _model_results_store(benchmark=benchmark, batch=batch, results=results, seed=seed, settings=settings, summary=summary)
        if all(r.call_failed for r in results):
            # Every call of the batch failed (a wrong model name, a bad key, an endpoint down): so would the rest.
            summary.stopped += [
                (job.control_id, "not tried: every call of the previous batch failed") for job, _ in work[start + size :]
            ]
            break


def _model_results_store(
    *,
    benchmark: Benchmark,
    batch: Sequence[tuple[llm.Job, Proposal]],
    results: Sequence[llm.JobResult],
    seed: int,
    settings: llm.LlmSettings,
    summary: GenerateSummary,
) -> None:
    """Store one batch: each variant made (by the model or a reserve) with its attempts, and the attempts of the
    variants not made; in one transaction."""
    ids = [job.control_id for job, _ in batch]
    with transaction.atomic():
        benchmark.lock()  # as in controls_generate: a run at the same moment stores first, or waits for this one
        taken = set(
            ControlVariant.objects.select_for_update()
            .filter(benchmark=benchmark, control_id__in=ids)
            .values_list("control_id", flat=True)
        )
        # Attempts of an earlier run that ended without a variant: this run's attempts replace them.
        ControlAttempt.objects.filter(benchmark=benchmark, control_id__in=ids, variant__isnull=True).delete()
        attempt_rows: list[ControlAttempt] = []
        for (job, source), result in zip(batch, results, strict=True):
            tally = summary.model[(job.kind, job.target)]
            if job.control_id in taken:  # made by a concurrent run meanwhile: it stands
                tally.existing += 1
                summary.unchanged += 1
                continue
            attempts = list(result.attempts)
            variant = None
            common = {
                "benchmark": benchmark,
                "context": source.context,
                "source": source,
                "control_id": job.control_id,
                "kind": job.kind,
                "target": job.target,
                "status": ControlVariant.Status.DRAFT,
            }
            if result.text is not None:
                variant = ControlVariant.objects.create(
                    **common,
                    content=dict(job.source) | {job.field: result.text},
                    origin=ControlVariant.Origin.MODEL,
                    generator=settings.model or "",
                    generator_version=prompts.GENERATE_PROMPT[job.kind].version,
                    provenance={
                        "seed": seed,
                        "rounds": result.rounds,
                        "validator": settings.validator,
                        "validator_prompt": prompts.VALIDATE_PROMPT.version,
                    },
                )
                tally.by_model += 1
            elif result.needs_reserve:
                reserve = variants.RESERVE_SUBTLE[job.target] if job.kind == "subtle" else variants.RESERVE_SHAM
                make = variants.reserve_subtle if job.kind == "subtle" else variants.reserve_sham
                why = f"reserve template {reserve.name} {reserve.version} after {result.rounds} failed model rounds"
                variant = ControlVariant.objects.create(
                    **common,
                    content=make(source.content, job.target),
                    origin=ControlVariant.Origin.TEMPLATE,
                    generator=reserve.name,
                    generator_version=reserve.version,
                    provenance={
                        "seed": seed,
                        "reserve": True,
                        "failed_rounds": result.rounds,
                        "model": settings.model,
                        "prompt": prompts.GENERATE_PROMPT[job.kind].version,
                        "note": why,
                    },
                )
                attempts.append(
                    llm.Attempt(
                        round=result.rounds + 1,
                        step=ControlAttempt.Step.RESERVE,
                        outcome=ControlAttempt.Outcome.ACCEPTED,
                        reason=why,
                    )
                )
                tally.by_reserve += 1
            else:
                tally.stopped += 1
                summary.stopped.append((job.control_id, result.stopped or "stopped"))
            if variant is not None:
                summary.created[job.kind] += 1
            tally.rounds += result.rounds
            tally.outcomes.update(a.outcome for a in attempts)
            attempt_rows += [
                ControlAttempt(
                    benchmark=benchmark,
                    control_id=job.control_id,
                    variant=variant,
                    source=source,
                    kind=job.kind,
                    target=job.target,
                    round=a.round,
                    step=a.step,
                    model=a.model,
                    prompt_version=a.prompt_version,
                    outcome=a.outcome,
                    reason=a.reason,
                    raw_text=a.raw_text,
                )
                for a in attempts
            ]
        ControlAttempt.objects.bulk_create(attempt_rows)


# --------------------------------------------------------------------------- review


def control_variant_review(
    *, variant: ControlVariant, status: str, content: Mapping[str, Any] | None = None, prose: str | None = None
) -> ControlVariant:
    """A researcher's decision on a variant, optionally with edited text (checked like an import).

    Raises :class:`ControlError` when the status is unknown or the edit breaks the variant's rules (for example
    a clear corruption whose edit touches a second field).
    """
    if status not in STATUSES:
        raise ControlError(f"unknown status {status!r}; the statuses are {', '.join(STATUSES)}")
    new_content = dict(content) if content is not None else variant.content
    new_prose = prose if prose is not None else (variant.prose or None)
    found = variant_problems(
        kind=variant.kind, target=variant.target, content=new_content, prose=new_prose, source=variant.source.content
    )
    if found:
        raise ControlError("; ".join(f"{name}: {message}" for name, message in found))
    variant.content, variant.prose = new_content, new_prose or ""
    variant.status, variant.reviewed_at = status, timezone.now()
    variant.save(update_fields=["content", "prose", "status", "reviewed_at"])
    return variant
