"""create_study, validate_study and demo_study."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.models import Assignment, Study
from annotation.services import assignment_save_draft, assignment_submit

from .helpers import client_for, complete_values, make_study

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_create_study_prints_the_study_id_first(imported, annotator, annotator2) -> None:  # noqa: ANN001
    out = run(
        "create_study",
        "lit2test",
        "--contexts",
        "3",
        "--annotators",
        "ann,bob",
        "--round",
        "practice",
        "--naive-controls",
        "1",
        "--cap-minutes",
        "5",
        "--seed",
        "9",
    )
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


def test_validate_study_summarises_pending_items_without_failing(imported, annotator, annotator2) -> None:  # noqa: ANN001
    study = make_study(imported, [annotator, annotator2], n_contexts=1, n_naive_controls=0)
    assignments = list(Assignment.objects.filter(study=study, annotator=annotator).order_by("position"))
    assignment_save_draft(assignment=assignments[0], values={"screening": "coherent"})
    assignment_submit(assignment=assignments[1], values=complete_values())
    # Pending items are work not done yet, not an error: a summary per annotator, exit status 0.
    assert run("validate_study", str(study.pk)).splitlines() == [
        "ann: 1 of 6 complete, 5 pending (1 started, 4 not started), 0 failing",
        "bob: 0 of 6 complete, 6 pending (0 started, 6 not started), 0 failing",
        f"study {study.pk}: 1 complete, 11 pending, 0 stored labels failing validation",
    ]
    # --pending lists them with what each draft still misses.
    text = run("validate_study", str(study.pk), "--pending")
    assert "item   1" in text and "pending — a_grounding: Score proposal A on Grounding (1, 2 or 3)." in text
    assert "pending — not started" in text
    # --require-complete fails while anything is pending, and passes once everything is in.
    with pytest.raises(SystemExit) as exit_info:
        call_command("validate_study", str(study.pk), "--require-complete", stdout=io.StringIO())
    assert exit_info.value.code == 1
    for a in Assignment.objects.filter(study=study, label__isnull=True):
        assignment_submit(assignment=a, values=complete_values())
    out = run("validate_study", str(study.pk), "--require-complete")
    assert out.splitlines()[-1] == f"study {study.pk}: 12 complete, 0 pending, 0 stored labels failing validation"


def test_validate_study_flags_a_stored_label_that_fails(imported, annotator) -> None:  # noqa: ANN001
    study = make_study(imported, [annotator], n_contexts=1, n_naive_controls=0)
    a = Assignment.objects.filter(study=study).first()
    label = assignment_submit(assignment=a, values=complete_values())
    label.rationale = "short"
    label.save()
    out = io.StringIO()
    with pytest.raises(SystemExit) as exit_info:
        call_command("validate_study", str(study.pk), "--quiet", stdout=out)
    assert exit_info.value.code == 1
    lines = out.getvalue().splitlines()
    assert lines[0].startswith(f"  ann item   {a.position} (#{a.item_id}): invalid — rationale:")
    assert lines[-1] == f"study {study.pk}: 0 complete, 5 pending, 1 stored labels failing validation"


def test_demo_study_holds_out_practice_contexts_before_the_formal_round(imported) -> None:  # noqa: ANN001
    call_command("demo_setup", stdout=io.StringIO())
    out = run("demo_study").splitlines()
    practice = Study.objects.get(round="practice")
    formal = Study.objects.get(round="formal")
    assert out[0] == f"formal study: {formal.pk}" and f"practice study: {practice.pk}" in out
    practice_contexts = set(practice.items.values_list("context_id", flat=True))
    formal_contexts = set(formal.items.values_list("context_id", flat=True))
    assert len(practice_contexts) == 2 and len(formal_contexts) == 11
    assert not practice_contexts & formal_contexts  # the practice cases are held out of the formal round
    assert practice.items.count() == 10 and not practice.items.filter(is_control=True).exists()
    assert formal.items.count() == 55 and formal.items.filter(is_control=True).count() == 2  # 5 items per context
    for study in (practice, formal):
        assert sorted(study.annotators.values_list("username", flat=True)) == ["annotator1", "annotator2", "annotator3"]
    assert formal.assignments.count() == 165
    # The annotators meet the practice round first: it heads their list.
    home = client_for(get_user_model().objects.get(username="annotator1")).get(reverse("annotation:home")).content.decode()
    assert -1 < home.index("Demo practice round") < home.index("Demo formal round")


def test_demo_study_reports_its_own_studies_not_the_newest_ones(imported) -> None:  # noqa: ANN001
    call_command("demo_setup", stdout=io.StringIO())
    run("demo_study")
    practice, formal = Study.objects.get(round="practice"), Study.objects.get(round="formal")
    # A researcher's own studies on the demo come later; a second `make demo` still reports the demo's.
    users = list(practice.annotators.all())
    make_study(imported, users, n_contexts=1, n_naive_controls=0, name="Rita's formal round")
    make_study(imported, users, n_contexts=1, n_naive_controls=0, round="practice", name="Rita's practice round")
    assert run("demo_study").splitlines() == [
        f"formal study: {formal.pk} (already there)",
        f"practice study: {practice.pk} (already there)",
    ]
    assert Study.objects.count() == 4


def test_create_study_names_the_valid_values_of_its_options(imported, annotator) -> None:  # noqa: ANN001
    with pytest.raises(CommandError, match="argument --contexts: must be at least 1, got 0"):
        run("create_study", "lit2test", "--contexts", "0", "--annotators", "ann")
    with pytest.raises(CommandError, match="argument --contexts: must be a whole number of at least 1, got 'two'"):
        run("create_study", "lit2test", "--contexts", "two", "--annotators", "ann")
    with pytest.raises(CommandError, match=r"argument --round: invalid choice: 'final' \(choose from '?practice'?, '?formal'?\)"):
        run("create_study", "lit2test", "--contexts", "1", "--annotators", "ann", "--round", "final")
    with pytest.raises(CommandError, match="pairs per context must be at most 5"):
        run("create_study", "lit2test", "--contexts", "2", "--annotators", "ann", "--pairs-per-context", "6")
    with pytest.raises(CommandError, match="argument --pairs-per-context: must be at least 1, got 0"):
        run("create_study", "lit2test", "--contexts", "2", "--annotators", "ann", "--pairs-per-context", "0")
    assert not Study.objects.exists()


def test_create_study_help_explains_every_option() -> None:
    from annotation.management.commands.create_study import Command

    text = " ".join(Command().create_parser("manage.py", "create_study").format_help().split())
    assert "--pairs-per-context K items shown per context" in text
    assert "--seed S seed of the sample, the controls, each annotator's order and A/B sides" in text
    assert "--contexts N number of contexts to sample (at least 1)" in text


def test_create_study_with_pairs_per_context(imported, annotator) -> None:  # noqa: ANN001
    out, err = io.StringIO(), io.StringIO()
    call_command(
        "create_study",
        "lit2test",
        "--contexts",
        "3",
        "--annotators",
        "ann",
        "--naive-controls",
        "1",
        "--pairs-per-context",
        "5",
        "--seed",
        "2",
        stdout=out,
        stderr=err,
    )
    study = Study.objects.get()
    assert study.items.count() == 15 and study.items.filter(is_control=True).count() == 1
    assert "3 contexts (5 items per context), 14 real pairs + 1 hidden controls" in out.getvalue()
    assert err.getvalue() == ""


def test_create_study_warns_when_every_pair_is_shown_beside_controls(imported, annotator) -> None:  # noqa: ANN001
    err = io.StringIO()
    call_command(
        "create_study",
        "lit2test",
        "--contexts",
        "2",
        "--annotators",
        "ann",
        "--naive-controls",
        "1",
        stdout=io.StringIO(),
        stderr=err,
    )
    assert "annotators can spot it by counting. Use --pairs-per-context" in err.getvalue()
