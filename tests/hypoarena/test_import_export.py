"""import_hypoarena / export_hypoarena: what is stored, line-numbered atomic errors, idempotence, the round trip."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from arena.models import Benchmark, JudgeRun, Participant
from hypoarena.importing import HypoArenaImportError, hypoarena_import, import_files
from hypoarena.models import ArenaVerdict, Case, Domain, Match, RubricScore, Submission
from hypoarena.services import match_orientation

from . import helpers as h

pytestmark = pytest.mark.django_db
TABLES = (Benchmark, Domain, Case, Participant, Submission, Match, JudgeRun, ArenaVerdict, RubricScore)


def run(name: str, *paths: Path) -> str:
    out = StringIO()
    call_command("import_hypoarena", name, *map(str, paths), stdout=out)
    return out.getvalue().strip()


def counts() -> dict[str, int]:
    return {model.__name__: model.objects.count() for model in TABLES}


def failure(name: str, *paths: Path) -> list[str]:
    before = counts()
    with pytest.raises(CommandError) as caught:
        run(name, *paths)
    assert counts() == before, "a refused import wrote something"
    return str(caught.value).splitlines()[1:]


def orientations(benchmark: Benchmark) -> set[tuple[str, str, str]]:
    return set(
        Match.objects.filter(case__benchmark=benchmark).values_list(
            "case__external_id", "first__participant__name", "second__participant__name"
        )
    )


def test_it_imports_every_file_and_stores_each_field(tmp_path: Path) -> None:
    out = run("arena-x", h.folder(tmp_path / "in"))
    assert out == (
        "created 2 domains, 3 cases, 3 participants, 9 submissions, 9 matches, 2 runs, 5 verdicts, 2 rubric scores in arena-x v1"
    )
    benchmark = Benchmark.objects.get(name="arena-x")
    assert benchmark.protocol == "hypoarena"
    assert dict(Domain.objects.values_list("name", "singleton")) == {"ops": False, "safety": True}
    c1 = Case.objects.get(external_id="c1")
    assert (c1.domain.name, c1.context, c1.reference_conclusion) == (
        "ops",
        "The service slowed down on Monday.",
        "A cache expired.",
    )
    assert Case.objects.get(external_id="c2").reference_conclusion == ""
    assert sorted(Submission.objects.filter(is_reference=True).values_list("case__external_id", flat=True)) == ["c1", "c2", "s1"]
    assert set(Submission.objects.filter(is_reference=True).values_list("participant__name", flat=True)) == {"Ref"}
    assert Submission.objects.get(case__external_id="c2", participant__name="Beta").pairs == [h.pair(0), h.pair(1), h.pair(2)]
    # The first verdict naming a match fixes which model is A in the original order (c1: Alpha; s1's reverse shows Beta as A).
    assert {("c1", "Alpha", "Beta"), ("c1", "Ref", "Alpha"), ("s1", "Ref", "Beta")} <= orientations(benchmark)
    assert len(orientations(benchmark)) == 9
    runs = {r.label: r for r in JudgeRun.objects.all()}
    assert {(r.judge_model, r.run_type, r.subjects, r.provider, r.status) for r in runs.values()} == {
        ("judge-x", "arena", "hypoarena", "recorded", "completed"),
        ("judge-x", "rubric", "hypoarena_rubric", "recorded", "completed"),
    }
    invalid = ArenaVerdict.objects.get(status="invalid")
    assert (invalid.verdict, invalid.order, invalid.raw_response, invalid.match.case.external_id) == (
        None,
        "original",
        "I cannot decide",
        "s1",
    )
    assert sorted(ArenaVerdict.objects.filter(status="accepted").values_list("verdict", flat=True)) == [
        "A=B",
        "A>>B",
        "A>B",
        "B>>A",
    ]
    single = RubricScore.objects.get(submission__case__external_id="s1")
    assert (single.grounding, single.insight, single.justification, single.breadth, single.distinctness, single.utility) == (
        [2],
        [3],
        [4],
        3,
        None,
        2,
    )
    multi = RubricScore.objects.get(submission__case__external_id="c1")
    assert (multi.grounding, multi.insight, multi.justification, multi.distinctness) == ([5, 3], [4, 3], [4, 2], 3)


def test_reimporting_the_same_files_changes_nothing(tmp_path: Path) -> None:
    folder = h.folder(tmp_path / "in")
    run("arena-x", folder)
    before = {model.__name__: list(model.objects.order_by("pk").values()) for model in TABLES}
    assert (
        run("arena-x", folder)
        == "nothing new: cases.jsonl, submissions.jsonl, verdicts.jsonl, rubric.jsonl already imported into arena-x v1"
    )
    assert {model.__name__: list(model.objects.order_by("pk").values()) for model in TABLES} == before


def test_a_later_import_adds_a_run_to_the_stored_matches(tmp_path: Path) -> None:
    run("arena-x", h.folder(tmp_path / "in"))
    second = [
        h.verdict("c2", "Alpha", "Beta", "original", "B>A", run_label="r2"),
        h.verdict("c1", "Beta", "Alpha", "reverse", "A=B", run_label="r2"),
    ]
    out = run("arena-x", h.write(tmp_path / "more" / "verdicts.jsonl", second))
    assert out == "created 1 runs, 2 verdicts in arena-x v1"
    assert ArenaVerdict.objects.filter(run__label="r2").count() == 2


def test_every_problem_names_file_line_field_value_and_valid_values_and_nothing_is_written(tmp_path: Path) -> None:
    cases = h.cases()
    cases[1]["singleton"] = "yes"
    submissions = h.submissions()
    submissions[7]["pairs"] = [h.pair(0), h.pair(1)]  # s1 (singleton domain), Beta
    verdicts = [
        h.verdict("c1", "Alpha", "Beta", "original", "A>B"),
        h.verdict("c1", "Ref", "Beta", "original", "A>>>B"),
        h.verdict("c1", "Ref", "Alpha", "forward", "A>B"),
        h.verdict("c1", "Alpha", "Gamma", "original", "A>B"),
        h.verdict("c9", "Alpha", "Beta", "original", "A>B"),
        "{not json",
    ]
    rubric = h.rubric()
    rubric[0]["pairs"][0]["g"] = 6
    rubric[1]["d"] = 3
    problems = failure(
        "arena-x", h.folder(tmp_path / "in", cases=cases, submissions=submissions, verdicts=verdicts, rubric=rubric)
    )
    assert problems == [
        '  cases.jsonl, line 2: singleton: must be true or false, got "yes"',
        '  verdicts.jsonl, line 2: verdict: must be one of "A>>B", "A>B", "A=B", "B>A", "B>>A"; got "A>>>B"',
        '  verdicts.jsonl, line 3: order: must be one of "original", "reverse"; got "forward"',
        "  verdicts.jsonl, line 6: invalid JSON (Expecting property name enclosed in double quotes at column 2); truncated line?",
        "  rubric.jsonl, line 1: pairs[0].g: must be a whole number from 1 to 5, got 6",
        '  submissions.jsonl, line 8: pairs: has 2 pairs; case "s1" is in singleton domain "safety", where a submission has exactly 1',
        '  verdicts.jsonl, line 4: model_b: "Gamma" has no submission for case "c1"; the models with one are "Alpha", "Beta", "Ref"',
        '  verdicts.jsonl, line 5: case_id: unknown case "c9"; the cases are "c1", "c2", "s1"',
        "  rubric.jsonl, line 2: d: must be null when K = 1 (directional distinctness does not apply to one pair); got 3",
    ]
    assert not Benchmark.objects.exists()


def test_one_bad_line_in_the_last_file_keeps_every_other_file_out(tmp_path: Path) -> None:
    rubric = h.rubric()
    rubric[0]["d"] = None  # K = 2: distinctness applies
    problems = failure("arena-x", h.folder(tmp_path / "in", rubric=rubric))
    assert problems == ["  rubric.jsonl, line 1: d: missing; a whole number from 1 to 5 (the submission has K = 2 pairs)"]


def test_a_bad_line_in_a_later_import_leaves_the_stored_benchmark_as_it_was(tmp_path: Path) -> None:
    run("arena-x", h.folder(tmp_path / "in"))
    lines = [
        h.verdict("c2", "Alpha", "Beta", "original", "A>B", run_label="r2"),
        h.verdict("c2", "Alpha", "Ref", "original", "A>B", judge=""),
    ]
    assert failure("arena-x", h.write(tmp_path / "more" / "verdicts.jsonl", lines)) == ["  verdicts.jsonl, line 2: judge: empty"]
    assert not JudgeRun.objects.filter(label="r2").exists()


def test_the_reverse_order_must_show_the_other_model_as_a(tmp_path: Path) -> None:
    lines = [h.verdict("c1", "Alpha", "Beta", "original", "A>B"), h.verdict("c1", "Alpha", "Beta", "reverse", "A>B")]
    assert failure("arena-x", h.folder(tmp_path / "in", verdicts=lines)) == [
        '  verdicts.jsonl, line 2: model_a: is "Alpha", but in the reverse order of case "c1" the match of "Alpha" and "Beta" shows '
        '"Beta" as A (line 1: "Alpha" is A in the original order, "Beta" in the reverse); swap model_a and model_b, or the order'
    ]


def test_a_second_accepted_verdict_for_a_run_match_and_order_is_refused(tmp_path: Path) -> None:
    lines = [h.verdict("c1", "Alpha", "Beta", "original", "A>B"), h.verdict("c1", "Alpha", "Beta", "original", "A>B")]
    assert failure("arena-x", h.folder(tmp_path / "in", verdicts=lines)) == [
        '  verdicts.jsonl, line 2: verdict: a second accepted verdict for this match and order in run "r1" of "judge-x" '
        "(the first is on line 1); one per run, match and order"
    ]


def test_stored_content_is_never_replaced_by_an_import(tmp_path: Path) -> None:
    run("arena-x", h.folder(tmp_path / "in"))
    cases = h.cases()
    cases[0]["context"] = "Another text."
    verdicts = h.verdicts()
    verdicts[0]["verdict"] = "B>A"
    assert failure("arena-x", h.folder(tmp_path / "again", cases=cases, verdicts=verdicts)) == [
        '  cases.jsonl, line 1: context: case "c1" is already in arena-x v1 with a different context; give the new case its own case_id',
        '  verdicts.jsonl, line 1: verdict: is "B>A", but run "r1" of "judge-x" already has "A>B" for this match and order; '
        "a run's verdict cannot be replaced by an import",
    ]


def test_a_benchmark_of_another_protocol_is_refused(tmp_path: Path) -> None:
    Benchmark.objects.create(name="lit")
    with pytest.raises(CommandError, match=r"^lit v1 is a Lit2Test benchmark; import HypoArena files into a new benchmark name"):
        run("lit", h.folder(tmp_path / "in"))


def test_files_are_recognised_by_name(tmp_path: Path) -> None:
    folder = h.folder(tmp_path / "in")
    assert import_files([folder / "verdicts.jsonl", folder / "cases.jsonl"]) == {
        "verdicts": folder / "verdicts.jsonl",
        "cases": folder / "cases.jsonl",
    }
    other = h.write(tmp_path / "notes.jsonl", [{}])
    with pytest.raises(CommandError, match="notes.jsonl: not a HypoArena file name; name files cases.jsonl, submissions.jsonl"):
        run("arena-x", other)


def test_the_seeded_orientation_does_not_depend_on_the_order_models_are_named() -> None:
    seen = set()
    for i in range(40):
        one = match_orientation(7, f"case-{i}", "Alpha", "Beta")
        assert one == match_orientation(7, f"case-{i}", "Beta", "Alpha") and set(one) == {"Alpha", "Beta"}
        seen.add(one)
    assert len(seen) == 2  # both orientations occur


def test_export_then_import_as_a_new_benchmark_gives_the_same_benchmark(tmp_path: Path) -> None:
    hypoarena_import(name="first", files=import_files([h.folder(tmp_path / "in")]))
    call_command("export_hypoarena", "first", str(tmp_path / "out1"), stdout=StringIO())
    run("second", tmp_path / "out1")
    call_command("export_hypoarena", "second", str(tmp_path / "out2"), stdout=StringIO())
    names = sorted(p.name for p in (tmp_path / "out1").iterdir())
    assert names == ["cases.jsonl", "rubric.jsonl", "submissions.jsonl", "verdicts.jsonl"]
    for name in names:
        assert (tmp_path / "out1" / name).read_bytes() == (tmp_path / "out2" / name).read_bytes(), name
    first, second = Benchmark.objects.get(name="first"), Benchmark.objects.get(name="second")
    assert orientations(first) == orientations(second) and len(orientations(first)) == 9
    # The export says what was imported: the hand-written lines, in the export's key order.
    exported = [json.loads(line) for line in (tmp_path / "out1" / "verdicts.jsonl").read_text().splitlines()]
    assert exported[-1] == {
        "case_id": "s1",
        "model_a": "Beta",
        "model_b": "Ref",
        "order": "reverse",
        "verdict": "A>>B",
        "judge": "judge-x",
        "run_label": "r1",
    }
    assert {
        "case_id": "s1",
        "model_a": "Ref",
        "model_b": "Beta",
        "order": "original",
        "verdict": None,
        "judge": "judge-x",
        "run_label": "r1",
        "status": "invalid",
        "raw": "I cannot decide",
    } in exported
    with pytest.raises(HypoArenaImportError):  # the same lines with a changed verdict are refused by the copy too
        bad = [dict(exported[0], verdict="B>>A" if exported[0]["verdict"] != "B>>A" else "A>>B")]
        hypoarena_import(name="second", files={"verdicts": h.write(tmp_path / "bad" / "verdicts.jsonl", bad)})


def test_a_list_or_object_id_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    cases = h.cases()
    cases[0]["case_id"] = ["c1"]
    submissions = h.submissions()
    submissions[0]["model"] = {"name": "Alpha"}
    problems = failure("arena-x", h.folder(tmp_path / "in", cases=cases, submissions=submissions))
    assert problems[:2] == [
        "  cases.jsonl, line 1: case_id: must be text, got array",
        "  submissions.jsonl, line 1: model: must be text, got object",
    ]
    # The lines naming c1 are unknown now; the refused id is not offered as a case.
    assert problems[2] == '  submissions.jsonl, line 2: case_id: unknown case "c1"; the cases are "c2", "s1"'
