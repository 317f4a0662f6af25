"""The researchers' study pages: list and create form, the live study page, the CSV export, the agreement API."""

from __future__ import annotations

import csv
import io
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation.models import Assignment, Study
from annotation.selectors import human_win_rate_for_benchmark
from annotation.services import assignment_open, assignment_submit

from .helpers import complete_values, make_study

pytestmark = pytest.mark.django_db


def label_everything(study: Study, choose=lambda a: "A") -> None:  # noqa: ANN001
    for a in Assignment.objects.filter(study=study).select_related("item"):
        choice = choose(a)
        assignment_submit(assignment=a, values=complete_values(choice, reason="both_weak" if choice == "TIE" else ""))


def prefer_first(a: Assignment) -> str:
    """Every annotator picks the item's first side (the real proposal on controls)."""
    return "A" if a.a_is_first else "B"


def test_the_study_list_refuses_wrong_methods(rita_client) -> None:  # noqa: ANN001
    assert rita_client.put(reverse("annotation:studies")).status_code == 405
    assert rita_client.delete(reverse("annotation:studies")).status_code == 405


def test_the_study_form_creates_a_study_with_the_service(imported, annotator, annotator2, rita_client, researcher) -> None:  # noqa: ANN001
    page = rita_client.get(reverse("annotation:studies")).content.decode()
    assert f'name="annotators" value="{annotator.pk}"' in page and f'name="annotators" value="{annotator2.pk}"' in page
    assert f'name="annotators" value="{researcher.pk}"' not in page  # only members of the annotators group
    response = rita_client.post(
        reverse("annotation:studies"),
        {
            "benchmark": imported.pk,
            "n_contexts": 2,
            "annotators": [annotator.pk, annotator2.pk],
            "round": "formal",
            "n_naive_controls": 1,
            "cap_minutes": 7,
            "seed": 3,
        },
    )
    study = Study.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("annotation:study", args=[study.pk])
    assert (study.cap_minutes, study.annotators_per_item, study.seed, study.created_by) == (7, 2, 3, researcher)
    assert study.items.count() == 13 and study.assignments.count() == 26


def test_the_study_form_shows_service_errors(imported, annotator, rita_client) -> None:  # noqa: ANN001
    response = rita_client.post(
        reverse("annotation:studies"),
        {
            "benchmark": imported.pk,
            "n_contexts": 20,
            "annotators": [annotator.pk],
            "round": "formal",
            "n_naive_controls": 1,
            "cap_minutes": 10,
        },
    )
    assert response.status_code == 200 and "has 13 contexts with text" in response.content.decode()
    assert not Study.objects.exists()


def test_the_study_page_shows_progress_validation_and_agreement(study, rita_client) -> None:  # noqa: ANN001
    label_everything(study, prefer_first)
    page = rita_client.get(reverse("annotation:study", args=[study.pk]))
    html = page.content.decode()
    assert page.status_code == 200
    assert f'hx-get="/dashboard/studies/{study.pk}/"' in html and 'hx-trigger="every 5s"' in html
    assert "13 / 13" in html and "26 complete · 0 pending" in html
    assert '<td class="num" id="naive-detection">2/2</td>' in html
    assert '<svg id="scatter"' in html and html.count('class="scatter-point"') >= 2
    fragment = rita_client.get(reverse("annotation:study", args=[study.pk]), HTTP_HX_REQUEST="true").content.decode()
    assert fragment.lstrip().startswith('<div id="live"')
    assert "<html" not in fragment
    assert rita_client.post(reverse("annotation:study", args=[study.pk])).status_code == 405


