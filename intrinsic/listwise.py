"""Listwise judge runs of Intrinsic scoring (PROTOCOL.md §4; issue 14) on the shared run engine: the
``intrinsic_listwise`` task kind (``jobs.subjects``).

``run_judge BENCH --model J --base-url URL`` on an Intrinsic benchmark (run type ``listwise``; ``--pairs
discipline:NAME`` or ``sample:N`` for fewer papers): one task per paper (order ``single``). The judge sees the paper's
background and question and all its candidates, shuffled by a seeded per-paper shuffle (``intrinsic.prompts``) under
the labels C1, C2, ...; never a candidate's external id nor which one is gold. It answers its top five labels, best
first (all of them for a paper of fewer than five candidates).

Parsing is strict (``parse_listwise_answer``): a label not shown, a label given twice, or a list of another length
is a :class:`~jobs.parsing.ParseError`, so the engine asks again (at most three answers); what stays malformed is
*invalid* with the reasons. Every answer is kept as a :class:`~intrinsic.models.ListwiseJudgment`; each accepted or
invalid answer is also the paper's :class:`~intrinsic.models.ListwiseRanking` (top as candidate external ids) under
the run's listwise :class:`~intrinsic.models.Scorer` — named ``{judge}-listwise-{run label}``, made with the run
(a rerun is a new scorer) — in the same transaction, which is what the report reads. An endpoint that gives up
leaves the task failed and no ranking (a resume retries it).

A replay (``--replay-of RUN``) gives the stored labels back; it shuffles with the replayed run's seed, so the labels
stand for the same candidates.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.urls import reverse

from arena.models import Benchmark, JudgeRun
from arena.protocols import protocol_phrase
from jobs.gates import blindness_problem
from jobs.lifecycle import RunError
from jobs.parsing import ParseError, json_object
from jobs.prompts import PromptTemplate
from jobs.selection import Selection
from jobs.services import JudgeResult
from jobs.subjects import JudgeSpec, JudgeSubjects

from .models import LISTWISE_KIND, LISTWISE_TOP, PROTOCOL, ListwiseJudgment, ListwiseRanking, ListwiseTask, Paper, Scorer
from .prompts import DEFAULT_LISTWISE, label, render_listwise_task, shuffled

KIND = LISTWISE_KIND
# ``--pairs`` of a listwise run selects papers: all, discipline:NAME or sample:N.
PAPERS = Selection(
    groups={"discipline": lambda paper: paper.discipline},
    flag="--pairs",
    run=" for an Intrinsic listwise run",
    empty="no papers in discipline {value!r}; the disciplines are {known}",
)
SINGLE = "single"


def scorer_name(judge: str, run_label: str) -> str:
    """The listwise scorer a run's rankings go to."""
    return f"{judge}-listwise-{run_label}"


def shuffle_seed(run: JudgeRun) -> int:
    """The seed of a run's shuffles: its own, or for a replay the replayed run's (so the stored labels mean the same
    candidates)."""
    seen: set[int] = set()
    while run.parameters.get("replay_of") and run.pk not in seen:
        seen.add(run.pk)
        source = JudgeRun.objects.filter(pk=run.parameters["replay_of"]).first()
        if source is None:
            break
        run = source
    return int(run.parameters.get("seed") or 0)


def _plan(benchmark: Benchmark, request: Any, template: PromptTemplate) -> tuple[Callable[[JudgeRun], list[ListwiseTask]], int]:  # noqa: ANN401
    if benchmark.protocol != PROTOCOL:
        raise RunError(f"{benchmark} is {protocol_phrase(benchmark.protocol)} benchmark: it has no Intrinsic papers to rank")
    papers = list(Paper.objects.filter(benchmark=benchmark).order_by("id"))
    if not papers:
        raise RunError(f"{benchmark} has no papers; import them first (import_intrinsic)")
    chosen = PAPERS.choose(papers, request.select, request.seed)
    judge = request.judge_model.strip()
    endpoint = f"replay of judge run {request.replay_of.pk}" if request.replay_of is not None else request.base_url

    def make(run: JudgeRun) -> list[ListwiseTask]:
        name = scorer_name(judge, run.label)
        if Scorer.objects.filter(benchmark=benchmark, name=name).exists():
            raise RunError(f"{benchmark} already has a scorer named {name!r}; give the run another --label")
        Scorer.objects.create(benchmark=benchmark, name=name, model=judge, criterion=Scorer.Criterion.LISTWISE, endpoint=endpoint)
        return [ListwiseTask(run=run, paper=p, order=SINGLE) for p in chosen]

    return make, 0


