"""Caches of the leaderboard's inputs, keyed on what the database keeps (issue 10, item 4).

The leaderboard document itself is cached in :func:`arena.selectors.run_leaderboard`, keyed on the run's
change counter. The human win rate beside it comes from the annotation app; recomputing it from every label
on every request cost 0.67 s with 2,091 labels, so it is cached here by its own fingerprint: per formal study
of the benchmark, its id, seed, number of labels and newest label id. Labels are only ever added (an
assignment gets one; ``annotation.services.assignment_submit``) or deleted with their study, and a study's
items, round and seed are fixed when it is created, so the fingerprint changes whenever the report can.

(The fingerprint reads annotation tables; it would sit more naturally beside ``human_win_rate_report`` in
``annotation/selectors.py``. The leaderboard's callers pass the report in, as before.)
"""

from __future__ import annotations

import hashlib
from typing import Any

from django.core.cache import cache
from django.db.models import Count, Max

from .models import Benchmark

HUMAN_TIMEOUT = 7 * 24 * 3600


def human_figures_version(*, benchmark: Benchmark) -> str:
    """One grouped query over the benchmark's formal studies: (id, seed, labels, newest label id) of each."""
    from annotation.models import Study

    studies = (
        Study.objects.filter(benchmark=benchmark, round=Study.Round.FORMAL)
        .order_by("pk")
        .values_list("pk", "seed")
        .annotate(n=Count("assignments__label"), last=Max("assignments__label"))
    )
    rows = repr(list(studies)).encode()
    # The benchmark's creation time keeps a key from outliving its database (see run_data_version).
    return f"{benchmark.created_at.timestamp():.6f}:{hashlib.sha256(rows).hexdigest()[:24]}"


def human_win_rate_report_cached(*, benchmark: Benchmark) -> dict[str, Any] | None:
    """``annotation.selectors.human_win_rate_report`` for the benchmark, recomputed only when a formal study
    gains a label (or a formal study is created or deleted)."""
    from annotation.selectors import human_win_rate_report

    key = f"human-win-rate:v1:{benchmark.pk}:{human_figures_version(benchmark=benchmark)}"
    found = cache.get(key)
    if found is None:
        found = {"report": human_win_rate_report(benchmark=benchmark)}  # wrapped: a report of None is cached too
        cache.set(key, found, timeout=HUMAN_TIMEOUT)
    return found["report"]


# --------------------------------------------------------------------------- report documents of other run kinds

#: A report document stays cached this long at most; a fingerprint change makes a new key sooner.
REPORT_TIMEOUT = 24 * 3600


def run_rows_fingerprint(run: Any, rows: Any) -> str:
    """What a run contributes to a report, in one aggregate query over ``rows`` (its stored answers, e.g. accepted
    control verdicts or HypoArena verdicts): its id, status, and the rows' number and newest id. Such rows are only
    ever added, or deleted with their run or benchmark, so the fingerprint changes whenever a report reading them can."""
    found = rows.aggregate(n=Count("id"), last=Max("id"))
    return f"{run.pk}.{run.status}.{found['n']}.{found['last']}"


def report_cached(*, namespace: str, benchmark: Benchmark, parts: list[Any], make: Any) -> Any:
    """``make()``, cached under ``namespace``, the benchmark and ``parts`` (fingerprints, replicates, seed). The
    benchmark's creation time keeps a key from outliving its database (see ``run_data_version``). An exception from
    ``make`` is not cached."""
    key = f"{namespace}:{benchmark.pk}:{benchmark.created_at.timestamp():.6f}:" + ":".join(map(str, parts))
    document = cache.get(key)
    if document is None:
        document = make()
        cache.set(key, document, timeout=REPORT_TIMEOUT)
    return document
