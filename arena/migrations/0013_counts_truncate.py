"""PostgreSQL: emptying a counted table with TRUNCATE zeroes the counts it feeds (review of issue 25, item 5).

TRUNCATE fires no row or statement trigger of 0011, so ``TRUNCATE arena_canonicalpair`` alone left every
benchmark's ``n_pairs`` as it was. A statement-level ``AFTER TRUNCATE`` trigger per counted table sets its count
columns to 0 (all its rows are gone). ``flush`` truncates the counts with the counted tables in one statement, which
was already consistent. SQLite has no TRUNCATE (its ``DELETE`` without ``WHERE`` fires the row triggers).

The SQL is copied here, not imported from :mod:`arena.counts`: a migration must build the same schema forever,
whatever that module becomes (it holds the live definitions, which its ``post_migrate`` receiver reinstalls).
"""

from django.db import migrations

COUNTS = "arena_benchmarkcounts"
#: Counted table -> the count columns it feeds (as in 0011).
TABLES = {
    "arena_context": ("n_contexts", "n_text_contexts"),
    "arena_participant": ("n_participants",),
    "arena_canonicalpair": ("n_pairs",),
    "arena_judgerun": ("n_runs",),
}


def _forward() -> list[str]:
    out = []
    for table, columns in TABLES.items():
        fn = f"{table}_count_truncate"
        zero = ", ".join(f"{c} = 0" for c in columns)
        nonzero = " OR ".join(f"{c} <> 0" for c in columns)
        out.append(
            f"CREATE FUNCTION {fn}() RETURNS trigger LANGUAGE plpgsql AS $$ "
            f"BEGIN UPDATE {COUNTS} SET {zero} WHERE {nonzero}; RETURN NULL; END $$;"
        )
        out.append(f"CREATE TRIGGER {fn} AFTER TRUNCATE ON {table} FOR EACH STATEMENT EXECUTE FUNCTION {fn}();")
    return out


def _backward() -> list[str]:
    out = []
    for table in TABLES:
        out.append(f"DROP TRIGGER IF EXISTS {table}_count_truncate ON {table};")
        out.append(f"DROP FUNCTION IF EXISTS {table}_count_truncate();")
    return out


def _run(statements: list[str]):  # noqa: ANN202
    def apply(apps, schema_editor) -> None:  # noqa: ANN001
        if schema_editor.connection.vendor == "postgresql":
            for statement in statements:
                schema_editor.execute(statement)

    return apply


class Migration(migrations.Migration):
    dependencies = [
        ("arena", "0012_storeddocument"),
    ]

    operations = [
        migrations.RunPython(_run(_forward()), _run(_backward())),
    ]
