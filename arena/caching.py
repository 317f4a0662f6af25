"""Caches of report documents, keyed on what the database keeps (issue 10, item 4).

The Lit2Test leaderboard document is cached in :func:`arena.selectors.run_leaderboard`, keyed on the run's change
counter; the human win rate beside it is cached by the app that computes it (``annotation.caching``). Every other
protocol's report is cached here (:func:`report_cached`) under fingerprints of the rows it reads.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import logging
import pickle
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import DatabaseError, transaction
from django.db.models import Count, Max
from django.utils import timezone

from .models import Benchmark, StoredDocument

log = logging.getLogger(__name__)

# --------------------------------------------------------------------------- documents kept in the database too

#: A document stays in the cache, and is served from the database, this long at most after it was computed: its key
#: follows the data it reads (the run's change counter, the labels' fingerprint) and the statistics' code
#: (:func:`statistics_version`), and this bounds what a key cannot see (a hand edit in a shell). ``manage.py
#: forget_reports`` forgets every one at once.
DOCUMENT_TIMEOUT = 7 * 24 * 3600


@functools.cache
def statistics_version() -> str:
    """A hash of the statistics' source (``arena/stats``), part of every stored document's key: a deploy that changes
    how a figure is computed never serves a figure the old code computed."""
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).resolve().parent.joinpath("stats").rglob("*.py")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def stored_document(*, slot: str, key: str, benchmark_id: int, make: Callable[[], Any], durable: bool = True) -> Any:
    """``make()`` under ``key``: from the cache, else (``durable``) from the database
    (:class:`~arena.models.StoredDocument`, one row per ``slot``), else computed and kept in both. The cache answers
    warm reads; the database answers a cold one (the cache restarted, evicted the key, or never had it because a
    worker stored the document as a run ended). Callers pass ``durable=False`` for what a client's parameters make
    (a seed, a replicate count, a subset of pairs: one row each would grow the table without bound): cache only. An
    exception from ``make`` stores nothing."""
    key = f"{key}:{statistics_version()}"
    document = cache.get(key)
    if document is not None:
        return document
    document, timeout = _stored(slot, key) if durable else (None, DOCUMENT_TIMEOUT)
    if document is None:
        started = timezone.now()
        document = make()
        if durable:
            stored_write(slot=slot, key=key, benchmark_id=benchmark_id, document=document, started=started)
    cache.set(key, document, timeout=timeout)
    return document


def _signature(blob: bytes) -> bytes:
    return hmac.new(settings.SECRET_KEY.encode(), blob, hashlib.sha256).digest()


def stored_read(*, slot: str, key: str) -> Any:
    """The document stored in ``slot`` if it was computed under ``key`` less than :data:`DOCUMENT_TIMEOUT` ago and
    its signature holds (else None: absent, stale, or not written by :func:`stored_write` with this secret key)."""
    return _stored(slot, key)[0]


def _stored(slot: str, key: str) -> tuple[Any, int]:
    """:func:`stored_read`, and how long the document may stay in the cache: what is left of its time, so that it is
    never served longer than :data:`DOCUMENT_TIMEOUT` after it was computed."""
    now = timezone.now()
    try:
        row = (
            StoredDocument.objects.filter(slot=slot, key=key, stored_at__gte=now - timedelta(seconds=DOCUMENT_TIMEOUT))
            .values_list("document", "stored_at")
            .first()
        )
    except DatabaseError:  # e.g. the code is deployed before `migrate` made the table: computed, as before
        log.warning("stored documents cannot be read (%s); run manage.py migrate", slot, exc_info=True)
        return None, DOCUMENT_TIMEOUT
    if row is None:
        return None, DOCUMENT_TIMEOUT
    blob, stored_at = bytes(row[0]), row[1]
    left = max(1, int(DOCUMENT_TIMEOUT - (now - stored_at).total_seconds()))
    signature, body = blob[:32], blob[32:]
    if not hmac.compare_digest(signature, _signature(body)):
        log.warning("the stored document %s is not signed with this SECRET_KEY; it is computed again", slot)
        return None, DOCUMENT_TIMEOUT
    try:
        # Signed with SECRET_KEY by stored_write: whoever can write this table without the key cannot make this
        # unpickle anything (the same trust as Django's signed cookies).
        return pickle.loads(body), left  # noqa: S301
    except Exception:  # noqa: BLE001 - unreadable (e.g. written by an older version of a class): computed again
        log.warning("the stored document %s could not be read; it is computed again", slot, exc_info=True)
        return None, DOCUMENT_TIMEOUT


def stored_write(*, slot: str, key: str, benchmark_id: int, document: Any, started: datetime | None = None) -> None:
    """Keep ``document`` as the one of ``slot``, signed, unless a row stored after ``started`` (when its computation
    began) is there: a slow computation of older data never replaces what a later one stored (e.g. the worker's, at
    the run's end). A database that refuses (a lost connection, a read-only replica) loses only this shortcut: the
    next cold read computes the document again."""
    body = pickle.dumps(document, protocol=pickle.HIGHEST_PROTOCOL)
    values = {"key": key, "benchmark_id": benchmark_id, "document": _signature(body) + body, "stored_at": timezone.now()}
    try:
        with transaction.atomic():
            older = StoredDocument.objects.filter(slot=slot)
            if started is not None:
                older = older.filter(stored_at__lt=started)
            if not older.update(**values) and not StoredDocument.objects.filter(slot=slot).exists():
                StoredDocument.objects.create(slot=slot, **values)
    except DatabaseError:  # an IntegrityError too: another request stored the slot's row meanwhile, which is as good
        log.warning("the document %s could not be stored in the database; a cold read computes it again", slot)


def stored_forget() -> int:
    """Forget every stored document (``manage.py forget_reports``); returns how many rows went."""
    deleted, _ = StoredDocument.objects.all().delete()
    return deleted


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
