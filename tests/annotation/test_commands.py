"""create_study, validate_study and demo_study."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Assignment, Study
from annotation.services import assignment_save_draft, assignment_submit

from .helpers import complete_values, make_study

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_create_study_prints_the_study_id_first(imported, annotator, annotator2) -> None:  # noqa: ANN001
    out = run("create_study", "lit2test", "--contexts", "3", "--annotators", "ann,bob", "--round", "practice",
              "--naive-controls", "1", "--cap-minutes", "5", "--seed", "9")
    study = Study.objects.get()
    assert out.splitlines()[0] == f"study: {study.pk}"
    assert (study.round, study.n_contexts, study.cap_minutes, study.seed) == ("practice", 3, 5, 9)
    assert study.items.count() == 19 and study.assignments.count() == 38
    assert "stratum fifth40/" in out


def test_create_study_names_what_is_wrong(imported, annotator) -> None:  # noqa: ANN001
    with pytest.raises(CommandError, match="unknown users: nobody"):
        run("create_study", "lit2test", "--contexts", "1", "--annotators", "ann,nobody")
    with pytest.raises(CommandError, match="13 contexts"):
        run("create_study", "lit2test", "--contexts", "50", "--annotators", "ann")
    with pytest.raises(CommandError, match="no benchmark"):
        run("create_study", "nope", "--contexts", "1", "--annotators", "ann")


def test_validate_study_reports_pending_items_and_exits_1_until_complete(imported, annotator) -> None:  # noqa: ANN001
    study = make_study(imported, [annotator], n_contexts=1, n_naive_controls=0)
    assignments = list(Assignment.objects.filter(study=study).order_by("position"))
    assignment_save_draft(assignment=assignments[0], values={"screening": "coherent"})
    out = io.StringIO()
    with pytest.raises(SystemExit) as exit_info:
        call_command("validate_study", str(study.pk), stdout=out)
    assert exit_info.value.code == 1
    text = out.getvalue()
    assert "ann:" in text and "item   1" in text and "pending — a_grounding: Score proposal A on Grounding (1, 2 or 3)." in text
    assert "screening:" not in text.splitlines()[1]  # the draft already has the screening
    assert f"study {study.pk}: 0 complete, 6 pending, 0 stored labels failing validation" in text
    for a in assignments:
        assignment_submit(assignment=a, values=complete_values())
    assert run("validate_study", str(study.pk)).splitlines()[-1] == f"study {study.pk}: 6 complete, 0 pending, 0 stored labels failing validation"


def test_validate_study_flags_a_stored_label_that_fails(imported, annotator) -> None:  # noqa: ANN001
    study = make_study(imported, [annotator], n_contexts=1, n_naive_controls=0)
    a = Assignment.objects.filter(study=study).first()
    label = assignment_submit(assignment=a, values=complete_values())
    label.rationale = "short"
    label.save()
    with pytest.raises(SystemExit):
        call_command("validate_study", str(study.pk), "--quiet", stdout=io.StringIO())


def test_demo_study_creates_the_formal_study_once(imported) -> None:  # noqa: ANN001
    call_command("demo_setup", stdout=io.StringIO())
    out = run("demo_study")
    study = Study.objects.get()
    assert out.splitlines()[0] == f"study: {study.pk}"
    assert study.round == "formal" and study.n_contexts == 13 and study.items.count() == 80
    assert sorted(study.annotators.values_list("username", flat=True)) == ["annotator1", "annotator2", "annotator3"]
    assert study.assignments.count() == 240
    assert run("demo_study").splitlines()[0] == f"study: {study.pk} (already there)"
    assert Study.objects.count() == 1
