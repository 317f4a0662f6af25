"""The leaderboard's human win rate read from one grouped label query (issue 25, item 1): the same report as reading
the study's whole label and item frames, and the rates a plain count of the submitted labels gives."""

from __future__ import annotations

import pytest

from annotation import stats
from annotation.models import Assignment, Label, Study
from annotation.selectors import counted_real_labels, human_win_rate_for_benchmark, human_win_rate_report, study_frames
from annotation.services import assignment_submit
from arena.stats import win_rates
from tests.annotation.helpers import complete_values, make_study

pytestmark = pytest.mark.django_db

CHOICES = ("A", "B", "TIE", "A", "INVALID", "B", "B")
REASONS = {"TIE": "both_weak", "INVALID": "not_comparable"}


def report_from_frames(study: Study) -> dict:
    """The report as it was computed before: from the study's frames (``study_frames``)."""
    labels, _items = study_frames(study=study)
    real = stats.counted(labels)
    real = real[~real["control"].astype(bool)]
    return win_rates(real, tie=stats.TIE, invalid=stats.INVALID, seed=study.seed % (2**32)) | {
        "study": {"id": study.pk, "name": study.name, "round": study.round}
    }


def test_the_report_counts_real_labels_within_the_cap_as_the_frames_do(imported, annotator, annotator2) -> None:  # noqa: ANN001
    study = make_study(imported, [annotator, annotator2], n_contexts=2, n_naive_controls=1)
    assignments = list(Assignment.objects.filter(study=study).select_related("item").order_by("pk"))
    for i, a in enumerate(assignments):
        choice = CHOICES[i % len(CHOICES)]
        assignment_submit(assignment=a, values=complete_values(choice, reason=REASONS.get(choice, "")))
    late = Label.objects.filter(assignment__study=study, assignment__item__is_control=False).order_by("pk").first()
    Label.objects.filter(pk=late.pk).update(over_time=True)

    # A plain count: chosen model 1, the other 0, TIE 0.5 each; INVALID, controls and the late label left out.
    score: dict[str, float] = {}
    seen: dict[str, int] = {}
    labels = Label.objects.filter(assignment__study=study).select_related(
        "assignment__item__first_proposal__participant", "assignment__item__second_proposal__participant"
    )
    for label in labels:
        item = label.assignment.item
        if item.is_control or label.over_time or label.choice == "INVALID":
            continue
        first, second = item.first_proposal.participant.name, item.second_proposal.participant.name
        for model in (first, second):
            seen[model] = seen.get(model, 0) + 1
            won = {"first": first, "second": second}.get(label.winner_side)
            score[model] = score.get(model, 0.0) + (0.5 if label.choice == "TIE" else float(won == model))
    assert len(seen) == 4 and 0 < min(seen.values())

    report = human_win_rate_report(benchmark=imported)
    assert {m: (v["rate"], v["n"]) for m, v in report["models"].items()} == {m: (score[m] / seen[m], seen[m]) for m in seen}
    assert report == report_from_frames(study)
    assert human_win_rate_for_benchmark(imported) == {m: v["rate"] for m, v in report["models"].items()}
    assert len(counted_real_labels(study=study)) == sum(seen.values()) // 2 + sum(
        1 for label in labels if label.choice == "INVALID" and not label.assignment.item.is_control and not label.over_time
    )


def test_a_study_with_only_late_or_control_labels_gives_no_human_win_rate(imported, annotator, annotator2) -> None:  # noqa: ANN001
    study = make_study(imported, [annotator, annotator2], n_contexts=1, n_naive_controls=1)
    for a in Assignment.objects.filter(study=study):
        assignment_submit(assignment=a, values=complete_values("A"))
    Label.objects.filter(assignment__study=study, assignment__item__is_control=False).update(over_time=True)
    assert human_win_rate_report(benchmark=imported) is None
    assert human_win_rate_for_benchmark(imported) is None
