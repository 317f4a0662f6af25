"""The benchmark counts stay exact through what bypasses or removes their triggers (review of issue 25, item 5).

- ``manage.py flush`` (and every transactional test's teardown): on SQLite it deletes the counted tables row by
  row, in an order where the triggers write counts for benchmarks already gone, or below zero (F6);
- a migration that remakes a counted table (SQLite's ``AlterField``: create, copy, drop, rename) drops its
  triggers with the old table (F7);
- ``TRUNCATE`` of one counted table on PostgreSQL fires no row trigger (F8).

Reference: the rows counted afresh with the ORM's ``COUNT``, never the kept numbers themselves.
"""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.sql import emit_post_migrate_signal
from django.db import connection
from django.db.models import Model

from arena.counts import COUNT_FIELDS
from arena.models import Benchmark, BenchmarkCounts, CanonicalPair, Context, JudgeRun, Participant

#: Each counted table, and a plain column of it a migration alters.
ALTERED: dict[type[Model], str] = {Context: "external_id", Participant: "name", CanonicalPair: "internal_key", JudgeRun: "label"}


def make_benchmark(name: str, n_contexts: int) -> Benchmark:
    """A benchmark with ``n_contexts`` contexts (every other one with text), three participants, a pair per
    context and one run."""
    bench = Benchmark.objects.create(name=name, version="1")
    Context.objects.bulk_create([Context(benchmark=bench, external_id=f"c{i}", has_text=i % 2 == 0) for i in range(n_contexts)])
    Participant.objects.bulk_create([Participant(benchmark=bench, name=n) for n in ("a", "b", "c")])
    JudgeRun.objects.create(benchmark=bench, label="r", judge_model="j", provider=JudgeRun.Provider.RECORDED)
    a, b, _ = Participant.objects.filter(benchmark=bench).order_by("name")
    CanonicalPair.objects.bulk_create(
        [
            CanonicalPair(benchmark=bench, context=c, participant_a=a, participant_b=b, internal_key=f"k{c.pk}")
            for c in Context.objects.filter(benchmark=bench)
        ]
    )
    return bench


def counted() -> dict[int, dict[str, int]]:
    """Every benchmark with any counted row, and its five counts, counted now."""
    out = {}
    for bench in Benchmark.objects.all():
        contexts = Context.objects.filter(benchmark=bench)
        numbers = {
            "n_contexts": contexts.count(),
            "n_text_contexts": contexts.filter(has_text=True).count(),
            "n_participants": Participant.objects.filter(benchmark=bench).count(),
            "n_pairs": CanonicalPair.objects.filter(benchmark=bench).count(),
            "n_runs": JudgeRun.objects.filter(benchmark=bench).count(),
        }
        if any(numbers.values()):
            out[bench.pk] = numbers
    return out


def kept() -> dict[int, dict[str, int]]:
    """Every row of the kept counts with a number other than 0 (an all-zero row is as good as none)."""
    out = {}
    for row in BenchmarkCounts.objects.all():
        numbers = {name: getattr(row, name) for name in COUNT_FIELDS}
        if any(numbers.values()):
            out[row.benchmark_id] = numbers
    return out


def assert_exact(step: str) -> None:
    assert kept() == counted(), (
        f"after {step}: the kept benchmark counts (arena_benchmarkcounts, left) differ from the rows counted afresh "
        "(right); the count triggers of arena.counts missed or misapplied a write"
    )


@pytest.mark.django_db
def test_flush_leaves_the_counts_exact() -> None:
    # flush runs in this test's transaction (rolled back after it), so no transactional test is needed.
    make_benchmark("first", 4)
    make_benchmark("second", 3)
    assert_exact("creating two benchmarks")

    connection.check_constraints()  # PostgreSQL: runs the deferred foreign key checks, which TRUNCATE refuses pending
    call_command("flush", interactive=False, verbosity=0)
    assert not Benchmark.objects.exists(), "flush left benchmarks behind: nothing was checked"
    assert_exact("manage.py flush")

    make_benchmark("after flush", 5)
    assert_exact("creating a benchmark after the flush")


@pytest.mark.django_db(transaction=True)
def test_a_migration_remaking_the_counted_tables_keeps_the_counts() -> None:
    # Transactional: SQLite's schema editor refuses to run inside a transaction with foreign key checks on.
    make_benchmark("before", 4)
    for model, name in ALTERED.items():
        # As a migration's AlterField would (SQLite remakes the table: create, copy, drop, rename); and back.
        old = model._meta.get_field(name)
        new = old.clone()
        new.null = True
        new.set_attributes_from_name(name)
        new.model = model
        with connection.schema_editor() as editor:
            editor.alter_field(model, old, new)
            editor.alter_field(model, new, old)

    # Written between the remake and the end of the migration (a data migration after the AlterField).
    during = make_benchmark("during the migration", 3)
    emit_post_migrate_signal(verbosity=0, interactive=False, db=connection.alias)  # as `manage.py migrate` ends
    assert_exact("a migration remade the counted tables")

    make_benchmark("after", 5)
    Context.objects.filter(benchmark=during, has_text=False).update(has_text=True)
    Participant.objects.filter(benchmark=during, name="c").delete()
    CanonicalPair.objects.filter(benchmark=during).order_by("pk").first().delete()
    JudgeRun.objects.filter(benchmark=during).delete()
    assert_exact("writing to the remade tables")


@pytest.mark.django_db
def test_truncating_one_counted_table_keeps_the_counts() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("TRUNCATE is PostgreSQL's (SQLite deletes row by row, through the row triggers)")
    make_benchmark("first", 4)
    make_benchmark("second", 3)
    for model in (JudgeRun, CanonicalPair, Participant, Context):
        connection.check_constraints()  # runs the deferred foreign key checks, which TRUNCATE refuses pending
        with connection.cursor() as cur:
            cur.execute(f"TRUNCATE {model._meta.db_table} CASCADE")
        assert_exact(f"TRUNCATE {model._meta.db_table} CASCADE")
        make_benchmark(f"after truncating {model._meta.db_table}", 2)
        assert_exact(f"creating a benchmark after TRUNCATE {model._meta.db_table}")


@pytest.mark.django_db
def test_rebuild_counts_repairs_counts_written_around_the_triggers() -> None:
    first = make_benchmark("first", 4)
    make_benchmark("second", 3)
    # What a restore with triggers disabled or a hand edit can leave: a wrong count, a benchmark that is gone.
    BenchmarkCounts.objects.filter(benchmark_id=first.pk).update(n_pairs=99, n_text_contexts=-1)
    BenchmarkCounts.objects.create(benchmark_id=first.pk + 1000, n_runs=2)
    assert kept() != counted(), "the counts were not damaged: nothing was checked"

    call_command("rebuild_counts", stdout=StringIO())
    assert_exact("manage.py rebuild_counts")
