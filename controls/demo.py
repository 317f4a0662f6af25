"""Demo controls runs (``make demo``): a controls report with content, with no network and no language model.

The demo's variants are template-made (``generate_controls … --kinds clear,rendering,falsifier_off,naive``), but a
report needs verdicts, and the demo has no judge endpoint. :func:`demo_controls_record` writes them with the
**demo heuristic judge**, a deterministic rule that is *not a language model* and says so wherever it appears (its
``judge_model`` is :data:`DEMO_JUDGE`, and the Controls page prints a note beside any run it made):

* **verdict**: the proposal with more words wins; when the two counts differ by at most 2% of the larger one the
  verdict is a tie (:func:`heuristic_winner`). Words are whitespace-separated tokens of the six fields (or of the
  prose, for a rendering variant).
* **scores** (the structured run): each rubric dimension gets ``min(4, words // 8)`` of its own field
  (:data:`DIMENSION_FIELD`: grounding → literature_gap, hypothesis specificity → hypothesis, minimality/feasibility
  → minimal_test, decisive metric → decisive_metric, falsifiability → falsifying_result). A prose rendering has no
  fields; each dimension then gets a fifth of the prose's words (:func:`heuristic_scores`).

It is a demo of the page, not evidence about any judge: by design it fails the rendering control (a prose rendering
has more words than the six fields it renders: the connecting phrases), and it prefers whichever clear-corruption
text happens to be longer.

What is recorded: a holistic and a structured controls run (``JudgeRun.subjects == "controls"``, provider
``recorded``, no ``replay_of``: they show as imported verdicts), with one :class:`ControlJudgment` per approved
variant and order, the labels drawn as a real controls run draws them (:func:`controls.judging.clean_shown`); then a
replay of the holistic run through the ordinary run engine (``judge_run_create`` + ``judge_run_launch``, provider
``recorded``), so the demo also shows the engine at work. Running it again adds nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.utils import timezone

from arena.errors import AppError
from arena.models import Benchmark, JudgeRun
from arena.schemas import JUDGE_DIMENSIONS as DIMENSIONS
from jobs.services import JudgeRunRequest, judge_run_create, judge_run_execute, judge_run_launch

from .judging import clean_shown
from .models import CONTROLS, ControlJudgment, ControlVariant
from .selectors import benchmark_controls
from .variants import SIX

#: The judge name of every demo run: it says what the judge is, so no page can pass it off as a model.
DEMO_JUDGE = "demo-heuristic (not a language model)"
HEURISTIC_VERSION = "v1"
HOLISTIC_LABEL = "demo-heuristic-holistic"
STRUCTURED_LABEL = "demo-heuristic-structured"
REPLAY_LABEL = "demo-heuristic-holistic-replay"
TIE_WITHIN = 0.02
WORDS_PER_POINT = 8
ORDERS = ("original", "reverse")

#: The field each structured dimension is scored from.
DIMENSION_FIELD: dict[str, str] = {
    "grounding": "literature_gap",
    "hypothesis_specificity": "hypothesis",
    "minimality_feasibility": "minimal_test",
    "decisive_metric": "decisive_metric",
    "falsifiability": "falsifying_result",
}

HEURISTIC_DESCRIPTION = (
    "Demo heuristic judge, not a language model: the proposal with more words wins (a tie when the counts differ by at "
    f"most {TIE_WITHIN:.0%} of the larger); each dimension is scored min(4, words // {WORDS_PER_POINT}) of its own field "
    "(a prose rendering: a fifth of its words per dimension). It fails the rendering control by design: prose is longer."
)


class DemoControlsError(AppError):
    """The demo runs cannot be made; the message says what to do first."""


def words(text: str) -> int:
    return len(str(text or "").split())


def text_words(content: dict[str, Any] | None, prose: str = "") -> int:
    """Words of a proposal as the judge sees it: its six fields, or its prose."""
    if content is None:
        return words(prose)
    return sum(words(content.get(name, "")) for name in SIX)


def heuristic_winner(clean_words: int, variant_words: int) -> str:
    """``clean``, ``variant`` or ``tie`` (counts within 2% of the larger one)."""
    if abs(clean_words - variant_words) <= TIE_WITHIN * max(clean_words, variant_words):
        return "tie"
    return "clean" if clean_words > variant_words else "variant"


def heuristic_scores(content: dict[str, Any] | None, prose: str = "") -> dict[str, int]:
    """0-4 per dimension from the word count of the dimension's field (a fifth of the prose's words for prose)."""
    if content is None:
        share = words(prose) // len(DIMENSION_FIELD)
        return {dim: min(4, share // WORDS_PER_POINT) for dim in DIMENSIONS}
    return {dim: min(4, words(content.get(DIMENSION_FIELD[dim], "")) // WORDS_PER_POINT) for dim in DIMENSIONS}


@dataclass
class DemoControlsSummary:
    benchmark: Benchmark
    created: list[JudgeRun] = field(default_factory=list)
    existing: list[JudgeRun] = field(default_factory=list)
    replay_status: str = ""

    def line(self) -> str:
        made = ", ".join(f"run {r.pk} {r.label} ({r.run_type}, {r.control_judgments.count()} verdicts)" for r in self.created)
        kept = ", ".join(f"run {r.pk} {r.label}" for r in self.existing)
        text = f"demo controls runs of {self.benchmark} by {DEMO_JUDGE}: " + (f"created {made}" if made else "created nothing")
        if kept:
            text += f"; already there: {kept}"
        if self.replay_status:
            text += f"; the replay is {self.replay_status}"
        return text


def _judgment(benchmark: Benchmark, run: JudgeRun, variant: ControlVariant, order: str, structured: bool) -> ControlJudgment:
    source = variant.source.content or {}
    clean_n = text_words(source)
    variant_n = text_words(variant.content, variant.prose)
    winner = heuristic_winner(clean_n, variant_n)
    shown = clean_shown(benchmark, variant, order)
    other = "B" if shown == "A" else "A"
    verdict = {"clean": shown, "variant": other, "tie": "TIE"}[winner]
    count = {shown: clean_n, other: variant_n}
    answer: dict[str, Any] = {
        "winner": verdict if verdict != "TIE" else "tie",
        "confidence": "low",
        "main_reason": f"demo heuristic (not a language model): A has {count['A']} words, B has {count['B']}",
        "weakness_a": f"{count['A']} words",
        "weakness_b": f"{count['B']} words",
    }
    metadata: dict[str, Any] = {"demo_heuristic": HEURISTIC_VERSION}
    if structured:
        scores = {shown: heuristic_scores(source), other: heuristic_scores(variant.content, variant.prose)}
        answer["scores"] = {"A": scores["A"], "B": scores["B"]}
        answer["overall"] = answer["winner"]
        metadata["scores"] = answer["scores"]
    return ControlJudgment(
        run=run,
        variant=variant,
        order=order,
        status="accepted",
        clean_shown=shown,
        verdict=verdict,
        winner=winner,
        confidence="low",
        main_reason=answer["main_reason"],
        weakness_a=answer["weakness_a"],
        weakness_b=answer["weakness_b"],
        raw_response=json.dumps(answer),
        metadata=metadata,
    )


def _record(benchmark: Benchmark, variants: list[ControlVariant], *, run_type: str, label: str) -> JudgeRun:
    structured = run_type == "structured"
    with transaction.atomic():
        run = JudgeRun.objects.create(
            benchmark=benchmark,
            label=label,
            run_type=run_type,
            judge_model=DEMO_JUDGE,
            provider=JudgeRun.Provider.RECORDED,
            prompt_version="",
            subjects=CONTROLS,
            status=JudgeRun.Status.COMPLETED,
            finished_at=timezone.now(),
            parameters={
                "pairs": "controls",
                "orders": list(ORDERS),
                "replay_of": None,
                "demo_heuristic": {"version": HEURISTIC_VERSION, "description": HEURISTIC_DESCRIPTION},
            },
        )
        ControlJudgment.objects.bulk_create(
            [_judgment(benchmark, run, v, order, structured) for v in variants for order in ORDERS], batch_size=1000
        )
    return run


def demo_controls_record(*, benchmark: Benchmark, execute: bool = True) -> DemoControlsSummary:
    """Record the demo heuristic's holistic and structured controls runs of ``benchmark``'s approved variants, and a
    replay of the holistic one through the run engine; runs already there (by label) are left as they are.

    With ``execute`` the replay also runs here, synchronously, after its launch has queued a driver for the worker:
    the page has its content before any worker starts, and the queued driver then finds the run finished and
    stops. Raises :class:`DemoControlsError` when the benchmark has no approved variant.
    """
    summary = DemoControlsSummary(benchmark=benchmark)
    with transaction.atomic():
        # Two at once queue here (PostgreSQL): the second finds the first's runs by their labels instead of failing on
        # them.
        benchmark.lock()
        replay = _runs_record(benchmark, summary)
    if replay is None:
        return summary
    summary.replay_status = judge_run_execute(run_id=replay.pk) if execute else "launched"
    replay.refresh_from_db()
    summary.created.append(replay)
    return summary


def _runs_record(benchmark: Benchmark, summary: DemoControlsSummary) -> JudgeRun | None:
    """The recorded runs not there yet, and the replay launched (returned; None when it was there already)."""
    runs = {r.label: r for r in JudgeRun.objects.filter(benchmark=benchmark, judge_model=DEMO_JUDGE)}
    variants = list(benchmark_controls(benchmark=benchmark))
    if not variants and not runs:
        raise DemoControlsError(
            f"{benchmark} has no approved control variants; make them first, e.g. manage.py generate_controls {benchmark.name} "
            "--kinds clear,rendering,falsifier_off,naive --contexts 4 --seed 0"
        )
    for run_type, label in (("holistic", HOLISTIC_LABEL), ("structured", STRUCTURED_LABEL)):
        if label in runs:
            summary.existing.append(runs[label])
        else:
            runs[label] = _record(benchmark, variants, run_type=run_type, label=label)
            summary.created.append(runs[label])
    if REPLAY_LABEL in runs:
        summary.existing.append(runs[REPLAY_LABEL])
        return None
    request = JudgeRunRequest(
        benchmark=benchmark,
        judge_model=DEMO_JUDGE,
        provider=JudgeRun.Provider.RECORDED,
        replay_of=runs[HOLISTIC_LABEL],
        select="controls",
        label=REPLAY_LABEL,
    )
    replay, _ = judge_run_create(request=request)
    judge_run_launch(run=replay)
    return replay


def is_demo_run(run: JudgeRun | None) -> bool:
    """A run made by the demo heuristic (or a replay of one, which carries the same judge name)."""
    return run is not None and run.judge_model == DEMO_JUDGE


__all__ = [
    "DEMO_JUDGE",
    "DIMENSION_FIELD",
    "HEURISTIC_DESCRIPTION",
    "DemoControlsError",
    "DemoControlsSummary",
    "demo_controls_record",
    "heuristic_scores",
    "heuristic_winner",
    "is_demo_run",
    "text_words",
]
