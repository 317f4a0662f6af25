"""Caches of report documents, keyed on what the database keeps (issue 10, item 4).

The Lit2Test leaderboard document is cached in :func:`arena.selectors.run_leaderboard`, keyed on the run's change
counter; the human win rate beside it is cached by the app that computes it (``annotation.caching``). Every other
protocol's report is cached here (:func:`report_cached`) under fingerprints of the rows it reads.
"""

from __future__ import annotations

import logging
import pickle
from collections.abc import Callable
from typing import Any

from django.core.cache import cache
from django.db import DatabaseError, transaction
from django.db.models import Count, Max

from .models import Benchmark, StoredDocument

log = logging.getLogger(__name__)

# --------------------------------------------------------------------------- documents kept in the database too

#: A document computed from a run's verdicts stays in the cache this long at most (its key changes with the data).
DOCUMENT_TIMEOUT = 7 * 24 * 3600


def stored_document(*, slot: str, key: str, benchmark_id: int, make: Callable[[], Any]) -> Any:
    """``make()`` under ``key``: from the cache, else from the database (:class:`~arena.models.StoredDocument`, one row
    per ``slot``), else computed and kept in both. The cache answers warm reads; the database answers a cold one (the
    cache restarted, evicted the key, or never had it because a worker stored the document as a run ended). An
    exception from ``make`` stores nothing."""
    document = cache.get(key)
    if document is not None:
        return document
    document = stored_read(slot=slot, key=key)
    if document is None:
        document = make()
        stored_write(slot=slot, key=key, benchmark_id=benchmark_id, document=document)
    cache.set(key, document, timeout=DOCUMENT_TIMEOUT)
    return document


def stored_read(*, slot: str, key: str) -> Any:
    """The document stored in ``slot`` if it was computed under ``key`` (else None: absent or stale)."""
    blob = StoredDocument.objects.filter(slot=slot, key=key).values_list("document", flat=True).first()
    if blob is None:
        return None
    try:
        return pickle.loads(bytes(blob))  # noqa: S301 - written by stored_write only, like Django's database cache
    except Exception:  # noqa: BLE001 - unreadable (e.g. written by an older version of a class): computed again
        log.warning("the stored document %s could not be read; it is computed again", slot, exc_info=True)
        return None


def stored_write(*, slot: str, key: str, benchmark_id: int, document: Any) -> None:
    """Keep ``document`` as the one of ``slot`` (replacing an older one). A database that refuses (a lost
    connection, a read-only replica) loses only this shortcut: the next cold read computes the document again."""
    blob = pickle.dumps(document, protocol=pickle.HIGHEST_PROTOCOL)
    try:
        with transaction.atomic():
            StoredDocument.objects.update_or_create(
                slot=slot, defaults={"key": key, "benchmark_id": benchmark_id, "document": blob}
            )
    except DatabaseError:
        log.warning("the document %s could not be stored in the database; a cold read computes it again", slot, exc_info=True)


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
