"""Read queries over benchmarks."""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.db import connection, models
from django.db.models import QuerySet

from .counts import with_counts
from .models import (
    PAIRS,
    Benchmark,
    BenchmarkDataVersion,
    CanonicalPair,
    Context,
    JudgeRun,
    JudgeRunVersion,
    OrderedJudgment,
    Paper,
    Participant,
)
from .numbers import whole_number

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from .stats.folding import EncodedCases


def benchmark_list() -> QuerySet[Benchmark]:
    # The counts are kept by the database (arena.counts): counting them here grew with the pairs.
    return with_counts(Benchmark.objects.all())


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
#: Replicates of the style-controlled fit's context bootstrap (each is a Newton fit over every judgment, not a
#: matrix fit: bench/bench_style_leaderboard.py times them); :data:`arena.stats.style_leaderboard.STYLE_REPLICATES`,
#: kept here too so that a request need not load the statistics to validate its parameters.
STYLE_REPLICATES = 1_000
CASE_COLUMNS = ["case", "context", "batch", "model_1", "model_2", "original", "reverse", "shown_a_original"]


def benchmark_resolve(*, reference: str) -> Benchmark:
    """A benchmark by id, ``name@version``, or name (its newest version)."""
    from django.core.exceptions import ObjectDoesNotExist

    if whole_number(reference):  # "²" is a name here
        found = Benchmark.objects.filter(pk=int(reference))
    else:
        name, _, version = reference.partition("@")
        found = Benchmark.objects.filter(name=name, **({"version": version} if version else {}))
    benchmark = found.order_by("-created_at", "-id").first()
    if benchmark is None:  # an id too: "Benchmark matching query does not exist" named nothing
        raise ObjectDoesNotExist(f"no benchmark {reference!r} (give its id, name or name@version)")
    return benchmark


def run_default(*, benchmark: Benchmark) -> JudgeRun | None:
    """The canonical run of the benchmark, else its newest holistic run."""
    runs = benchmark.runs.filter(run_type="holistic", subjects=PAIRS)
    return runs.filter(is_canonical=True).order_by("-created_at", "-id").first() or runs.order_by("-created_at", "-id").first()


def run_cases_frame(*, run: JudgeRun, pair_ids: Iterable[int] | None = None) -> pd.DataFrame:
    """One row per canonical pair the run has judged, in the statistics package's ``cases`` shape, in pair-id order.

    Verdicts are winner names, ``"TIE"``, or None when that order has no accepted judgment yet;
    ``shown_a_original`` comes from the original order's record, else is derived from the reverse order's.
    Three flat queries (verdicts as ids, the benchmark's pairs, its participants) joined in pandas: joining
    names in SQL cost 0.9 s at 112,000 verdicts, most of it PostgreSQL building wide rows.
    """
    import pandas as pd

    from .stats import TIE

    judgments = OrderedJudgment.objects.filter(run=run, status=OrderedJudgment.Status.ACCEPTED)
    if pair_ids is not None:
        judgments = judgments.filter(pair_id__in=list(pair_ids))
    verdicts = pd.DataFrame.from_records(
        list(judgments.values_list("pair_id", "order", "is_tie", "winner_id", "shown_a_id")),
        columns=["pair", "order", "is_tie", "winner", "shown_a"],
    )
    if verdicts.empty:
        return pd.DataFrame(columns=CASE_COLUMNS)
    names = dict(Participant.objects.filter(benchmark_id=run.benchmark_id).values_list("id", "name"))
    pair_rows = CanonicalPair.objects.filter(benchmark_id=run.benchmark_id)
    if pair_ids is not None:
        pair_rows = pair_rows.filter(pk__in=verdicts["pair"].unique().tolist())
    pairs = pd.DataFrame.from_records(
        list(
            pair_rows.values_list(
                "id", "internal_key", "context__external_id", "context__batch__name", "participant_a_id", "participant_b_id"
            )
        ),
        columns=["pair", "case", "context", "batch", "a", "b"],
    ).set_index("pair")
    verdicts["verdict"] = verdicts["winner"].map(names).where(~verdicts["is_tie"].astype(bool), TIE)
    by_order = verdicts.set_index(["pair", "order"])
    wide = by_order["verdict"].unstack("order")
    shown = by_order["shown_a"].unstack("order")
    out = pairs.loc[wide.index.sort_values()].copy()
    for order in ("original", "reverse"):
        out[order] = wide[order] if order in wide else None
    out = out.astype({"original": object, "reverse": object})
    out[["original", "reverse"]] = out[["original", "reverse"]].where(out[["original", "reverse"]].notna(), None)
    # The model shown as A in the original order: recorded there, else the one not shown as A in the reverse.
    original_a = shown["original"] if "original" in shown else pd.Series(index=shown.index, dtype=float)
    reverse_a = shown["reverse"] if "reverse" in shown else pd.Series(index=shown.index, dtype=float)
    reverse_a = reverse_a.reindex(out.index)
    from_reverse = reverse_a.where(reverse_a.isna(), out["b"].where(reverse_a == out["a"], out["a"]))
    shown_id = original_a.reindex(out.index).combine_first(from_reverse)
    out["shown_a_original"] = [None if pd.isna(x) else names.get(int(x)) for x in shown_id]
    out["model_1"] = out["a"].map(names)
    out["model_2"] = out["b"].map(names)
    out["batch"] = out["batch"].fillna("")
    return out.reset_index(drop=True)[CASE_COLUMNS]


