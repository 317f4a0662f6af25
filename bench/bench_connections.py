"""PostgreSQL connections held by the web process under 32 concurrent researchers: the pool against the old default.

Each phase starts the app under a real server, logs in as the demo researcher, and lets ``--clients``
concurrent clients (default 32) fetch researcher pages and APIs in a loop for ``--seconds`` (default 15),
while a separate connection samples ``pg_stat_activity`` every 50 ms. It prints, per phase, the most client
connections the server held, how many it still held 2 s after the load stopped, the request rate and the
number of 5xx answers. The peer, measured in the same run on the same database and server, is the old
default (``DB_CONN_MAX_AGE=60``: one persistent connection per server thread or ASGI request); the
figure is the ratio old/new of the connections held, next to the bound the pool promises
(``DB_POOL_MAX_SIZE`` per process).

Servers: ``manage.py runserver`` (threaded, as ``make demo`` runs it) and uvicorn (ASGI, one process).

    .venv/bin/python bench/bench_connections.py [--clients 32] [--seconds 15] [--servers runserver,uvicorn]

PostgreSQL: a private cluster (initdb under a temporary folder, a free port, ``max_connections=200`` like
``.ci/run``), or the server of ``DATABASE_URL`` if that is set (a scratch database is created there and
dropped afterwards). Data: the release sample from ``$LIT2TEST_DATA`` (else ``../shared/data/lit2test``),
imported by ``manage.py demo_setup``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import httpx
import psycopg

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("LIT2TEST_DATA", ROOT.parent / "shared" / "data" / "lit2test"))
PY = sys.executable
sys.path.insert(0, str(ROOT))
from tests.pgcluster import CLIENT_CONNECTIONS_SQL, Postgres, free_port, postgres_bin  # noqa: E402

POOL_MAX_SIZE = 8  # the settings' default DB_POOL_MAX_SIZE, set explicitly so the bound printed is the one used


@contextlib.contextmanager
def private_cluster(max_connections: int) -> Iterator[str]:
    """A throw-away PostgreSQL cluster on a free loopback port; yields its server URL (no database)."""
    cluster = Postgres(max_connections=max_connections)
    try:
        yield cluster.server_url
    finally:
        cluster.destroy()


@contextlib.contextmanager
def scratch_database(server_url: str) -> Iterator[str]:
    """A fresh database on the server; yields its URL and drops it afterwards."""
    name = f"lit2test_bench_conn_{os.getpid()}"
    parts = urlsplit(server_url)
    admin = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield urlunsplit(parts._replace(path=f"/{name}"))
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


class Sampler:
    """Client connections to the database (its own excluded), every 50 ms, from another connection."""

    def __init__(self, url: str) -> None:
        self.conn = psycopg.connect(url, autocommit=True)
        self.samples: list[tuple[float, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def count(self) -> int:
        return self.conn.execute(CLIENT_CONNECTIONS_SQL).fetchone()[0]

    def _run(self) -> None:
        while not self._stop.is_set():
            self.samples.append((time.monotonic(), self.count()))
            time.sleep(0.05)

    def max_between(self, start: float, end: float) -> int:
        return max((n for t, n in self.samples if start <= t <= end), default=0)

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.conn.close()


@dataclass
class Phase:
    server: str
    config: str
    max_held: int = 0
    held_after: int = 0
    requests: int = 0
    seconds: float = 0.0
    statuses: Counter = field(default_factory=Counter)
    errors: Counter = field(default_factory=Counter)

    @property
    def server_errors(self) -> int:
        return sum(n for s, n in self.statuses.items() if s >= 500) + sum(self.errors.values())


def server_command(server: str, port: int) -> list[str]:
    if server == "runserver":
        return [PY, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload", "--skip-checks"]
    if server == "uvicorn":
        return [
            PY,
            "-m",
            "uvicorn",
            "lit2test_web.asgi:application",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "warning",
            "--no-access-log",
        ]
    raise SystemExit(f"--servers: unknown server {server!r} (runserver, uvicorn)")


@contextlib.contextmanager
def serving(
    command: list[str], *, name: str, port: int, cwd: Path, env: dict[str, str], log: Path
) -> Iterator[tuple[str, subprocess.Popen]]:
    """Start ``command`` (a web server listening on ``port``) in its own process group, wait until its login
    page answers, yield ``(base URL, process)``; stop the whole group on exit (SIGTERM, then SIGKILL)."""
    with log.open("w") as out:
        proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise SystemExit(f"{name} exited with {proc.returncode}; see {log}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{base}/accounts/login/", timeout=5).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise SystemExit(f"{name} did not answer within 60 s; see {log}")
            time.sleep(0.2)
        yield base, proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@contextlib.contextmanager
def running_server(server: str, env: dict[str, str], log: Path) -> Iterator[str]:
    port = free_port()
    with serving(server_command(server, port), name=server, port=port, cwd=ROOT, env=env, log=log) as (base, _proc):
        yield base


def login(base: str) -> dict[str, str]:
    with httpx.Client(base_url=base, timeout=60) as http:
        http.get("/accounts/login/")
        token = http.cookies["csrftoken"]
        response = http.post(
            "/accounts/login/",
            data={"username": "researcher", "password": "lit2test-demo", "csrfmiddlewaretoken": token},
            headers={"Referer": f"{base}/accounts/login/"},
        )
        if "sessionid" not in http.cookies:
            raise SystemExit(f"could not log in as the demo researcher (HTTP {response.status_code})")
        return {"sessionid": http.cookies["sessionid"], "csrftoken": token}


async def load(base: str, cookies: dict[str, str], paths: list[str], clients: int, seconds: float, phase: Phase) -> None:
    deadline = time.monotonic() + seconds

    async def client(k: int) -> None:
        async with httpx.AsyncClient(base_url=base, cookies=cookies, timeout=60) as http:
            i = k
            while time.monotonic() < deadline:
                try:
                    response = await http.get(paths[i % len(paths)])
                    phase.statuses[response.status_code] += 1
                except httpx.HTTPError as exc:
                    phase.errors[type(exc).__name__] += 1
                phase.requests += 1
                i += 1

    started = time.monotonic()
    await asyncio.gather(*(client(k) for k in range(clients)))
    phase.seconds = time.monotonic() - started


def researcher_paths(url: str) -> list[str]:
    with psycopg.connect(url) as conn:
        benchmark = conn.execute("SELECT id FROM arena_benchmark ORDER BY id LIMIT 1").fetchone()
        run = conn.execute("SELECT id FROM arena_judgerun ORDER BY id LIMIT 1").fetchone()
    paths = ["/dashboard/", "/api/benchmarks/", "/dashboard/runs/"]
    if benchmark:
        paths += [f"/dashboard/benchmarks/{benchmark[0]}/", f"/api/benchmarks/{benchmark[0]}/leaderboard/?replicates=200"]
    if run:
        paths += [f"/api/runs/{run[0]}/progress/"]
    return paths


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--servers", default="runserver,uvicorn")
    parser.add_argument("--max-connections", type=int, default=200, help="of the private cluster")
    args, _ = parser.parse_known_args()  # run_all.py forwards every script's arguments to all of them
    servers = [s for s in args.servers.split(",") if s]
    if not (DATA / "corrected_folded_pairs.jsonl").is_file():
        print(f"release sample not found at {DATA}; set LIT2TEST_DATA", file=sys.stderr)
        return 2

    work = Path(tempfile.mkdtemp(prefix="lit2test-bench-conn-"))
    given = os.environ.get("DATABASE_URL")
    if given:
        parts = urlsplit(given)
        cluster: contextlib.AbstractContextManager[str] = contextlib.nullcontext(urlunsplit(parts._replace(path="")))
    else:
        if postgres_bin() is None:
            print("SKIPPED: needs PostgreSQL (no initdb found and DATABASE_URL is not set)")
            return 0
        cluster = private_cluster(args.max_connections)
    with cluster as server_url, scratch_database(server_url) as url:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DB_", "DATABASE_URL", "CACHE_URL", "CELERY_"))}
        env |= {
            "DATABASE_URL": url,
            "DEBUG": "0",
            "SECRET_KEY": secrets.token_urlsafe(50),
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "SECURE_SSL_REDIRECT": "0",
            "SESSION_COOKIE_SECURE": "0",
            "CSRF_COOKIE_SECURE": "0",
            "STATICFILES_BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage",
            "LIT2TEST_VAR_DIR": str(work / "var"),
            "CACHE_URL": "locmemcache://",
            "LOG_LEVEL": "ERROR",
        }
        subprocess.run([PY, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
        subprocess.run([PY, "manage.py", "demo_setup"], cwd=ROOT, env=env, check=True, capture_output=True)
        with psycopg.connect(url, autocommit=True) as conn:
            max_connections = int(conn.execute("SHOW max_connections").fetchone()[0])
        paths = researcher_paths(url)
        configs = {
            "pool (new default)": {"DB_POOL_MAX_SIZE": str(POOL_MAX_SIZE)},
            "DB_CONN_MAX_AGE=60 (old default)": {"DB_CONN_MAX_AGE": "60"},
        }
        sampler = Sampler(url)
        phases: list[Phase] = []
        try:
            for server in servers:
                for config, extra in configs.items():
                    phase = Phase(server, config)
                    log = work / f"{server}-{len(phases)}.log"
                    with running_server(server, env | extra, log) as base:
                        cookies = login(base)
                        started = time.monotonic()
                        asyncio.run(load(base, cookies, paths, args.clients, args.seconds, phase))
                        ended = time.monotonic()
                        time.sleep(2.0)
                        phase.max_held = sampler.max_between(started, ended)
                        phase.held_after = sampler.count()
                    phases.append(phase)
                    for _ in range(100):  # the next phase starts from an idle server
                        if sampler.count() == 0:
                            break
                        time.sleep(0.1)
        finally:
            sampler.close()

    print(f"PostgreSQL connections held by one web process, {args.clients} concurrent researcher clients for {args.seconds:g} s")
    print(
        f"(server max_connections {max_connections}; pool bound DB_POOL_MAX_SIZE={POOL_MAX_SIZE} per process; pages: {', '.join(paths)})"
    )
    print(f"  {'server':<10} {'configuration':<34} {'max held':>8} {'held 2 s after':>14} {'req/s':>7} {'5xx+errors':>10}")
    for p in phases:
        rate = p.requests / p.seconds if p.seconds else 0.0
        print(f"  {p.server:<10} {p.config:<34} {p.max_held:>8} {p.held_after:>14} {rate:>7.1f} {p.server_errors:>10}")
    status = 0
    for server in servers:
        new, old = [p for p in phases if p.server == server]
        ratio = old.max_held / new.max_held if new.max_held else float("inf")
        within = "within" if new.max_held <= POOL_MAX_SIZE else "ABOVE"
        print(
            f"  {server}: max held, old/new = {old.max_held}/{new.max_held} = {ratio:.1f}x; the pool stays {within} its bound of {POOL_MAX_SIZE}"
        )
        if new.max_held > POOL_MAX_SIZE or new.server_errors:
            status = 1
    shutil.rmtree(work, ignore_errors=True)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
