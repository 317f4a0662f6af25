"""A private PostgreSQL cluster on a free loopback port, for tests and benchmarks that must stop, restart or
fill a server without touching anyone else's: the fault tests (tests/faults) and bench/bench_connections.py.

Needs Debian's postgresql package (``.ci/run`` installs it). PostgreSQL refuses to run as root, so when run
as root (CI) the cluster belongs to the postgres user, as in ``.ci/run``.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import psycopg

# Client connections to the current database other than the asking one (autovacuum workers excluded).
CLIENT_CONNECTIONS_SQL = (
    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
    " AND backend_type = 'client backend'"
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def postgres_bin() -> Path | None:
    """The newest installed server's bin folder (versions compared as numbers: 16 after 9.6)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: [int(x) for x in re.findall(r"\d+", p)])
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _as_postgres(command: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return command
    return ["su", "postgres", "-s", "/bin/sh", "-c", " ".join(f"'{c}'" for c in command)]


class Postgres:
    """A fresh cluster, started; ``databases`` are created in it."""

    def __init__(self, *, databases: tuple[str, ...] = (), max_connections: int = 100) -> None:
        binaries = postgres_bin()
        assert binaries is not None, "no PostgreSQL server installed (Debian package postgresql)"
        self.bin = binaries
        self.port = free_port()
        self.max_connections = max_connections
        self.dir = Path(tempfile.mkdtemp(prefix="lit2test-pg-"))
        self.dir.chmod(0o755)
        self.data = self.dir / "data"
        self.data.mkdir()
        if os.geteuid() == 0:
            shutil.chown(self.data, "postgres", "postgres")
        subprocess.run(
            _as_postgres(
                [
                    str(self.bin / "initdb"),
                    "-D",
                    str(self.data),
                    "-A",
                    "trust",
                    "-U",
                    "postgres",
                    "-E",
                    "UTF8",
                    "--locale=C.UTF-8",
                ]
            ),
            check=True,
            capture_output=True,
        )
        self.start()
        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            for name in databases:
                conn.execute(f'CREATE DATABASE "{name}"')

    @property
    def server_url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}"

    def url(self, database: str = "lit2test") -> str:
        return f"{self.server_url}/{database}"

    def start(self) -> None:
        options = (
            f"-p {self.port} -k {self.data} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections={self.max_connections}"
        )
        subprocess.run(
            _as_postgres(
                [str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.data / "log"), "-w", "-o", options, "start"]
            ),
            check=True,
            capture_output=True,
        )

    def stop(self, mode: str = "fast") -> None:
        subprocess.run(
            _as_postgres([str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop"]),
            check=False,
            capture_output=True,
        )

    def destroy(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.dir, ignore_errors=True)

    def query(self, sql: str, *params: Any, database: str = "lit2test") -> list[tuple[Any, ...]]:
        """A fresh connection per query: the server may have restarted since the last one."""
        with psycopg.connect(self.url(database), autocommit=True, connect_timeout=5) as conn:
            return conn.execute(sql, params).fetchall()

    def value(self, sql: str, *params: Any) -> Any:  # noqa: ANN401
        return self.query(sql, *params)[0][0]