def _pair_outcomes_sql(run: JudgeRun, pair_ids: Iterable[int] | None) -> tuple[str, list[Any]]:
    """One row per canonical pair the run has an accepted judgment on: the pair, its context, its two stored sides
    and a code per order and for the side shown as A in the original order
    (:data:`arena.stats.pair_rows.SIDE_NONE` ... ``SIDE_OTHER``), folded by PostgreSQL or SQLite.

    The judgments are grouped by pair first (one pass over the run's accepted rows; at most one per pair and order)
    and only then joined to the pairs: grouping the joined rows made PostgreSQL sort 1.12M wide rows (2 s).
    """
    from django.db import connection

    from .stats.pair_rows import SIDE_A, SIDE_B, SIDE_NONE, SIDE_OTHER, SIDE_TIE

    judgments = OrderedJudgment.objects.filter(run_id=run.pk, status=OrderedJudgment.Status.ACCEPTED)
    if pair_ids is not None:
        judgments = judgments.filter(pair_id__in=list(pair_ids))
    # A TIE is winner 0 (no participant has id 0); no accepted judgment in an order leaves its maximum NULL.
    outcome = models.Case(
        models.When(is_tie=True, then=models.Value(0)), default=models.F("winner_id"), output_field=models.BigIntegerField()
    )
    grouped = (
        judgments.values("pair_id")
        .annotate(
            ow=models.Max(outcome, filter=models.Q(order="original")),
            rw=models.Max(outcome, filter=models.Q(order="reverse")),
            os=models.Max("shown_a_id", filter=models.Q(order="original")),
            rs=models.Max("shown_a_id", filter=models.Q(order="reverse")),
        )
        .order_by()
    )
    inner, params = grouped.query.sql_with_params()
    meta = CanonicalPair._meta
    pair_a, pair_b = (f"p.{meta.get_field(f).column}" for f in ("participant_a", "participant_b"))

    def verdict(column: str) -> str:
        return (
            f"CASE WHEN {column} IS NULL THEN {SIDE_NONE} WHEN {column} = 0 THEN {SIDE_TIE} WHEN {column} = {pair_a} "
            f"THEN {SIDE_A} WHEN {column} = {pair_b} THEN {SIDE_B} ELSE {SIDE_OTHER} END"
        )

    # The side shown as A in the original order: recorded there, else the one not shown as A in the reverse.
    shown = (
        f"CASE WHEN g.os IS NOT NULL THEN (CASE WHEN g.os = {pair_a} THEN {SIDE_A} WHEN g.os = {pair_b} THEN {SIDE_B} "
        f"ELSE {SIDE_OTHER} END) WHEN g.rs IS NULL THEN {SIDE_NONE} WHEN g.rs = {pair_a} THEN {SIDE_B} ELSE {SIDE_A} END"
    )
    columns = [
        "g.pair_id",
        f"p.{meta.get_field('context').column}",
        pair_a,
        pair_b,
        f"({verdict('g.ow')}) + 5 * ({verdict('g.rw')}) + 25 * ({shown})",
    ]
    # The pairs' benchmark is named too, so that only its pairs are read (an index scan, not every benchmark's pairs).
    sql = (
        f"SELECT {', '.join(columns)} FROM ({inner}) g JOIN {connection.ops.quote_name(meta.db_table)} p "
        f"ON p.{meta.pk.column} = g.pair_id "
        f"WHERE p.{meta.get_field('benchmark').column} = %s"
    )
    return sql, [*params, run.benchmark_id]


