"""What a judge run judges: the run engine's *task kinds* for judging.

The engine (``jobs.engine``, ``jobs.execution``) owns claiming, leases, limits, retries, the call ledger and
progress; it does not know what a task is about. A task kind says the rest, in four parts:

- **which tasks** a run gets (``plan``: check the request, run the orientation gate on every ordered prompt,
  return a factory for the task rows and how many subjects were skipped);
- **what to ask** (``specs``: the blind prompt of each claimed task, and any reason it must not be sent);
- **where the verdict goes** (``judgment``: the row to store for a task's parsed answer; ``judgment_model``);
- **what a stored run answered** (``recorded``: the answers a replay of that run gives, keyed like the tasks).

How an answer is parsed is shared by every judging kind (``jobs.parsing.parse_judge_answer``): the judge sees
the same prompts and answers in the same JSON whatever it compares. ``pairs`` (the benchmark's canonical
pairs) is registered by ``jobs.services``; ``controls`` (diagnostic control variants against their clean
source) by the ``controls`` app. A new protocol that judges two texts in both orders registers a kind here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.db import models


@dataclass
class JudgeSpec:
    """One claimed ordered task, ready to send: its prompt (``rendered``), or the reason it must not be sent."""

    task_id: int
    subject_id: int  # the pair's or the variant's id: with ``order``, the key a replay answers by
    order: str
    rendered: Any  # jobs.prompts.RenderedTask | None
    problem: str | None
    meaning: dict[str, Any] = field(default_factory=dict)  # what A and B stand for, for ``judgment``


@dataclass(frozen=True)
class JudgeSubjects:
    name: str
    task_model: type[models.Model]
    judgment_model: type[models.Model]
    subject_field: str  # the task's and the judgment's foreign key to the subject ("pair", "variant")
    # (benchmark, request, template) -> (run -> task rows, subjects skipped); raises RunError with what to do
    plan: Callable[[Any, Any, Any], tuple[Callable[[Any], list[models.Model]], int]]
    # (run, claimed task rows, template, alias check, participant names) -> specs
    specs: Callable[[Any, list[Any], Any, Any, list[str]], list[JudgeSpec]]
    # (run id, spec, result) -> an unsaved judgment row (or a list of rows, the judgment row first: every row of an
    # answer is stored in the same transaction, e.g. a HypoArena rubric answer and its scores)
    judgment: Callable[[int, JudgeSpec, Any], models.Model | list[models.Model]]
    # stored run -> {(subject id, order): answer dict as a judge would give it}
    recorded: Callable[[Any], dict[tuple[int, str], dict[str, Any]]]
    # run type -> default prompt version; None: jobs.prompts.DEFAULT_PROMPT (holistic / structured)
    default_prompts: dict[str, str] | None = None
    # a stored judgment -> (what it judged, as a researcher reads it; a link to that subject's page or "") for the
    # run page; None: str() of the subject, no link
    describe: Callable[[Any], tuple[str, str]] | None = None
    # (answer text, template, spec) -> parsed answer, raising jobs.parsing.ParseError; None: parse_judge_answer
    parse: Callable[[str, Any, JudgeSpec], Any] | None = None
    # run that completed or failed -> work that follows it (idempotent; e.g. pair and launch a Swiss tournament's next
    # round, or mark the selection waiting for a resume); None: nothing
    after: Callable[[Any], None] | None = None
    # a task is one subject in one presentation order (two texts compared); False: one subject asked once (a rubric,
    # a match label, a listwise ranking) — how pages and commands count a run's tasks
    ordered: bool = True


SUBJECTS: dict[str, JudgeSubjects] = {}


def subjects_register(kind: JudgeSubjects) -> None:
    SUBJECTS[kind.name] = kind


def subjects_of(run: Any) -> JudgeSubjects:
    """The task kind of a judge run (its ``subjects`` field)."""
    try:
        return SUBJECTS[run.subjects]
    except KeyError:
        raise LookupError(f"judge run {run.pk} judges {run.subjects!r}, and no installed app provides that task kind") from None
