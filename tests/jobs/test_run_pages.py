"""The run page: every ordered judgment with its prompt, context, models and calls, in a bounded number of queries;
counts that add up, live updates until the run settles, a confirmed cancel, filters (issue 9, item 13)."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

import jobs.engine
from arena.models import JudgeRun, OrderedJudgment
from jobs.models import RunDriver
from jobs.selectors import run_progress
from jobs.services import JudgeRunRequest, judge_run_create, judge_run_execute
from lit2test.models import JudgeTask
from tests.clients import client_for

from .helpers import create_running

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_run_page_shows_prompts_and_answers_in_few_queries(
    imported, researcher, fake_llm, django_assert_max_num_queries
) -> None:  # noqa: ANN001
    run, _ = judge_run_create(
        request=JudgeRunRequest(benchmark=imported, judge_model="J", base_url=fake_llm.base_url, select="sample:13")
    )
    JudgeRun.objects.filter(pk=run.pk).update(status="running")
    assert judge_run_execute(run_id=run.pk) == "completed"
    client = Client()
    client.force_login(researcher)
    with django_assert_max_num_queries(25):  # independent of the 25 judgments on the page
        page = client.get(reverse("jobs:run", args=[run.pk])).content.decode()
    assert page.count('class="card judgment"') == 25
    assert page.count("=== PROPOSAL A ===") == 25 and page.count("<summary>Raw answer</summary>") == 25
    assert client.post(reverse("jobs:run", args=[run.pk])).status_code == 405


# --------------------------------------------------------------------------- issue 9, item 13

HTMX = {"HTTP_HX_REQUEST": "true"}


def _completed(imported, fake_llm, **overrides) -> JudgeRun:  # noqa: ANN001
    run, _ = create_running(imported, fake_llm, **overrides)
    assert judge_run_execute(run_id=run.pk) == "completed"
    run.refresh_from_db()
    return run


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html))


def test_counts_add_up_even_when_a_verdict_is_stored_before_its_task_is_read_as_done(imported, fake_llm, researcher) -> None:  # noqa: ANN001
    """The page once read "8 done (9 accepted ...)": tasks and judgments were counted in two queries, and a batch
    stored between them counted in one and not the other. Accepted and invalid now count done tasks only."""
    fake_llm.script(failures=[{"attempts": "all", "malformed": "{broken"}])
    run = _completed(imported, fake_llm, select="sample:1")  # 2 tasks, both done with an invalid verdict
    fake_llm.script()
    run_ok, _ = create_running(imported, fake_llm, select="sample:4", label="second")
    assert judge_run_execute(run_id=run_ok.pk) == "completed"  # 8 accepted
    # The state a reader meets halfway through a store: a task's verdict is in, its task still reads claimed.
    task = JudgeTask.objects.filter(run=run_ok).first()
    JudgeTask.objects.filter(pk=task.pk).update(
        status="claimed", claimed_by="someone", lease_until=timezone.now() + timedelta(minutes=1)
    )
    JudgeRun.objects.filter(pk=run_ok.pk).update(status="running")
    progress = run_progress(run=JudgeRun.objects.get(pk=run_ok.pk))
    assert (progress.done, progress.accepted, progress.invalid, progress.remaining) == (7, 7, 0, 1)
    progress = run_progress(run=run)
    assert (progress.done, progress.accepted, progress.invalid) == (2, 0, 2)

    page = _text(client_for(researcher).get(reverse("jobs:run", args=[run_ok.pk])).content.decode())
    assert "7 done (7 accepted + 0 invalid) · 0 failed · 1 remaining" in page


def test_a_paused_run_shows_no_eta_and_a_running_one_does(imported, fake_llm, researcher) -> None:  # noqa: ANN001
    run = _completed(imported, fake_llm, select="sample:3")
    JudgeTask.objects.filter(pk__in=list(JudgeTask.objects.filter(run=run).values_list("pk", flat=True)[:2])).update(
        status="pending"
    )
    OrderedJudgment.objects.filter(run=run).update(created_at=timezone.now() - timedelta(seconds=40))
    client = client_for(researcher)

    JudgeRun.objects.filter(pk=run.pk).update(status="running")
    assert run_progress(run=JudgeRun.objects.get(pk=run.pk)).eta_seconds is not None
    assert 'id="eta"' in client.get(reverse("jobs:run", args=[run.pk])).content.decode()

    JudgeRun.objects.filter(pk=run.pk).update(status="paused")
    assert run_progress(run=JudgeRun.objects.get(pk=run.pk)).eta_seconds is None
    page = client.get(reverse("jobs:run", args=[run.pk])).content.decode()
    # The page's words, not its attributes: a random CSRF token may contain "ETA" (it did, once in CI).
    assert "ETA" not in _text(page).replace("No ETA while paused", "") and 'id="eta"' not in page and 'id="paused-note"' in page


def test_after_a_cancel_the_progress_keeps_polling_while_calls_are_in_flight(imported, fake_llm, researcher) -> None:  # noqa: ANN001
    run, _ = create_running(imported, fake_llm, select="sample:2")
    client = client_for(researcher)
    progress_url = reverse("jobs:run", args=[run.pk]) + "?part=progress"
    assert 'hx-trigger="every 2s"' in client.get(progress_url, **HTMX).content.decode()

    # A driver is working and holds one task whose call is under way; the researcher cancels.
    RunDriver.objects.create(kind="judge", run_id=run.pk, token="busy", worker="w", seen_at=timezone.now())
    task = JudgeTask.objects.filter(run=run).first()
    JudgeTask.objects.filter(pk=task.pk).update(
        status="claimed", claimed_by="busy", lease_until=timezone.now() + timedelta(minutes=1)
    )
    response = client.post(reverse("jobs:run-control", args=[run.pk, "cancel"]), {"confirm": "yes"})
    assert response.status_code == 302 and JudgeRun.objects.get(pk=run.pk).status == "cancelled"
    fragment = client.get(progress_url, **HTMX).content.decode()
    assert 'hx-trigger="every 2s"' in fragment, "the page stopped following a cancelled run whose call is still billed"
    assert 'id="settling"' in fragment and "1 call sent before that is still under way" in _text(fragment)
    assert 'id="cancel"' not in fragment  # nothing left to cancel

    # The answer comes back and is stored; the driver ends: the run has settled and the polling stops.
    JudgeTask.objects.filter(pk=task.pk).update(status="done")
    RunDriver.objects.filter(token="busy").update(ended_at=timezone.now())
    fragment = client.get(progress_url, **HTMX).content.decode()
    assert "hx-trigger" not in fragment and 'id="settling"' not in fragment
    assert 'data-settled="true"' in fragment


def test_cancel_asks_for_confirmation_without_javascript(imported, fake_llm, researcher) -> None:  # noqa: ANN001
    run, _ = create_running(imported, fake_llm, select="sample:2")
    client = client_for(researcher)
    url = reverse("jobs:run-control", args=[run.pk, "cancel"])

    page = client.get(reverse("jobs:run", args=[run.pk])).content.decode()
    assert re.search(rf'<form method="post" action="{url}" class="inline"\s+data-confirm="Cancel run #{run.pk}\?', page)

    for response in (client.get(url), client.post(url)):  # a link followed, or the form sent without JavaScript
        body = response.content.decode()
        assert response.status_code == 200 and f"Cancel run #{run.pk}?" in body
        assert '<input type="hidden" name="confirm" value="yes">' in body and "cannot be resumed" in body
        assert JudgeRun.objects.get(pk=run.pk).status == "running"

    response = client.post(url, {"confirm": "yes"})
    assert response.status_code == 302 and response["Location"] == reverse("jobs:run", args=[run.pk])
    assert JudgeRun.objects.get(pk=run.pk).status == "cancelled"
    assert set(JudgeTask.objects.filter(run=run).values_list("status", flat=True)) == {"skipped"}

    # Pause is not destructive: it needs no confirmation, and it is never done by a GET.
    assert client.get(reverse("jobs:run-control", args=[run.pk, "pause"])).status_code == 405
    assert client.post(reverse("jobs:run-control", args=[run.pk, "explode"]), {"confirm": "yes"}).status_code == 404


def test_each_judgment_shows_its_calls_and_the_last_http_error(imported, fake_llm, researcher, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setattr(jobs.engine, "BACKOFF_BASE", 0.01)
    fake_llm.script(failures=[{"attempts": [1, 2], "status": 429, "retry_after": 0.01}])
    run = _completed(imported, fake_llm, select="sample:2")

    tasks = list(JudgeTask.objects.filter(run=run).values_list("calls", "failed_calls", "last_call_error"))
    assert tasks == [(3, 2, "HTTP 429")] * 4
    page = client_for(researcher).get(reverse("jobs:run", args=[run.pk])).content.decode()
    text = _text(page)
    assert text.count("answer 1 (of at most 3 parse attempts) · 3 calls · 2 failed, last: HTTP 429") == 4
    assert "12 calls to the endpoint" in text and "8 failed (HTTP error or timeout)" in text


def test_a_task_that_never_got_an_answer_keeps_its_failed_calls(imported, fake_llm, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setattr(jobs.engine, "BACKOFF_BASE", 0.01)
    monkeypatch.setattr(jobs.engine, "MAX_TRANSIENT_RETRIES", 1)
    fake_llm.script(failures=[{"attempts": "all", "status": 503}])
    run, _ = create_running(imported, fake_llm, select="sample:1")
    assert judge_run_execute(run_id=run.pk) == "failed"
    assert set(JudgeTask.objects.filter(run=run).values_list("status", "calls", "failed_calls", "last_call_error")) == {
        ("failed", 2, 2, "HTTP 503")
    }
    progress = run_progress(run=JudgeRun.objects.get(pk=run.pk))
    assert (progress.calls, progress.failed_calls, progress.failed, progress.done) == (4, 4, 2, 0)


def test_the_run_page_shows_context_and_both_models_and_filters_judgments(imported, researcher) -> None:  # noqa: ANN001
    run = JudgeRun.objects.get()  # the imported release run: 950 order-stable and 250 order-sensitive pairs
    client = client_for(researcher)
    url = reverse("jobs:run", args=[run.pk])

    def count(**params: str) -> int:
        page = client.get(url, params).content.decode()
        return int(re.search(r'id="judgment-count">([\d,]+) judgment', page).group(1).replace(",", ""))

    assert count() == 2400
    assert count(stability="stable") == 1900 and count(stability="sensitive") == 500 and count(stability="incomplete") == 0
    assert count(order="original") == 1200 and count(order="reverse", stability="sensitive") == 250
    assert count(status="invalid") == 0 and count(status="accepted") == 2400
    gpt = imported.participants.get(name="GPT 5.2")
    expected = OrderedJudgment.objects.filter(run=run, winner=gpt).count()
    assert 0 < expected < 2400 and count(winner=str(gpt.pk)) == expected
    assert count(winner="tie") == OrderedJudgment.objects.filter(run=run, is_tie=True).count()
    assert count(winner="99999", order="sideways") == 2400  # a value that is not a choice does not filter

    page = client.get(url, {"stability": "sensitive", "order": "reverse"}).content.decode()
    articles = re.findall(r'<article class="card judgment"[^>]*>', page)
    assert len(articles) == 25 and all('data-stability="sensitive"' in a and 'data-order="reverse"' in a for a in articles)
    assert "stability=sensitive" in re.search(r'<nav class="pager".*?</nav>', page, re.S).group(0)  # pages keep the filters
    # Each judgment names its context and both proposals' models (this page is the researcher's).
    jid = int(re.search(r'id="j(\d+)"', articles[0]).group(1))
    first = OrderedJudgment.objects.select_related("pair__context", "pair__participant_a", "pair__participant_b").get(pk=jid)
    article = page[page.index(f'id="j{jid}"') :].split("</article>")[0]
    text = _text(article)
    assert f"{first.pair.participant_a.name} vs {first.pair.participant_b.name}" in text
    assert f"Context {first.pair.context.external_id}" in text


def test_the_imported_release_run_is_labelled_imported_verdicts_not_a_replay(imported, researcher, fake_llm) -> None:  # noqa: ANN001
    run = JudgeRun.objects.get()
    client = client_for(researcher)
    page = client.get(reverse("jobs:run", args=[run.pk])).content.decode()
    assert 'id="run-kind">Imported verdicts<' in page and "corrected_folded_pairs.jsonl" in page
    assert "Replay" not in page and "no model is called" not in page and "tokens 0 in" not in page
    assert "imported verdict: no call by this app" in page
    progress = client.get(reverse("jobs:api-run-progress", args=[run.pk])).json()
    assert (progress["imported"], progress["replay"], progress["done"], progress["accepted"], progress["settled"]) == (
        True,
        False,
        2400,
        2400,
        True,
    )

    # A replay of it is a replay.
    replay, _ = judge_run_create(
        request=JudgeRunRequest(
            benchmark=imported,
            judge_model="Gemini-3.1-Pro-Preview",
            provider=JudgeRun.Provider.RECORDED,
            replay_of=run,
            select="sample:2",
        )
    )
    page = client.get(reverse("jobs:run", args=[replay.pk])).content.decode()
    assert f"Replay of run #{run.pk}" in page and "Imported verdicts" not in page
    listing = client.get(reverse("jobs:runs")).content.decode()
    row = re.search(rf'<tr data-run="{run.pk}".*?</tr>', listing, re.S).group(0)
    assert "imported verdicts" in row and "replay" not in row
    assert '<span class="badge">replay</span>' in re.search(rf'<tr data-run="{replay.pk}".*?</tr>', listing, re.S).group(0)


def test_cancelling_an_ended_run_asks_nothing_and_says_so(imported, researcher) -> None:  # noqa: ANN001
    run = JudgeRun.objects.get()  # the imported release run: completed
    client = client_for(researcher)
    response = client.get(reverse("jobs:run-control", args=[run.pk, "cancel"]), follow=True)
    assert response.redirect_chain == [(reverse("jobs:run", args=[run.pk]), 302)]
    assert f"Run {run.pk} has already ended (completed): there is nothing to cancel." in response.content.decode()
    assert JudgeRun.objects.get(pk=run.pk).status == "completed"
