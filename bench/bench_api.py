"""Researcher reads at scale (issue 10, items 1 and 4): the benchmark list, the dashboard and the leaderboard API.

Data: a synthetic release of 2,000 contexts x 8 models (112,000 ordered judgments; bench/synthetic_release.py)
and one of 200 contexts x 8 models (11,200), both imported; a formal human study on the large one with about
2,100 labels (25 contexts x 28 pairs x 3 annotators, submitted through ``annotation.services``).

What it prints, each beside a reference measured in the same run:

* ``/api/benchmarks/`` and ``/dashboard/`` (target < 100 ms at 2,000 x 8), and ``benchmark_list()`` alone
  against the old query that joined contexts x participants x pairs x runs and counted distinct rows
  (``old_benchmark_list`` below), on the 200-context benchmark (at 2,000 contexts the old query does not
  finish: it is run with a statement timeout and reported as such). EXPLAIN ANALYZE shows each count's plan.
* The cold leaderboard's data path (issue 25, item 1): what the API reads before the statistics, now (the run's
  judgments folded per pair by the database, ``arena.selectors.run_encoded_cases``, and the human win rate from one
  grouped label query) against before (``run_cases_frame`` + ``encode_cases``, and the human win rate from the
  study's frames: ``old_human_win_rate_report`` below), with the documents checked equal; and the cold API beside
  its floor measured in the same run: the statistics alone on the cases already in memory (``leaderboard_document``)
  and, within them, the two 10,000-replicate bootstraps alone (the "fits on in-memory counts"). ``--huge-contexts
  20000`` adds a third benchmark of 20,000 x 8 = 1.12M ordered judgments (its import takes a minute or two).
* The leaderboard API, cold (both 10,000-replicate bootstraps) and warm (target < 30 ms at 2,000 x 8, and
  the same at 200 x 8 and with or without labels), against what a warm request cost before: the old data
  fingerprint (a hash of every accepted judgment, ``arena.selectors.run_data_version_scan``) plus the human
  win rate recomputed from every label (``annotation.selectors.human_win_rate_report``).

Database: Django's test-database machinery creates ``$BENCH_DATABASE_NAME`` (default: the name in
``DATABASE_URL`` + ``_bench_api``) and drops it at the end. Cache: ``CACHE_URL`` if set, else in-process.

    DATABASE_URL=postgres://postgres@127.0.0.1:54329/lit2test_h2 .venv/bin/python bench/bench_api.py
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic_release import django_setup, scratch_database, scratch_database_drop, write_release  # noqa: E402


def old_benchmark_list():  # noqa: ANN201
    """The query before issue 10 (kept as the reference): one join of every child table, then COUNT DISTINCT."""
    from django.db.models import Count, Q

    from arena.models import Benchmark

    return Benchmark.objects.annotate(
        n_contexts=Count("contexts", distinct=True),
        n_text_contexts=Count("contexts", filter=Q(contexts__has_text=True), distinct=True),
        n_participants=Count("participants", distinct=True),
        n_pairs=Count("pairs", distinct=True),
        n_runs=Count("runs", distinct=True),
    )


def old_human_win_rate_report(benchmark: Any) -> dict[str, Any] | None:  # noqa: ANN401
    """``annotation.selectors.human_win_rate_report`` before issue 25 (kept as the reference): the newest formal study's
    whole label and item frames (``study_frames``: every label's scores and the judge's verdict on every item)."""
    from annotation import stats
    from annotation.models import Label, Study
    from annotation.selectors import study_frames
    from arena.stats import win_rates

    studies = Study.objects.filter(benchmark=benchmark, round=Study.Round.FORMAL).order_by("-created_at", "-id")
    for study in studies:
        if not Label.objects.filter(assignment__study=study, over_time=False, assignment__item__is_control=False).exists():
            continue
        labels, _items = study_frames(study=study)
        real = stats.counted(labels)
        real = real[~real["control"].astype(bool)] if not real.empty else real
        report = win_rates(real, tie=stats.TIE, invalid=stats.INVALID, seed=study.seed % (2**32))
        if report["models"]:
            return report | {"study": {"id": study.pk, "name": study.name, "round": study.round}}
    return None


def cold_data_path(benchmark: Any, replicates: int) -> tuple[float, float]:  # noqa: ANN401
    """Issue 25, item 1: the cold leaderboard's reads, before and after, and the statistics alone, in one run."""
    import os

    import numpy as np

    from annotation.selectors import human_win_rate_report
    from arena.selectors import run_cases_frame, run_default, run_encoded_cases
    from arena.stats import bootstrap_fits, encode_cases, fit_bt, leaderboard_document, win_matrix

    run = run_default(benchmark=benchmark)
    old_cases = encode_cases(run_cases_frame(run=run))
    new_cases = run_encoded_cases(run=run)
    for name in ("context", "batch", "lo", "hi", "original", "reverse", "shown_a"):
        assert np.array_equal(getattr(old_cases, name), getattr(new_cases, name)), name
    assert old_human_win_rate_report(benchmark) == human_win_rate_report(benchmark=benchmark)
    old_read = median_seconds(lambda: encode_cases(run_cases_frame(run=run)), 3)
    new_read = median_seconds(lambda: run_encoded_cases(run=run), 3)
    old_human = median_seconds(lambda: old_human_win_rate_report(benchmark), 3)
    new_human = median_seconds(lambda: human_win_rate_report(benchmark=benchmark), 3)
    started = time.perf_counter()
    document = leaderboard_document(new_cases, replicates=replicates)
    statistics_alone = time.perf_counter() - started
    assert document == leaderboard_document(old_cases, replicates=replicates), "the two data paths give other documents"

    def fits() -> None:
        init = {kind: fit_bt(win_matrix(new_cases, kind), pseudo_count=0.5).theta for kind in ("ordered", "folded", "stable")}
        for unit, seed in (("case", 1), ("context", 2)):
            bootstrap_fits(new_cases, unit=unit, replicates=replicates, seed=seed, pseudo_count=0.5, init=init)

    fits_alone = median_seconds(fits, 1)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    n = 2 * len(new_cases.lo)
    print(f"  issue 25 item 1, '{benchmark.name}' ({n:,} ordered judgments), load average {load}:")
    print(
        f"    read the cases:      old frame+encode {old_read:6.3f} s  new folded by the database {new_read:6.3f} s  "
        f"ratio {old_read / new_read:5.1f}x"
    )
    print(
        f"    human win rate:      old study frames {old_human:6.3f} s  new grouped labels         {new_human:6.3f} s  "
        f"ratio {old_human / new_human:5.1f}x"
    )
    print(
        f"    statistics alone on the cases in memory (leaderboard_document): {statistics_alone:6.2f} s;  of which "
        f"the two {replicates:,}-replicate bootstraps x 3 fits alone: {fits_alone:6.2f} s"
    )
    return statistics_alone, fits_alone


