"""A researcher launches, watches and cancels judge runs in the browser."""

from __future__ import annotations

import re
import threading
import time

import pytest
from playwright.sync_api import expect

from arena.models import JudgeRun, OrderedJudgment
from jobs.services import JudgeRunRequest, judge_run_create, judge_run_execute, judge_run_launch
from lit2test.models import JudgeTask

from .conftest import log_in
from .test_accessibility import violations

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


class ThreadWorker:
    """Plays the Celery worker inside the test process: executes each run that turns 'running'.

    The end-to-end path through a real worker is tested in tests/jobs; here the browser is the subject.
    """

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.seen: set[int] = set()
        self.drivers: list[threading.Thread] = []
        self.thread = threading.Thread(target=self.loop, daemon=True)

    def loop(self) -> None:
        from django.db import connection

        while not self.stop.is_set():
            for run_id in JudgeRun.objects.filter(status="running").exclude(pk__in=self.seen).values_list("pk", flat=True):
                self.seen.add(run_id)
                driver = threading.Thread(target=judge_run_execute, kwargs={"run_id": run_id}, daemon=True)
                driver.start()
                self.drivers.append(driver)
            time.sleep(0.1)
        connection.close()

    def __enter__(self) -> ThreadWorker:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(timeout=5)
        for driver in self.drivers:  # a cancelled run's driver stops once its calls in flight return
            driver.join(timeout=15)


def _submit_the_new_run_form(page, base_url: str, judge_model: str, pairs: str, concurrency: str) -> None:  # noqa: ANN001
    """Fill the new-run form, submit it and wait for the run's page."""
    page.goto("/dashboard/runs/new/")
    page.fill("input[name=judge_model]", judge_model)
    page.fill("input[name=base_url]", base_url)
    page.fill("input[name=select]", pairs)
    page.fill("input[name=concurrency]", concurrency)
    page.click("#run-form button[type=submit]")
    page.wait_for_url(re.compile(r".*/dashboard/runs/\d+/$"))


def _launch_the_first_run(page, fake_llm) -> JudgeRun:  # noqa: ANN001
    """Judge-Local on 8 sampled pairs, two calls at a time: its page announces 16 ordered tasks."""
    _submit_the_new_run_form(page, fake_llm.base_url, "Judge-Local", "sample:8", "2")
    assert "16 ordered tasks" in page.content()
    return JudgeRun.objects.get(judge_model="Judge-Local")


def _watch_the_run_complete(page, run: JudgeRun) -> None:  # noqa: ANN001
    """The progress section and the list of judgments update themselves (htmx) until the run completes, without a
    reload: new judgments come on top, newest first, and a judgment the reader opened stays open."""
    seen_counts, listed, opened = set(), [], None
    deadline = time.time() + 60
    while time.time() < deadline:
        seen_counts.add(int(page.locator("#done-count").inner_text()))
        listed.append(page.locator("article.judgment").count())
        status = page.locator("#run-status").inner_text()
        if opened is None and listed[-1] and status == "running":  # the reader opens a judgment's raw answer
            opened = page.locator("article.judgment").first.get_attribute("id")
            page.locator(f"#{opened} details", has_text="Raw answer").locator("summary").click()
        if status == "completed":
            break
        page.wait_for_timeout(300)
    assert page.locator("#run-status").inner_text() == "completed"
    assert int(page.locator("#done-count").inner_text()) == 16
    assert len(seen_counts) >= 2, "the count never changed on the page"
    # The last judgments come with the list's poll that sees the run settled.
    expect(page.locator("article.judgment")).to_have_count(16)
    assert listed[0] < 16, "the page was drawn with every judgment: nothing was seen arriving"
    newest_first = [f"j{pk}" for pk in OrderedJudgment.objects.filter(run=run).order_by("-id").values_list("pk", flat=True)]
    assert [a.get_attribute("id") for a in page.locator("article.judgment").all()] == newest_first
    expect(page.locator("#judgment-count")).to_have_text("16 judgments.")
    expect(page.locator("#judgment-empty")).to_be_hidden()
    assert opened is not None, "no judgment was listed while the run was running"
    assert page.locator(f"#{opened} details", has_text="Raw answer").get_attribute("open") is not None
    assert page.evaluate("performance.getEntriesByType('navigation').length") == 1  # no reload happened


def _launch_a_slow_run(page, fake_llm) -> JudgeRun:  # noqa: ANN001
    """Judge-Slow (2 s a call, one at a time) on 20 sampled pairs."""
    fake_llm.script(latency=2.0)
    _submit_the_new_run_form(page, fake_llm.base_url, "Judge-Slow", "sample:20", "1")
    return JudgeRun.objects.get(judge_model="Judge-Slow")


