"""A NUL character in any annotation field is refused with a message naming the field, never a 500.

PostgreSQL stores no NUL in text or JSON, so before the fix an autosave or a submission holding one was a
``DataError`` (500) there. It is refused on every database alike: the response says which field, the draft
stored before is kept, and the next clean autosave or submission goes through.
"""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Assignment, Label
from annotation.rubric import FIELD_NAMES

from .helpers import complete_values

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def item(study, annotator) -> Assignment:  # noqa: ANN001
    return Assignment.objects.filter(study=study, annotator=annotator).order_by("position").first()


@pytest.fixture
def client(ann_client) -> Client:  # noqa: ANN001
    ann_client.raise_request_exception = False  # a 500 is a failed assertion on the status, not an exception here
    return ann_client


def draft_url(a: Assignment) -> str:
    return reverse("annotation:item-draft", args=[a.token])


def submit_url(a: Assignment) -> str:
    return reverse("annotation:item-submit", args=[a.token])


def test_an_autosave_with_a_nul_is_refused_naming_the_field_and_keeps_the_earlier_draft(item, client) -> None:  # noqa: ANN001
    assert client.post(draft_url(item), {"rationale": "first thoughts", "choice": "A"}, **HTMX).status_code == 200

    response = client.post(draft_url(item), {"rationale": "first thoughts\x00 and more", "choice": "B"}, **HTMX)

    html = response.content.decode()
    assert response.status_code == 422
    assert 'id="save-status"' in html and "is-error" in html
    assert "Not saved: Rationale: a NUL character (\\0) cannot be stored" in html
    item.refresh_from_db()
    assert item.draft == {"rationale": "first thoughts", "choice": "A"}


def test_the_autosave_works_again_after_a_refused_nul(item, client) -> None:  # noqa: ANN001
    assert client.post(draft_url(item), {"rationale": "bad\x00"}, **HTMX).status_code == 422

    response = client.post(draft_url(item), {"rationale": "good again", "a_grounding": "3"}, **HTMX)

    assert response.status_code == 200 and "Draft saved" in response.content.decode()
    item.refresh_from_db()
    assert item.draft == {"rationale": "good again", "a_grounding": "3"}


@pytest.mark.parametrize("field", FIELD_NAMES)
def test_a_nul_in_any_field_is_refused_at_submission_and_nothing_is_written(item, client, field: str) -> None:  # noqa: ANN001
    client.post(draft_url(item), {"rationale": "kept draft"}, **HTMX)
    values = complete_values("TIE", reason="both_weak")
    values[field] = values[field] + "\x00"

    response = client.post(submit_url(item), values)

    html = response.content.decode()
    assert response.status_code == 422
    assert "Not saved: some answers cannot be stored as they are" in html
    assert f'href="#field-{field}"' in html  # the error summary links to the field
    assert "A NUL character (\\0) cannot be stored" in html
    assert not Label.objects.exists()
    item.refresh_from_db()
    assert item.draft == {"rationale": "kept draft"}


def test_the_refused_text_is_shown_with_the_nul_marked_and_a_clean_resubmission_is_accepted(item, client) -> None:  # noqa: ANN001
    values = complete_values(rationale="A names the\x00 decisive metric.")

    refused = client.post(submit_url(item), values)

    assert refused.status_code == 422
    assert "A names the\ufffd decisive metric." in refused.content.decode()
    assert "\x00" not in refused.content.decode()
    accepted = client.post(submit_url(item), complete_values(rationale="A names the decisive metric."))
    assert accepted.status_code == 302
    assert Label.objects.get(assignment=item).rationale == "A names the decisive metric."


def test_the_save_draft_button_without_javascript_refuses_a_nul_with_the_form(item, client) -> None:  # noqa: ANN001
    response = client.post(draft_url(item), {"rationale": "x\x00y"})

    assert response.status_code == 422
    assert 'href="#field-rationale"' in response.content.decode()
    item.refresh_from_db()
    assert not item.draft


@pytest.mark.parametrize("name", ["annotation:item", "annotation:item-draft", "annotation:item-submit"])
def test_a_token_with_a_nul_is_404(item, client, name: str) -> None:  # noqa: ANN001
    url = reverse(name, args=[item.token]).replace(item.token, item.token + "%00")
    method = client.get if name == "annotation:item" else client.post
    assert method(url).status_code == 404
