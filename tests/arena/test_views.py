from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from arena.models import Benchmark, OrderedJudgment

from . import builders as b

pytestmark = pytest.mark.django_db

DASHBOARD_URLS = ["arena:dashboard", "arena:api-benchmarks"]


def client_for(user) -> Client:  # noqa: ANN001
    client = Client()
    client.force_login(user)
    return client


def test_anonymous_visitors_are_sent_to_the_login_page() -> None:
    response = Client().get(reverse("arena:dashboard"))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


@pytest.mark.parametrize("name", DASHBOARD_URLS)
def test_annotators_and_outsiders_get_403_on_the_dashboard(annotator, outsider, name: str) -> None:  # noqa: ANN001
    for user in (annotator, outsider):
        assert client_for(user).get(reverse(name)).status_code == 403


def test_benchmark_pages_and_export_are_researcher_only(annotator, imported) -> None:  # noqa: ANN001
    for name in ("arena:benchmark", "lit2test:benchmark-export"):
        assert client_for(annotator).get(reverse(name, args=[imported.pk])).status_code == 403


def test_the_home_page_sends_researchers_to_the_dashboard(researcher, annotator) -> None:  # noqa: ANN001
    assert client_for(researcher).get("/")["Location"] == reverse("arena:dashboard")
    page = client_for(annotator).get("/")
    assert page.status_code == 200 and b"no assignments yet" in page.content


def test_the_dashboard_rejects_wrong_methods(researcher, imported) -> None:  # noqa: ANN001
    client = client_for(researcher)
    assert client.put(reverse("arena:dashboard")).status_code == 405
    assert client.post(reverse("arena:benchmark", args=[imported.pk])).status_code == 405


def test_the_dashboard_lists_benchmarks_with_their_counts(researcher, imported) -> None:  # noqa: ANN001
    page = client_for(researcher).get(reverse("arena:dashboard")).content.decode()
    assert "lit2test v1" in page and "Gemini-3.1-Pro-Preview" in page
    assert ">200<" in page and ">1,200<" in page  # contexts and canonical pairs, in the Lit2Test table


def test_the_benchmark_page_shows_runs_audit_and_the_imported_verdicts_badge(researcher, imported) -> None:  # noqa: ANN001
    client = client_for(researcher)
    page = client.get(reverse("arena:benchmark", args=[imported.pk])).content.decode()
    assert "No paper appears in more than one context." in page
    assert '<span class="badge">imported verdicts</span>' in page and ">2,400<" in page
    assert "replay" not in page.lower()  # the release's verdicts were not replayed: they were imported
    board = client.get(reverse("lit2test:leaderboard", args=[imported.pk])).content.decode()
    assert "imported verdicts" in board and "replay" not in board.lower()


def upload(files: dict[str, list]) -> list:
    from django.core.files.uploadedfile import SimpleUploadedFile

    return [SimpleUploadedFile(name, "".join(json.dumps(r) + "\n" for r in rows).encode()) for name, rows in files.items()]


def test_the_upload_form_imports_with_the_same_code(researcher) -> None:  # noqa: ANN001
    client = client_for(researcher)
    response = client.post(
        reverse("arena:dashboard"), {"files": upload(b.small_release()), "benchmark": "uploaded", "version": "1"}, follow=True
    )
    assert "created 2 contexts (2 with text)" in response.content.decode()
    assert OrderedJudgment.objects.filter(run__benchmark__name="uploaded").count() == 12


def test_the_upload_form_names_the_bad_line_and_writes_nothing(researcher) -> None:  # noqa: ANN001
    files = b.small_release()
    files["corrected_folded_pairs.jsonl"][4]["gemini_original_winner"] = "Zeta"
    response = client_for(researcher).post(
        reverse("arena:dashboard"), {"files": upload(files), "benchmark": "uploaded", "version": "1"}
    )
    assert response.status_code == 200
    assert "corrected_folded_pairs.jsonl, line 5: gemini_original_winner: &#x27;Zeta&#x27;" in response.content.decode()
    assert not Benchmark.objects.filter(name="uploaded").exists()


def test_the_export_download_is_a_zip_of_jsonl_and_csv(researcher, imported) -> None:  # noqa: ANN001
    response = client_for(researcher).get(reverse("lit2test:benchmark-export", args=[imported.pk]))
    assert response["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    assert {
        "proposals.jsonl",
        "proposals.csv",
        "judgments.jsonl",
        "judgments.csv",
        "folded_cases.jsonl",
        "folded_cases.csv",
        "contexts.jsonl",
        "benchmark.json",
    } <= set(archive.namelist())
    assert len(archive.read("judgments.jsonl").splitlines()) == 2400


def test_the_benchmark_api_lists_counts_for_researchers(researcher, imported) -> None:  # noqa: ANN001
    data = client_for(researcher).get(reverse("arena:api-benchmarks")).json()
    assert data == [
        {
            "id": imported.pk,
            "name": "lit2test",
            "version": "1",
            "canonical_judge": "Gemini-3.1-Pro-Preview",
            "verdict_rule": "ab-tie",
            "n_contexts": 200,
            "n_text_contexts": 13,
            "n_participants": 4,
            "n_pairs": 1200,
            "n_runs": 1,
        }
    ]


def test_upload_keeps_only_base_names(researcher, tmp_path: Path) -> None:  # noqa: ANN001
    from django.core.files.uploadedfile import SimpleUploadedFile

    evil = SimpleUploadedFile(
        "../../corrected_folded_pairs.jsonl",
        b"".join(json.dumps(r).encode() + b"\n" for r in b.small_release()["corrected_folded_pairs.jsonl"]),
    )
    response = client_for(researcher).post(
        reverse("arena:dashboard"), {"files": [evil], "benchmark": "x", "version": "1"}, follow=True
    )
    assert "6 ordered judgments" not in response.content.decode()  # the file was read under its base name
    assert OrderedJudgment.objects.filter(run__benchmark__name="x").count() == 12


def test_the_api_schema_is_for_researchers_only(researcher, annotator) -> None:  # noqa: ANN001
    assert client_for(annotator).get("/api/schema/").status_code == 403
    assert Client().get("/api/schema/").status_code in (401, 403)
    assert client_for(researcher).get("/api/schema/").status_code == 200
