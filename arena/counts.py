"""The benchmark list's counts, read from :class:`arena.models.BenchmarkCounts` (issue 25, item 5).

Counting a benchmark's rows grows with them (98 ms for 560,000 pairs on PostgreSQL, most of it reading the pairs'
index and rows); the database keeps the five numbers up to date in the same transaction as every write (triggers,
migration 0011), so the list reads them by primary key.
"""

from __future__ import annotations

from django.db import DEFAULT_DB_ALIAS, connections, models, transaction
from django.db.backends.utils import CursorWrapper
from django.db.models import OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce

from .models import Benchmark, BenchmarkCounts, CanonicalPair, Context, JudgeRun, Participant
from .triggers import applied_trigger_migrations, triggers_install

#: The counts every row of the benchmark list carries, as named on :class:`BenchmarkCounts`.
COUNT_FIELDS = ("n_contexts", "n_text_contexts", "n_participants", "n_pairs", "n_runs")


def with_counts(benchmarks: QuerySet[Benchmark]) -> QuerySet[Benchmark]:
    """``benchmarks`` annotated with :data:`COUNT_FIELDS` (0 for a benchmark no row was ever written to)."""
    kept = BenchmarkCounts.objects.filter(benchmark_id=OuterRef("pk"))
    return benchmarks.annotate(
        **{name: Coalesce(Subquery(kept.values(name), output_field=models.BigIntegerField()), 0) for name in COUNT_FIELDS}
    )


# --- Keeping the counts right --------------------------------------------------------------------------------------
#
# The triggers are migration 0011's and 0013's own statements, reinstalled by arena.triggers after every `migrate`
# and `flush`; this module counts afresh.

_COUNTS = BenchmarkCounts._meta.db_table
#: Counted table -> the count columns it feeds (as in migration 0011).
COUNTED = {
    Context._meta.db_table: ("n_contexts", "n_text_contexts"),
    Participant._meta.db_table: ("n_participants",),
    CanonicalPair._meta.db_table: ("n_pairs",),
    JudgeRun._meta.db_table: ("n_runs",),
}
#: The migrations that installed the row triggers and (PostgreSQL) the TRUNCATE triggers.
COUNT_MIGRATIONS = ("0011_benchmarkcounts", "0013_counts_truncate")


def _counted_sql() -> str:
    """Every benchmark's counts, counted afresh in one statement (per table grouped by benchmark, then summed)."""
    parts = []
    for table, columns in COUNTED.items():
        values = [
            ("sum(CASE WHEN has_text THEN 1 ELSE 0 END)" if c == "n_text_contexts" else "count(*)") if c in columns else "0"
            for c in COUNT_FIELDS
        ]
        named = ", ".join(f"{v} AS {c}" for v, c in zip(values, COUNT_FIELDS, strict=True))
        parts.append(f"SELECT benchmark_id, {named} FROM {table} GROUP BY benchmark_id")
    sums = ", ".join(f"sum({c})" for c in COUNT_FIELDS)
    return f"SELECT benchmark_id, {sums} FROM ({' UNION ALL '.join(parts)}) AS counted GROUP BY benchmark_id"


def _recount(cursor: CursorWrapper) -> None:
    """Make the kept counts those counted afresh, writing nothing where they already are (all-zero rows are as good
    as none): no write, no commit to disk, after the flush of an empty database."""
    cursor.execute(_counted_sql())
    counted = {row[0]: tuple(int(n) for n in row[1:]) for row in cursor.fetchall()}
    cursor.execute(f"SELECT benchmark_id, {', '.join(COUNT_FIELDS)} FROM {_COUNTS}")
    kept = {row[0]: tuple(row[1:]) for row in cursor.fetchall() if any(row[1:])}
    if kept != counted:
        cursor.execute(f"DELETE FROM {_COUNTS}")
        cursor.executemany(
            f"INSERT INTO {_COUNTS} (benchmark_id, {', '.join(COUNT_FIELDS)}) VALUES (%s{', %s' * len(COUNT_FIELDS)})",
            [(benchmark_id, *numbers) for benchmark_id, numbers in counted.items()],
        )


def counts_recount(*, using: str = DEFAULT_DB_ALIAS) -> bool:
    """Make every benchmark's counts those counted afresh, in one transaction (False, doing nothing, where migration
    0011 is not applied: no counts to keep). On PostgreSQL the counted tables are locked against writes (``SHARE ROW
    EXCLUSIVE``, in one statement) for the transaction, so no write falls between the count and its storing; reads go
    on. On SQLite a write to the counts makes the transaction the only writer, and it fails rather than store a count a
    write committed meanwhile made stale."""
    connection = connections[using]
    if connection.vendor not in ("postgresql", "sqlite") or COUNT_MIGRATIONS[0] not in applied_trigger_migrations(connection):
        return False
    with transaction.atomic(using=using), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(f"LOCK TABLE {', '.join(sorted(COUNTED))} IN SHARE ROW EXCLUSIVE MODE")
        _recount(cursor)
    return True


def counts_rebuild(*, using: str = DEFAULT_DB_ALIAS) -> bool:
    """``manage.py rebuild_counts``: (re)install the count triggers and count every benchmark afresh.

    Repairs what bypasses or removes the triggers: ``flush`` on SQLite (it deletes the counted tables row by row in
    an order where the triggers leave counts of deleted benchmarks, some below zero), a migration that remakes a
    counted table on SQLite (``AlterField``: the triggers go with the old table), a ``TRUNCATE`` before migration
    0013, a restore with triggers disabled. ``migrate`` and ``flush`` do what is needed of it (``arena.triggers``).
    Returns False, doing nothing, where migration arena 0011 is not applied or the database is neither PostgreSQL nor
    SQLite (0011 installed nothing there).
    """
    triggers_install(using=using, migrations=COUNT_MIGRATIONS, force=True)  # nothing where 0011 is not applied
    return counts_recount(using=using)
