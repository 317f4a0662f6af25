"""The main pages work under the Content-Security-Policy and trigger no violation.

Chromium reports every blocked inline script, inline style, event handler or eval both as a
``securitypolicyviolation`` event and on the console; this test listens to both across the researcher's
pages (dashboard, leaderboard with its charts, runs, studies), the annotator's (list, item with its
autosave and countdown, guideline, language switch) and the admin's, and fails on any. Each page must also carry the
policy and the Permissions-Policy header, so the test cannot pass with the policy switched off.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model

from annotation.models import Assignment
from annotation.services import study_create
from arena.models import JudgeRun
from lit2test.release import release_import

from .conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Installed before any page script runs (through the DevTools protocol, so the policy does not apply to it).
REPORT_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", function (e) {
  window.reportViolation([e.violatedDirective, e.blockedURI, e.sourceFile + ":" + e.lineNumber, location.pathname].join(" | "));
});
"""
CONSOLE_PROBLEM = re.compile(r"Content[- ]Security[- ]Policy|Permissions[- ]Policy|Refused to|violat", re.I)


class Watch:
    """Violations and console problems seen so far, and the policy headers of every document loaded."""

    def __init__(self, page) -> None:  # noqa: ANN001
        self.violations: list[str] = []
        self.console: list[str] = []
        self.documents: list[tuple[str, dict[str, str]]] = []
        page.context.expose_binding("reportViolation", lambda _source, text: self.violations.append(text))
        page.context.add_init_script(REPORT_VIOLATIONS)
        page.on("console", self.on_console)
        page.on("response", self.on_response)

    def on_console(self, message) -> None:  # noqa: ANN001
        if message.type == "error" or CONSOLE_PROBLEM.search(message.text):
            self.console.append(f"{message.type}: {message.text} ({message.location.get('url')})")

    def on_response(self, response) -> None:  # noqa: ANN001
        if response.request.resource_type == "document":
            self.documents.append((response.url, response.headers))

    def assert_clean(self) -> None:
        assert not self.violations, "CSP violations:\n" + "\n".join(self.violations)
        assert not self.console, "console problems:\n" + "\n".join(self.console)
        assert self.documents
        for url, headers in self.documents:
            assert "script-src 'self'" in headers.get("content-security-policy", ""), url
            assert "camera=()" in headers.get("permissions-policy", ""), url


def test_the_main_pages_work_without_a_single_policy_violation(page, researcher, annotator, release_dir: Path) -> None:  # noqa: ANN001
    assert settings.SECURE_CSP, "the Content-Security-Policy is off"
    watch = Watch(page)
    benchmark = release_import(directory=release_dir).benchmark
    run = JudgeRun.objects.get(benchmark=benchmark, is_canonical=True)
    study = study_create(benchmark=benchmark, n_contexts=1, n_naive_controls=0, annotators=[annotator], seed=5, cap_minutes=10)

    # The researcher's side.
    log_in(page, "rita", "pw-rita")
    for path in (
        "/dashboard/",
        f"/dashboard/benchmarks/{benchmark.pk}/",
        "/dashboard/runs/",
        f"/dashboard/runs/{run.pk}/",
        "/dashboard/runs/new/",
        "/dashboard/generation/new/",
        "/dashboard/studies/",
        f"/dashboard/studies/{study.pk}/",
    ):
        response = page.goto(path)
        assert response.status == 200, path
        page.wait_for_load_state("networkidle")
    page.goto(f"/dashboard/benchmarks/{benchmark.pk}/leaderboard/")
    assert page.locator("#forest-plot .forest-row").count() == 4
    assert page.locator("#heat-map .heat-cell").count() == 16
    if page.locator("#run-select option").count() > 1:  # the run picker submits itself (static/js/app.js)
        other = page.locator("#run-select option").nth(1).get_attribute("value")
        with page.expect_navigation():
            page.select_option("#run-select", other)
        assert f"run={other}" in page.url
    page.click("form[action='/accounts/logout/'] button")
    page.wait_for_load_state("networkidle")

    # The annotator's side: list, item with autosave and countdown, language switch, guideline.
    log_in(page, "ann", "pw-ann")
    page.goto("/annotate/")
    page.locator("a[href^='/annotate/item/']").first.click()
    page.wait_for_load_state("networkidle")
    with page.expect_navigation():
        page.click("[data-start-item]")  # the item's start page: its clock starts with this button
    page.wait_for_load_state("networkidle")
    token = re.search(r"/annotate/item/([^/]+)/", page.url).group(1)
    page.wait_for_function("() => /\\d\\d:\\d\\d/.test(document.querySelector('[data-countdown-value]').textContent)")
    page.fill("textarea[name=rationale]", "A ties the gap to the papers.")  # an input event: the autosave's trigger
    page.wait_for_function("() => document.getElementById('save-status').textContent.includes('Draft saved')")
    assert Assignment.objects.get(token=token).draft["rationale"] == "A ties the gap to the papers."
    with page.expect_navigation():
        page.select_option("select[name=language]", "zh-hans")  # submits itself (static/js/app.js)
    assert page.locator("html").get_attribute("lang") == "zh-hans"
    page.fill("textarea[name=rationale]", "A 把空白与论文联系起来了。")
    page.wait_for_function("() => document.getElementById('save-status').textContent.includes('草稿已于')")
    page.goto("/guide/")
    page.wait_for_load_state("networkidle")
    page.click("form[action='/accounts/logout/'] button")
    page.wait_for_load_state("networkidle")

    # The admin, where an administrator clears a login lock.
    get_user_model().objects.create_superuser("root", password="pw-root")
    log_in(page, "root", "pw-root")
    for path in ("/admin/", "/admin/axes/accessattempt/", "/admin/auth/user/", f"/admin/auth/user/{annotator.pk}/change/"):
        response = page.goto(path)
        assert response.status == 200, path
        page.wait_for_load_state("networkidle")

    watch.assert_clean()
