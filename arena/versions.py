"""The run change counter's triggers (``arena.models.JudgeRunVersion``: migrations 0003 and 0014), kept in place.

Every leaderboard cached or stored for a run is keyed on its counter (``arena.selectors.run_data_version``), so a
counter that stops moving would serve figures of verdicts that changed. Two things remove or bypass the triggers:
a migration that remakes ``arena_orderedjudgment`` on SQLite (``AlterField``: create, copy, drop, rename — the
triggers go with the old table), and a restore with triggers disabled. So after every ``migrate`` and ``flush``
(``post_migrate``, connected in ``arena.apps``) the triggers are installed again where missing: SQLite's
``CREATE TRIGGER IF NOT EXISTS``, PostgreSQL's ``CREATE OR REPLACE``. The statements are the migrations' own (the
migrations stay the one definition; a later migration that changes them must be added to ``_MIGRATIONS``).
"""

from __future__ import annotations

import importlib
import re

from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.db.migrations.recorder import MigrationRecorder

#: The migrations that define the counter's triggers, in order: (name, its statements per database).
_MIGRATIONS = (
    ("0003_judgerunversion", {"postgresql": "POSTGRES_FORWARD", "sqlite": "SQLITE_FORWARD"}),
    ("0014_judgment_version_truncate", {"postgresql": "POSTGRES_FORWARD"}),
)
_REPLACE = {
    "postgresql": [(r"CREATE FUNCTION", "CREATE OR REPLACE FUNCTION"), (r"CREATE TRIGGER", "CREATE OR REPLACE TRIGGER")],
    "sqlite": [(r"CREATE TRIGGER", "CREATE TRIGGER IF NOT EXISTS")],
}


def version_trigger_statements(vendor: str, applied: set[str]) -> list[str]:
    """The applied migrations' trigger statements for ``vendor``, made idempotent."""
    out = []
    for name, names in _MIGRATIONS:
        if name not in applied or vendor not in names:
            continue
        module = importlib.import_module(f"arena.migrations.{name}")
        for statement in getattr(module, names[vendor]):
            for pattern, replacement in _REPLACE[vendor]:
                statement = re.sub(pattern, replacement, statement, count=1)
            out.append(statement)
    return out


def versions_reinstall(*, using: str = DEFAULT_DB_ALIAS) -> bool:
    """Install the counter's triggers where missing (SQLite) or again (PostgreSQL); False where 0003 is not applied
    or the database is neither (nothing to keep)."""
    connection = connections[using]
    if connection.vendor not in _REPLACE:
        return False
    names = [name for name, _ in _MIGRATIONS]
    applied = set(MigrationRecorder(connection).migration_qs.filter(app="arena", name__in=names).values_list("name", flat=True))
    if names[0] not in applied:
        return False
    with transaction.atomic(using=using), connection.cursor() as cursor:
        for statement in version_trigger_statements(connection.vendor, applied):
            cursor.execute(statement)
    return True


def versions_after_migrate(*, using: str, **kwargs: object) -> None:
    """``post_migrate`` receiver (connected by :class:`arena.apps.ArenaConfig`): :func:`versions_reinstall`."""
    versions_reinstall(using=using)
