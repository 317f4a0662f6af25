"""The leaderboard command, API and page on the imported release, against the published figures."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from arena.models import OrderedJudgment

pytestmark = pytest.mark.django_db

TABLE_1 = {  # PROTOCOL.md: ordered fit, pseudo-count 0.5, case bootstrap 95% CI
    "GPT 5.2": (1.26, 1.14, 1.40),
    "Claude-Sonnet-4.6": (0.74, 0.62, 0.87),
    "GLM-5": (-0.73, -0.86, -0.61),
    "DeepSeek-V3.2": (-1.28, -1.42, -1.15),
}


def command_json(*args: str) -> dict:
    out = StringIO()
    call_command("leaderboard", *args, "--json", stdout=out)
    text = out.getvalue()
    assert text.count("\n") <= 1  # exactly one JSON object
    return json.loads(text)


def test_the_json_reproduces_the_published_figures(imported) -> None:  # noqa: ANN001
    doc = command_json("lit2test")
    assert doc["models"] == ["GPT 5.2", "Claude-Sonnet-4.6", "GLM-5", "DeepSeek-V3.2"]
    assert doc["cases"] | {} == {"total": 1200, "stable": 950, "sensitive": 250, "incomplete": 0}
    assert doc["stable_wlt"] == {
        "GPT 5.2": {"w": 424, "l": 49, "t": 127},
        "Claude-Sonnet-4.6": {"w": 347, "l": 119, "t": 134},
        "GLM-5": {"w": 118, "l": 343, "t": 139},
        "DeepSeek-V3.2": {"w": 61, "l": 439, "t": 100},
    }
    h2h = {(h["a"], h["b"]): (h["a_wins"], h["b_wins"], h["sensitive"]) for h in doc["head_to_head"]}
    assert h2h == {
        ("GPT 5.2", "Claude-Sonnet-4.6"): (90, 38, 72),
        ("GPT 5.2", "GLM-5"): (154, 7, 39),
        ("GPT 5.2", "DeepSeek-V3.2"): (180, 4, 16),
        ("Claude-Sonnet-4.6", "GLM-5"): (143, 18, 39),
        ("Claude-Sonnet-4.6", "DeepSeek-V3.2"): (166, 11, 23),
        ("GLM-5", "DeepSeek-V3.2"): (93, 46, 61),
    }
    for model, (strength, lo, hi) in TABLE_1.items():
        fit = doc["bt"]["ordered"][model]
        # Printed to two decimals: within half a unit of the last printed digit (plus float slack).
        assert abs(fit["strength"] - strength) <= 0.0051, (model, fit)
        assert abs(fit["ci"][0] - lo) <= 0.0061 and abs(fit["ci"][1] - hi) <= 0.0061, (model, fit)
    assert doc["bt"]["pseudo_count"] == 0.5
    assert doc["bootstrap"]["replicates"] == 10_000 and doc["bootstrap"]["modal_fraction"] == 1.0
    assert doc["bootstrap"]["modal_ranking"] == doc["models"]
    assert doc["condorcet"]["beat_counts"] == {"GPT 5.2": 3, "Claude-Sonnet-4.6": 2, "GLM-5": 1, "DeepSeek-V3.2": 0}
    assert doc["condorcet"]["transitive"] is True and doc["condorcet"]["cycles"] == []
    assert doc["separation"] == []
    for model in TABLE_1:
        case_lo, case_hi = doc["bt"]["ordered"][model]["ci"]
        cluster_lo, cluster_hi = doc["cluster_bootstrap"]["ci"][model]
        assert (cluster_hi - cluster_lo) > (case_hi - case_lo)


def test_the_api_returns_the_same_document_as_the_command(imported, researcher) -> None:  # noqa: ANN001
    client = Client()
    client.force_login(researcher)
    api = client.get(reverse("lit2test:api-leaderboard", args=[imported.pk]), {"replicates": 500, "seed": 3}).json()
    assert api == command_json(str(imported.pk), "--replicates", "500", "--seed", "3")


def test_the_leaderboard_is_researcher_only(imported, annotator) -> None:  # noqa: ANN001
    client = Client()
    client.force_login(annotator)
    assert client.get(reverse("lit2test:api-leaderboard", args=[imported.pk])).status_code == 403
    assert client.get(reverse("lit2test:leaderboard", args=[imported.pk])).status_code == 403
    assert client.post(reverse("lit2test:leaderboard", args=[imported.pk])).status_code == 405


def test_bad_api_parameters_are_named(imported, researcher) -> None:  # noqa: ANN001
    client = Client()
    client.force_login(researcher)
    response = client.get(reverse("lit2test:api-leaderboard", args=[imported.pk]), {"replicates": 0, "run": 999999})
    assert response.status_code == 400 and "replicates" in response.json()
    assert client.get(reverse("lit2test:api-leaderboard", args=[imported.pk]), {"run": 999999}).status_code == 404


def test_results_are_cached_by_the_data_they_come_from(imported, django_assert_max_num_queries) -> None:  # noqa: ANN001
    from arena.selectors import run_default, run_leaderboard

    run = run_default(benchmark=imported)
    first = run_leaderboard(run=run, replicates=200)
    with django_assert_max_num_queries(3):  # the fingerprint query only; no recomputation
        again = run_leaderboard(run=run, replicates=200)
    assert again == first
    # New data (a flipped verdict) means a new fingerprint and a recomputed document.
    judgment = OrderedJudgment.objects.filter(run=run, order="original", winner__name="GPT 5.2").first()
    judgment.winner = (
        judgment.pair.participant_a if judgment.pair.participant_b_id == judgment.winner_id else judgment.pair.participant_b
    )
    judgment.save()
    changed = run_leaderboard(run=run, replicates=200)
    assert changed["stable_wlt"]["GPT 5.2"]["w"] == 423


def test_the_page_polls_only_while_the_run_is_in_progress(imported, researcher) -> None:  # noqa: ANN001
    from arena.models import JudgeRun

    client = Client()
    client.force_login(researcher)
    url = reverse("lit2test:leaderboard", args=[imported.pk])
    assert 'hx-trigger="every 5s"' not in client.get(url).content.decode()
    JudgeRun.objects.filter(benchmark=imported).update(status="running")
    page = client.get(url).content.decode()
    assert 'hx-trigger="every 5s"' in page and "updating live" in page
    fragment = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert fragment.lstrip().startswith('<div id="board"') and "<html" not in fragment
