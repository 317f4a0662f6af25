"""The web process's PostgreSQL connections are bounded by the pool, however many requests arrive at once,
and a request that cannot get a connection in time is told to retry (503), not given a 500.

The load figures (new and old configuration side by side, under a real server) are in
bench/bench_connections.py; these tests only check the bound and the answer.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator

import httpx
import psycopg
import pytest
from django.db import connection
from django.urls import reverse

from tests.clients import session_cookie
from tests.conftest import ROOT
from tests.pgcluster import CLIENT_CONNECTIONS_SQL

CLIENTS_MARK = pytest.mark.django_db(transaction=True)

CLIENTS = 32
REQUESTS_PER_CLIENT = 4


def _require_pool() -> dict:
    """The pool options of the default database; skipped on SQLite (failed when services are required)."""
    if connection.vendor != "postgresql":
        message = f"the connection pool is PostgreSQL's; the database is {connection.vendor}"
        if os.environ.get("LIT2TEST_REQUIRE_SERVICES"):
            pytest.fail(message)
        pytest.skip(message)
    pool = connection.settings_dict["OPTIONS"].get("pool")
    assert pool, (
        f"no connection pool configured (CONN_MAX_AGE={connection.settings_dict['CONN_MAX_AGE']}): nothing bounds the connections"
    )
    return pool


class BackendSampler:
    """Counts, every few milliseconds, the client connections to the test database (other than its own):
    this test process is the only client of its test database."""

    def __init__(self) -> None:
        params = connection.get_connection_params()
        params.pop("pool", None)
        params.pop("cursor_factory", None)
        self._conn = psycopg.connect(**params, autocommit=True)
        self.samples: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            row = self._conn.execute(CLIENT_CONNECTIONS_SQL).fetchone()
            self.samples.append(row[0])
            time.sleep(0.01)

    def __enter__(self) -> BackendSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._conn.close()


def _client(
    base_url: str, cookie: str, paths: list[str], start: threading.Barrier, statuses: Counter, lock: threading.Lock
) -> None:
    with httpx.Client(base_url=base_url, cookies={"sessionid": cookie}, timeout=120) as http:
        start.wait()
        for i in range(REQUESTS_PER_CLIENT):
            status = http.get(paths[i % len(paths)]).status_code
            with lock:
                statuses[status] += 1


@CLIENTS_MARK
def test_32_concurrent_clients_never_hold_more_connections_than_the_pool(live_server, researcher) -> None:  # noqa: ANN001
    pool = _require_pool()
    cookie = session_cookie(researcher)
    paths = [reverse("arena:dashboard"), reverse("arena:api-benchmarks"), reverse("jobs:runs")]
    statuses: Counter = Counter()
    lock = threading.Lock()
    start = threading.Barrier(CLIENTS)
    with BackendSampler() as sampler:
        clients = [
            threading.Thread(target=_client, args=(live_server.url, cookie, paths, start, statuses, lock)) for _ in range(CLIENTS)
        ]
        for t in clients:
            t.start()
        for t in clients:
            t.join()
    # This test's own thread holds one pooled connection too, so the whole process stays within max_size.
    assert sampler.samples and max(sampler.samples) <= pool["max_size"], (max(sampler.samples), pool)
    assert max(sampler.samples) >= 2  # the requests did overlap: the bound was put to the test
    assert statuses == {200: CLIENTS * REQUESTS_PER_CLIENT}, statuses


@pytest.fixture
def one_connection_pool() -> Iterator[dict]:
    """The process's pool shrunk to one connection and a half-second wait, restored afterwards."""
    options = connection.settings_dict["OPTIONS"]
    saved = options["pool"]
    connection.close()
    connection.close_pool()
    options["pool"] = saved | {"min_size": 0, "max_size": 1, "timeout": 0.5}
    try:
        yield options["pool"]
    finally:
        connection.close()
        connection.close_pool()
        options["pool"] = saved


