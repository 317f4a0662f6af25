"""PostgreSQL: emptying the ordered judgments with TRUNCATE moves every run's change counter (review of issue 25).

TRUNCATE fires none of 0003's triggers, so ``TRUNCATE arena_orderedjudgment`` left each run's counter as it was, and a
leaderboard cached or stored (``arena.StoredDocument``) under it would have been served for verdicts that are gone.
A statement-level ``AFTER TRUNCATE`` trigger adds one to every counter. ``flush`` truncates the counters with the
judgments, which was already consistent. SQLite has no TRUNCATE (a ``DELETE`` without ``WHERE`` fires 0003's row
triggers). ``arena.triggers`` reinstalls these statements after every migrate and flush.
"""

from django.db import migrations

JUDGMENTS = "arena_orderedjudgment"
VERSIONS = "arena_judgerunversion"

POSTGRES_FORWARD = [
    f"""CREATE FUNCTION arena_judgment_version_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        UPDATE {VERSIONS} SET version = version + 1;
        RETURN NULL;
    END
    $$;""",
    f"""CREATE TRIGGER arena_judgment_version_truncate AFTER TRUNCATE ON {JUDGMENTS}
        FOR EACH STATEMENT EXECUTE FUNCTION arena_judgment_version_truncate();""",
]
POSTGRES_BACKWARD = [
    f"DROP TRIGGER IF EXISTS arena_judgment_version_truncate ON {JUDGMENTS};",
    "DROP FUNCTION IF EXISTS arena_judgment_version_truncate();",
]


def _run(statements: list[str]):  # noqa: ANN202
    def apply(apps, schema_editor) -> None:  # noqa: ANN001
        if schema_editor.connection.vendor == "postgresql":
            for statement in statements:
                schema_editor.execute(statement)

    return apply


class Migration(migrations.Migration):
    dependencies = [
        ("arena", "0013_counts_truncate"),
    ]

    operations = [
        migrations.RunPython(_run(POSTGRES_FORWARD), _run(POSTGRES_BACKWARD)),
    ]
