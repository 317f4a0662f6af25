"""The schema document's own errors have the declared shape (review with schemathesis): its YAML renderer wrote DRF's
ErrorDetail as a ``{string, code}`` mapping, so a 403, 404 or 406 from /api/schema/ had a ``detail`` that was no
string, and the 406 was not declared at all."""

from __future__ import annotations

import json

import pytest
import yaml
from django.test import Client

from tests.clients import client_for

pytestmark = pytest.mark.django_db
URL = "/api/schema/"


def _body(response) -> dict:  # noqa: ANN001
    text = response.content.decode()
    return json.loads(text) if response["Content-Type"].startswith("application/json") else yaml.safe_load(text)


@pytest.mark.parametrize(
    ("who", "query", "accept", "status"),
    [
        ("researcher", "?format=AAA", None, 404),
        ("researcher", "?format=xml", None, 404),
        ("researcher", "", "text/html", 406),
        ("annotator", "", None, 403),
        ("annotator", "?format=yaml", None, 403),
        ("anonymous", "", None, 403),
    ],
)
def test_an_error_of_the_schema_document_has_a_detail_in_words(
    rita_client: Client, annotator, who: str, query: str, accept: str | None, status: int
) -> None:  # noqa: ANN001
    client = {"researcher": rita_client, "annotator": client_for(annotator), "anonymous": Client()}[who]
    response = client.get(URL + query, **({"HTTP_ACCEPT": accept} if accept else {}))
    assert response.status_code == status
    body = _body(response)
    assert isinstance(body["detail"], str) and body["detail"], body


def test_the_schema_declares_the_answers_its_document_gives(rita_client: Client) -> None:
    schema = rita_client.get(URL, {"format": "json"}).json()
    declared = set(schema["paths"]["/api/schema/"]["get"]["responses"])
    assert {"200", "400", "403", "404", "406"} <= declared
