"""Counters of changes to what a benchmark's reports read besides its verdicts, kept by database triggers.

A leaderboard shows its benchmark's participant names, its pairs and its contexts' batches; style control also reads
its proposals' shown texts and its papers. Those change without any verdict written (a re-import that gives contexts
their batches, a rename, a re-scan of the blind texts). ``arena.BenchmarkDataVersion`` keeps two counters per
benchmark: ``version`` moves with every statement (PostgreSQL: statement-level triggers with transition tables) or
row (SQLite) that writes its batches, contexts, participants or pairs; ``texts`` with its proposals and papers (kept
apart: a generation run writing proposals must not make every leaderboard of the benchmark compute again). A
TRUNCATE of any of them moves every counter and those of row 0.

SQLite counts proposals and papers in row 0 ("every benchmark"): a SQLite trigger must not read another data table
(a migration that remakes ``arena_context`` drops it for a moment, and every trigger naming it then fails), and a
proposal reaches its benchmark only through its context. ``arena.triggers`` reinstalls these statements after every
migrate and flush.
"""

from django.db import migrations, models

VERSIONS = "arena_benchmarkdataversion"
#: Table -> (how it reaches its benchmark: its own column or its context's, the counter it moves).
TABLES = {
    "arena_batch": ("benchmark", "version"),
    "arena_context": ("benchmark", "version"),
    "arena_participant": ("benchmark", "version"),
    "arena_canonicalpair": ("benchmark", "version"),
    "arena_proposal": ("context", "texts"),
    "arena_paper": ("context", "texts"),
}


def _pg_bump(rows: str, via: str, counter: str) -> str:
    """Add one to ``counter`` of every benchmark the rows of ``rows`` (a transition table or a union) belong to."""
    benchmarks = (
        f"SELECT DISTINCT benchmark_id FROM {rows} AS r"
        if via == "benchmark"
        else f"SELECT DISTINCT c.benchmark_id FROM {rows} AS r JOIN arena_context c ON c.id = r.context_id"
    )
    return (
        f"INSERT INTO {VERSIONS} (benchmark_id, version, texts) SELECT benchmark_id, 0, 0 FROM ({benchmarks}) AS b "
        f"ORDER BY benchmark_id ON CONFLICT (benchmark_id) DO UPDATE SET {counter} = {VERSIONS}.{counter} + 1;"
    )


def _postgres_forward() -> list[str]:
    truncate = (
        "CREATE FUNCTION arena_benchmark_data_version_truncate() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        f"INSERT INTO {VERSIONS} (benchmark_id, version, texts) VALUES (0, 0, 0) ON CONFLICT (benchmark_id) DO NOTHING; "
        f"UPDATE {VERSIONS} SET version = version + 1, texts = texts + 1; RETURN NULL; END $$;"
    )
    out = [truncate]
    for table, (via, counter) in TABLES.items():
        column = "benchmark_id" if via == "benchmark" else "context_id"
        both = f"(SELECT {column} FROM old_rows UNION SELECT {column} FROM new_rows)"
        fn = f"{table}_data_version"
        out.append(
            f"""CREATE FUNCTION {fn}() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF TG_OP = 'INSERT' THEN {_pg_bump("new_rows", via, counter)}
                ELSIF TG_OP = 'DELETE' THEN {_pg_bump("old_rows", via, counter)}
                ELSE {_pg_bump(both, via, counter)}
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
                f"CREATE TRIGGER {fn}_{event} AFTER {event.upper()} ON {table} REFERENCING {tables} "
                f"FOR EACH STATEMENT EXECUTE FUNCTION {fn}();"
            )
        out.append(
            f"CREATE TRIGGER {fn}_truncate AFTER TRUNCATE ON {table} FOR EACH STATEMENT EXECUTE FUNCTION "
            "arena_benchmark_data_version_truncate();"
        )
    return out


def _postgres_backward() -> list[str]:
    out = []
    for table in TABLES:
        fn = f"{table}_data_version"
        out += [f"DROP TRIGGER IF EXISTS {fn}_{event} ON {table};" for event in ("insert", "update", "delete", "truncate")]
        out.append(f"DROP FUNCTION IF EXISTS {fn}();")
    return [*out, "DROP FUNCTION IF EXISTS arena_benchmark_data_version_truncate();"]


def _sqlite_bump(row: str, via: str, counter: str) -> str:
    """SQLite: a row of a table with a ``benchmark_id`` moves its benchmark's counter; a proposal's or paper's row
    moves row 0's ``texts`` (see the module doc)."""
    benchmark = f"{row}.benchmark_id" if via == "benchmark" else "0"
    return (
        f"INSERT OR IGNORE INTO {VERSIONS} (benchmark_id, version, texts) VALUES ({benchmark}, 0, 0); "
        f"UPDATE {VERSIONS} SET {counter} = {counter} + 1 WHERE benchmark_id = {benchmark};"
    )


def _sqlite_forward() -> list[str]:
    out = []
    for table, (via, counter) in TABLES.items():
        name = f"{table}_data_version"
        old, new = _sqlite_bump("OLD", via, counter), _sqlite_bump("NEW", via, counter)
        out += [
            f"CREATE TRIGGER {name}_insert AFTER INSERT ON {table} BEGIN {new} END;",
            f"CREATE TRIGGER {name}_update AFTER UPDATE ON {table} BEGIN {old} {new} END;",
            f"CREATE TRIGGER {name}_delete AFTER DELETE ON {table} BEGIN {old} END;",
        ]
    return out


def _sqlite_backward() -> list[str]:
    return [
        f"DROP TRIGGER IF EXISTS {table}_data_version_{event};" for table in TABLES for event in ("insert", "update", "delete")
    ]


def _run(statements: dict[str, list[str]]):  # noqa: ANN202
    def apply(apps, schema_editor) -> None:  # noqa: ANN001
        for statement in statements.get(schema_editor.connection.vendor, []):
            schema_editor.execute(statement)

    return apply


class Migration(migrations.Migration):
    dependencies = [
        ("arena", "0014_judgment_version_truncate"),
    ]

    operations = [
        migrations.CreateModel(
            name="BenchmarkDataVersion",
            fields=[
                ("benchmark_id", models.BigIntegerField(primary_key=True, serialize=False)),
                ("version", models.BigIntegerField(default=0)),
                ("texts", models.BigIntegerField(default=0)),
            ],
        ),
        migrations.RunPython(
            _run({"postgresql": _postgres_forward(), "sqlite": _sqlite_forward()}),
            _run({"postgresql": _postgres_backward(), "sqlite": _sqlite_backward()}),
        ),
    ]
