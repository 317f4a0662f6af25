"""A NUL character in any field of the researchers' forms is a form error naming the field, never a 500.

PostgreSQL stores no NUL in text, so a NUL that reached a query or a write was a ``DataError``. Django's
``CharField`` refuses it (``ProhibitNullCharactersValidator``); the choice, number and model-choice fields
refuse it as an invalid value. These tests hold every field of every form to that, on the database in use
(PostgreSQL in CI).
"""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from annotation.models import Study
from arena.models import Benchmark, JudgeRun
from lit2test.models import GenerationRun

pytestmark = pytest.mark.django_db


@pytest.fixture
def rita(researcher) -> Client:  # noqa: ANN001
    client = Client(raise_request_exception=False)
    client.force_login(researcher)
    return client


def study_values(benchmark: Benchmark, annotator) -> dict[str, object]:  # noqa: ANN001
    return {
        "benchmark": str(benchmark.pk),
        "name": "pilot",
        "n_contexts": "2",
        "annotators": [str(annotator.pk)],
        "round": "formal",
        "n_naive_controls": "1",
        "cap_minutes": "10",
        "annotators_per_item": "1",
        "seed": "3",
    }


def judge_values(benchmark: Benchmark) -> dict[str, object]:
    return {
        "benchmark": str(benchmark.pk),
        "judge_model": "judge-x",
        "base_url": "http://127.0.0.1:9/v1",
        "api_key_env": "X_API_KEY",
        "run_type": "holistic",
        "prompt_version": "",
        "select": "sample:2",
        "orders": ["original", "reverse"],
        "concurrency": "2",
        "rate_per_second": "5",
        "temperature": "0",
        "max_tokens": "64",
        "timeout": "5",
        "price_per_1k_prompt": "0.1",
        "price_per_1k_completion": "0.1",
        "canonical": "on",
    }


def generation_values(benchmark: Benchmark) -> dict[str, object]:
    return {
        "benchmark": str(benchmark.pk),
        "base_url": "http://127.0.0.1:9/v1",
        "api_key_env": "X_API_KEY",
        "contexts": "all",
        "temperature": "1",
        "max_tokens": "64",
        "concurrency": "2",
    }


def with_nul(values: dict[str, object], field: str) -> dict[str, object]:
    bad = dict(values)
    value = bad[field]
    bad[field] = [v + "\x00" for v in value] if isinstance(value, list) else str(value) + "\x00"
    return bad


def assert_refused_naming(response, field: str) -> None:  # noqa: ANN001
    assert response.status_code == 200, response.status_code
    form = response.context["form"]
    assert field in form.errors, dict(form.errors)


@pytest.mark.parametrize(
    "field",
    ["benchmark", "name", "n_contexts", "annotators", "round", "n_naive_controls", "cap_minutes", "annotators_per_item", "seed"],
)
def test_the_study_form_refuses_a_nul_in_each_field(rita, imported, annotator, field: str) -> None:  # noqa: ANN001
    response = rita.post(reverse("annotation:studies"), with_nul(study_values(imported, annotator), field))

    assert_refused_naming(response, field)
    assert not Study.objects.exists()


JUDGE_FIELDS = [
    "benchmark",
    "judge_model",
    "base_url",
    "api_key_env",
    "run_type",
    "prompt_version",
    "select",
    "orders",
    "concurrency",
    "rate_per_second",
    "temperature",
    "max_tokens",
    "timeout",
    "price_per_1k_prompt",
    "price_per_1k_completion",
]  # fmt: skip; "canonical" is a checkbox: any value but "false"/"0" ticks it


@pytest.mark.parametrize("field", JUDGE_FIELDS)
def test_the_judge_run_form_refuses_a_nul_in_each_field(rita, imported, field: str) -> None:  # noqa: ANN001
    runs_before = JudgeRun.objects.count()
    response = rita.post(reverse("jobs:run-new"), with_nul(judge_values(imported), field))

    assert_refused_naming(response, field)
    assert JudgeRun.objects.count() == runs_before


@pytest.mark.parametrize(
    "field", ["benchmark", "base_url", "api_key_env", "contexts", "temperature", "max_tokens", "concurrency"]
)
def test_the_generation_form_refuses_a_nul_in_each_field(rita, imported, field: str) -> None:  # noqa: ANN001
    response = rita.post(reverse("lit2test:generation-new"), with_nul(generation_values(imported), field))

    assert_refused_naming(response, field)
    assert not GenerationRun.objects.exists()


@pytest.mark.parametrize("field", ["benchmark", "version"])
def test_the_upload_form_refuses_a_nul_in_the_benchmark_name_and_version(rita, field: str) -> None:  # noqa: ANN001
    values = {"benchmark": "lit2test", "version": "1", "files": [SimpleUploadedFile("contexts.jsonl", b"")]}
    values[field] = values[field] + "\x00"

    response = rita.post(reverse("arena:dashboard"), values)

    assert_refused_naming(response, field)
    assert not Benchmark.objects.exists()
