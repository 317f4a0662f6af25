"""The engine's run kinds: what the engine needs to know to launch, drive, watch, close, resume and list the runs of
each kind, registered once by the app that owns them.

A run kind is a pair of models (a run and its :class:`~jobs.models.ClaimableTask` rows) and the functions that say
how a driver works on it (``execute``), how a run whose tasks are all done closes (``finish``) and how its progress
reads (``progress``). The engine's lifecycle (``jobs.lifecycle``: launch, pause, resume, cancel, progress, the runs
page) and watchdog (``jobs.execution``) are written once over this registry. Judge runs are the kind ``judge``
(``jobs.services``); each protocol registers its other kinds (an elicitation kind through ``jobs.elicitation``, a
scoring kind directly).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.db import models

from arena.registry import Registry

if TYPE_CHECKING:
    from .selectors import Progress


@dataclass(frozen=True)
class Step:
    """What must follow a run once its tasks are done (``jobs.steps``): pair the submissions a generation run
    elicited, move a Swiss selection to its next round ... It is recorded in the transaction that closes the run's
    tasks and carried out in a transaction of its own that also ends the run, so it happens exactly once, survives a
    dead worker or a database outage (the watchdog tries it again) and the run never reads ``completed`` before it."""

    title: str  # what it does, for the run's page and log: "pair the new submissions into matches"
    # (run, already showing the status it ends with) -> do it; idempotent, inside the transaction that ends the run
    carry_out: Callable[[Any], None]


@dataclass(frozen=True)
class RunKindSpec:
    kind: str  # RunEvent.kind and RunDriver.kind of its runs
    run_model: type[models.Model]
    task_model_of: Callable[[int], type[models.Model]]  # a run's task model (a judge run's depends on what it judges)
    execute: Callable[[int], str]  # drive the run's open tasks until done, paused or cancelled; returns its status
    finish: Callable[[int], str]  # close the run if nothing is left to do; returns its status
    progress: Callable[[Any], Progress]  # a run's counts, for pages, commands and the API
    title: str = ""  # how pages name such runs: "Lit2Test generation", "Intrinsic scoring"
    noun: str = "run"  # how a refusal names one: "run 4", "scoring run 4"
    # Enqueue one driver (after commit); None: the engine's generic task (jobs.tasks.run_execute_task)
    enqueue: Callable[[int], None] | None = None
    # (run) -> its title on the runs page's table of other runs; None: not listed there (judge runs have their own)
    listed: Callable[[Any], str] | None = None
    resumes_cancelled: bool = True  # a cancelled run may resume (its skipped tasks reopen); judge runs may not
    # (run) -> the step that must follow it once its tasks are done (``Step``); None, or returning None: nothing
    step: Callable[[Any], Step | None] | None = None


run_kinds: Registry[RunKindSpec] = Registry("run kind")


def run_kind_register(spec: RunKindSpec) -> RunKindSpec:
    return run_kinds.register(spec.kind, spec)


def run_kind_of(run: models.Model) -> RunKindSpec:
    """The kind of a run object, by its model."""
    for spec in run_kinds.values():
        if isinstance(run, spec.run_model):
            return spec
    raise LookupError(f"no run kind is registered for {type(run).__name__} objects")