def _pair_outcome_rows(run: JudgeRun, pair_ids: Iterable[int] | None) -> np.ndarray:
    """:func:`_pair_outcomes_sql`'s rows as an int64 array (n, 5). PostgreSQL packs them into one bytea value
    (five big-endian int8 per row): at 560,000 pairs, building 2.8M Python ints from result rows cost 0.9 s."""
    import numpy as np
    from django.core.exceptions import EmptyResultSet
    from django.db import connection

    try:
        sql, params = _pair_outcomes_sql(run, pair_ids)
    except EmptyResultSet:  # an empty list of pairs
        return np.zeros((0, 5), dtype=np.int64)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            packed = " || ".join(f"int8send(r.c{i}::bigint)" for i in range(5))
            cursor.execute(f"SELECT string_agg({packed}, ''::bytea) FROM ({sql}) r(c0, c1, c2, c3, c4)", params)
            data = cursor.fetchone()[0]
            return np.frombuffer(bytes(data or b""), dtype=">i8").astype(np.int64).reshape(-1, 5)
        cursor.execute(sql, params)
        return np.array(cursor.fetchall(), dtype=np.int64).reshape(-1, 5)


def run_encoded_cases(*, run: JudgeRun, pair_ids: Iterable[int] | None = None) -> EncodedCases:
    """The run's cases as the statistics encode them: equal, array for array, to
    ``encode_cases(run_cases_frame(run=run, pair_ids=pair_ids))``, except that ``case`` holds the pair's id rather
    than its internal key (no statistic of the leaderboard reads it).

    The database folds each pair's two ordered judgments into one row of integers (:func:`_pair_outcomes_sql`);
    names, contexts and batches are looked up once per participant and per context
    (:func:`arena.stats.pair_rows.encode_pair_rows`). At 1.12M judgments this replaces building and encoding a
    frame of names (4.7 s).
    """
    from .stats.pair_rows import encode_pair_rows

    rows = _pair_outcome_rows(run, pair_ids)
    names = dict(Participant.objects.filter(benchmark_id=run.benchmark_id).values_list("id", "name"))
    in_benchmark = Context.objects.filter(benchmark_id=run.benchmark_id)
    contexts = {
        pk: (external_id, batch or "") for pk, external_id, batch in in_benchmark.values_list("id", "external_id", "batch__name")
    }
    code = rows[:, 4]
    return encode_pair_rows(
        pair=rows[:, 0],
        context=rows[:, 1],
        a=rows[:, 2],
        b=rows[:, 3],
        original=code % 5,
        reverse=(code // 5) % 5,
        shown_a=code // 25,
        names=names,
        contexts=contexts,
    )


@dataclass(frozen=True)
class RunKeys:
    """The keys :func:`run_data_version` gives, both from one query: ``plain`` and ``with_texts``."""

    plain: str
    with_texts: str


def run_keys(*, run: JudgeRun) -> RunKeys:
    """Both keys of :func:`run_data_version` from one round trip (a leaderboard with style control needs both)."""
    counters = BenchmarkDataVersion._meta.db_table
    with connection.cursor() as cursor:  # every counter in one round trip
        cursor.execute(
            f"SELECT (SELECT version FROM {JudgeRunVersion._meta.db_table} WHERE run_id = %s), "
            f"b.version, b.texts, z.version, z.texts FROM (SELECT 1) AS one "
            f"LEFT JOIN {counters} b ON b.benchmark_id = %s LEFT JOIN {counters} z ON z.benchmark_id = 0",
            [run.pk, run.benchmark_id],
        )
        verdicts, version, text_version, all_version, all_texts = (n or 0 for n in cursor.fetchone())
    plain = f"{run.created_at.timestamp():.6f}:{verdicts}:{version}.{all_version}"
    return RunKeys(plain=plain, with_texts=f"{plain}:{text_version}.{all_texts}")


def run_data_version(*, run: JudgeRun, texts: bool = False) -> str:
    """A key for the run's verdicts and what its leaderboard shows besides them: it changes whenever any of its ordered
    judgments is written, updated or deleted (:class:`~arena.models.JudgeRunVersion`), or its benchmark's contexts,
    batches, participants or pairs (:class:`~arena.models.BenchmarkDataVersion`'s ``version``) and, with ``texts``
    (style control reads them), its proposals or papers (``texts``), in the transaction that does it (kept by database
    triggers). Row 0 of the benchmark counters counts for every benchmark (a TRUNCATE; SQLite's proposals and papers).

    One query, whatever the number of judgments. The run's creation time is part of it, so that a key never outlives
    its database: a run of the same id in a recreated database (tests, a demo reset) sharing the cache has another
    creation time.
    """
    keys = run_keys(run=run)
    return keys.with_texts if texts else keys.plain


def run_data_version_scan(*, run: JudgeRun) -> str:
    """The fingerprint used before the counter: a hash of every accepted verdict, computed in Python (0.28 s
    at 112,000 judgments). Kept for the benchmark (bench/bench_api.py) and the tests that check the counter
    moves whenever this does."""
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
    pair_ids: list[int] | None = None,
    human: dict[str, Any] | None = None,
    style: Sequence[str] = (),
    style_replicates: int = STYLE_REPLICATES,
    side_features: Callable[[JudgeRun], Mapping[tuple[str, str], Mapping[str, float]]] | None = None,
) -> dict[str, Any]:
    """The leaderboard document of a run (optionally restricted to some pairs), cached by the data it is computed from
    (and, with the default parameters, kept in the database too: ``arena.caching.stored_document``).

    A poll during a live run recomputes only when a new verdict has arrived. ``human`` is the caller's human
    win-rate report (``annotation.selectors.human_win_rate_report``: ``{"models": {model: {"rate", "n", "items",
    "ci"}}, "study", "method", "level", ...}``), joined as ``human_win_rate`` ({model: rate}) and
    ``human_win_rate_detail``; the leaderboard does not read annotation data itself.

    ``style`` (features of :data:`arena.stats.style_leaderboard.STYLE_FEATURES`) adds ``style_control``, the
    style-controlled ranking (:func:`arena.stats.style_leaderboard.leaderboard_style`, ``style_replicates``
    context-bootstrap replicates), cached apart from the document under the same data version, so the plain
    document is never refitted for it; ``side_features(run)`` is the protocol's count of each judged text
    (``{(context, model): {feature: count}}``), called only when the section is computed. Without ``style``,
    ``style_control`` is None.
    """
    from .caching import stored_document
    from .stats import leaderboard_document

    scope = "all" if pair_ids is None else hashlib.sha256(repr(sorted(pair_ids)).encode()).hexdigest()[:16]
    keys = run_keys(run=run)
    version = keys.plain
    slot = f"leaderboard:v4:{run.pk}:{scope}:{replicates}:{seed}:{pseudo_count}"

    def compute() -> dict[str, Any]:
        # The database folds the verdicts into integer cases: no frame of names (issue 25, item 1).
        cases = run_encoded_cases(run=run, pair_ids=pair_ids)
        return leaderboard_document(cases, replicates=replicates, seed=seed, pseudo_count=pseudo_count)

    # The database keeps the document pages and the API ask for by default (what a worker stores as a run ends); a
    # subset of pairs or other parameters are a client's choice, kept in the cache only (no row per seed or subset).
    default = (pair_ids, replicates, seed, pseudo_count) == (
        None,
        LEADERBOARD_REPLICATES,
        LEADERBOARD_SEED,
        LEADERBOARD_PSEUDO_COUNT,
    )
    document = stored_document(slot=slot, key=f"{slot}:{version}", benchmark_id=run.benchmark_id, make=compute, durable=default)
    styled = None
    if style:
        if side_features is None:
            raise ValueError("run_leaderboard: style control needs side_features, the protocol's count of the judged texts")
        from .stats.style_leaderboard import leaderboard_style

        def compute_style() -> dict[str, Any]:
            frame = run_cases_frame(run=run, pair_ids=pair_ids)
            return leaderboard_style(
                frame, side_features(run), style, replicates=style_replicates, seed=seed, pseudo_count=pseudo_count
            )

        style_slot = f"leaderboard-style:v1:{run.pk}:{scope}:{','.join(style)}:{style_replicates}:{seed}:{pseudo_count}"
        # Its key follows the shown texts and papers too; kept in the cache only (a client's choice of features).
        styled = stored_document(
            slot=style_slot,
            key=f"{style_slot}:{keys.with_texts}",
            benchmark_id=run.benchmark_id,
            make=compute_style,
            durable=False,
        )
    # Human labels change independently of the verdicts, so they are joined after the cache.
    return document | {
        "style_control": styled,
        "human_win_rate": {m: v["rate"] for m, v in human["models"].items()} if human else None,
        "human_win_rate_detail": human or None,
        "run": {
            "id": run.pk,
            "judge_model": run.judge_model,
            "label": run.label,
            "provider": run.provider,
            "replay": run.is_replay,
            "imported": run.is_imported,
            "status": run.status,
            "is_canonical": run.is_canonical,
        },
        "benchmark": {"id": run.benchmark_id, "name": run.benchmark.name, "version": run.benchmark.version},
    }