def test_the_agreement_api_returns_the_documented_keys(study, rita_client) -> None:  # noqa: ANN001
    label_everything(study, prefer_first)
    doc = rita_client.get(reverse("annotation:api-study-agreement", args=[study.pk])).json()
    assert {"winner", "screening", "dimensions"} <= set(doc["krippendorff_alpha"])
    assert {"agree", "decisive", "ci"} <= set(doc["judge_agreement"])
    for key in ("naive_detection", "human_bt", "within_one_inversion", "human_win_rate", "leave_one_out"):
        assert key in doc
    assert doc["naive_detection"] == {"detected": 2, "total": 2, "rate": 1.0}
    # Both annotators always pick the first side: one category only, so alpha is undefined (not 1).
    assert doc["krippendorff_alpha"]["winner"] is None
    assert sorted(doc["leave_one_out"]) == ["ann", "bob"]
    assert rita_client.post(reverse("annotation:api-study-agreement", args=[study.pk])).status_code == 405
    assert rita_client.get(reverse("annotation:api-study-agreement", args=[999])).status_code == 404


def test_judge_agreement_uses_the_canonical_runs_stable_winners(study, rita_client) -> None:  # noqa: ANN001
    from arena.selectors import run_cases_frame

    label_everything(study, prefer_first)
    frame = run_cases_frame(run=study.judge_run, pair_ids=study.items.exclude(pair=None).values_list("pair_id", flat=True))
    stable = frame[(frame["original"] == frame["reverse"]) & (frame["original"] != "TIE")]
    agree = int((stable["original"] == stable["model_1"]).sum())  # humans always chose the pair's participant_a
    doc = rita_client.get(reverse("annotation:api-study-agreement", args=[study.pk])).json()
    assert (doc["judge_agreement"]["agree"], doc["judge_agreement"]["decisive"]) == (agree, len(stable))


def test_over_time_labels_can_be_included_on_request(study, rita_client, annotator) -> None:  # noqa: ANN001
    a = Assignment.objects.filter(study=study, annotator=annotator).first()
    assignment_open(assignment=a, now=timezone.now() - timedelta(minutes=11))
    assignment_submit(assignment=a, values=complete_values())
    url = reverse("annotation:api-study-agreement", args=[study.pk])
    assert rita_client.get(url).json()["counts"]["counted"] == 0
    assert rita_client.get(url + "?include_over_time=true").json()["counts"]["counted"] == 1
    page = rita_client.get(reverse("annotation:study", args=[study.pk]) + "?include_over_time=1").content.decode()
    assert "Over-time labels are <strong>included</strong>" in page


def test_a_practice_study_is_held_out_of_every_statistic(imported, annotator, annotator2, rita_client) -> None:  # noqa: ANN001
    practice = make_study(imported, [annotator, annotator2], round=Study.Round.PRACTICE)
    label_everything(practice, prefer_first)
    doc = rita_client.get(reverse("annotation:api-study-agreement", args=[practice.pk])).json()
    assert doc["held_out"] is True
    assert doc["naive_detection"]["total"] == 0 and doc["human_win_rate"] == {} and doc["human_bt"] is None
    assert human_win_rate_for_benchmark(imported) is None
    assert "held out of every statistic" in rita_client.get(reverse("annotation:study", args=[practice.pk])).content.decode()


def test_human_win_rate_for_benchmark_comes_from_the_newest_formal_study(imported, annotator, annotator2) -> None:  # noqa: ANN001
    assert human_win_rate_for_benchmark(imported) is None
    study = make_study(imported, [annotator, annotator2], n_contexts=1, n_naive_controls=1)
    label_everything(study, lambda a: "TIE")
    rates = human_win_rate_for_benchmark(imported)
    assert rates is not None and set(rates) == {"GPT 5.2", "Claude-Sonnet-4.6", "GLM-5", "DeepSeek-V3.2"}
    assert set(rates.values()) == {0.5}  # every label a tie; the control is not counted


def test_labels_export_as_csv_with_model_names_for_researchers(study, rita_client) -> None:  # noqa: ANN001
    label_everything(study, prefer_first)
    response = rita_client.get(reverse("annotation:study-labels", args=[study.pk]))
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode("utf-8-sig"))))
    assert len(rows) == 26
    row = rows[0]
    assert row["winner"] == row["model_first"] and row["annotator"] in ("ann", "bob")
    assert {r["model_second"] for r in rows if r["control"] == "1"} == {"naive baseline"}
    assert rita_client.post(reverse("annotation:study-labels", args=[study.pk])).status_code == 405