def _check_cancel_asks_first(page, slow: JudgeRun):  # noqa: ANN001, ANN202
    """Cancel asks first, in a dialog; "Keep the run" keeps it running. Returns the dialog's locator."""
    run_url = page.url
    page.locator("#cancel").click()
    dialog = page.locator("dialog#confirm-dialog")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text(f"Cancel run #{slow.pk}? A cancelled run cannot be resumed.")
    expect(page.locator("#confirm-no")).to_be_focused()  # the safe answer is the default
    page.locator("#confirm-no").click()
    expect(dialog).to_have_count(0)
    page.wait_for_timeout(500)
    assert JudgeRun.objects.get(pk=slow.pk).status == "running" and page.url == run_url
    return dialog


def _confirm_the_cancel(page, slow: JudgeRun, dialog) -> None:  # noqa: ANN001
    """Confirmed, it cancels, even though the polling replaced the form the dialog was opened from."""
    page.locator("#cancel").click()
    expect(dialog).to_be_visible()
    page.wait_for_timeout(2500)  # the progress section (and its cancel form) is swapped every 2 s
    with page.expect_navigation():
        page.locator("#confirm-yes").click()
    assert page.locator("#run-status").inner_text() == "cancelled"
    assert JudgeRun.objects.get(pk=slow.pk).status == "cancelled"


def _check_the_cancelled_run_settles(page, slow: JudgeRun) -> None:  # noqa: ANN001
    """The call in flight at the cancel still returns and is stored: the page follows it until the run settles."""
    expect(page.locator('#progress[data-settled="true"]')).to_have_count(1, timeout=30_000)
    expect(page.locator("#settling")).to_have_count(0)
    done = JudgeTask.objects.filter(run=slow, status="done").count()
    assert int(page.locator("#done-count").inner_text()) == done == slow.judgments.count() < 40
    assert int(page.locator("#skipped-count").inner_text()) == JudgeTask.objects.filter(run=slow, status="skipped").count()


def _check_the_run_list(page, run: JudgeRun, slow: JudgeRun) -> None:  # noqa: ANN001
    """The run list shows the completed run and the cancelled one."""
    page.goto("/dashboard/runs/")
    statuses = {
        row.get_attribute("data-run"): row.get_attribute("data-status") for row in page.locator("#run-table tbody tr").all()
    }
    assert statuses[str(run.pk)] == "completed" and statuses[str(slow.pk)] == "cancelled"


def _check_every_judgment_is_shown(page, run: JudgeRun) -> None:  # noqa: ANN001
    """Every ordered judgment is shown with its rendered prompt and raw answer."""
    page.goto(f"/dashboard/runs/{run.pk}/")
    assert page.locator("article.judgment").count() == 16
    first = page.locator("article.judgment").first
    assert "=== PROPOSAL A ===" in first.locator("pre.prompt").first.text_content()
    assert '"winner"' in first.locator("pre.prompt").nth(1).text_content()


def _order_stable_pairs(run: JudgeRun) -> set[int]:
    """The pairs whose accepted judgments in both orders name the same (non-null) winner, counted by hand."""
    verdicts: dict[int, dict[str, int | None]] = {}
    for pair_id, order, winner_id in OrderedJudgment.objects.filter(run=run, status="accepted").values_list(
        "pair_id", "order", "winner_id"
    ):
        verdicts.setdefault(pair_id, {})[order] = winner_id
    return {p for p, v in verdicts.items() if len(v) == 2 and v["original"] is not None and v["original"] == v["reverse"]}


def _check_the_judgment_filters(page, run: JudgeRun) -> None:  # noqa: ANN001
    """Filters: only the order-stable pairs' judgments (both orders name the same model); clearing shows all 16."""
    stable = _order_stable_pairs(run)
    assert stable, "the scripted judge should give some order-stable pairs"
    page.select_option("#id_stability", "stable")
    page.select_option("#id_order", "reverse")
    with page.expect_navigation():
        page.locator("#judgment-filters button[type=submit]").click()
    assert "stability=stable" in page.url and "order=reverse" in page.url
    articles = page.locator("article.judgment")
    assert articles.count() == len(stable)
    assert {a.get_attribute("data-stability") for a in articles.all()} == {"stable"}
    assert {a.get_attribute("data-order") for a in articles.all()} == {"reverse"}
    assert page.locator("#judgment-count").inner_text().startswith(f"{len(stable)} judgment")
    with page.expect_navigation():
        page.locator("#clear-filters").click()
    assert page.locator("article.judgment").count() == 16