@CLIENTS_MARK
def test_a_request_that_gets_no_connection_in_time_is_answered_503_with_retry_after(live_server, researcher, request) -> None:  # noqa: ANN001
    _require_pool()
    cookie = session_cookie(researcher)
    request.getfixturevalue("one_connection_pool")
    connection.ensure_connection()  # this thread now holds the pool's only connection
    with httpx.Client(base_url=live_server.url, cookies={"sessionid": cookie}, timeout=30) as http:
        api = http.get(reverse("arena:api-benchmarks"))
        page = http.get(reverse("arena:dashboard"))
        page_zh = http.get(reverse("arena:dashboard"), headers={"Accept-Language": "zh-hans"})
        connection.close()  # handed back: the next request gets it
        again = http.get(reverse("arena:api-benchmarks"))
    assert api.status_code == 503 and api.headers["Retry-After"] == "5"
    assert api.json() == {"detail": "The database is busy; retry in a few seconds."}
    assert page.status_code == 503 and "database is busy" in page.text and page.headers["Retry-After"] == "5"
    # In the reader's language and the app's look (it was an English-only bare page).
    assert page_zh.status_code == 503 and '<html lang="zh-hans">' in page_zh.text and "数据库繁忙，请几秒后重试。" in page_zh.text
    assert 'href="/static/css/app.css"' in page.text or "/static/css/app." in page.text
    assert again.status_code == 200


def _database_settings(**env: str) -> dict:
    """DATABASES["default"] as the settings module computes it from ``env`` (no connection is made)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DB_", "DATABASE_URL"))}
    code = "import json; from lit2test_web import settings; print(json.dumps(settings.DATABASES['default'], default=str))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=clean | env, capture_output=True, text=True)
    if out.returncode:
        raise AssertionError(out.stderr.strip().splitlines()[-1])
    return json.loads(out.stdout)


def test_postgresql_gets_a_bounded_pool_by_default_and_db_conn_max_age_opts_out() -> None:
    url = "postgres://u@db.invalid:5432/lit"
    pooled = _database_settings(DATABASE_URL=url)
    assert pooled["OPTIONS"]["pool"] == {"min_size": 1, "max_size": 8, "timeout": 10.0, "name": "lit2test"}
    assert pooled["CONN_MAX_AGE"] == 0  # Django hands the connection back to the pool after each request
    sized = _database_settings(DATABASE_URL=url, DB_POOL_MAX_SIZE="20", DB_POOL_MIN_SIZE="2", DB_POOL_TIMEOUT="3.5")
    assert sized["OPTIONS"]["pool"] | {} == {"min_size": 2, "max_size": 20, "timeout": 3.5, "name": "lit2test"}
    persistent = _database_settings(DATABASE_URL=url, DB_CONN_MAX_AGE="60")
    assert "pool" not in persistent.get("OPTIONS", {}) and persistent["CONN_MAX_AGE"] == 60
    assert "pool" not in _database_settings(DATABASE_URL="sqlite:////tmp/x.sqlite3").get("OPTIONS", {})


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"DB_POOL_MAX_SIZE": "0"}, "DB_POOL_MAX_SIZE must be at least 1, not 0"),
        ({"DB_POOL_MIN_SIZE": "9"}, "DB_POOL_MIN_SIZE must be between 0 and DB_POOL_MAX_SIZE (8), not 9"),
        ({"DB_POOL_TIMEOUT": "0"}, "DB_POOL_TIMEOUT must be a positive number of seconds, not 0.0"),
        ({"DB_POOL_TIMEOUT": "inf"}, "DB_POOL_TIMEOUT must be a positive number of seconds, not inf"),
        ({"DB_POOL_TIMEOUT": "soon"}, "DB_POOL_TIMEOUT must be a number, not 'soon'"),
        ({"DB_POOL_MAX_SIZE": "8.5"}, "DB_POOL_MAX_SIZE must be a whole number, not '8.5'"),
    ],
)
def test_bad_pool_settings_stop_start_up_with_a_message_naming_them(env: dict, message: str) -> None:
    with pytest.raises(AssertionError, match=re.escape(message)):
        _database_settings(DATABASE_URL="postgres://u@db.invalid:5432/lit", **env)
