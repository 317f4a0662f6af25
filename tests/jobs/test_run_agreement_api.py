"""``/api/runs/<id>/agreement/?with=<other>``: two judges compared on the pairs both judged."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from arena.models import JudgeRun
from lit2test.release import release_import
from tests.arena import builders as b
from tests.clients import client_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_judges(tmp_path: Path) -> tuple[JudgeRun, JudgeRun]:
    """The small release (canonical judge on 6 pairs) plus Judge-X on the 3 pairs of ctx_001.

    Canonical, per pair of ctx_001 (original, reverse): Alpha-Beta (Alpha, Alpha) stable;
    Alpha-Gamma (Alpha, Gamma) sensitive; Beta-Gamma (Beta, Beta) stable.
    Judge-X: Alpha-Beta (Alpha, Alpha) stable; Alpha-Gamma (Gamma, Gamma) stable; Beta-Gamma (Gamma, Beta) sensitive.
    """
    files = b.small_release()
    c = "ctx_001__v1"

    def both_orders(x: str, y: str, original: str, reverse: str) -> list[dict]:
        side = {x: "A", y: "B"}
        return [b.judgment(c, x, y, "original", side[original]), b.judgment(c, y, x, "reverse", {x: "B", y: "A"}[reverse])]

    files["judgments.jsonl"] = [
        *both_orders("Alpha 1", "Beta-2", "Alpha 1", "Alpha 1"),
        *both_orders("Alpha 1", "Gamma-3", "Gamma-3", "Gamma-3"),
        *both_orders("Beta-2", "Gamma-3", "Gamma-3", "Beta-2"),
    ]
    release_import(directory=b.write(tmp_path, files))
    return JudgeRun.objects.get(is_canonical=True), JudgeRun.objects.get(judge_model="Judge-X")


def test_a_valid_request_answers_the_agreement_on_the_pairs_both_judged(two_judges, researcher) -> None:  # noqa: ANN001
    canonical, second = two_judges
    response = client_for(researcher).get(reverse("lit2test:api-run-agreement", args=[canonical.pk]), {"with": second.pk})
    assert response.status_code == 200, response.content
    doc = response.json()
    assert (doc["primary"]["id"], doc["secondary"]["id"]) == (canonical.pk, second.pk)
    assert doc["requested"] == {"first": canonical.pk, "second": second.pk}
    assert (doc["joined"], doc["only_primary"], doc["only_secondary"]) == (3, 0, 0)
    assert {k: doc["primary"][k] for k in ("stable", "sensitive", "incomplete")} == {"stable": 2, "sensitive": 1, "incomplete": 0}
    assert {k: doc["secondary"][k] for k in ("stable", "sensitive", "incomplete")} == {
        "stable": 2,
        "sensitive": 1,
        "incomplete": 0,
    }
    # The canonical judge's 2 stable cases give 4 ordered verdicts of Judge-X; 3 name the same winner.
    ordered = doc["ordered_agreement"]
    assert {k: ordered[k] for k in ("cases", "verdicts", "agree", "fraction")} == {
        "cases": 2,
        "verdicts": 4,
        "agree": 3,
        "fraction": 0.75,
    }
    # Folded: Alpha-Beta agrees (Alpha); the other two are stable for one judge and sensitive for the other.
    assert {k: v for k, v in doc["case_folded"].items() if k not in ("name", "ci")} == {
        "cases": 3,
        "agree": 1,
        "fraction": pytest.approx(1 / 3),
        "same_stable_winner": 1,
        "both_sensitive": 0,
        "opposite_stable_winner": 0,
        "stable_vs_sensitive": 2,
    }
    assert doc["by_order"] == {
        "original": {"verdicts": 3, "agree": 1, "fraction": pytest.approx(1 / 3)},
        "reverse": {"verdicts": 3, "agree": 3, "fraction": 1.0},
    }


@pytest.mark.parametrize(
    ("query", "named"),
    [({}, "with"), ({"with": "x"}, "with"), ({"with": "0"}, "with"), ({"with": str(2**63)}, "with")],
)
def test_a_missing_or_bad_with_is_a_400_naming_it(two_judges, researcher, query: dict, named: str) -> None:  # noqa: ANN001
    canonical, _ = two_judges
    response = client_for(researcher).get(reverse("lit2test:api-run-agreement", args=[canonical.pk]), query)
    assert response.status_code == 400 and named in response.json()


def test_unknown_runs_are_404(two_judges, researcher) -> None:  # noqa: ANN001
    canonical, second = two_judges
    client = client_for(researcher)
    assert client.get(reverse("lit2test:api-run-agreement", args=[canonical.pk]), {"with": 999_999}).status_code == 404
    assert client.get(reverse("lit2test:api-run-agreement", args=[999_999]), {"with": second.pk}).status_code == 404


def test_the_agreement_api_is_researcher_only(two_judges, annotator) -> None:  # noqa: ANN001
    canonical, second = two_judges
    url = reverse("lit2test:api-run-agreement", args=[canonical.pk])
    assert client_for(annotator).get(url, {"with": second.pk}).status_code == 403
    assert Client().get(url, {"with": second.pk}).status_code == 403


def test_a_run_compared_with_itself_or_with_a_run_without_pairs_is_a_404_naming_it(two_judges, researcher) -> None:  # noqa: ANN001
    # Both answered 200 before (review): a run against itself "agreed" 100% by construction, calling the canonical run
    # "earlier run (neither is the canonical judge)"; a run without canonical pairs (controls, arena, rubric) "agreed"
    # on 0 pairs.
    canonical, second = two_judges
    client = client_for(researcher)
    url = reverse("lit2test:api-run-agreement", args=[canonical.pk])
    itself = client.get(url, {"with": canonical.pk})
    assert itself.status_code == 404 and "compared with itself" in itself.json()["detail"]
    JudgeRun.objects.filter(pk=second.pk).update(subjects="controls")
    other = client.get(url, {"with": second.pk})
    assert other.status_code == 404 and f"run {second.pk} is not a run" in other.json()["detail"]
    from_other = client.get(reverse("lit2test:api-run-agreement", args=[second.pk]), {"with": canonical.pk})
    assert from_other.status_code == 404 and "canonical pairs" in from_other.json()["detail"]