def run_pair_ids(*, run: JudgeRun) -> list[int]:
    """The pairs a run has an accepted verdict on."""
    return sorted(set(OrderedJudgment.objects.filter(run=run, status="accepted").values_list("pair_id", flat=True)))


def agreement_primary(first: JudgeRun, second: JudgeRun) -> tuple[JudgeRun, JudgeRun, str]:
    """Which of two runs is the primary judge: the benchmark's canonical run when one of them is; otherwise
    the earlier run. Returns ``(primary, secondary, reason)``; the same for either order of the arguments."""
    if first.is_canonical != second.is_canonical:
        return (first, second, "canonical judge") if first.is_canonical else (second, first, "canonical judge")
    earlier, later = sorted((first, second), key=lambda r: (r.created_at, r.pk))
    return earlier, later, "earlier run (neither is the canonical judge)"


def runs_agreement(*, first: JudgeRun, second: JudgeRun) -> dict[str, Any]:
    """Agreement of two runs on the pairs both judged, anchored on the primary judge (:func:`agreement_primary`),
    whichever order the runs are given in: stable/sensitive counts of each, ordered agreement on the primary's
    stable cases and case-folded agreement (each with a case-bootstrap 95% CI), the primary-stable pairs the
    other judge disagrees on (with both runs' judgments of them), and agreement per presentation order."""
    from .stats import agreement_by_order, judge_agreement

    primary, secondary, reason = agreement_primary(first, second)
    common = sorted(set(run_pair_ids(run=primary)) & set(run_pair_ids(run=secondary)))
    frame_1 = run_cases_frame(run=primary, pair_ids=common)
    frame_2 = run_cases_frame(run=secondary, pair_ids=common)
    if common:
        result = judge_agreement(frame_1, frame_2)
        result["by_order"] = agreement_by_order(frame_1, frame_2)
        _agreement_disagreement_links(result["ordered_agreement"]["disagreements"], primary=primary, secondary=secondary)
    else:
        result = {"joined": 0, "primary": {}, "secondary": {}, "by_order": {}}

    def describe(run: JudgeRun) -> dict[str, Any]:
        return {
            "id": run.pk,
            "judge_model": run.judge_model,
            "label": run.label,
            "run_type": run.run_type,
            "is_canonical": run.is_canonical,
        }

    result["primary"] = describe(primary) | {"reason": reason} | result["primary"]
    result["secondary"] = describe(secondary) | result["secondary"]
    result["requested"] = {"first": first.pk, "second": second.pk}
    return result


