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
from dataclasses import dataclass

from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.migrations.recorder import MigrationRecorder

#: Migrations of ``arena`` that define triggers, in order: (name, per database the module attribute holding its
#: forward statements — a list, or a function returning one — every one a CREATE FUNCTION or CREATE TRIGGER).
TRIGGER_MIGRATIONS = (
    ("0003_judgerunversion", {"postgresql": "POSTGRES_FORWARD", "sqlite": "SQLITE_FORWARD"}),
    ("0011_benchmarkcounts", {"postgresql": "_postgres_forward", "sqlite": "_sqlite_forward"}),
    ("0013_counts_truncate", {"postgresql": "_forward"}),
    ("0014_judgment_version_truncate", {"postgresql": "POSTGRES_FORWARD"}),
    ("0015_benchmarkdataversion", {"postgresql": "_postgres_forward", "sqlite": "_sqlite_forward"}),
)
_CREATE = re.compile(r"\A\s*CREATE\s+(FUNCTION|TRIGGER)\s+(\w+)", re.IGNORECASE)
_ON_TABLE = re.compile(r"\bON\s+(\w+)", re.IGNORECASE)
_IDEMPOTENT = {"postgresql": "CREATE OR REPLACE {kind}", "sqlite": "CREATE {kind} IF NOT EXISTS"}


@dataclass(frozen=True)
class Statement:
    kind: str  # "FUNCTION" or "TRIGGER"
    name: str
    sql: str  # made idempotent
    table: str  # the table a trigger is on ("" for a function)


def applied_trigger_migrations(connection: BaseDatabaseWrapper) -> set[str]:
    """Which of :data:`TRIGGER_MIGRATIONS` the database has applied (one query)."""
    names = [name for name, _ in TRIGGER_MIGRATIONS]
    recorded = MigrationRecorder(connection).migration_qs.filter(app="arena", name__in=names)
    return set(recorded.values_list("name", flat=True))


def trigger_statements(vendor: str, migrations: Iterable[str]) -> list[Statement]:
    """The trigger statements of ``migrations`` (names from :data:`TRIGGER_MIGRATIONS`) for ``vendor``, made
    idempotent, in the migrations' order, a later definition of a name replacing an earlier one (the newest
    migration's body is the one kept); none for a database they install nothing on. Raises on a statement that is not
    a CREATE FUNCTION or CREATE TRIGGER (it would be run again after every migrate and flush)."""
    wanted = set(migrations)
    found: dict[tuple[str, str], Statement] = {}
    for migration, attributes in TRIGGER_MIGRATIONS:
        if migration not in wanted or vendor not in attributes:
            continue
        listed = getattr(importlib.import_module(f"arena.migrations.{migration}"), attributes[vendor])
        for sql in listed() if callable(listed) else listed:
            head = _CREATE.match(sql)
            if head is None:
                raise ValueError(
                    f"arena.triggers: migration {migration} lists a statement that is not CREATE FUNCTION or CREATE TRIGGER: {sql[:80]!r}"
                )
            kind, name = head.group(1).upper(), head.group(2)
            table = _ON_TABLE.search(sql, head.end()).group(1) if kind == "TRIGGER" else ""
            idempotent = _IDEMPOTENT[vendor].format(kind=kind) + sql[head.end(1) :]
            found.pop((kind, name), None)  # re-inserted last: keeps the migrations' order of the newest definitions
            found[(kind, name)] = Statement(kind, name, idempotent, table)
    # Functions first: a trigger names its function, which a later migration may have redefined.
    return sorted(found.values(), key=lambda statement: statement.kind != "FUNCTION")


def _missing_on_postgresql(connection: BaseDatabaseWrapper, statements: list[Statement]) -> list[Statement]:
    """The statements whose trigger or function the catalog does not have (a read: no lock)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal")
        triggers = {row[0] for row in cursor.fetchall()}
        cursor.execute(
            "SELECT proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = current_schema()"
        )
        functions = {row[0] for row in cursor.fetchall()}
    return [s for s in statements if s.name not in (triggers if s.kind == "TRIGGER" else functions)]


def triggers_install(*, using: str = DEFAULT_DB_ALIAS, migrations: Iterable[str] | None = None, force: bool = False) -> bool:
    """Install the triggers of ``migrations`` (default: every applied one) where missing; returns whether it wrote.

    SQLite: ``CREATE TRIGGER IF NOT EXISTS`` for each (creating them all would rewrite the schema, a commit to disk,
    after every transactional test's flush). PostgreSQL never drops a trigger with a table change, so the catalog is
    read first and nothing is done (no lock taken) when every trigger and function is there; otherwise, or with
    ``force``, every table concerned is locked at once (one LOCK statement: no lock is taken table by table while a
    writer holds another, which deadlocked against a live import) and the statements run as ``CREATE OR REPLACE``.
    """
    connection = connections[using]
    if connection.vendor not in _IDEMPOTENT:
        return False
    applied = applied_trigger_migrations(connection)
    statements = trigger_statements(connection.vendor, applied if migrations is None else applied & set(migrations))
    if not statements or (connection.vendor == "postgresql" and not force and not _missing_on_postgresql(connection, statements)):
        return False
    with transaction.atomic(using=using), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            tables = sorted({s.table for s in statements if s.table})
            cursor.execute(f"LOCK TABLE {', '.join(tables)} IN SHARE ROW EXCLUSIVE MODE")
        for statement in statements:
            cursor.execute(statement.sql)
    return True


def triggers_after_migrate(*, using: str, **kwargs: object) -> None:
    """``post_migrate`` receiver (connected by :class:`arena.apps.ArenaConfig`): the triggers where missing, then the
    benchmark counts counted afresh where they may be wrong — always on SQLite (its flush leaves them wrong), on
    PostgreSQL only when triggers had to be installed (a flush there truncates the counts with their tables)."""
    from .counts import counts_recount

    installed = triggers_install(using=using)
    if installed or connections[using].vendor == "sqlite":
        counts_recount(using=using)
