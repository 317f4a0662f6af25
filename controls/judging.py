"""Judging diagnostic controls on the shared run engine: the ``controls`` task kind (``jobs.subjects``).

A controls judge run (``run_judge … --pairs controls``, or the dashboard's launch form) gets one task per
approved variant and order: the variant against its clean source, blind, with the same judge prompt template,
parser, orientation gate and blindness gate as the leaderboard's pairs. Which side is "A" in the original
order is drawn from the benchmark's orientation seed and the variant's control id, exactly as a canonical pair's
orientation is, so the clean proposal is not always first; the reverse order swaps the two.

A control's ``control_id`` is internal (a generated one names the source model): it is never in a prompt,
and the gate refuses any prompt that contains it, a participant's name or an alias of one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.urls import reverse

from arena.models import Benchmark, Context, JudgeRun
from arena.orientation import orientation_flipped
from arena.prompting import render_context
from arena.schemas import SIX_FIELD
from jobs.gates import blindness_problem, orientation_sort, skipped_log
from jobs.lifecycle import RunError
from jobs.prompts import PromptTemplate, RenderedTask
from jobs.services import JudgeResult, judgment_fields
from jobs.subjects import JudgeSpec, JudgeSubjects

from .models import ControlJudgeTask, ControlJudgment, ControlVariant
from .selectors import benchmark_controls, control_blind_texts

CONTROLS_PREFIX = "controls"
SAME_NOTE = "they read the same as their source once model names are redacted"


def _kinds(spec: str) -> list[str] | None:
    """``controls`` (every kind) or ``controls:clear,naive``."""
    _, _, value = spec.partition(":")
    if not value:
        return None
    kinds = [k.strip() for k in value.split(",") if k.strip()]
    unknown = sorted(set(kinds) - set(ControlVariant.Kind.values))
    if unknown:
        raise RunError(
            f"unknown control kind(s) {', '.join(unknown)} in --pairs {spec!r}; the kinds are {', '.join(ControlVariant.Kind.values)}"
        )
    return kinds


def _block(label: str, text: dict[str, Any] | str) -> str:
    """A side of a control pair as the judge sees it: six fields like any proposal, or the prose as one text."""
    if isinstance(text, str):
        return f"=== PROPOSAL {label} ===\n{text}"
    return f"=== PROPOSAL {label} ===\n" + "\n".join(f"[{name}]\n{text.get(name, '')}" for name in SIX_FIELD.fields)


def clean_shown(benchmark: Benchmark, variant: ControlVariant, order: str) -> str:
    """The label ("A" or "B") the clean source has in this order: seeded per control, swapped in the reverse order."""
    first = "B" if orientation_flipped(benchmark.orientation_seed, variant.control_id) else "A"
    return first if order == "original" else ("B" if first == "A" else "A")


def render_control_task(
    *, benchmark: Benchmark, variant: ControlVariant, order: str, template: PromptTemplate, context: Context, matcher: Any = None
) -> RenderedTask:
    clean, changed = control_blind_texts(variant=variant, matcher=matcher)
    a, b = (clean, changed) if clean_shown(benchmark, variant, order) == "A" else (changed, clean)
    block_a, block_b = _block("A", a), _block("B", b)
    user = (
        f"{render_context(context, context_format=template.layout)}\n\n{block_a}\n\n{block_b}\n=== END ===\n\n"
        "Which proposal is the better next experiment? Answer in JSON."
    )
    return RenderedTask(system=template.system, user=user, block_a=block_a, block_b=block_b)


def _contexts(ids: set[int]) -> dict[int, Context]:
    return {c.pk: c for c in Context.objects.filter(pk__in=ids).prefetch_related("papers")}


def _plan(
    benchmark: Benchmark, request: Any, template: PromptTemplate
) -> tuple[Callable[[JudgeRun], list[ControlJudgeTask]], int]:
    variants = list(benchmark_controls(benchmark=benchmark, kinds=_kinds(request.select)))
    if not variants:
        raise RunError(
            f"{benchmark} has no approved control variants{'' if ':' not in request.select else ' of those kinds'} to judge; make them "
            "with generate_controls or import_controls, and approve them on the controls review page"
        )
    contexts = _contexts({v.context_id for v in variants})

    def render(variant: ControlVariant) -> tuple[RenderedTask, RenderedTask]:
        return tuple(  # type: ignore[return-value]
            render_control_task(
                benchmark=benchmark, variant=variant, order=o, template=template, context=contexts[variant.context_id]
            )
            for o in ("original", "reverse")
        )

    # A variant that reads as its source once redacted cannot be judged blind: skipped (jobs.gates.orientation_sort).
    judged, same = orientation_sort(
        variants,
        render,
        lambda v: f"control variant {v.pk}",
        what="approved control variants chosen",
        fix="Reject those variants on the controls review page, or make new ones with generate_controls.",
    )

    def make(run: JudgeRun) -> list[ControlJudgeTask]:
        skipped_log(run, [f"control variant {v.pk}" for v in same], SAME_NOTE)
        return [ControlJudgeTask(run=run, variant=v, order=o) for v in judged for o in request.orders]

    return make, len(same)


def _specs(run: JudgeRun, ids: list[int], template: PromptTemplate, aliases: Any, names: list[str]) -> list[JudgeSpec]:
    tasks = list(ControlJudgeTask.objects.filter(id__in=ids).select_related("variant__source__participant"))
    contexts = _contexts({t.variant.context_id for t in tasks})
    specs = []
    for t in tasks:
        variant = t.variant
        rendered = render_control_task(
            benchmark=run.benchmark,
            variant=variant,
            order=t.order,
            template=template,
            context=contexts[variant.context_id],
            matcher=aliases.matcher,
        )
        specs.append(
            JudgeSpec(
                t.pk,
                variant.pk,
                t.order,
                rendered,
                blindness_problem(rendered, variant.control_id, names, aliases),
                {"clean_shown": clean_shown(run.benchmark, variant, t.order)},
            )
        )
    return specs


def _judgment(run_id: int, spec: JudgeSpec, result: JudgeResult) -> ControlJudgment:
    fields = judgment_fields(result)
    verdict, shown = fields["verdict"], spec.meaning["clean_shown"]
    winner = "" if verdict is None else "tie" if verdict == "TIE" else "clean" if verdict == shown else "variant"
    return ControlJudgment(
        run_id=run_id, variant_id=spec.subject_id, order=spec.order, clean_shown=shown, winner=winner, **fields
    )


def _recorded(source: JudgeRun) -> dict[tuple[int, str], dict[str, Any]]:
    """A stored controls run's verdicts as the judge's A/B answers (the labels are where the judge saw them)."""
    answers = {}
    for j in ControlJudgment.objects.filter(run=source, status="accepted"):
        winner = {"TIE": "tie"}.get(j.verdict or "", j.verdict or "tie")
        answers[(j.variant_id, j.order)] = {
            "winner": winner,
            "confidence": j.confidence or "medium",
            "main_reason": j.main_reason or f"replayed from run {source.pk}",
            "weakness_a": j.weakness_a,
            "weakness_b": j.weakness_b,
            **({"scores": j.metadata["scores"]} if (j.metadata or {}).get("scores") else {}),
        }
    return answers


def _describe(judgment: ControlJudgment) -> tuple[str, str]:
    v = judgment.variant
    return f"{v.control_id} · {v.kind}{f' · {v.target}' if v.target else ''}", reverse("controls:variant", args=[v.pk])


def _report(run: JudgeRun) -> tuple[str, str]:
    return f"{reverse('controls:report', args=[run.benchmark_id])}?run={run.pk}", "Controls page"


def _sides(run: JudgeRun) -> Any:  # noqa: ANN401
    """The run's verdicts for the judge-reliability panel (numpy loads when it is computed, not with the app)."""
    from .reliability import judged_sides

    return judged_sides(run)


KIND = JudgeSubjects(
    name=CONTROLS_PREFIX,
    label="diagnostic controls",
    protocol="lit2test",
    task_model=ControlJudgeTask,
    judgment_model=ControlJudgment,
    subject_field="variant",
    plan=_plan,
    specs=_specs,
    judgment=_judgment,
    recorded=_recorded,
    # The leaderboard judge's own templates (registered by the Lit2Test app): a control is judged exactly as a pair.
    default_prompts={"holistic": "judge-holistic-v2", "structured": "judge-structured-v2"},
    describe=_describe,
    foreign_refusal="it has no Lit2Test {subjects} to judge; open its own pages from the dashboard",
    selection_key="pairs",
    skipped_note=f"control variants skipped: {SAME_NOTE} (the run log names them)",
    report=_report,
    sides=_sides,
)