def _check_the_leaderboard_beside_canonical(page, run: JudgeRun) -> None:  # noqa: ANN001
    """ "Leaderboard of this run" (a holistic run) leads to its leaderboard, beside the canonical run with the
    agreement figures."""
    page.goto(f"/dashboard/runs/{run.pk}/")
    with page.expect_navigation():
        page.get_by_role("link", name="Leaderboard of this run").click()
    assert page.locator("#run-select").input_value() == str(run.pk)
    assert page.locator("#beside-canonical").is_visible()
    assert "Case-folded agreement" in page.locator("#beside-canonical").inner_text()


def _check_a_structured_run_s_leaderboard(page, imported, fake_llm) -> None:  # noqa: ANN001
    """A structured run, watched to the end on its page, has a leaderboard too (it was a 404), offered by the run
    picker; both pages are axe-clean."""
    fake_llm.script(latency=0.1)
    structured, _ = judge_run_create(
        request=JudgeRunRequest(
            benchmark=imported,
            judge_model="Judge-Structured",
            base_url=fake_llm.base_url,
            select="sample:4",
            run_type="structured",
        )
    )
    judge_run_launch(run=structured)
    page.goto(f"/dashboard/runs/{structured.pk}/")
    expect(page.locator("#run-status")).to_have_text("completed", timeout=30_000)
    expect(page.locator("article.judgment")).to_have_count(8)
    assert violations(page) == [], "the run page"
    with page.expect_navigation():
        page.get_by_role("link", name="Leaderboard of this run").click()
    assert page.locator("#run-select").input_value() == str(structured.pk)
    assert "structured" in page.locator("#run-select option:checked").inner_text()
    expect(page.locator("#table1 tbody tr").first).to_be_visible()
    assert violations(page) == [], "the leaderboard of a structured run"


def test_a_researcher_launches_watches_and_cancels_runs(page, researcher, imported, fake_llm) -> None:  # noqa: ANN001
    # Half a second a call, two at a time: the 16 judgments of the first run take about four seconds to come in.
    fake_llm.script(latency=0.5, judge={"policy": "prefer_field", "field": "hypothesis"})
    log_in(page, "rita", "pw-rita")
    with ThreadWorker():
        run = _launch_the_first_run(page, fake_llm)
        # The progress section and the judgments update themselves (htmx) until the run completes, without a reload.
        _watch_the_run_complete(page, run)

        # The run list shows it, and a second, slow run is cancelled from its page.
        slow = _launch_a_slow_run(page, fake_llm)
        # Cancel asks first, in a dialog; "Keep the run" keeps it running.
        dialog = _check_cancel_asks_first(page, slow)
        # Confirmed, it cancels, even though the polling replaced the form the dialog was opened from.
        _confirm_the_cancel(page, slow, dialog)
        # The call in flight at the cancel still returns and is stored: the page follows it until the run settles.
        _check_the_cancelled_run_settles(page, slow)
        _check_the_run_list(page, run, slow)

        # Every ordered judgment is shown with its rendered prompt and raw answer.
        _check_every_judgment_is_shown(page, run)

        # Filters: only the order-stable pairs' judgments (both orders name the same model), counted by hand here.
        _check_the_judgment_filters(page, run)

        # The leaderboard of the new run sits beside the canonical run with the agreement figures.
        _check_the_leaderboard_beside_canonical(page, run)
        # A structured run's leaderboard, from its page.
        _check_a_structured_run_s_leaderboard(page, imported, fake_llm)


def test_annotators_get_403_on_every_dashboard_url(client, annotator, imported) -> None:  # noqa: ANN001
    from django.urls import reverse

    run = JudgeRun.objects.get()
    client.force_login(annotator)
    urls = [
        reverse("arena:dashboard"),
        reverse("arena:benchmark", args=[imported.pk]),
        reverse("lit2test:benchmark-export", args=[imported.pk]),
        reverse("lit2test:leaderboard", args=[imported.pk]),
        reverse("arena:api-benchmarks"),
        reverse("lit2test:api-leaderboard", args=[imported.pk]),
        reverse("jobs:runs"),
        reverse("jobs:run-new"),
        reverse("jobs:run", args=[run.pk]),
        reverse("lit2test:run-compare", args=[run.pk, run.pk]),
        reverse("lit2test:generation-new"),
        reverse("jobs:api-run-progress", args=[run.pk]),
        reverse("lit2test:api-run-agreement", args=[run.pk]) + f"?with={run.pk}",
    ]
    for url in urls:
        assert client.get(url).status_code == 403, url
    for url in (
        reverse("jobs:run-control", args=[run.pk, "cancel"]),
        reverse("lit2test:benchmark-new-version", args=[imported.pk]),
    ):
        assert client.post(url).status_code == 403, url
    assert JudgeRun.objects.get().status == "completed"
