"""An annotator sees only their own assignments; the researcher side is closed to annotators."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.models import Assignment, Label

from .helpers import complete_values

pytestmark = pytest.mark.django_db


def test_an_annotator_cannot_read_or_write_another_annotators_items(study, annotator, annotator2, bob_client) -> None:  # noqa: ANN001
    for a in Assignment.objects.filter(study=study, annotator=annotator):
        assert bob_client.get(reverse("annotation:item", args=[a.token])).status_code == 404
        assert bob_client.post(reverse("annotation:item-draft", args=[a.token]), {"screening": "incoherent"}).status_code == 404
        assert (
            bob_client.post(
                reverse("annotation:item-draft", args=[a.token]), {"screening": "x"}, HTTP_HX_REQUEST="true"
            ).status_code
            == 404
        )
        assert bob_client.post(reverse("annotation:item-submit", args=[a.token]), complete_values()).status_code == 404
    untouched = Assignment.objects.filter(study=study, annotator=annotator)
    assert not untouched.exclude(opened_at=None).exists() and not untouched.exclude(draft={}).exists()
    assert not Label.objects.exists()
    listing = bob_client.get(reverse("annotation:home")).content.decode()
    for a in Assignment.objects.filter(study=study, annotator=annotator):
        assert a.token not in listing


def test_a_researcher_opening_an_annotators_token_gets_404_too(study, annotator, rita_client) -> None:  # noqa: ANN001
    a = Assignment.objects.filter(study=study, annotator=annotator).first()
    assert rita_client.get(reverse("annotation:item", args=[a.token])).status_code == 404


@pytest.mark.parametrize(
    ("name", "method"),
    [
        ("annotation:studies", "get"),
        ("annotation:studies", "post"),
        ("annotation:study", "get"),
        ("annotation:study-labels", "get"),
        ("annotation:api-study-agreement", "get"),
        ("annotation:api-study-agreement", "post"),
    ],
)
def test_annotators_and_outsiders_get_403_on_the_study_pages(study, ann_client, outsider, name: str, method: str) -> None:  # noqa: ANN001
    from .helpers import client_for

    args = [] if name == "annotation:studies" else [study.pk]
    for client in (ann_client, client_for(outsider)):
        assert getattr(client, method)(reverse(name, args=args)).status_code == 403
