"""A counter of changes to each run's ordered judgments, maintained by database triggers (issue 10, item 4).

PostgreSQL: one statement-level trigger per event (transition tables: a COPY or a bulk INSERT of 100,000 rows
bumps each run it touches once). SQLite: row-level triggers (SQLite has no statement-level ones).
"""

from django.db import migrations, models

JUDGMENTS = "arena_orderedjudgment"
VERSIONS = "arena_judgerunversion"

POSTGRES_FORWARD = [
    f"""
    CREATE FUNCTION arena_judgment_version_bump() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        -- Runs in a fixed order, so two statements touching the same runs cannot deadlock here.
        IF TG_OP = 'INSERT' THEN
            INSERT INTO {VERSIONS} (run_id, version)
            SELECT DISTINCT run_id, 1 FROM new_rows ORDER BY run_id
            ON CONFLICT (run_id) DO UPDATE SET version = {VERSIONS}.version + 1;
        ELSIF TG_OP = 'UPDATE' THEN
            INSERT INTO {VERSIONS} (run_id, version)
            SELECT run_id, 1 FROM (SELECT run_id FROM old_rows UNION SELECT run_id FROM new_rows) AS changed ORDER BY run_id
            ON CONFLICT (run_id) DO UPDATE SET version = {VERSIONS}.version + 1;
        ELSE
            INSERT INTO {VERSIONS} (run_id, version)
            SELECT DISTINCT run_id, 1 FROM old_rows ORDER BY run_id
            ON CONFLICT (run_id) DO UPDATE SET version = {VERSIONS}.version + 1;
        END IF;
        RETURN NULL;
    END
    $$;
    """,
    f"""CREATE TRIGGER arena_judgment_version_insert AFTER INSERT ON {JUDGMENTS}
        REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION arena_judgment_version_bump();""",
    f"""CREATE TRIGGER arena_judgment_version_update AFTER UPDATE ON {JUDGMENTS}
        REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION arena_judgment_version_bump();""",
    f"""CREATE TRIGGER arena_judgment_version_delete AFTER DELETE ON {JUDGMENTS}
        REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION arena_judgment_version_bump();""",
]
POSTGRES_BACKWARD = [
    f"DROP TRIGGER IF EXISTS arena_judgment_version_insert ON {JUDGMENTS};",
    f"DROP TRIGGER IF EXISTS arena_judgment_version_update ON {JUDGMENTS};",
    f"DROP TRIGGER IF EXISTS arena_judgment_version_delete ON {JUDGMENTS};",
    "DROP FUNCTION IF EXISTS arena_judgment_version_bump();",
]


def _sqlite_bump(row: str) -> str:
    return (
        f"INSERT OR IGNORE INTO {VERSIONS} (run_id, version) VALUES ({row}.run_id, 0); "
        f"UPDATE {VERSIONS} SET version = version + 1 WHERE run_id = {row}.run_id;"
    )


SQLITE_FORWARD = [
    f"CREATE TRIGGER arena_judgment_version_insert AFTER INSERT ON {JUDGMENTS} BEGIN {_sqlite_bump('NEW')} END;",
    f"CREATE TRIGGER arena_judgment_version_update AFTER UPDATE ON {JUDGMENTS} BEGIN {_sqlite_bump('OLD')} END;",
    f"CREATE TRIGGER arena_judgment_version_move AFTER UPDATE OF run_id ON {JUDGMENTS} WHEN NEW.run_id != OLD.run_id "
    f"BEGIN {_sqlite_bump('NEW')} END;",
    f"CREATE TRIGGER arena_judgment_version_delete AFTER DELETE ON {JUDGMENTS} BEGIN {_sqlite_bump('OLD')} END;",
]
SQLITE_BACKWARD = [f"DROP TRIGGER IF EXISTS arena_judgment_version_{event};" for event in ("insert", "update", "move", "delete")]


def _run(statements: dict[str, list[str]]):  # noqa: ANN202
    def apply(apps, schema_editor) -> None:  # noqa: ANN001
        for statement in statements.get(schema_editor.connection.vendor, []):
            schema_editor.execute(statement)

    return apply


class Migration(migrations.Migration):
    dependencies = [
        ("arena", "0002_blindness_aliases"),
    ]

    operations = [
        migrations.CreateModel(
            name="JudgeRunVersion",
            fields=[
                ("run_id", models.BigIntegerField(primary_key=True, serialize=False)),
                ("version", models.BigIntegerField(default=0)),
            ],
        ),
        migrations.RunPython(
            _run({"postgresql": POSTGRES_FORWARD, "sqlite": SQLITE_FORWARD}),
            _run({"postgresql": POSTGRES_BACKWARD, "sqlite": SQLITE_BACKWARD}),
        ),
    ]
