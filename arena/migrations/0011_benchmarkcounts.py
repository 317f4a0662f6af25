"""Per-benchmark counts of contexts (with text), participants, pairs and runs, kept by database triggers (issue 25,
item 5), as 0003 keeps each run's judgment version.

PostgreSQL: one statement-level trigger per event and table (transition tables: a bulk INSERT of 560,000 pairs
updates its benchmark's row once). SQLite: row-level triggers. Existing benchmarks are counted once here.
"""

from django.db import migrations, models

COUNTS = "arena_benchmarkcounts"
#: Counted table -> the count columns it feeds.
TABLES = {
    "arena_context": {"n_contexts": "rows", "n_text_contexts": "rows with text"},
    "arena_participant": {"n_participants": "rows"},
    "arena_canonicalpair": {"n_pairs": "rows"},
    "arena_judgerun": {"n_runs": "rows"},
}
#: The per-row value of each count column (a row counts 1, a context with text 1 more in ``n_text_contexts``).
ROW_VALUE = {"n_contexts": "1", "n_text_contexts": "(CASE WHEN {row}.has_text THEN 1 ELSE 0 END)"}


def _row_value(column: str, row: str) -> str:
    return ROW_VALUE.get(column, "1").format(row=row)


def _pg_upsert(columns: list[str], sources: list[tuple[str, str]]) -> str:
    """Add to each benchmark's counts the rows of ``sources`` ((transition table, sign) pairs), netted per benchmark.

    Only benchmarks whose counts change are written: an UPDATE that moves no row between benchmarks (a run's
    status, a context's text) nets to zero and neither writes nor locks a counts row, so concurrent writers of
    one benchmark's runs do not wait for each other here.
    """
    parts = " UNION ALL ".join(
        f"SELECT benchmark_id, {', '.join(f'{sign}{_row_value(c, "r")} AS {c}' for c in columns)} FROM {table} r"
        for table, sign in sources
    )
    sums = ", ".join(f"sum({c})" for c in columns)
    changed = " OR ".join(f"sum({c}) <> 0" for c in columns)
    updates = ", ".join(f"{c} = {COUNTS}.{c} + EXCLUDED.{c}" for c in columns)
    # Benchmarks in a fixed order, so two statements touching the same benchmarks cannot deadlock here.
    return (
        f"INSERT INTO {COUNTS} (benchmark_id, {', '.join(columns)}) SELECT benchmark_id, {sums} FROM ({parts}) AS delta "
        f"GROUP BY benchmark_id HAVING {changed} ORDER BY benchmark_id "
        f"ON CONFLICT (benchmark_id) DO UPDATE SET {updates};"
    )


def _postgres_forward() -> list[str]:
    out = []
    for table, columns in TABLES.items():
        fn = f"{table}_count"
        cols = list(columns)
        out.append(
            f"""CREATE FUNCTION {fn}() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF TG_OP = 'INSERT' THEN {_pg_upsert(cols, [("new_rows", "")])}
                ELSIF TG_OP = 'DELETE' THEN {_pg_upsert(cols, [("old_rows", "-")])}
                ELSE {_pg_upsert(cols, [("old_rows", "-"), ("new_rows", "")])}
                END IF;
                RETURN NULL;
            END
            $$;"""
        )
        out.append(
            f"CREATE TRIGGER {fn}_insert AFTER INSERT ON {table} REFERENCING NEW TABLE AS new_rows "
            f"FOR EACH STATEMENT EXECUTE FUNCTION {fn}();"
        )
        out.append(
            f"CREATE TRIGGER {fn}_update AFTER UPDATE ON {table} REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows "
            f"FOR EACH STATEMENT EXECUTE FUNCTION {fn}();"
        )
        out.append(
            f"CREATE TRIGGER {fn}_delete AFTER DELETE ON {table} REFERENCING OLD TABLE AS old_rows "
            f"FOR EACH STATEMENT EXECUTE FUNCTION {fn}();"
        )
    return out


