"""Caches of report documents, keyed on what the database keeps (issue 10, item 4).

The Lit2Test leaderboard document is cached in :func:`arena.selectors.run_leaderboard`, keyed on the run's change
counter; the human win rate beside it is cached by the app that computes it (``annotation.caching``). Every other
protocol's report is cached here (:func:`report_cached`) under fingerprints of the rows it reads.
"""

from __future__ import annotations

from typing import Any

from django.core.cache import cache
from django.db.models import Count, Max

from .models import Benchmark

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