#: Judgments per page of the run page (``jobs.views.run_detail``, newest first), to link to the page that shows one.
RUN_PAGE_SIZE = 25


def _agreement_disagreement_links(rows: list[dict[str, Any]], *, primary: JudgeRun, secondary: JudgeRun) -> None:
    """Add each disagreeing case's public pair id and both runs' judgments of it (in place): per order the
    judgment's id and the run page that lists it (``?page=``, newest first)."""
    pairs = dict(
        CanonicalPair.objects.filter(benchmark_id=primary.benchmark_id, internal_key__in=[r["case"] for r in rows]).values_list(
            "internal_key", "pk"
        )
    )
    public = dict(CanonicalPair.objects.filter(pk__in=pairs.values()).values_list("pk", "public_id"))
    judgments: dict[tuple[int, int], dict[str, dict[str, int]]] = {}
    for run in (primary, secondary):
        newest_first = OrderedJudgment.objects.filter(run=run).order_by("-id").values_list("pk", "pair_id", "order", "status")
        for position, (pk, pair_id, order, status) in enumerate(newest_first.iterator(chunk_size=5000)):
            if pair_id in public and status == OrderedJudgment.Status.ACCEPTED:
                judgments.setdefault((run.pk, pair_id), {})[order] = {"id": pk, "page": position // RUN_PAGE_SIZE + 1}
    for row in rows:
        pair_id = pairs.get(row["case"])
        row["pair_public_id"] = public.get(pair_id)
        row["primary_judgments"] = judgments.get((primary.pk, pair_id), {})
        row["secondary_judgments"] = judgments.get((secondary.pk, pair_id), {})