def _postgres_backward() -> list[str]:
    out = []
    for table in TABLES:
        out += [f"DROP TRIGGER IF EXISTS {table}_count_{event} ON {table};" for event in ("insert", "update", "delete")]
        out.append(f"DROP FUNCTION IF EXISTS {table}_count();")
    return out


def _sqlite_add(columns: dict[str, str], row: str, sign: str) -> str:
    sets = ", ".join(f"{c} = {c} {sign} {_row_value(c, row)}" for c in columns)
    return (
        f"INSERT OR IGNORE INTO {COUNTS} (benchmark_id) VALUES ({row}.benchmark_id); "
        f"UPDATE {COUNTS} SET {sets} WHERE benchmark_id = {row}.benchmark_id;"
    )


def _sqlite_forward() -> list[str]:
    out = []
    for table, columns in TABLES.items():
        watched = ["benchmark_id", "has_text"] if "n_text_contexts" in columns else ["benchmark_id"]
        moved = " OR ".join(f"OLD.{c} IS NOT NEW.{c}" for c in watched)
        out += [
            f"CREATE TRIGGER {table}_count_insert AFTER INSERT ON {table} BEGIN {_sqlite_add(columns, 'NEW', '+')} END;",
            f"CREATE TRIGGER {table}_count_update AFTER UPDATE OF {', '.join(watched)} ON {table} WHEN {moved} "
            f"BEGIN {_sqlite_add(columns, 'OLD', '-')} {_sqlite_add(columns, 'NEW', '+')} END;",
            f"CREATE TRIGGER {table}_count_delete AFTER DELETE ON {table} BEGIN {_sqlite_add(columns, 'OLD', '-')} END;",
        ]
    return out


def _sqlite_backward() -> list[str]:
    return [f"DROP TRIGGER IF EXISTS {t}_count_{e};" for t in TABLES for e in ("insert", "update", "delete")]


BACKFILL = [
    f"""INSERT INTO {COUNTS} (benchmark_id, n_contexts, n_text_contexts, n_participants, n_pairs, n_runs)
    SELECT b.id,
        (SELECT count(*) FROM arena_context c WHERE c.benchmark_id = b.id),
        (SELECT count(*) FROM arena_context c WHERE c.benchmark_id = b.id AND c.has_text),
        (SELECT count(*) FROM arena_participant p WHERE p.benchmark_id = b.id),
        (SELECT count(*) FROM arena_canonicalpair p WHERE p.benchmark_id = b.id),
        (SELECT count(*) FROM arena_judgerun r WHERE r.benchmark_id = b.id)
    FROM arena_benchmark b;"""
]


def _run(statements: dict[str, list[str]]):  # noqa: ANN202
    def apply(apps, schema_editor) -> None:  # noqa: ANN001
        for statement in statements.get(schema_editor.connection.vendor, []):
            schema_editor.execute(statement)

    return apply


class Migration(migrations.Migration):
    dependencies = [
        ("arena", "0010_run_launch_key"),
    ]

    operations = [
        migrations.CreateModel(
            name="BenchmarkCounts",
            fields=[
                ("benchmark_id", models.BigIntegerField(primary_key=True, serialize=False)),
                ("n_contexts", models.BigIntegerField(db_default=0)),
                ("n_text_contexts", models.BigIntegerField(db_default=0)),
                ("n_participants", models.BigIntegerField(db_default=0)),
                ("n_pairs", models.BigIntegerField(db_default=0)),
                ("n_runs", models.BigIntegerField(db_default=0)),
            ],
        ),
        migrations.RunPython(
            _run({"postgresql": _postgres_forward() + BACKFILL, "sqlite": _sqlite_forward() + BACKFILL}),
            _run({"postgresql": _postgres_backward(), "sqlite": _sqlite_backward()}),
        ),
    ]
