"""The database triggers the shared core relies on, kept in place after every ``migrate`` and ``flush``.

Two sets of triggers keep figures that the application never writes itself:

- the run change counter (``arena.models.JudgeRunVersion``: migrations 0003 and 0014) and the benchmark data counter
  (``arena.models.BenchmarkDataVersion``: 0015), on which every cached and stored leaderboard of a run is keyed — a
  counter that stopped moving would serve figures of verdicts, names or batches that changed;
- the benchmark counts (``arena.models.BenchmarkCounts``: migrations 0011 and 0013), which the benchmark list reads.

Two things remove or bypass them: a migration that remakes a table on SQLite (``AlterField``: create, copy, drop,
rename — the triggers go with the old table), and a restore with triggers disabled; and ``flush`` on SQLite deletes
the counted tables row by row in an order where the count triggers leave counts of benchmarks already gone. So after
every ``migrate`` and ``flush`` (``post_migrate``, connected in ``arena.apps``) the triggers are installed again —
SQLite's ``CREATE TRIGGER IF NOT EXISTS`` (dropping and creating them would rewrite the schema, a commit to disk,
after every transactional test), PostgreSQL's ``CREATE OR REPLACE`` — and the counts are counted afresh
(``arena.counts.counts_rebuild``). The statements are the migrations' own, read from them: the migrations stay the one
definition, and a later migration that changes a trigger is added to :data:`TRIGGER_MIGRATIONS`.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable

from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.migrations.recorder import MigrationRecorder

#: Migrations of ``arena`` that define triggers, in order: (name, per database the module attribute holding its
#: forward statements — a list, or a function returning one).
TRIGGER_MIGRATIONS = (
    ("0003_judgerunversion", {"postgresql": "POSTGRES_FORWARD", "sqlite": "SQLITE_FORWARD"}),
    ("0011_benchmarkcounts", {"postgresql": "_postgres_forward", "sqlite": "_sqlite_forward"}),
    ("0013_counts_truncate", {"postgresql": "_forward"}),
    ("0014_judgment_version_truncate", {"postgresql": "POSTGRES_FORWARD"}),
    ("0015_benchmarkdataversion", {"postgresql": "_postgres_forward", "sqlite": "_sqlite_forward"}),
)
VERSION_MIGRATIONS = ("0003_judgerunversion", "0014_judgment_version_truncate", "0015_benchmarkdataversion")
_IDEMPOTENT = {
    "postgresql": [("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION"), ("CREATE TRIGGER", "CREATE OR REPLACE TRIGGER")],
    "sqlite": [("CREATE TRIGGER", "CREATE TRIGGER IF NOT EXISTS")],
}


def applied_trigger_migrations(connection: BaseDatabaseWrapper) -> set[str]:
    """Which of :data:`TRIGGER_MIGRATIONS` the database has applied (one query)."""
    names = [name for name, _ in TRIGGER_MIGRATIONS]
    recorded = MigrationRecorder(connection).migration_qs.filter(app="arena", name__in=names)
    return set(recorded.values_list("name", flat=True))


def trigger_statements(vendor: str, migrations: Iterable[str]) -> list[str]:
    """The trigger statements of ``migrations`` (names from :data:`TRIGGER_MIGRATIONS`) for ``vendor``, made
    idempotent, in the migrations' order; none for a database they install nothing on."""
    wanted = set(migrations)
    out = []
    for name, attributes in TRIGGER_MIGRATIONS:
        if name not in wanted or vendor not in attributes:
            continue
        found = getattr(importlib.import_module(f"arena.migrations.{name}"), attributes[vendor])
        for statement in found() if callable(found) else found:
            for pattern, replacement in _IDEMPOTENT[vendor]:
                statement = re.sub(pattern, replacement, statement, count=1)
            out.append(statement)
    return out


def versions_reinstall(*, using: str = DEFAULT_DB_ALIAS) -> bool:
    """Install the run change counter's triggers where missing (SQLite) or again (PostgreSQL); False where 0003 is
    not applied or the database is neither (nothing to keep)."""
    connection = connections[using]
    if connection.vendor not in _IDEMPOTENT:
        return False
    applied = applied_trigger_migrations(connection)
    if VERSION_MIGRATIONS[0] not in applied:
        return False
    with transaction.atomic(using=using), connection.cursor() as cursor:
        for statement in trigger_statements(connection.vendor, applied & set(VERSION_MIGRATIONS)):
            cursor.execute(statement)
    return True


def triggers_after_migrate(*, using: str, **kwargs: object) -> None:
    """``post_migrate`` receiver (connected by :class:`arena.apps.ArenaConfig`): the counter's triggers, then the
    counts' triggers and the counts (:func:`arena.counts.counts_rebuild`)."""
    from .counts import counts_rebuild

    versions_reinstall(using=using)
    counts_rebuild(using=using)