def test_the_leaderboard_shows_the_human_win_rate_column(imported, annotator, annotator2, rita_client) -> None:  # noqa: ANN001
    page = rita_client.get(reverse("lit2test:leaderboard", args=[imported.pk])).content.decode()
    assert "Human WR" not in page  # no study yet: no column
    study = make_study(imported, [annotator, annotator2], n_contexts=1, n_naive_controls=1)
    label_everything(study, lambda a: "TIE")
    page = rita_client.get(reverse("lit2test:leaderboard", args=[imported.pk])).content.decode()
    assert "Human WR" in page
    rows = page.split("<tbody>", 1)[1].split("</tbody>", 1)[0].split("<tr>")[1:]
    assert len(rows) == 4 and all("0.500" in row for row in rows)  # every label a tie: 0.5 for each model
    api = rita_client.get(reverse("lit2test:api-leaderboard", args=[imported.pk]), {"replicates": 100}).json()
    assert api["human_win_rate"] == {m: 0.5 for m in api["models"]}


def test_agreement_follows_a_change_in_the_judge_run(imported, annotator, annotator2) -> None:  # noqa: ANN001
    from annotation.selectors import study_agreement
    from arena.models import OrderedJudgment

    study = make_study(imported, [annotator, annotator2], n_contexts=2, n_naive_controls=0)
    label_everything(study, prefer_first)
    before = study_agreement(study=study)["judge_agreement"]
    # Flip every verdict of the canonical run: the judge now prefers the other model everywhere.
    for j in OrderedJudgment.objects.filter(run__is_canonical=True).select_related("pair"):
        j.winner_id = j.pair.participant_b_id if j.winner_id == j.pair.participant_a_id else j.pair.participant_a_id
        j.save(update_fields=["winner"])
    after = study_agreement(study=study)["judge_agreement"]
    assert before["decisive"] == after["decisive"] and before["decisive"] > 0
    assert after["agree"] == before["decisive"] - before["agree"]  # not a stale cached answer


def test_the_study_form_samples_pairs_per_context(imported, annotator, annotator2, rita_client) -> None:  # noqa: ANN001
    page = rita_client.get(reverse("annotation:studies")).content.decode()
    assert 'name="pairs_per_context" value="5"' in page  # the release-like default is filled in
    response = rita_client.post(
        reverse("annotation:studies"),
        {
            "benchmark": imported.pk,
            "n_contexts": 2,
            "annotators": [annotator.pk, annotator2.pk],
            "round": "formal",
            "n_naive_controls": 1,
            "pairs_per_context": 4,
            "cap_minutes": 10,
            "seed": 3,
        },
    )
    study = Study.objects.get()
    assert response.status_code == 302
    assert study.items.count() == 8 and study.items.filter(is_control=True).count() == 1
    detail = rita_client.get(reverse("annotation:study", args=[study.pk])).content.decode()
    assert "2 contexts (4 items per context), 1 hidden naive control;" in detail


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("6", "with hidden naive controls, pairs per context must be at most 5"),
        ("0", "Ensure this value is greater than or equal to 1."),
    ],
)
def test_the_study_form_explains_a_wrong_pairs_per_context(imported, annotator, rita_client, value, message) -> None:  # noqa: ANN001
    response = rita_client.post(
        reverse("annotation:studies"),
        {
            "benchmark": imported.pk,
            "n_contexts": 2,
            "annotators": [annotator.pk],
            "round": "formal",
            "n_naive_controls": 1,
            "pairs_per_context": value,
            "cap_minutes": 10,
        },
    )
    assert response.status_code == 200 and message in response.content.decode()
    assert not Study.objects.exists()
