"""Benchmark: the benchmark list's counts (issue 25, item 5) at 560,000 pairs, against the query before, same run.

Run from the repository root (PostgreSQL is the database that matters):

    DATABASE_URL=postgres://... .venv/bin/python bench/bench_benchmark_list.py [--contexts 20000] [--models 8] [--repeat 15]

Data: one benchmark of ``--contexts`` contexts (half with text) × ``--models`` participants, every pair of models
on every context (20,000 × 28 = 560,000 canonical pairs), a run, and a small second benchmark; the pairs are
written with one ``INSERT … SELECT`` (the importer's speed is not measured here). The table is then VACUUMed
and ANALYZEd, as autovacuum leaves a table that has stopped changing: an index-only scan needs the visibility map.

Figures (median of ``--repeat`` runs, wall clock, the load average beside them): ``arena.selectors.benchmark_list()``
evaluated for both benchmarks with its five counts, against ``before_benchmark_list`` below (the query before this
item: one correlated ``COUNT(id)`` subquery per count), both checked equal; and each query's plan (EXPLAIN
ANALYZE scan nodes). Target: < 20 ms at 560,000 pairs.

Database: Django's test-database machinery creates ``$BENCH_DATABASE_NAME`` (default: the name in ``DATABASE_URL``
+ ``_bench_list``) and drops it at the end.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from synthetic_release import django_setup, scratch_database, scratch_database_drop  # noqa: E402

TARGET_MS = 20.0


def before_benchmark_list():  # noqa: ANN201
    """``arena.selectors.benchmark_list`` before issue 25 item 5 (the reference): ``COUNT(id)`` per subquery, which
    must read every counted row's id (the benchmark index alone does not hold it)."""
    from django.db import models
    from django.db.models import Count, OuterRef, Subquery
    from django.db.models.functions import Coalesce

    from arena.models import Benchmark, CanonicalPair, Context, JudgeRun, Participant

    def count_of(model: type[models.Model], **filters: Any) -> Coalesce:
        rows = model.objects.filter(benchmark=OuterRef("pk"), **filters).order_by().values("benchmark")
        return Coalesce(Subquery(rows.annotate(n=Count("pk")).values("n"), output_field=models.IntegerField()), 0)

    return Benchmark.objects.annotate(
        n_contexts=count_of(Context),
        n_text_contexts=count_of(Context, has_text=True),
        n_participants=count_of(Participant),
        n_pairs=count_of(CanonicalPair),
        n_runs=count_of(JudgeRun),
    )


def counts(qs: Any) -> list[tuple]:  # noqa: ANN401
    return [(b.pk, b.n_contexts, b.n_text_contexts, b.n_participants, b.n_pairs, b.n_runs) for b in qs.order_by("pk")]


def median_ms(work: Callable[[], Any], repeat: int) -> tuple[float, list[float]]:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        work()
        times.append(1000 * (time.perf_counter() - t0))
    return statistics.median(times), times


def build(n_contexts: int, n_models: int) -> tuple[int, int]:
    """The big benchmark (every pair on every context) and a small one; returns (pairs, benchmarks)."""
    from django.db import connection

    from arena.models import Benchmark, CanonicalPair, Context, JudgeRun, Participant

    big = Benchmark.objects.create(name="big")
    small = Benchmark.objects.create(name="small")
    for bench, n in ((big, n_contexts), (small, 20)):
        Context.objects.bulk_create(
            [Context(benchmark=bench, external_id=f"c{i:06d}", has_text=i % 2 == 0) for i in range(n)], batch_size=5000
        )
        Participant.objects.bulk_create([Participant(benchmark=bench, name=f"model-{m}") for m in range(n_models)])
        JudgeRun.objects.create(benchmark=bench, label="run", judge_model="judge", provider=JudgeRun.Provider.RECORDED)
    pair_table = CanonicalPair._meta.db_table
    with connection.cursor() as cur:
        cur.execute(
            f"""INSERT INTO {pair_table} (benchmark_id, context_id, participant_a_id, participant_b_id, internal_key, public_id)
            SELECT c.benchmark_id, c.id, a.id, b.id, c.external_id || ':' || a.name || ':' || b.name,
                   md5(c.id::text || ':' || a.id::text || ':' || b.id::text)
            FROM {Context._meta.db_table} c
            JOIN {Participant._meta.db_table} a ON a.benchmark_id = c.benchmark_id
            JOIN {Participant._meta.db_table} b ON b.benchmark_id = c.benchmark_id AND a.name < b.name"""
        )
        for model in (Context, Participant, CanonicalPair, JudgeRun, Benchmark):
            cur.execute(f"VACUUM ANALYZE {model._meta.db_table}")
    return CanonicalPair.objects.filter(benchmark=big).count(), 2


def plan_lines(qs: Any) -> list[str]:  # noqa: ANN401
    from django.db import connection

    sql, params = qs.query.sql_with_params()
    with connection.cursor() as cur:
        cur.execute("EXPLAIN (ANALYZE, BUFFERS off) " + sql, params)
        rows = [r[0] for r in cur.fetchall()]
    return [r for r in rows if "Scan" in r or "Execution Time" in r]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--contexts", type=int, default=20_000)
    ap.add_argument("--models", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()
    django_setup()
    from django.db import connection

    if connection.vendor != "postgresql":
        print("this bench needs PostgreSQL (DATABASE_URL=postgres://...): the plans and times that matter are its own")
        return
    old_name = scratch_database("_bench_list")
    try:
        from arena.selectors import benchmark_list

        t0 = time.perf_counter()
        n_pairs, n_bench = build(args.contexts, args.models)
        print(
            f"data: {n_pairs:,} pairs in the big benchmark ({args.contexts:,} contexts x {args.models} models), "
            f"{n_bench} benchmarks; built in {time.perf_counter() - t0:.1f} s; load average {os.getloadavg()}"
        )
        assert counts(benchmark_list()) == counts(before_benchmark_list()), "the counts differ from the reference's"
        for _ in range(3):  # warm the buffers of both
            counts(benchmark_list())
            counts(before_benchmark_list())
        new_ms, new_all = [], []
        old_ms, old_all = [], []
        for _ in range(3):  # interleaved, so load changes hit both alike
            m, a = median_ms(lambda: counts(benchmark_list()), args.repeat)
            new_ms.append(m)
            new_all += a
            m, a = median_ms(lambda: counts(before_benchmark_list()), args.repeat)
            old_ms.append(m)
            old_all += a
        new, old = statistics.median(new_all), statistics.median(old_all)
        verdict = "MET" if new < TARGET_MS else "NOT MET"
        print(
            f"ours    benchmark_list(), both benchmarks, 5 counts: {new:7.1f} ms (median of {len(new_all)}; "
            f"rounds {', '.join(f'{x:.1f}' for x in new_ms)}) -> target < {TARGET_MS:.0f} ms {verdict}"
        )
        print(
            f"before  one COUNT(id) subquery per count:          {old:7.1f} ms (median of {len(old_all)}; "
            f"rounds {', '.join(f'{x:.1f}' for x in old_ms)})"
        )
        print(f"before/ours: {old / new:.1f}x   load average {os.getloadavg()}")
        for name, qs in (("ours", benchmark_list()), ("before", before_benchmark_list())):
            print(f"EXPLAIN ANALYZE, {name}:")
            for line in plan_lines(qs):
                print("   ", line.strip())
    finally:
        scratch_database_drop(old_name)


if __name__ == "__main__":
    main()
