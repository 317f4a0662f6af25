"""One "ordered agreement" for two judge runs: anchored on the primary (canonical) judge's stable cases on the
compare page (either order of the runs), in its API and in the leaderboard's panel, named identically, with a
case-bootstrap CI, the disagreeing pairs with links to both runs' judgments, and links to both runs."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from django.urls import reverse

from arena.models import JudgeRun, OrderedJudgment
from lit2test.release import release_import
from tests.arena import builders as b

pytestmark = pytest.mark.django_db

NAME = "Ordered agreement on the primary judge’s stable cases"


@pytest.fixture
def two_judges(tmp_path: Path) -> tuple[JudgeRun, JudgeRun]:
    """The small release (canonical judge on 6 pairs) plus Judge-X on the 3 pairs of ctx_001.

    Canonical (original, reverse): Alpha-Beta (Alpha, Alpha) stable; Alpha-Gamma (Alpha, Gamma) sensitive;
    Beta-Gamma (Beta, Beta) stable. Judge-X: Alpha-Beta (Alpha, Alpha) stable; Alpha-Gamma (Alpha, Gamma)
    sensitive; Beta-Gamma (Gamma, Beta) sensitive.
    On the canonical judge's stable cases Judge-X agrees with 2 + 1 of 4 ordered verdicts (3/4); anchored on
    Judge-X's own stable cases it would be 2 of 2 (1.000): the two anchors give different numbers.
    """
    files = b.small_release()
    c = "ctx_001__v1"

    def both_orders(x: str, y: str, original: str, reverse: str) -> list[dict]:
        return [
            b.judgment(c, x, y, "original", {x: "A", y: "B"}[original]),
            b.judgment(c, y, x, "reverse", {x: "B", y: "A"}[reverse]),
        ]

    files["judgments.jsonl"] = [
        *both_orders("Alpha 1", "Beta-2", "Alpha 1", "Alpha 1"),
        *both_orders("Alpha 1", "Gamma-3", "Alpha 1", "Gamma-3"),
        *both_orders("Beta-2", "Gamma-3", "Gamma-3", "Beta-2"),
    ]
    release_import(directory=b.write(tmp_path, files))
    return JudgeRun.objects.get(is_canonical=True), JudgeRun.objects.get(judge_model="Judge-X")


def text(content: bytes) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", content.decode())).split())


def test_the_api_anchors_on_the_canonical_judge_whichever_run_comes_first(two_judges, rita_client) -> None:  # noqa: ANN001
    canonical, second = two_judges
    url = "lit2test:api-run-agreement"
    one = rita_client.get(reverse(url, args=[canonical.pk]), {"with": second.pk}).json()
    other = rita_client.get(reverse(url, args=[second.pk]), {"with": canonical.pk}).json()
    for doc in (one, other):
        assert (doc["primary"]["id"], doc["primary"]["reason"], doc["secondary"]["id"]) == (
            canonical.pk,
            "canonical judge",
            second.pk,
        )
        ordered = doc["ordered_agreement"]
        assert (ordered["name"], ordered["cases"], ordered["agree"], ordered["verdicts"], ordered["fraction"]) == (
            NAME,
            2,
            3,
            4,
            0.75,
        )
        # Bootstrap of the two stable cases (2/2 and 1/2): 1 with probability 1/4, 3/4 with 1/2, 1/2 with 1/4.
        assert ordered["ci"] == [0.5, 1.0]
    assert one["ordered_agreement"] == other["ordered_agreement"]
    assert (one["requested"], other["requested"]) == (
        {"first": canonical.pk, "second": second.pk},
        {"first": second.pk, "second": canonical.pk},
    )


def test_the_disagreeing_pairs_come_with_both_runs_judgments(two_judges, rita_client) -> None:  # noqa: ANN001
    canonical, second = two_judges
    doc = rita_client.get(reverse("lit2test:api-run-agreement", args=[second.pk]), {"with": canonical.pk}).json()
    (row,) = doc["ordered_agreement"]["disagreements"]
    assert (row["model_1"], row["model_2"], row["primary_winner"]) == ("Beta-2", "Gamma-3", "Beta-2")
    assert (row["secondary_original"], row["secondary_reverse"], row["agree"], row["verdicts"]) == ("Gamma-3", "Beta-2", 1, 2)
    judgments = OrderedJudgment.objects.filter(pair__public_id=row["pair_public_id"])
    # Each run's judgments of the pair, with the page of the run page (newest first) that shows them: page 1 here.
    assert row["primary_judgments"] == {j.order: {"id": j.pk, "page": 1} for j in judgments.filter(run=canonical)}
    assert row["secondary_judgments"] == {j.order: {"id": j.pk, "page": 1} for j in judgments.filter(run=second)}
    assert set(row["primary_judgments"]) == {"original", "reverse"}


def test_a_judgment_link_opens_the_run_page_that_shows_it(release_dir: Path, tmp_path: Path, rita_client) -> None:  # noqa: ANN001
    """On the release (2,400 canonical judgments, 25 a page) the canonical judgment sits deep in its run's pages."""
    import shutil

    folder = tmp_path / "release"
    shutil.copytree(release_dir, folder)
    c = "smallari_fifth40_001_machine_unlearning_remove_while_existing__v02_fifth40"
    # The canonical judge folds DeepSeek-V3.2 vs GLM-5 here as stable for GLM-5; Judge-X picks DeepSeek twice.
    b.write(
        folder,
        {
            "judgments.jsonl": [
                b.judgment(c, "DeepSeek-V3.2", "GLM-5", "original", "A"),
                b.judgment(c, "GLM-5", "DeepSeek-V3.2", "reverse", "B"),
            ]
        },
    )
    release_import(directory=folder)
    canonical, second = JudgeRun.objects.get(is_canonical=True), JudgeRun.objects.get(judge_model="Judge-X")
    response = rita_client.get(reverse("lit2test:run-compare", args=[second.pk, canonical.pk]))
    links = re.findall(r'href="(/dashboard/runs/\d+/\?pair=[0-9a-f]+&amp;page=(\d+)#j(\d+))"', response.content.decode())
    assert len(links) == 4  # both orders of both runs
    assert max(int(page) for _, page, _ in links) > 1
    for href, _page, pk in links:
        shown = rita_client.get(html.unescape(href).split("#")[0]).content.decode()
        assert f'id="j{pk}"' in shown, href


