"""Read queries over benchmarks."""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.db.models import Count, Q, QuerySet

from .models import Benchmark, JudgeRun, OrderedJudgment, Paper

if TYPE_CHECKING:
    import pandas as pd


def benchmark_list() -> QuerySet[Benchmark]:
    return Benchmark.objects.annotate(
        n_contexts=Count("contexts", distinct=True),
        n_text_contexts=Count("contexts", filter=Q(contexts__has_text=True), distinct=True),
        n_participants=Count("participants", distinct=True),
        n_pairs=Count("pairs", distinct=True),
        n_runs=Count("runs", distinct=True),
    )


@dataclass(frozen=True)
class RepeatedPaper:
    key: str
    title: str
    contexts: list[str]


def paper_provenance_audit(*, benchmark: Benchmark) -> list[RepeatedPaper]:
    """Papers that appear in more than one context of the benchmark.

    A paper is identified by its source paper id, else its URL, else its normalised title,
    so that a paper re-entered with a different id but the same URL is still caught.
    """
    seen: dict[str, set[str]] = defaultdict(set)
    titles: dict[str, str] = {}
    for paper in Paper.objects.filter(context__benchmark=benchmark).select_related("context"):
        keys = {f"title:{' '.join(paper.title.lower().split())}"}
        if paper.source_paper_id:
            keys.add(f"id:{paper.source_paper_id}")
        if paper.url:
            keys.add(f"url:{paper.url.rstrip('/')}")
        for key in keys:
            seen[key].add(paper.context.external_id)
            titles.setdefault(key, paper.title)
    repeated: dict[frozenset[str], RepeatedPaper] = {}
    for key, contexts in sorted(seen.items()):
        if len(contexts) > 1:
            repeated.setdefault(frozenset(contexts) | {titles[key]}, RepeatedPaper(key, titles[key], sorted(contexts)))
    return list(repeated.values())


# --------------------------------------------------------------------------- leaderboards

LEADERBOARD_REPLICATES = 10_000
LEADERBOARD_SEED = 0
LEADERBOARD_PSEUDO_COUNT = 0.5
CASE_COLUMNS = ["case", "context", "batch", "model_1", "model_2", "original", "reverse", "shown_a_original"]


def benchmark_resolve(*, reference: str) -> Benchmark:
    """A benchmark by id, ``name@version``, or name (its newest version)."""
    from django.core.exceptions import ObjectDoesNotExist

    if reference.isdigit():
        return Benchmark.objects.get(pk=int(reference))
    name, _, version = reference.partition("@")
    found = Benchmark.objects.filter(name=name)
    if version:
        found = found.filter(version=version)
    benchmark = found.order_by("-created_at", "-id").first()
    if benchmark is None:
        raise ObjectDoesNotExist(f"no benchmark {reference!r}")
    return benchmark


def run_default(*, benchmark: Benchmark) -> JudgeRun | None:
    """The canonical run of the benchmark, else its newest holistic run."""
    runs = benchmark.runs.filter(run_type="holistic")
    return runs.filter(is_canonical=True).order_by("-created_at", "-id").first() or runs.order_by("-created_at", "-id").first()


def run_cases_frame(*, run: JudgeRun, pair_ids: Iterable[int] | None = None) -> pd.DataFrame:
    """One row per canonical pair the run has judged, in the statistics package's ``cases`` shape.

    Verdicts are winner names, ``"TIE"``, or None when that order has no accepted judgment yet.
    """
    import pandas as pd

    from .stats import TIE

    judgments = OrderedJudgment.objects.filter(run=run, status=OrderedJudgment.Status.ACCEPTED)
    if pair_ids is not None:
        judgments = judgments.filter(pair_id__in=list(pair_ids))
    rows: dict[int, dict[str, Any]] = {}
    values = judgments.values_list(
        "pair_id",
        "order",
        "is_tie",
        "winner__name",
        "shown_a__name",
        "pair__internal_key",
        "pair__context__external_id",
        "pair__context__batch__name",
        "pair__participant_a__name",
        "pair__participant_b__name",
    )
    for pair_id, order, is_tie, winner, shown_a, key, context, batch, model_a, model_b in values.iterator(chunk_size=5000):
        row = rows.setdefault(
            pair_id,
            {"case": key, "context": context, "batch": batch or "", "model_1": model_a, "model_2": model_b,
             "original": None, "reverse": None, "shown_a_original": None},
        )
        row[order] = TIE if is_tie else winner
        if order == "original" and shown_a:
            row["shown_a_original"] = shown_a
        elif order == "reverse" and shown_a and row["shown_a_original"] is None:
            row["shown_a_original"] = model_b if shown_a == model_a else model_a
    return pd.DataFrame(list(rows.values()), columns=CASE_COLUMNS)


def run_data_version(*, run: JudgeRun) -> str:
    """A fingerprint of the run's accepted verdicts: equal fingerprints mean equal statistics."""
    digest = hashlib.sha256()
    accepted = OrderedJudgment.objects.filter(run=run, status=OrderedJudgment.Status.ACCEPTED).order_by("id")
    for row in accepted.values_list("id", "pair_id", "order", "is_tie", "winner_id", "shown_a_id").iterator(chunk_size=5000):
        digest.update(repr(row).encode())
    return digest.hexdigest()[:32]


def run_leaderboard(
    *,
    run: JudgeRun,
    replicates: int = LEADERBOARD_REPLICATES,
    seed: int = LEADERBOARD_SEED,
    pseudo_count: float = LEADERBOARD_PSEUDO_COUNT,
) -> dict[str, Any]:
    """The leaderboard document of a run, cached by the data it is computed from.

    A poll during a live run recomputes only when a new verdict has arrived.
    """
    from django.core.cache import cache

    from .stats import leaderboard_document

    key = f"leaderboard:v1:{run.pk}:{run_data_version(run=run)}:{replicates}:{seed}:{pseudo_count}"
    document = cache.get(key)
    if document is None:
        document = leaderboard_document(run_cases_frame(run=run), replicates=replicates, seed=seed, pseudo_count=pseudo_count)
        cache.set(key, document, timeout=7 * 24 * 3600)
    return document | {
        "run": {
            "id": run.pk,
            "judge_model": run.judge_model,
            "label": run.label,
            "provider": run.provider,
            "replay": run.provider == JudgeRun.Provider.RECORDED,
            "status": run.status,
            "is_canonical": run.is_canonical,
        },
        "benchmark": {"id": run.benchmark_id, "name": run.benchmark.name, "version": run.benchmark.version},
    }