def _specs(run: JudgeRun, ids: list[int], template: PromptTemplate, aliases: Any, names: list[str]) -> list[JudgeSpec]:  # noqa: ANN401
    tasks = list(ListwiseTask.objects.filter(id__in=ids).only("id", "paper_id", "order"))
    papers = {p.pk: p for p in Paper.objects.filter(pk__in={t.paper_id for t in tasks}).prefetch_related("candidates")}
    scorer_id = (
        Scorer.objects.filter(benchmark_id=run.benchmark_id, name=scorer_name(run.judge_model, run.label))
        .values_list("pk", flat=True)
        .first()
    )
    seed = shuffle_seed(run)
    specs = []
    for t in tasks:
        paper = papers[t.paper_id]
        text_of = {c.external_id: c.text for c in paper.candidates.all()}
        shown = shuffled(list(text_of), seed=seed, paper_id=paper.external_id)
        k = min(LISTWISE_TOP, len(shown))
        rendered = render_listwise_task(
            background=paper.background, question=paper.question, texts=[text_of[c] for c in shown], k=k, template=template
        )
        problem = blindness_problem(rendered, f"intrinsic-paper-{paper.pk}", names, aliases)
        if scorer_id is None:
            problem = f"the run's listwise scorer {scorer_name(run.judge_model, run.label)!r} is gone; launch a new run"
        meaning = {"shown": shown, "k": k, "scorer_id": scorer_id, "source": run.label}
        specs.append(JudgeSpec(t.pk, paper.pk, t.order, rendered, problem, meaning))
    return specs


def parse_listwise_answer(text: str, *, n: int, k: int) -> list[str]:
    """``{"top": ["C3", "C1", ...]}``: exactly ``k`` distinct labels among C1..Cn, best first (case and surrounding
    spaces tolerated). Anything else is a ParseError naming what is wrong."""
    obj = json_object(text)
    top = obj.get("top")
    if not isinstance(top, list):
        raise ParseError(f'"top" must be a list of {k} labels, got {type(top).__name__ if top is not None else "nothing"}')
    known = {label(i) for i in range(n)}
    out: list[str] = []
    for position, raw in enumerate(top, start=1):
        if not isinstance(raw, str):
            raise ParseError(f"entry {position} of \"top\" must be a label such as 'C1', got {raw!r}")
        name = raw.strip().upper()
        if name not in known:
            raise ParseError(f"unknown label {raw!r} at position {position}: the labels are C1 to C{n}")
        if name in out:
            raise ParseError(
                f"label {name} is given twice (positions {out.index(name) + 1} and {position}); the {k} must be distinct"
            )
        out.append(name)
    if len(out) != k:
        raise ParseError(f'"top" lists {len(out)} labels; exactly {k} were asked for')
    return out


def _parse(text: str, template: PromptTemplate, spec: JudgeSpec) -> list[str]:
    return parse_listwise_answer(text, n=len(spec.meaning["shown"]), k=spec.meaning["k"])


def _judgment(run_id: int, spec: JudgeSpec, result: JudgeResult) -> list[ListwiseJudgment | ListwiseRanking]:
    labels = result.answer if result.status == "accepted" else []
    shown = spec.meaning["shown"]
    top = [shown[int(lab[1:]) - 1] for lab in labels]
    judgment = ListwiseJudgment(
        run_id=run_id,
        paper_id=spec.subject_id,
        order=spec.order,
        labels=labels,
        top=top,
        shown=shown,
        status=result.status,
        raw_response=result.raw,
        errors=result.errors or [],
        attempt=result.attempt,
        latency_seconds=result.latency,
        prompt_tokens=result.prompt_tokens,
        completion_tokens=result.completion_tokens,
        metadata={"rejected_attempts": result.transcripts} if result.transcripts else {},
    )
    accepted = result.status == "accepted"
    reason = (
        "" if accepted else f"no valid top {spec.meaning['k']} after {result.attempt} answers: " + "; ".join(result.errors or [])
    )
    ranking = ListwiseRanking(
        scorer_id=spec.meaning["scorer_id"],
        run_id=run_id,
        source=spec.meaning["source"],
        paper_id=spec.subject_id,
        top=top,
        status=ListwiseRanking.Status.ACCEPTED if accepted else ListwiseRanking.Status.INVALID,
        reason=reason,
    )
    return [judgment, ranking]


def _recorded(source: JudgeRun) -> dict[tuple[int, str], dict[str, Any]]:
    return {(j.paper_id, j.order): {"top": j.labels} for j in ListwiseJudgment.objects.filter(run=source, status="accepted")}


def _describe(judgment: ListwiseJudgment) -> tuple[str, str]:
    paper = judgment.paper
    outcome = ", ".join(judgment.top) if judgment.status == "accepted" else "invalid"
    return f"paper {paper.external_id} ({paper.discipline}): {outcome}", reverse("intrinsic:benchmark", args=[paper.benchmark_id])


LISTWISE = JudgeSubjects(
    name=KIND,
    label="Intrinsic listwise rankings",
    protocol=PROTOCOL,
    task_model=ListwiseTask,
    judgment_model=ListwiseJudgment,
    subject_field="paper",
    plan=_plan,
    specs=_specs,
    judgment=_judgment,
    recorded=_recorded,
    default_prompts=DEFAULT_LISTWISE,
    parse=_parse,
    describe=_describe,
    ordered=False,
)
