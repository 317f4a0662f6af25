"""Import of a large synthetic release, and a re-import that finds nothing new (issue 10, item 6).

Targets (PostgreSQL): 112,000 ordered judgments (2,000 contexts x 8 models, every pair, both orders) imported
in under 5 s; a re-import of the same files in under 3 s; memory bounded.

Reference measured in the same run: a raw ``COPY`` of the same ordered-judgment rows (read back from the
database after the import, so identical values) into a table of the same columns and indexes
(``CREATE TABLE ... (LIKE arena_orderedjudgment INCLUDING ALL)``): what writing the judgments costs at the least.
On SQLite the reference is one ``executemany`` INSERT of those rows. The import does much more than the
reference (it parses and checks every line, writes contexts, papers, proposals and pairs, redacts proposals),
so the ratio says how far the whole import is from the cost of just storing its biggest table. On PostgreSQL a
second reference adds the table's foreign keys (deferred, checked row by row at COMMIT, as in the import): the
least that storing the judgments costs with the schema's integrity.

Beside each import's wall time, the CPU time of its own process (``time.process_time``): the rest is the
database's work (COPY, indexes, foreign-key checks) and waiting for a core on a shared machine.

Each import runs in a forked child; its peak resident memory (``ru_maxrss`` from ``wait4``) is printed, and
beside it the parent's resident memory at the fork (which the child starts with).

Database: Django's test-database machinery creates ``$BENCH_DATABASE_NAME`` (default: the name in
``DATABASE_URL`` + ``_bench``) and drops it at the end; without ``DATABASE_URL``, an in-memory SQLite one.

    DATABASE_URL=postgres://postgres@127.0.0.1:54329/lit2test_h2 .venv/bin/python bench/bench_import.py
    .venv/bin/python bench/bench_import.py --contexts 200 --models 8     # smaller
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic_release import django_setup, scratch_database, scratch_database_drop, write_release  # noqa: E402


def rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def in_child(work: Callable[[], Any]) -> tuple[Any, float, float]:
    """Run ``work`` in a forked child: (its result, seconds, the child's peak RSS in MiB)."""
    from django.db import connections

    connections.close_all()  # the child opens its own connection
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        os.close(read)
        try:
            started = time.perf_counter()
            result = work()
            payload: Any = ("ok", result, time.perf_counter() - started)
        except BaseException as exc:  # noqa: BLE001 - reported by the parent
            payload = ("error", repr(exc), 0.0)
        connections.close_all()
        with os.fdopen(write, "wb") as out:
            pickle.dump(payload, out)
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as handle:
        status, result, seconds = pickle.load(handle)
    _, _, usage = os.wait4(pid, 0)
    if status != "ok":
        raise RuntimeError(f"the child failed: {result}")
    return result, seconds, usage.ru_maxrss / 1024


def raw_copy_seconds(*, foreign_keys: bool = False) -> tuple[float, int]:
    """The reference: the stored ordered judgments written again, by COPY (PostgreSQL) or executemany (SQLite).

    ``foreign_keys`` (PostgreSQL): the copy also gets the table's foreign keys (deferred, as Django makes them),
    and the time runs to the COMMIT that checks them row by row: what storing the judgments with the schema's
    integrity costs at the least, of which the import pays as much again for the pairs' own foreign keys.
    """
    from django.db import connection, transaction

    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM arena_orderedjudgment ORDER BY id")
        columns = [c[0] for c in cursor.description]  # a name first, in every DB-API driver
        rows = cursor.fetchall()
        names = ", ".join(connection.ops.quote_name(c) for c in columns)
        if connection.vendor == "postgresql":
            cursor.execute("CREATE TABLE bench_copy (LIKE arena_orderedjudgment INCLUDING ALL)")
            if foreign_keys:
                cursor.execute(
                    "SELECT pg_get_constraintdef(oid) FROM pg_constraint "
                    "WHERE conrelid = 'arena_orderedjudgment'::regclass AND contype = 'f'"
                )
                for (definition,) in cursor.fetchall():
                    cursor.execute(f"ALTER TABLE bench_copy ADD {definition}")
            import json

            jsonb = {i for i, c in enumerate(columns) if c in ("errors", "metadata")}
            rows = [tuple(json.dumps(v) if i in jsonb else v for i, v in enumerate(row)) for row in rows]
            started = time.perf_counter()
            with transaction.atomic():  # the deferred checks run at its COMMIT, inside the timing
                with cursor.cursor.copy(f"COPY bench_copy ({names}) FROM STDIN") as copy:
                    for row in rows:
                        copy.write_row(row)
            seconds = time.perf_counter() - started
        else:
            cursor.execute("CREATE TABLE bench_copy AS SELECT * FROM arena_orderedjudgment WHERE 0")
            started = time.perf_counter()
            with transaction.atomic():  # one transaction, as the import's (else a commit and a sync per row)
                cursor.executemany(f"INSERT INTO bench_copy ({names}) VALUES ({', '.join(['%s'] * len(columns))})", rows)
            seconds = time.perf_counter() - started
        cursor.execute("DROP TABLE bench_copy")
    return seconds, len(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--contexts", type=int, default=2000)
    parser.add_argument("--models", type=int, default=8)
    # The sample's share: 13 of its 200 contexts come with text and proposals; the others are verdict-only.
    parser.add_argument(
        "--text-contexts", type=int, default=None, help="contexts with text and proposals (default: 6.5%%, as in the sample)"
    )
    parser.add_argument("--seed", type=int, default=0)
    args, _ = parser.parse_known_args()  # run_all.py forwards other benches' options
    django_setup()
    from django.db import connection

    from arena.models import OrderedJudgment
    from lit2test.release import release_import

    folder = Path(tempfile.mkdtemp(prefix="lit2test-bench-import-"))
    text_contexts = round(args.contexts * 13 / 200) if args.text_contexts is None else args.text_contexts
    info = write_release(folder, n_contexts=args.contexts, n_models=args.models, seed=args.seed, text_contexts=text_contexts)
    n = info["ordered_judgments"]
    old_name = scratch_database()
    try:
        vendor = connection.vendor
        print(
            f"import of a synthetic release: {info['contexts']:,} contexts ({info['text_contexts']:,} with text and "
            f"{len(info['models'])} proposals each), {len(info['models'])} models, {info['folded_lines']:,} pairs = "
            f"{n:,} ordered judgments ({vendor}, database {connection.settings_dict['NAME']})"
        )
        base_rss = rss_mb()

        def run_import() -> tuple[str, float]:
            cpu = time.process_time()
            line = release_import(directory=folder).line()
            return line, time.process_time() - cpu

        (line, first_cpu), first, first_rss = in_child(run_import)
        stored = OrderedJudgment.objects.count()
        assert stored == n, (stored, n)
        print(
            f"  import:                 {first:7.2f} s  ({1000 * first / n:.3f} ms per ordered judgment; target < 5 s)  "
            f"peak RSS {first_rss:.0f} MiB (parent at fork {base_rss:.0f} MiB); its own CPU {first_cpu:.2f} s"
        )
        print(f"    {line[:160]}")
        (line, again_cpu), again, again_rss = in_child(run_import)
        assert line.startswith("nothing new"), line
        assert OrderedJudgment.objects.count() == n
        print(
            f"  re-import, nothing new: {again:7.2f} s  (target < 3 s)  peak RSS {again_rss:.0f} MiB; its own CPU {again_cpu:.2f} s"
        )
        reference, rows = raw_copy_seconds()
        how = "raw COPY" if vendor == "postgresql" else "executemany INSERT"
        print(f"  reference: {how} of the same {rows:,} judgment rows: {reference:.2f} s")
        print(f"  ratio import/{how}: {first / reference:.1f}x;  re-import/{how}: {again / reference:.1f}x")
        if vendor == "postgresql":
            checked, _ = raw_copy_seconds(foreign_keys=True)
            print(
                f"  and with the table's 4 deferred foreign keys, checked at COMMIT: {checked:.2f} s "
                f"(the checks alone {checked - reference:.2f} s); ratio import/that: {first / checked:.1f}x"
            )
    finally:
        connection.close()
        scratch_database_drop(old_name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
