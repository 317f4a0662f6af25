"""The API's pages read as written for people (issue 24, item 10): every operation has a summary of its own, an API
URL opened in a browser is titled with it (not "Api Root Api") in the site's own page, and a 403 is a page of the
site in the reader's language."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from lit2test_web.api_docs import api_schema
from tests.clients import client_for

pytestmark = pytest.mark.django_db

METHODS = ("get", "post", "put", "patch", "delete")
# A summary reads as words: a capital, then words of letters and digits (hyphens inside), one space apart; no
# ``literal``, no {placeholder}, no parameter name such as run_id, and no dangling last word.
SUMMARY = re.compile(r"[A-Z][A-Za-z0-9]*(?: [A-Za-z0-9]+(?:-[A-Za-z0-9]+)*){2,9}")
DANGLING = {"a", "an", "and", "of", "or", "the", "to", "with"}


def operations() -> list[tuple[str, str, dict]]:
    return [
        (method.upper(), path, item[method])
        for path, item in api_schema()["paths"].items()
        for method in METHODS
        if method in item
    ]


def title(html: str) -> str:
    return re.search(r"<title>(.*?)</title>", html, re.S).group(1).strip()


def test_every_operation_has_a_summary_of_its_own_that_reads_as_words() -> None:
    ops = operations()
    assert len(ops) >= 12
    problems = []
    for method, path, op in ops:
        summary = op.get("summary") or ""
        where = f"{method} {path}"
        if not summary:
            problems.append(f"{where}: no summary (add extend_schema(summary=...) to its view)")
            continue
        if not SUMMARY.fullmatch(summary):
            problems.append(f"{where}: {summary!r} does not read as a few plain words")
        if summary.rsplit(" ", 1)[-1].lower() in DANGLING:
            problems.append(f"{where}: {summary!r} ends on a dangling word")
        names = {p["name"] for p in op.get("parameters", []) if "_" in p["name"]}
        if any(name in summary for name in names):
            problems.append(f"{where}: {summary!r} names a parameter ({', '.join(sorted(names))})")
    assert not problems, "\n".join(problems)
    summaries = [op["summary"] for _m, _p, op in ops]
    repeated = {s for s in summaries if summaries.count(s) > 1}
    assert not repeated, f"two operations share a summary: {repeated}"
    # The two that were empty and the one that was garbled ("Agreement of runs run_id and with …").
    by_path = {path: op["summary"] for _m, path, op in ops}
    assert by_path["/api/benchmarks/"] == "List of benchmarks"
    assert by_path["/api/runs/{run_id}/progress/"] == "Progress of a run"
    assert by_path["/api/runs/{run_id}/agreement/"] == "Agreement of two judge runs"


def test_the_api_root_and_the_documentation_page_list_every_summary(researcher) -> None:  # noqa: ANN001
    client = client_for(researcher)
    listed = {(e["method"], e["path"]): e["summary"] for e in client.get("/api/").json()["endpoints"]}
    expected = {(method, path): op["summary"] for method, path, op in operations()}
    assert listed == expected
    html = client.get(reverse("api-docs")).content.decode()
    toc = re.search(r'<ul id="api-toc">(.*?)</ul>', html, re.S).group(1)
    entries = re.findall(r"<li><a href=\"#[^\"]+\"><code>(\w+) ([^<]+)</code></a> — ([^<]*)</li>", toc)
    assert len(entries) == len(expected)
    assert {(m, p): s for m, p, s in entries} == expected  # none empty: each is its operation's summary


def test_an_api_url_opened_in_a_browser_is_titled_with_its_summary_in_the_site_s_page(researcher, imported) -> None:  # noqa: ANN001
    client = client_for(researcher)
    response = client.get("/api/", HTTP_ACCEPT="text/html")
    html = response.content.decode()
    assert response.status_code == 200 and response["Content-Type"].startswith("text/html")
    assert title(html) == "Every endpoint of the API · Lit2Test Web"
    assert "<h1>Every endpoint of the API</h1>" in html and "Api Root Api" not in html
    assert 'class="topbar"' in html and 'id="nav-api"' in html  # the site's own page, with its top bar
    assert "&quot;endpoints&quot;" in html  # the answer itself
    # Nothing the Content-Security-Policy refuses: no inline <style> (DRF's page had one) or script, no style attribute.
    assert not re.search(r"<style|<script(?![^>]*\bsrc=)| style=", html), "an inline style or script on /api/"
    assert 'href="/api/?format=json"' in html and 'href="/api/docs/#root_retrieve"' in html

    benchmark = client.get("/api/benchmarks/").json()[0]["id"]
    for path, expected in [
        ("/api/benchmarks/", "List of benchmarks"),
        (f"/api/benchmarks/{benchmark}/leaderboard/?replicates=20", "Lit2Test leaderboard of a benchmark"),
        ("/api/runs/999999/progress/", "Progress of a run"),  # a 404 is titled too
    ]:
        page = client.get(path, HTTP_ACCEPT="text/html").content.decode()
        assert title(page) == f"{expected} · Lit2Test Web", path
        assert not re.search(r"<title>[^<]*\bApi\b", page), path


@pytest.mark.parametrize(
    ("language", "texts"),
    [
        ("en", ["Not allowed", "You are signed in as ann, and this page is not open to your account.", "Back to the start page"]),
        ("zh-hans", ["无权访问", "你当前以 ann 的身份登录，此页面不对你的账号开放。", "返回首页"]),
    ],
)
def test_the_403_page_is_the_site_s_own_page_in_the_reader_s_language(annotator, language: str, texts: list[str]) -> None:  # noqa: ANN001
    client = client_for(annotator)
    client.cookies["django_language"] = language
    response = client.get(reverse("arena:dashboard"))
    html = response.content.decode()
    assert response.status_code == 403
    assert f'<html lang="{language}">' in html and 'class="topbar"' in html and 'id="forbidden"' in html
    for text in texts:
        assert text in html, text
    assert f'href="{reverse("home")}"' in html and f'href="{reverse("login")}?next=/dashboard/"' in html
    assert "403 Forbidden" not in html  # Django's bare page
