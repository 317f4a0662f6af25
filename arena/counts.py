"""The benchmark list's counts, read from :class:`arena.models.BenchmarkCounts` (issue 25, item 5).

Counting a benchmark's rows grows with them (98 ms for 560,000 pairs on PostgreSQL, most of it reading the pairs'
index and rows); the database keeps the five numbers up to date in the same transaction as every write (triggers,
migration 0011), so the list reads them by primary key.
"""

from __future__ import annotations

from django.db import DEFAULT_DB_ALIAS, connections, models, transaction
from django.db.backends.utils import CursorWrapper
from django.db.migrations.recorder import MigrationRecorder
from django.db.models import OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce

from .models import Benchmark, BenchmarkCounts, CanonicalPair, Context, JudgeRun, Participant

#: The counts every row of the benchmark list carries, as named on :class:`BenchmarkCounts`.
COUNT_FIELDS = ("n_contexts", "n_text_contexts", "n_participants", "n_pairs", "n_runs")


def with_counts(benchmarks: QuerySet[Benchmark]) -> QuerySet[Benchmark]:
    """``benchmarks`` annotated with :data:`COUNT_FIELDS` (0 for a benchmark no row was ever written to)."""
    kept = BenchmarkCounts.objects.filter(benchmark_id=OuterRef("pk"))
    return benchmarks.annotate(
        **{name: Coalesce(Subquery(kept.values(name), output_field=models.BigIntegerField()), 0) for name in COUNT_FIELDS}
    )


# --- Keeping the triggers and the counts right -------------------------------------------------------------------
#
# What follows is the live definition of the triggers: the post_migrate receiver installs it after every `migrate`
# and `flush`. Migrations 0011 and 0013 keep their own frozen copies (a migration must produce the same schema on a
# fresh database forever, whatever this module becomes); a later migration that changes the triggers must change
# them here as well, or the receiver would put the old ones back at the end of that `migrate`.

_COUNTS = BenchmarkCounts._meta.db_table
#: Counted table -> the count columns it feeds (the trigger names derive from the table's, as in migration 0011).
COUNTED = {
    Context._meta.db_table: ("n_contexts", "n_text_contexts"),
    Participant._meta.db_table: ("n_participants",),
    CanonicalPair._meta.db_table: ("n_pairs",),
    JudgeRun._meta.db_table: ("n_runs",),
}
#: The migrations that installed the row triggers and (PostgreSQL) the TRUNCATE triggers.
ROW_TRIGGERS_MIGRATION = "0011_benchmarkcounts"
TRUNCATE_TRIGGERS_MIGRATION = "0013_counts_truncate"


def _row_value(column: str, row: str) -> str:
    """What one row adds to ``column``: 1, or for ``n_text_contexts`` 1 if the context has text."""
    return f"(CASE WHEN {row}.has_text THEN 1 ELSE 0 END)" if column == "n_text_contexts" else "1"


def _pg_upsert(columns: tuple[str, ...], sources: list[tuple[str, str]]) -> str:
    """Add to each benchmark's counts the rows of ``sources`` ((transition table, sign) pairs), netted per benchmark.

    Only benchmarks whose counts change are written, in a fixed order (see migration 0011).
    """
    parts = " UNION ALL ".join(
        f"SELECT benchmark_id, {', '.join(f'{sign}{_row_value(c, "r")} AS {c}' for c in columns)} FROM {table} r"
        for table, sign in sources
    )
    sums = ", ".join(f"sum({c})" for c in columns)
    changed = " OR ".join(f"sum({c}) <> 0" for c in columns)
    updates = ", ".join(f"{c} = {_COUNTS}.{c} + EXCLUDED.{c}" for c in columns)
    return (
        f"INSERT INTO {_COUNTS} (benchmark_id, {', '.join(columns)}) SELECT benchmark_id, {sums} FROM ({parts}) AS delta "
        f"GROUP BY benchmark_id HAVING {changed} ORDER BY benchmark_id "
        f"ON CONFLICT (benchmark_id) DO UPDATE SET {updates};"
    )


def _postgres_row_triggers() -> list[str]:
    """Migration 0011's statement-level triggers, made idempotent (``CREATE OR REPLACE``)."""
    out = []
    for table, columns in COUNTED.items():
        fn = f"{table}_count"
        out.append(
            f"""CREATE OR REPLACE FUNCTION {fn}() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF TG_OP = 'INSERT' THEN {_pg_upsert(columns, [("new_rows", "")])}
                ELSIF TG_OP = 'DELETE' THEN {_pg_upsert(columns, [("old_rows", "-")])}
                ELSE {_pg_upsert(columns, [("old_rows", "-"), ("new_rows", "")])}
                END IF;
                RETURN NULL;
            END
            $$;"""
        )
        for event, tables in (
            ("insert", "NEW TABLE AS new_rows"),
            ("update", "OLD TABLE AS old_rows NEW TABLE AS new_rows"),
            ("delete", "OLD TABLE AS old_rows"),
        ):
            out.append(
                f"CREATE OR REPLACE TRIGGER {fn}_{event} AFTER {event.upper()} ON {table} REFERENCING {tables} "
                f"FOR EACH STATEMENT EXECUTE FUNCTION {fn}();"
            )
    return out