def median_seconds(work: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def counts(rows: Any) -> list[tuple]:  # noqa: ANN401
    return [(b.pk, b.n_contexts, b.n_text_contexts, b.n_participants, b.n_pairs, b.n_runs) for b in rows]


def with_timeout(seconds: int, work: Callable[[], Any]) -> float | None:
    """``work``'s time, or None when PostgreSQL cancels it after ``seconds``."""
    from django.db import OperationalError, connection, transaction

    try:
        with transaction.atomic():
            if connection.vendor == "postgresql":
                with connection.cursor() as cursor:
                    cursor.execute(f"SET LOCAL statement_timeout = '{seconds}s'")
            return median_seconds(work, 1)
    except OperationalError:
        return None


def labels_submit(benchmark: Any, n_contexts: int) -> int:  # noqa: ANN401
    """A formal study on ``n_contexts`` contexts, every pair, three annotators, every item labelled."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    from annotation.models import Assignment
    from annotation.services import assignment_submit, study_create
    from arena.permissions import ANNOTATORS_GROUP
    from tests.annotation.helpers import complete_values

    group = Group.objects.get_or_create(name=ANNOTATORS_GROUP)[0]
    users = [get_user_model().objects.create_user(username=f"annotator{i}", password="x") for i in range(3)]
    for user in users:
        user.groups.add(group)
    study = study_create(benchmark=benchmark, annotators=users, n_contexts=n_contexts, n_naive_controls=1, seed=11)
    n = 0
    for i, assignment in enumerate(Assignment.objects.filter(study=study).select_related("item", "study")):
        assignment_submit(
            assignment=assignment, values=complete_values(("A", "B", "TIE")[i % 3], reason="both_weak" if i % 3 == 2 else "")
        )
        n += 1
    return n


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--contexts", type=int, default=2000)
    parser.add_argument("--small-contexts", type=int, default=200)
    parser.add_argument("--models", type=int, default=8)
    parser.add_argument("--huge-contexts", type=int, default=0, help="a third benchmark (20000: 1.12M judgments); 0: none")
    parser.add_argument("--study-contexts", type=int, default=25, help="contexts of the human study (x 28 pairs x 3 labels)")
    parser.add_argument("--repeat", type=int, default=20)
    args, _ = parser.parse_known_args()  # run_all.py forwards other benches' options
    django_setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.cache import cache
    from django.db import connection
    from django.test import Client
    from django.urls import reverse

    from annotation.selectors import human_win_rate_report
    from arena.models import StoredDocument
    from arena.selectors import benchmark_list, run_data_version, run_data_version_scan, run_default
    from lit2test.release import release_import

    folder = Path(tempfile.mkdtemp(prefix="lit2test-bench-api-"))
    old_name = scratch_database(suffix="_bench_api")
    try:
        text = max(args.study_contexts + 5, round(args.contexts * 13 / 200))
        big_info = write_release(folder / "big", n_contexts=args.contexts, n_models=args.models, seed=1, text_contexts=text)
        write_release(folder / "small", n_contexts=args.small_contexts, n_models=args.models, seed=2, text_contexts=0)
        started = time.perf_counter()
        big = release_import(directory=folder / "big", benchmark_name="big").benchmark
        small = release_import(directory=folder / "small", benchmark_name="small").benchmark
        huge = None
        if args.huge_contexts:
            write_release(folder / "huge", n_contexts=args.huge_contexts, n_models=args.models, seed=3, text_contexts=0)
            huge = release_import(directory=folder / "huge", benchmark_name="huge").benchmark
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                cursor.execute("ANALYZE")  # as autovacuum would soon after an import
        print(
            f"researcher reads on {connection.vendor} (database {connection.settings_dict['NAME']}): benchmark 'big' "
            f"{args.contexts:,} contexts x {args.models} models = {big_info['ordered_judgments']:,} ordered judgments; "
            f"'small' {args.small_contexts:,} contexts (imports took {time.perf_counter() - started:.1f} s)"
        )
        researcher = get_user_model().objects.create_user(username="rita", password="x", is_staff=True)
        settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
        client = Client()
        client.force_login(researcher)

        def get(url: str) -> Any:  # noqa: ANN401
            response = client.get(url, secure=True)
            assert response.status_code == 200, (url, response.status_code)
            return response

        # ---------------------------------------------------------------- item 1: benchmark list
        api = median_seconds(lambda: get(reverse("arena:api-benchmarks")).json(), args.repeat)
        dashboard = median_seconds(lambda: get(reverse("arena:dashboard")).content, args.repeat)
        new_small = median_seconds(lambda: counts(benchmark_list().filter(pk=small.pk)), args.repeat)
        old_small = median_seconds(lambda: counts(old_benchmark_list().filter(pk=small.pk)), 3)
        assert counts(benchmark_list().filter(pk=small.pk)) == counts(old_benchmark_list().filter(pk=small.pk))
        new_big = median_seconds(lambda: counts(benchmark_list().filter(pk=big.pk)), args.repeat)
        old_big = with_timeout(20, lambda: counts(old_benchmark_list().filter(pk=big.pk)))
        print(f"item 1: benchmark counts (median of {args.repeat})")
        print(f"  GET /api/benchmarks/ (both benchmarks):   {1000 * api:7.1f} ms  (target < 100 ms)")
        print(f"  GET /dashboard/:                          {1000 * dashboard:7.1f} ms  (target < 100 ms)")
        print(
            f"  benchmark_list(), {args.small_contexts:,} contexts:       {1000 * new_small:7.1f} ms;  old join+COUNT DISTINCT: "
            f"{1000 * old_small:9.1f} ms;  ratio old/new {old_small / new_small:,.0f}x"
        )
        old_text = f"{1000 * old_big:9.1f} ms" if old_big is not None else "  > 20 s (cancelled by statement_timeout)"
        print(
            f"  benchmark_list(), {args.contexts:,} contexts:     {1000 * new_big:7.1f} ms;  old join+COUNT DISTINCT: {old_text}"
        )
        if connection.vendor == "postgresql":
            sql, params = benchmark_list().filter(pk=big.pk).query.sql_with_params()
            with connection.cursor() as cursor:
                cursor.execute("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) " + sql, params)
                plan = [row[0] for row in cursor.fetchall()]
            print("  EXPLAIN ANALYZE of benchmark_list() (scan nodes; each count is an index(-only) scan):")
            for line in plan:
                if "Scan" in line or "Execution Time" in line:
                    print("    " + line.strip())

        # ---------------------------------------------------------------- item 4: leaderboard
        n_labels = labels_submit(big, args.study_contexts) if args.study_contexts else 0
        print(f"item 4: leaderboard API (10,000 replicates), human study on 'big' with {n_labels:,} labels")
        for benchmark in (small, big) if huge is None else (small, big, huge):
            url = reverse("lit2test:api-leaderboard", args=[benchmark.pk])
            statistics_alone, fits_alone = cold_data_path(benchmark, 10_000)
            StoredDocument.objects.all().delete()
            cache.clear()
            started = time.perf_counter()
            doc = get(url).json()
            cold = time.perf_counter() - started
            print(
                f"    cold API, nothing stored (the first read of a run whose end stored nothing) {cold:6.2f} s = "
                f"{cold / statistics_alone:4.2f}x the statistics alone in memory, {cold / fits_alone:4.2f}x the two "
                "bootstraps alone"
            )
            # The document is now stored, as a worker stores it when a judge run ends (lit2test.tasks): a read after
            # the cache lost it (a restart, an eviction) or the first read of a run that ended reads the row.
            stored_reads = []
            for _ in range(max(3, args.repeat // 2)):
                cache.clear()
                started = time.perf_counter()
                assert get(url).json() == doc
                stored_reads.append(time.perf_counter() - started)
            stored = statistics.median(stored_reads)
            print(
                f"    cold API, document stored (cache empty; median of {len(stored_reads)}) {stored:6.3f} s = "
                f"{stored / fits_alone:5.3f}x the two bootstraps alone, {cold / stored:5.1f}x faster than nothing stored "
                f"(targets: < 0.5 s at 2,000 x 8, < 5 s at 1.12M); load average {os.getloadavg()}"
            )
            warm = median_seconds(lambda url=url: get(url).json(), args.repeat)
            run = run_default(benchmark=benchmark)
            counter = median_seconds(lambda run=run: run_data_version(run=run), args.repeat)
            scan = median_seconds(lambda run=run: run_data_version_scan(run=run), 3)
            human = median_seconds(lambda benchmark=benchmark: human_win_rate_report(benchmark=benchmark), 3)
            judgments = 2 * doc["cases"]["total"]
            print(
                f"  '{benchmark.name}' ({judgments:,} ordered judgments, human WR {'yes' if doc['human_win_rate'] else 'none'}):"
            )
            print(f"    cold (both bootstraps):   {cold:7.2f} s   (target < 2 s; the statistics are another helper's)")
            print(f"    warm:                     {1000 * warm:7.1f} ms  (target < 30 ms)")
            print(
                f"    key: counter {1000 * counter:.2f} ms vs old fingerprint (hash of every judgment) {1000 * scan:.1f} ms: "
                f"ratio {scan / counter:,.0f}x"
            )
            print(
                f"    old warm path also recomputed the human WR: {1000 * human:.1f} ms; "
                f"old warm estimate {1000 * (warm + scan + human):.0f} ms vs new {1000 * warm:.1f} ms: ratio {(warm + scan + human) / warm:.0f}x"
            )
    finally:
        connection.close()
        scratch_database_drop(old_name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
