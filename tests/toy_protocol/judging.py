"""The toy protocol's judging kind: each chosen item is asked once ("yes" or "no"), its answer parsed strictly."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arena.models import Benchmark, JudgeRun
from jobs.gates import blindness_problem
from jobs.lifecycle import RunError
from jobs.parsing import ParseError, json_object, text_key
from jobs.prompts import PromptTemplate, RenderedTask
from jobs.selection import Selection
from jobs.services import JudgeResult
from jobs.subjects import JudgeSpec, JudgeSubjects

from .models import ITEMS, PROTOCOL, SINGLE, Item, ToyAnswer, ToyTally, ToyTask

SYSTEM = 'Answer the question with one JSON object and nothing else: {"answer": "yes" | "no"}.'
TEMPLATE = PromptTemplate("toy-yes-no-v1", "yes_no", SYSTEM)
SELECTION = Selection(
    groups={"topic": lambda item: item.topic},
    run=" for a toy run",
    empty="no items in topic {value!r}; the topics are {known}",
)


def render(item: Item, template: PromptTemplate) -> RenderedTask:
    user = f"Question: {item.question}\nAnswer yes or no, as JSON."
    return RenderedTask(system=template.system, user=user, block_a=item.question, block_b="")


def _plan(benchmark: Benchmark, request: Any, template: PromptTemplate) -> tuple[Callable[[JudgeRun], list[ToyTask]], int]:  # noqa: ANN401
    items = list(Item.objects.filter(benchmark=benchmark).order_by("id"))
    if not items:
        raise RunError(f"{benchmark} has no items to ask; import them with import_toy first")
    chosen = SELECTION.choose(items, request.select, request.seed)

    def make(run: JudgeRun) -> list[ToyTask]:
        return [ToyTask(run=run, item=item, order=SINGLE) for item in chosen]

    return make, 0


def _specs(run: JudgeRun, ids: list[int], template: PromptTemplate, aliases: Any, names: list[str]) -> list[JudgeSpec]:  # noqa: ANN401
    specs = []
    for task in ToyTask.objects.filter(id__in=ids).select_related("item").order_by("id"):
        rendered = render(task.item, template)
        problem = blindness_problem(rendered, f"toy-item-{task.item_id}", names, aliases)
        specs.append(JudgeSpec(task.pk, task.item_id, task.order, rendered, problem))
    return specs


def _parse(text: str, template: PromptTemplate, spec: JudgeSpec) -> str:
    answer = text_key(json_object(text), "answer").strip().lower()
    if answer not in ("yes", "no"):
        raise ParseError(f"'answer' must be 'yes' or 'no', got {answer!r}")
    return answer


def _judgment(run_id: int, spec: JudgeSpec, result: JudgeResult) -> ToyAnswer:
    return ToyAnswer(
        run_id=run_id,
        item_id=spec.subject_id,
        order=spec.order,
        status=result.status,
        answer=result.answer if result.status == "accepted" else "",
        raw_response=result.raw,
        errors=result.errors or [],
        attempt=result.attempt,
        latency_seconds=result.latency,
        prompt_tokens=result.prompt_tokens,
        completion_tokens=result.completion_tokens,
        metadata={"rejected_attempts": result.transcripts} if result.transcripts else {},
    )


def _recorded(source: JudgeRun) -> dict[tuple[int, str], dict[str, Any]]:
    return {(a.item_id, a.order): {"answer": a.answer} for a in ToyAnswer.objects.filter(run=source, status="accepted")}


def _describe(answer: ToyAnswer) -> tuple[str, str]:
    return f"{answer.item.external_id} · {answer.item.topic}", ""


#: Faults the next tallies raise, first one first: how the engine's step tests make a step fail on demand.
STEP_FAULTS: list[Exception] = []


def _after(run: JudgeRun) -> None:
    """Count the run's answers once (a second tally of one run would break ToyTally's one-to-one key)."""
    if STEP_FAULTS:
        raise STEP_FAULTS.pop(0)
    answers = list(ToyAnswer.objects.filter(run=run, status="accepted").values_list("answer", flat=True))
    ToyTally.objects.create(run=run, yes=answers.count("yes"), no=answers.count("no"), run_status=run.status)


KIND = JudgeSubjects(
    name=ITEMS,
    label="toy items",
    protocol=PROTOCOL,
    task_model=ToyTask,
    judgment_model=ToyAnswer,
    subject_field="item",
    plan=_plan,
    specs=_specs,
    judgment=_judgment,
    recorded=_recorded,
    default_prompts={TEMPLATE.kind: TEMPLATE.version},
    parse=_parse,
    describe=_describe,
    ordered=False,
    foreign_refusal="it has no toy items to judge; open its own pages from the dashboard",
    skipped_note="items skipped",
    after=_after,
    after_title="count the run's yes and no answers",
)
