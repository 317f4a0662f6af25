"""Signed-in clients for the named personas (tests/conftest.py): one way to sign in, shared by every test package."""

from __future__ import annotations

from django.test import Client


def client_for(user, **options: object) -> Client:  # noqa: ANN001
    client = Client(**options)  # type: ignore[arg-type]
    client.force_login(user)
    return client


def session_cookie(user) -> str:  # noqa: ANN001
    """The session cookie of ``user`` signed in, for clients outside Django's test client (httpx, Schemathesis)."""
    return client_for(user).cookies["sessionid"].value


def posted_at_once(user, url: str, data: dict, times: int = 3) -> list:  # noqa: ANN001
    """The answers to ``data`` posted ``times`` at once by ``user`` (a form double-submitted), one signed-in client and
    database connection per thread; a test using it needs ``transaction=True`` and PostgreSQL (concurrent inserts that
    wait for each other's unique key)."""
    import threading

    from django.db import connections

    start = threading.Barrier(times)
    answers: list = []
    # A fresh pool for the posts (PostgreSQL's pool is per process and lives for the whole xdist worker): twice in CI
    # the three threads waited 30 s for a connection that never came, the pool taken by threads of earlier tests in the
    # same worker (not found: every test file alone leaves at most its own connection out). Connections still out
    # are closed when they come back to the old pool.
    from django.db import connection

    if connection.vendor == "postgresql" and connection.settings_dict.get("OPTIONS", {}).get("pool"):
        connection.close()
        connection.close_pool()

    def post() -> None:
        try:
            client = client_for(user, raise_request_exception=False)  # a crash is a 500 among the answers
            start.wait()
            answers.append(client.post(url, data))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=post) for _ in range(times)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return answers


def needs_postgresql(reason: str) -> None:
    """Skip (fail where services are required, as in CI) unless the database is PostgreSQL."""
    import os

    import pytest
    from django.db import connection

    if connection.vendor != "postgresql":
        if os.environ.get("LIT2TEST_REQUIRE_SERVICES"):
            pytest.fail(reason)
        pytest.skip(reason)