def _postgres_truncate_triggers() -> list[str]:
    """Migration 0013's: TRUNCATE fires no row trigger, so emptying a counted table zeroes the counts it feeds."""
    out = []
    for table, columns in COUNTED.items():
        fn = f"{table}_count_truncate"
        zero = ", ".join(f"{c} = 0" for c in columns)
        nonzero = " OR ".join(f"{c} <> 0" for c in columns)
        out.append(
            f"CREATE OR REPLACE FUNCTION {fn}() RETURNS trigger LANGUAGE plpgsql AS $$ "
            f"BEGIN UPDATE {_COUNTS} SET {zero} WHERE {nonzero}; RETURN NULL; END $$;"
        )
        out.append(f"CREATE OR REPLACE TRIGGER {fn} AFTER TRUNCATE ON {table} FOR EACH STATEMENT EXECUTE FUNCTION {fn}();")
    return out


def _sqlite_add(columns: tuple[str, ...], row: str, sign: str) -> str:
    sets = ", ".join(f"{c} = {c} {sign} {_row_value(c, row)}" for c in columns)
    return (
        f"INSERT OR IGNORE INTO {_COUNTS} (benchmark_id) VALUES ({row}.benchmark_id); "
        f"UPDATE {_COUNTS} SET {sets} WHERE benchmark_id = {row}.benchmark_id;"
    )


def _sqlite_row_triggers() -> list[str]:
    """Migration 0011's row-level triggers, created where missing (a table remade by a migration lost them).

    Not replaced where present, unlike PostgreSQL's: dropping and creating them rewrites the schema, a commit to
    disk (15 ms) after every ``flush``, that is after every transactional test.
    """
    out = []
    for table, columns in COUNTED.items():
        watched = ["benchmark_id", "has_text"] if "n_text_contexts" in columns else ["benchmark_id"]
        moved = " OR ".join(f"OLD.{c} IS NOT NEW.{c}" for c in watched)
        create = f"CREATE TRIGGER IF NOT EXISTS {table}_count"
        out += [
            f"{create}_insert AFTER INSERT ON {table} BEGIN {_sqlite_add(columns, 'NEW', '+')} END;",
            f"{create}_update AFTER UPDATE OF {', '.join(watched)} ON {table} WHEN {moved} "
            f"BEGIN {_sqlite_add(columns, 'OLD', '-')} {_sqlite_add(columns, 'NEW', '+')} END;",
            f"{create}_delete AFTER DELETE ON {table} BEGIN {_sqlite_add(columns, 'OLD', '-')} END;",
        ]
    return out


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


def counts_rebuild(*, using: str = DEFAULT_DB_ALIAS) -> bool:
    """(Re)install the count triggers and make every benchmark's counts those counted afresh, in one transaction.

    Repairs what bypasses or removes the triggers: ``flush`` on SQLite (it deletes the counted tables row by row in
    an order where the triggers leave counts of deleted benchmarks, some below zero), a migration that remakes a
    counted table on SQLite (``AlterField``: the triggers go with the old table), a ``TRUNCATE`` before migration
    0013, a restore with triggers disabled. Runs after every ``migrate`` and ``flush`` (:func:`counts_after_migrate`)
    and from ``manage.py rebuild_counts``.

    On PostgreSQL the counted tables are locked against writes (``SHARE ROW EXCLUSIVE``, which creating a trigger
    takes anyway) for the transaction, so no write falls between the count and its storing; reads go on. On SQLite
    a write to the counts makes the transaction the only writer, and it fails rather than store a count a write
    committed meanwhile made stale. Returns False, doing nothing, where migration arena 0011 is not applied (no
    counts to keep) or the database is neither PostgreSQL nor SQLite (0011 installed nothing there).
    """
    connection = connections[using]
    if connection.vendor not in ("postgresql", "sqlite"):
        return False
    recorded = MigrationRecorder(connection).migration_qs.filter(
        app="arena", name__in=[ROW_TRIGGERS_MIGRATION, TRUNCATE_TRIGGERS_MIGRATION]
    )
    applied = set(recorded.values_list("name", flat=True))
    if ROW_TRIGGERS_MIGRATION not in applied:
        return False
    if connection.vendor == "postgresql":
        statements = [f"LOCK TABLE {', '.join(COUNTED)} IN SHARE ROW EXCLUSIVE MODE;", *_postgres_row_triggers()]
        if TRUNCATE_TRIGGERS_MIGRATION in applied:
            statements += _postgres_truncate_triggers()
    else:
        statements = _sqlite_row_triggers()
    with transaction.atomic(using=using), connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)
        _recount(cursor)
    return True


def counts_after_migrate(*, using: str, **kwargs: object) -> None:
    """``post_migrate`` receiver (connected by :class:`arena.apps.ArenaConfig`): :func:`counts_rebuild`."""
    counts_rebuild(using=using)
