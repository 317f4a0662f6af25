"""Playwright driving Debian's Chromium (/usr/bin/chromium) against pytest-django's live server."""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Iterator

import pytest
from django.core.signals import request_finished, request_started

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# Playwright's sync API runs an event loop in this thread; the ORM calls that tests make
# around it are ordinary synchronous calls.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


class _InFlight:
    """Requests the live server is still answering (started, not yet finished), counted across its threads (the
    test client's requests, in the test's own thread, are not counted: one never closed would stall every test)."""

    def __init__(self) -> None:
        self.count = 0
        self.lock = threading.Lock()

    def started(self, **_kwargs: object) -> None:
        if threading.current_thread() is threading.main_thread():
            return
        with self.lock:
            self.count += 1

    def finished(self, **_kwargs: object) -> None:
        if threading.current_thread() is threading.main_thread():
            return
        with self.lock:
            self.count = max(0, self.count - 1)

    def wait_idle(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while self.count and time.monotonic() < deadline:
            time.sleep(0.02)


IN_FLIGHT = _InFlight()
request_started.connect(IN_FLIGHT.started, dispatch_uid="tests.browser.in_flight.started")
request_finished.connect(IN_FLIGHT.finished, dispatch_uid="tests.browser.in_flight.finished")


@pytest.fixture(autouse=True)
def _live_server_quiet_before_flush(request: pytest.FixtureRequest) -> Iterator[None]:
    """After a live-server test, close its browser contexts and wait for the requests the server is still answering
    before the database is flushed: a page's last request (an htmx poll, a navigation the test did not wait for) still
    reading the tables deadlocked with the flush's TRUNCATE, and the next test met the rows left behind. Set up after
    ``transactional_db`` (requested here), so torn down before its flush."""
    if "live_server" not in request.fixturenames:
        yield
        return
    request.getfixturevalue("transactional_db")
    yield
    if "browser" in request.fixturenames:
        for context in list(request.getfixturevalue("browser").contexts):
            context.close()
    IN_FLIGHT.wait_idle()


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    if not shutil.which(CHROMIUM):
        if os.environ.get("LIT2TEST_REQUIRE_BROWSER"):
            pytest.fail(f"Chromium is required but not found at {CHROMIUM}")
        pytest.skip(f"Chromium not found at {CHROMIUM} (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        yield browser
        browser.close()


@pytest.fixture
def page(browser, live_server) -> Iterator[object]:  # noqa: ANN001
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(15_000)
    page = context.new_page()
    yield page
    context.close()


def log_in(page, username: str, password: str) -> None:  # noqa: ANN001
    page.goto("/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_load_state("networkidle")
