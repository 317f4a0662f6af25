"""The top bar, the language menu and the API's front door (issue 9, items 6 and 14)."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import NoReverseMatch, reverse

from tests.clients import client_for

pytestmark = pytest.mark.django_db


def nav(html: str) -> str:
    return re.search(r'<nav aria-label="[^"]*">(.*?)</nav>', html, re.S).group(1)


def options(html: str) -> list[tuple[str, str]]:
    menu = re.search(r'<select name="language".*?</select>', html, re.S).group(0)
    return re.findall(r'<option value="([^"]+)" lang="[^"]+"(?: selected)?>([^<]+)</option>', menu)


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_language_menu_names_each_language_in_itself(annotator, language: str) -> None:  # noqa: ANN001
    client = client_for(annotator)
    client.cookies["django_language"] = language
    for url in ("/", reverse("annotation:home"), reverse("login")):
        html = client.get(url).content.decode()
        assert options(html) == [("en", "English"), ("zh-hans", "简体中文")], (language, url)
        assert "英语" not in html
        assert f'<option value="{language}" lang="{language}" selected>' in html


def test_a_researcher_s_top_bar_links_every_section_and_they_open(researcher, imported) -> None:  # noqa: ANN001
    client = client_for(researcher)
    bar = nav(client.get(reverse("jobs:runs")).content.decode())
    links = dict(re.findall(r'<a href="([^"]+)" id="nav-([a-z]+)"', bar))
    try:
        annotators = reverse("annotation:annotators")
    except NoReverseMatch:  # another page of issue 9; linked once it exists
        annotators = None
    expected = {
        reverse("arena:dashboard"): "benchmarks",
        reverse("jobs:runs"): "runs",
        reverse("annotation:studies"): "studies",
        reverse("api-docs"): "api",
    } | ({annotators: "annotators"} if annotators else {})
    assert links == expected
    for url in links:
        assert client.get(url).status_code == 200, url
    assert 'id="nav-runs" aria-current="page"' in bar and bar.count("aria-current") == 1
    assert ">Benchmarks<" in bar and ">Runs<" in bar and ">Studies<" in bar and ">API documentation<" in bar


def test_an_annotator_sees_only_their_own_links(annotator) -> None:  # noqa: ANN001
    bar = nav(client_for(annotator).get(reverse("annotation:home")).content.decode())
    assert 'id="nav-' not in bar and "/dashboard/" not in bar and "/api/" not in bar
    assert reverse("annotation:home") in bar and reverse("annotation:guide") in bar


def test_the_api_root_lists_every_endpoint_for_researchers(researcher, annotator, imported) -> None:  # noqa: ANN001
    response = client_for(researcher).get("/api/")
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    body = response.json()
    paths = {(e["method"], e["path"]) for e in body["endpoints"]}
    assert {
        ("GET", "/api/"),
        ("GET", "/api/benchmarks/"),
        ("GET", "/api/benchmarks/{benchmark_id}/leaderboard/"),
        ("GET", "/api/benchmarks/{benchmark_id}/controls/"),
        ("GET", "/api/runs/{run_id}/progress/"),
        ("GET", "/api/runs/{run_id}/agreement/"),
        ("GET", "/api/studies/{study_id}/agreement/"),
        ("GET", "/api/schema/"),
        ("GET", "/api/benchmarks/{benchmark_id}/reconstruction/"),
    } <= paths
    assert body["documentation"] == "http://testserver/api/docs/" and body["schema"] == "http://testserver/api/schema/"
    assert client_for(annotator).get("/api/").status_code == 403
    assert Client().get("/api/").status_code == 403
    assert client_for(researcher).get("/api/nothing-here/").status_code == 404


def test_the_api_documentation_page_documents_each_operation_without_external_assets(researcher, annotator) -> None:  # noqa: ANN001
    client = client_for(researcher)
    response = client.get(reverse("api-docs"))
    html = response.content.decode()
    assert response.status_code == 200
    operation = html[html.index('id="benchmarks_leaderboard_retrieve"') :].split("</article>")[0]
    assert "/api/benchmarks/{benchmark_id}/leaderboard/" in operation
    assert re.search(
        r"<td><code>replicates</code></td><td>query</td><td>no</td><td>integer, 1–20000 \(default 10000\)</td>", operation
    )
    assert "Not signed in, or not a researcher." in operation and ">403<" in operation
    assert (
        "The same document as <code>manage.py leaderboard BENCHMARK --json</code> (<code>?scale=</code>" in operation
    )  # the docstring's ``literals``
    assert 'href="/api/schema/?format=json"' in html and 'href="/api/"' in html
    # No script, style or font from anywhere but this site (the Content-Security-Policy allows nothing else).
    assert not re.search(r'<(?:script|link)[^>]+(?:src|href)="(?:https?:)?//', html)
    assert "<script>" not in html and " style=" not in html
    assert client_for(annotator).get(reverse("api-docs")).status_code == 403
    assert Client().get(reverse("api-docs")).status_code == 302  # to the log-in page