@pytest.mark.parametrize("canonical_first", [True, False])
def test_the_compare_page_shows_the_one_definition_with_its_ci_pairs_and_links(
    two_judges, rita_client, canonical_first: bool
) -> None:  # noqa: ANN001
    canonical, second = two_judges
    first, other = (canonical, second) if canonical_first else (second, canonical)
    response = rita_client.get(reverse("lit2test:run-compare", args=[first.pk, other.pk]))
    page, body = text(response.content), response.content.decode()
    assert f"{NAME} 3 / 4 = 0.750 [0.500, 1.000]" in page
    assert f"Primary judge: #{canonical.pk} {canonical.judge_model} (canonical judge)" in page
    for run in (canonical, second):
        assert f'href="{reverse("jobs:run", args=[run.pk])}"' in body
    # The one disagreeing pair, with links to each run's judgments of it.
    assert "1 pair where the second judge does not follow the primary judge’s stable winner" in page
    pair = next(
        j.pair
        for j in OrderedJudgment.objects.filter(run=second).select_related("pair__participant_a", "pair__participant_b")
        if {j.pair.participant_a.name, j.pair.participant_b.name} == {"Beta-2", "Gamma-3"}
    )
    for run in (canonical, second):
        for j in OrderedJudgment.objects.filter(run=run, pair=pair):
            assert f'href="{reverse("jobs:run", args=[run.pk])}?pair={pair.public_id}&amp;page=1#j{j.pk}"' in body


def test_the_leaderboard_panel_shows_the_same_number_under_the_same_name(two_judges, rita_client) -> None:  # noqa: ANN001
    canonical, second = two_judges
    page = text(rita_client.get(reverse("lit2test:leaderboard", args=[canonical.benchmark_id]), {"run": second.pk}).content)
    compare = text(rita_client.get(reverse("lit2test:run-compare", args=[second.pk, canonical.pk])).content)
    figure = f"{NAME} 3 / 4 = 0.750 [0.500, 1.000]"
    assert figure in page and figure in compare
    assert "Case-folded agreement 2 / 3 = 0.667" in page and "Case-folded agreement 2 / 3 = 0.667" in compare


def test_the_compare_page_is_researcher_only_and_get_only(two_judges, rita_client, annotator) -> None:  # noqa: ANN001
    from tests.clients import client_for

    canonical, second = two_judges
    url = reverse("lit2test:run-compare", args=[canonical.pk, second.pk])
    assert client_for(annotator).get(url).status_code == 403
    assert rita_client.post(url).status_code == 405
