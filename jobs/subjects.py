"""What a judge run judges: the run engine's *judging task kinds*, the public interface a protocol implements to
have its subjects judged.

The engine (``jobs.services``, ``jobs.driving``, ``jobs.execution``) owns claiming, leases, limits, retries, the
call ledger, progress and the gates; it does not know what a task is about. A task kind says the rest:

- **which tasks** a run gets (``plan``: check the request, run the orientation gate on every ordered prompt,
  return a factory for the task rows and how many subjects were skipped);
- **what to ask** (``specs``: the blind prompt of each claimed task, and any reason it must not be sent);
- **how an answer reads** (``parse``; by default the two-sided answer of ``jobs.parsing.parse_judge_answer``);
- **where the verdict goes** (``judgment``: the rows to store for a task's parsed answer; ``judgment_model``);
- **what a stored run answered** (``recorded``: the answers a replay of that run gives, keyed like the tasks);
- and, optionally, what follows a run (``after``), how the run page shows a verdict (``describe``) or the whole run
  (``page``).

A protocol registers its kinds with :func:`subjects_register` from its ``AppConfig.ready()``; the registry
(``arena.protocols.judge_subjects``) raises on a second kind of one name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.db import models

from arena.protocols import judge_subjects


@dataclass
class JudgeSpec:
    """One claimed task, ready to send: its prompt (``rendered``), or the reason it must not be sent."""

    task_id: int
    subject_id: int  # the id of what is judged: with ``order``, the key a replay answers by
    order: str
    rendered: Any  # jobs.prompts.RenderedTask | None
    problem: str | None
    meaning: dict[str, Any] = field(default_factory=dict)  # what A and B stand for, for ``judgment``


@dataclass(frozen=True)
class JudgeSubjects:
    name: str
    label: str  # what its runs judge, as pages say it: "canonical pairs", "HypoArena matches"
    protocol: str  # the protocol whose benchmarks it judges
    task_model: type[models.Model]
    judgment_model: type[models.Model]
    subject_field: str  # the task's and the judgment's foreign key to the subject
    # (benchmark, request, template) -> (run -> task rows, subjects skipped); raises RunError with what to do
    plan: Callable[[Any, Any, Any], tuple[Callable[[Any], list[models.Model]], int]]
    # (run, claimed task ids, template, alias check, participant names) -> specs
    specs: Callable[[Any, list[Any], Any, Any, list[str]], list[JudgeSpec]]
    # (run id, spec, result) -> an unsaved judgment row (or a list of rows, the judgment row first: every row of an
    # answer is stored in the same transaction, e.g. a HypoArena rubric answer and its scores)
    judgment: Callable[[int, JudgeSpec, Any], models.Model | list[models.Model]]
    # stored run -> {(subject id, order): answer dict as a judge would give it}
    recorded: Callable[[Any], dict[tuple[int, str], dict[str, Any]]]
    # run type -> default prompt version
    default_prompts: dict[str, str]
    # a stored judgment -> (what it judged, as a researcher reads it; a link to that subject's page or "") for the
    # run page; None: str() of the subject, no link
    describe: Callable[[Any], tuple[str, str]] | None = None
    # (answer text, template, spec) -> parsed answer, raising jobs.parsing.ParseError; None: parse_judge_answer
    parse: Callable[[str, Any, JudgeSpec], Any] | None = None
    # run that completed or failed -> work that must follow it (idempotent; e.g. pair and launch a Swiss tournament's
    # next round, or mark the selection waiting for a resume), carried out as the engine's durable step
    # (``jobs.steps``: exactly once, retried through outages and dead workers, the run ends with it); None: nothing
    after: Callable[[Any], None] | None = None
    after_title: str = "the step that follows the run"  # what ``after`` does, for the run's page and log
    # a task is one subject in one presentation order (two texts compared); False: one subject asked once (a rubric,
    # a match label, a listwise ranking) — how pages and commands count a run's tasks
    ordered: bool = True
    # may a run of this kind be its benchmark's canonical judge (the leaderboard's input)?
    canonical: bool = False
    # the refusal when a run of this kind is asked of another protocol's benchmark, checked before anything else
    # ("it has no Lit2Test pairs to judge; ..."); "": the kind's ``plan`` refuses such a benchmark itself
    foreign_refusal: str = ""
    # the key of the run's parameters that keeps the task selection (``JudgeRunRequest.select``)
    selection_key: str = "selection"
    skipped_note: str = "subjects skipped"  # what the subjects a plan skipped are, after their number
    # run -> (the URL of the page with its figures, that page's name); None: "the benchmark's own pages"
    report: Callable[[Any], tuple[str, str]] | None = None
    # (request, run, the engine's page values) -> the run's page; None: the engine's generic run page with ``describe``
    page: Callable[[Any, Any, dict[str, Any]], Any] | None = None
    # run -> its verdicts as two-sided comparisons (``jobs.reliability.Sides``: the compared subject, the two sides,
    # which was shown first, the verdict, the texts' lengths), for the judge-reliability panel; None: the kind does
    # not compare two sides (a rubric, a yes/no question), and its runs have no such panel
    sides: Callable[[Any], Any] | None = None
    # subject ids -> {subject id: (item, side a, side b)} with the keys ``sides`` uses (the item: the cluster the subject
    # belongs to, e.g. its context), for subjects not judged yet: what an adaptive run (``jobs.adaptive``) chooses from;
    # None: the kind's runs cannot be adaptive
    unit_sides: Callable[[list[Any]], dict[Any, tuple[Any, Any, Any]]] | None = None


def subjects_register(kind: JudgeSubjects) -> JudgeSubjects:
    """Register a judging task kind (from the app's ``AppConfig.ready()``); a second kind of one name raises."""
    return judge_subjects.register(kind.name, kind)


def subjects_of(run: Any) -> JudgeSubjects:  # noqa: ANN401
    """The task kind of a judge run (its ``subjects`` field)."""
    kind = judge_subjects.get(run.subjects)
    if kind is None:
        raise LookupError(f"judge run {run.pk} judges {run.subjects!r}, and no installed app provides that task kind")
    return kind


def subjects_named(name: str) -> JudgeSubjects | None:
    return judge_subjects.get(name)


def subjects_all() -> list[JudgeSubjects]:
    return judge_subjects.values()
