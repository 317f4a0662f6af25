"""What every API operation shares: counts of the benchmark list, errors as JSON naming what is wrong, and
the 400/403/404 answers declared in the OpenAPI schema."""

from __future__ import annotations

import pytest
import yaml
from django.urls import reverse

from arena.models import Benchmark

pytestmark = pytest.mark.django_db


def test_the_benchmark_list_counts_each_kind_of_row_once(imported, rita_client) -> None:  # noqa: ANN001
    Benchmark.objects.create(name="empty", version="1", canonical_judge="J")
    rows = {row["name"]: row for row in rita_client.get(reverse("arena:api-benchmarks")).json()}
    counts = ("n_contexts", "n_text_contexts", "n_participants", "n_pairs", "n_runs")
    # The release sample: 200 contexts (13 with text), 4 models, 6 pairs per context, one recorded run.
    assert {k: rows["lit2test"][k] for k in counts} == {
        "n_contexts": 200,
        "n_text_contexts": 13,
        "n_participants": 4,
        "n_pairs": 1200,
        "n_runs": 1,
    }
    assert {k: rows["empty"][k] for k in counts} == dict.fromkeys(counts, 0)


@pytest.mark.parametrize(
    ("name", "params", "named"),
    [
        ("lit2test:api-leaderboard", {"seed": ""}, "seed"),
        ("lit2test:api-leaderboard", {"pseudo_count": ""}, "pseudo_count"),
        ("controls:api-report", {"structured_run": ""}, "structured_run"),
        ("lit2test:api-run-agreement", {"with": ""}, "with"),
        ("annotation:api-study-agreement", {"include_over_time": ""}, "include_over_time"),
        ("annotation:api-study-agreement", {"include_over_time": "maybe"}, "include_over_time"),
    ],
)
def test_an_empty_or_malformed_parameter_is_a_400_naming_it(imported, rita_client, name: str, params: dict, named: str) -> None:  # noqa: ANN001
    args = [imported.pk] if name in ("lit2test:api-leaderboard", "controls:api-report") else [1]
    response = rita_client.get(reverse(name, args=args), params)
    assert response.status_code == 400 and list(response.json()) == [named], response.content


def test_unknown_api_urls_answer_json_404(rita_client) -> None:  # noqa: ANN001
    for path in ("/api/runs/abc/progress/", "/api/benchmarks/-1/leaderboard/", "/api/nothing/"):
        response = rita_client.get(path)
        assert response.status_code == 404 and response["Content-Type"] == "application/json"
        assert response.json() == {"detail": f"no such API resource: {path}"}
    assert "text/html" in rita_client.get("/no-such-page/")["Content-Type"]  # pages keep the HTML 404


@pytest.mark.parametrize(
    ("path", "message"), [("/api/runs/999999/progress/", "no run 999999"), ("/api/studies/999999/agreement/", "no study 999999")]
)
def test_an_unknown_id_is_a_404_naming_it(rita_client, path: str, message: str) -> None:  # noqa: ANN001
    response = rita_client.get(path)
    assert response.status_code == 404 and response.json() == {"detail": message}


def test_the_schema_refuses_an_unknown_language(rita_client) -> None:  # noqa: ANN001
    response = rita_client.get(reverse("api-schema"), {"lang": "xx"})
    assert response.status_code == 400 and yaml.safe_load(response.content) == {"lang": ['"xx" is not a valid choice.']}
    assert rita_client.get(reverse("api-schema"), {"lang": "zh-hans"}).status_code == 200


def test_every_operation_declares_its_error_answers(rita_client) -> None:  # noqa: ANN001
    schema = yaml.safe_load(rita_client.get(reverse("api-schema")).content)
    operations = {(path, method): op for path, ops in schema["paths"].items() for method, op in ops.items()}
    # The API root and the resources (other protocols add theirs, so the known ones are a subset).
    assert {
        "/api/",
        "/api/benchmarks/",
        "/api/benchmarks/{benchmark_id}/leaderboard/",
        "/api/benchmarks/{benchmark_id}/controls/",
        "/api/runs/{run_id}/progress/",
        "/api/runs/{run_id}/agreement/",
        "/api/studies/{study_id}/agreement/",
        "/api/schema/",
    } <= {path for path, _ in operations}
    for (path, _method), op in operations.items():
        declared = set(op["responses"])
        assert {"200", "403", "503"} <= declared, (path, declared)
        if op.get("parameters"):  # a path id or a query parameter can be wrong
            assert {"400", "404"} & declared, (path, declared)
        if "{" in path:
            assert "404" in declared, (path, declared)
    replicates = next(
        p for p in operations[("/api/benchmarks/{benchmark_id}/leaderboard/", "get")]["parameters"] if p["name"] == "replicates"
    )
    assert replicates["schema"]["maximum"] == 20_000  # the server's cap, from the setting
    error = schema["components"]["schemas"]["Error"]
    assert error["properties"]["detail"]["type"] == "string"
