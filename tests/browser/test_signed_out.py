"""An annotator's open item when the session ends or is renewed in another tab (an annotator review of 2026-12-06).

Signed in again elsewhere, the open page's token was refused: every autosave failed as a "connection problem" and
the Submit met Django's bare "CSRF verification failed" page. Signed out, the autosave said the same, and the Submit
went to the sign-in page and lost the answers. Now a page sends the token of the cookie (renewed by the sign-in),
says when its reader is signed out, holds the Submit back and saves as soon as they sign in again.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Assignment, Label
from annotation.rubric import SCORE_FIELDS
from annotation.services import study_create
from lit2test.release import release_import

from .conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SAVED = "() => document.getElementById('save-status').textContent.includes('Draft saved')"


@pytest.fixture
def item(annotator, annotator2, release_dir: Path) -> Assignment:  # noqa: ANN001
    benchmark = release_import(directory=release_dir).benchmark
    study = study_create(benchmark=benchmark, n_contexts=1, annotators=[annotator, annotator2], n_naive_controls=0, seed=5)
    return Assignment.objects.filter(study=study, annotator=annotator).order_by("position").first()


def open_item(page, item: Assignment) -> None:  # noqa: ANN001
    log_in(page, "ann", "pw-ann")
    page.goto(reverse("annotation:item-start", args=[item.token]))
    with page.expect_navigation():
        page.click("[data-start-item]")
    page.wait_for_load_state("networkidle")


def saved_rationale(item: Assignment, timeout: float = 15.0) -> str | None:
    """The rationale of the item's stored draft once it is there (waiting up to ``timeout`` seconds)."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        rationale = Assignment.objects.get(pk=item.pk).draft.get("rationale")
        if rationale or time.monotonic() > deadline:
            return rationale
        time.sleep(0.1)


def answer_everything(page) -> None:  # noqa: ANN001
    page.check("input[name=screening][value=coherent]")
    for name in SCORE_FIELDS:
        page.check(f"input[name={name}][value='2']")
    page.check("input[name=choice][value=A]")
    page.check("input[name=confidence][value=medium]")
    page.fill("textarea[name=rationale]", "A names a decisive threshold; B does not.")


def test_a_page_opened_before_signing_in_again_elsewhere_still_saves_and_submits(page, item) -> None:  # noqa: ANN001
    open_item(page, item)
    other = page.context.new_page()  # another tab: sign out and in again (a new session and a new token)
    other.goto("/")
    other.click("form[action='/accounts/logout/'] button")
    other.wait_for_load_state("networkidle")
    log_in(other, "ann", "pw-ann")
    other.close()

    answer_everything(page)
    page.wait_for_function(SAVED)
    # The rationale's own save comes 0.8 s after its last input, maybe after an earlier answer's "Draft saved".
    assert saved_rationale(item) == "A names a decisive threshold; B does not."
    with page.expect_navigation():
        page.click("button[data-submit]")
    assert Label.objects.get(assignment=item).rationale == "A names a decisive threshold; B does not."


def test_a_signed_out_page_says_so_holds_the_submit_back_and_saves_once_signed_in_again(page, item) -> None:  # noqa: ANN001
    open_item(page, item)
    other = page.context.new_page()
    other.goto("/")
    other.click("form[action='/accounts/logout/'] button")
    other.wait_for_load_state("networkidle")

    answer_everything(page)
    page.wait_for_function("() => document.getElementById('save-status').textContent.includes('you are logged out')")
    page.click("button[data-submit]")  # held back: the answers stay on the page
    page.wait_for_timeout(500)
    assert f"/annotate/item/{item.token}/" in page.url and "/accounts/login/" not in page.url
    assert page.input_value("textarea[name=rationale]") == "A names a decisive threshold; B does not."
    assert not Label.objects.exists()

    log_in(other, "ann", "pw-ann")  # signed in again in the other tab: the page's next try saves
    page.wait_for_function(SAVED, timeout=20_000)
    with page.expect_navigation():
        page.click("button[data-submit]")
    assert Label.objects.get(assignment=item).confidence == "medium"


@pytest.mark.parametrize(("language", "title"), [("en", "This form has expired"), ("zh-hans", "表单已过期")])
def test_a_refused_form_token_answers_a_page_that_says_what_to_do(annotator, language: str, title: str) -> None:  # noqa: ANN001
    client = Client(enforce_csrf_checks=True)
    client.force_login(annotator)
    client.cookies["django_language"] = language
    response = client.post(reverse("logout"), {"csrfmiddlewaretoken": "stale"})
    html = response.content.decode()
    assert response.status_code == 403 and title in html
    assert "DEBUG" not in html and 'id="form-expired"' in html


def test_a_page_whose_browser_is_now_logged_in_as_someone_else_says_so_and_holds_the_submit_back(page, item) -> None:  # noqa: ANN001
    """A review of this change: on a shared machine, another annotator logging in in another tab made the open item's
    autosave a 404 shown as a "connection problem", and its Submit landed on "Page not found" with the answers lost."""
    open_item(page, item)
    other = page.context.new_page()
    other.goto("/")
    other.click("form[action='/accounts/logout/'] button")
    other.wait_for_load_state("networkidle")
    log_in(other, "bob", "pw-bob")

    answer_everything(page)
    page.wait_for_function("() => document.getElementById('save-status').textContent.includes('logged in as someone else')")
    page.click("button[data-submit]")  # held back
    page.wait_for_timeout(500)
    assert f"/annotate/item/{item.token}/" in page.url and not Label.objects.exists()

    other.click("form[action='/accounts/logout/'] button")
    other.wait_for_load_state("networkidle")
    log_in(other, "ann", "pw-ann")
    page.wait_for_function(SAVED, timeout=20_000)
    with page.expect_navigation():
        page.click("button[data-submit]")
    assert Label.objects.get(assignment=item).rationale == "A names a decisive threshold; B does not."
