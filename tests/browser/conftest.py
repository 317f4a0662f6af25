"""Playwright driving Debian's Chromium (/usr/bin/chromium) against pytest-django's live server."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import pytest

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# Playwright's sync API runs an event loop in this thread; the ORM calls that tests make
# around it are ordinary synchronous calls.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


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
