"""The study form offers the benchmarks studies can use, and says which those are (issue 24, item 5): studies label
canonical pairs, which Lit2Test benchmarks hold. It used to open on the newest benchmark (an Intrinsic one) and to
refuse a HypoArena benchmark because it "has no judge run to stratify by" (it had three)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Study
from annotation.services import StudyCreateError, study_create
from arena.models import Benchmark
from hypoarena.importing import hypoarena_import, import_files
from tests.html_forms import page_forms
from tests.hypoarena import helpers as h
from tests.intrinsic import helpers as ih

pytestmark = pytest.mark.django_db


@pytest.fixture
def newer_benchmarks(tmp_path: Path, imported: Benchmark) -> dict[str, Benchmark]:
    """A HypoArena benchmark (with judge runs) and an Intrinsic one, both newer than the Lit2Test release."""
    return {
        "hypoarena": hypoarena_import(name="arena-study", files=import_files([h.folder(tmp_path / "h")])).benchmark,
        "intrinsic": ih.make_benchmark(tmp_path),
    }


def test_the_form_offers_and_opens_on_lit2test_benchmarks_and_names_the_others(
    rita_client: Client, imported: Benchmark, newer_benchmarks: dict[str, Benchmark]
) -> None:
    page = rita_client.get(reverse("annotation:studies")).content.decode()
    form = page_forms(page)["study-form"]
    assert form.choices["benchmark"] == [(str(imported.pk), str(imported))]
    assert form.values["benchmark"] == [str(imported.pk)]
    hint = page[page.index('id="study-protocols"') :].split("</p>")[0]
    assert "Studies are of Lit2Test benchmarks" in hint
    # Every other installed protocol (the tests install the toy one too) is named.
    assert "HypoArena, Reconstruction, Intrinsic scoring and Toy protocol benchmarks hold none" in hint


def test_a_hypoarena_benchmark_posted_anyway_is_refused_for_what_it_is(
    rita_client: Client, annotator, newer_benchmarks: dict[str, Benchmark]
) -> None:  # noqa: ANN001
    values = {"n_contexts": 1, "annotators": [annotator.pk], "round": "formal", "n_naive_controls": 0, "cap_minutes": 10}
    response = rita_client.post(reverse("annotation:studies"), values | {"benchmark": newer_benchmarks["hypoarena"].pk})
    body = response.content.decode()
    assert response.status_code == 200 and "That benchmark cannot hold a study" in body
    assert "which only Lit2Test benchmarks hold" in body and not Study.objects.exists()


def test_the_service_names_the_protocol_not_a_missing_judge_run(annotator, newer_benchmarks: dict[str, Benchmark]) -> None:  # noqa: ANN001
    arena = newer_benchmarks["hypoarena"]
    assert arena.runs.count() == 2  # tests/hypoarena/helpers.py: an arena run and a rubric run
    with pytest.raises(StudyCreateError) as refused:
        study_create(benchmark=arena, n_contexts=1, annotators=[annotator], n_naive_controls=0)
    assert str(refused.value) == (
        f"{arena} is a HypoArena benchmark: studies label canonical pairs, which only Lit2Test benchmarks hold; "
        "choose one of those"
    )
    assert not Study.objects.exists()


def test_without_a_lit2test_benchmark_the_page_says_so_instead_of_a_form(rita_client: Client, tmp_path: Path) -> None:
    ih.make_benchmark(tmp_path)
    page = rita_client.get(reverse("annotation:studies")).content.decode()
    assert 'id="study-form"' not in page
    assert "No Lit2Test benchmark yet" in page[page.index('id="no-study-benchmark"') :]
