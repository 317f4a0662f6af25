"""The human win rate of a benchmark, cached by its own fingerprint, as the provider of human figures that the
leaderboards ask for (``arena.extensions.human_figures_for``; registered in ``AnnotationConfig.ready``).

Recomputing it from every label on every request cost 0.67 s with 2,091 labels, so it is cached by a fingerprint:
per formal study of the benchmark, its id, name, seed, number of labels and newest label id, and the code that computes
it (this module's selectors). Labels are only ever added (an assignment gets one;
``annotation.services.assignment_submit``) or deleted with their study — the admin shows labels and items read-only —
and a study's items, round and seed are fixed when it is created, so the fingerprint changes whenever the report can.
The report is kept in the database too (``arena.caching.stored_document``), at most as long as the cache keeps it.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path
from typing import Any

from django.db.models import Count, Max

from arena.caching import stored_document
from arena.models import Benchmark, BenchmarkDataVersion


def human_figures_version(*, benchmark: Benchmark) -> str:
    """One grouped query over the benchmark's formal studies: (id, seed, labels, newest label id) of each."""
    from .models import Study

    studies = (
        Study.objects.filter(benchmark=benchmark, round=Study.Round.FORMAL)
        .order_by("pk")
        .values_list("pk", "name", "seed")
        .annotate(n=Count("assignments__label"), last=Max("assignments__label"))
    )
    # The report names the benchmark's participants: their renaming moves the benchmark's data counter.
    data = list(BenchmarkDataVersion.objects.filter(benchmark_id__in=[0, benchmark.pk]).order_by("pk").values_list("version"))
    rows = repr((list(studies), data)).encode()
    # The benchmark's creation time keeps a key from outliving its database (see run_data_version).
    return f"{benchmark.created_at.timestamp():.6f}:{hashlib.sha256(rows).hexdigest()[:24]}:{_code_version()}"


@functools.cache
def _code_version() -> str:
    """A hash of the code that turns labels into the report (the statistics' own is added by ``stored_document``)."""
    return hashlib.sha256(Path(__file__).resolve().with_name("selectors.py").read_bytes()).hexdigest()[:12]


def human_win_rate_report_cached(*, benchmark: Benchmark) -> dict[str, Any] | None:
    """``annotation.selectors.human_win_rate_report`` for the benchmark, recomputed only when a formal study
    gains a label (or a formal study is created or deleted)."""
    from .selectors import human_win_rate_report

    # Kept in the database too (arena.caching.stored_document): a cold leaderboard after the cache lost it reads one
    # row instead of bootstrapping the labels again (issue 25, item 1).
    slot = f"human-win-rate:v1:{benchmark.pk}"
    found = stored_document(
        slot=slot,
        key=f"{slot}:{human_figures_version(benchmark=benchmark)}",
        benchmark_id=benchmark.pk,
        make=lambda: {"report": human_win_rate_report(benchmark=benchmark)},  # wrapped: a report of None is kept too
    )
    return found["report"]


def human_figures(benchmark: Benchmark) -> dict[str, Any] | None:
    """The provider of human figures the leaderboards ask for (``arena.extensions.human_figures_for``)."""
    return human_win_rate_report_cached(benchmark=benchmark)
