from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from arena.models import Batch, Benchmark, CanonicalPair, Context, JudgeRun, OrderedJudgment, Paper, Participant, Proposal
from lit2test.release import ReleaseImportError, release_import

from . import builders as b

pytestmark = pytest.mark.django_db

TABLES = (Benchmark, Batch, Context, Paper, Participant, Proposal, CanonicalPair, JudgeRun, OrderedJudgment)


def table_counts() -> dict[str, int]:
    return {model.__name__: model.objects.count() for model in TABLES}


def snapshot_rows() -> list[tuple]:
    """Everything stored, as comparable tuples (public ids included)."""
    rows: list[tuple] = []
    for j in OrderedJudgment.objects.select_related("run", "pair", "winner", "shown_a"):
        rows.append(
            ("j", j.run.label, j.pair.internal_key, j.order, j.winner and j.winner.name, j.is_tie, j.verdict, j.confidence)
        )
    for p in CanonicalPair.objects.select_related("participant_a", "participant_b", "context"):
        rows.append(("p", p.internal_key, p.public_id, p.participant_a.name, p.participant_b.name, p.context.external_id))
    return sorted(rows, key=repr)


# --------------------------------------------------------------------- the real sample


def test_it_imports_the_release_sample_with_the_published_counts(release_dir: Path) -> None:
    summary = release_import(directory=release_dir)
    benchmark = summary.benchmark
    assert (benchmark.name, benchmark.version, benchmark.canonical_judge) == ("lit2test", "1", "Gemini-3.1-Pro-Preview")
    assert benchmark.contexts.count() == 200
    assert benchmark.contexts.filter(has_text=True).count() == 13
    assert Paper.objects.count() == 52
    assert sorted(benchmark.participants.values_list("name", flat=True)) == [
        "Claude-Sonnet-4.6",
        "DeepSeek-V3.2",
        "GLM-5",
        "GPT 5.2",
    ]
    assert Proposal.objects.count() == 52
    assert benchmark.pairs.count() == 1200
    assert OrderedJudgment.objects.count() == 2400
    assert benchmark.batches.count() == 5
    assert summary.line() == (
        "created 200 contexts (13 with text), 52 papers, 4 participants, 52 proposals, 1200 pairs, "
        "2400 ordered judgments in 1 run(s) of lit2test v1"
    )
    run = JudgeRun.objects.get()
    assert (run.provider, run.is_canonical, run.status) == ("recorded", True, "completed")


def test_a_second_import_creates_nothing_and_says_so(release_dir: Path) -> None:
    release_import(directory=release_dir)
    before = table_counts()
    rows = snapshot_rows()
    summary = release_import(directory=release_dir)
    assert table_counts() == before
    assert snapshot_rows() == rows
    assert summary.line().startswith("nothing new:")


def test_imported_verdicts_match_the_file_line_by_line(release_dir: Path) -> None:
    benchmark = release_import(directory=release_dir).benchmark
    lines = [json.loads(line) for line in (release_dir / "corrected_folded_pairs.jsonl").read_text().splitlines()]
    stored = {
        (j.pair.internal_key, j.order): j.winner.name
        for j in OrderedJudgment.objects.select_related("pair", "winner").filter(run__benchmark=benchmark)
    }
    for line in lines:
        assert stored[(line["pair_id"], "original")] == line["gemini_original_winner"]
        assert stored[(line["pair_id"], "reverse")] == line["gemini_reverse_winner"]
    corrected = OrderedJudgment.objects.filter(metadata__reverse_judgment_source="correction65").count()
    assert corrected == 65


def test_public_pair_ids_never_name_a_model(release_dir: Path) -> None:
    release_import(directory=release_dir)
    names = [n.lower() for n in Participant.objects.values_list("name", flat=True)]
    fragments = {part for n in names for part in n.replace("-", " ").replace(".", " ").split() if len(part) > 2}
    for public_id, internal in CanonicalPair.objects.values_list("public_id", "internal_key"):
        assert not any(f in public_id.lower() for f in fragments)
        assert public_id not in internal
    assert CanonicalPair.objects.values("public_id").distinct().count() == 1200


def test_the_release_flags_are_kept_as_metadata(release_dir: Path) -> None:
    release_import(directory=release_dir)
    flagged = Proposal.objects.filter(release_metadata__lit2test_valid=False).select_related("participant", "context")
    assert flagged.count() == 4
    claude = [p for p in flagged if p.participant.name == "Claude-Sonnet-4.6"]
    assert len(claude) == 1 and "_003_" in claude[0].context.external_id
    # All six fields are present and non-empty in the sample, so the schema passes every proposal.
    assert Proposal.objects.exclude(validation_status="valid").count() == 0
    assert set(Proposal.objects.first().release_metadata["lit2test_flags"]) >= {"weak_decisive_metric"}


# --------------------------------------------------------------------- proposal validation


def test_proposal_schema_problems_are_recorded_with_specific_reasons(tmp_path: Path) -> None:
    files = b.small_release()
    cid = "ctx_001__v1"
    files["proposals.jsonl"] = [
        b.proposal(cid, "Alpha 1"),
        b.proposal(cid, "Beta-2", hypothesis="   "),
        b.proposal(cid, "Gamma-3", minimal_test=7, decisive_metric="x" * 6001),
    ]
    bad = b.proposal("ctx_002__v1", "Alpha 1")
    del bad["falsifying_result"]
    files["proposals.jsonl"].append(bad)
    release_import(directory=b.write(tmp_path, files))
    reasons = {
        (p.participant.name, p.context.external_id): (p.validation_status, [(e["field"], e["code"]) for e in p.validation_errors])
        for p in Proposal.objects.select_related("participant", "context")
    }
    assert reasons[("Alpha 1", cid)] == ("valid", [])
    assert reasons[("Beta-2", cid)] == ("invalid", [("hypothesis", "empty")])
    assert reasons[("Gamma-3", cid)] == ("invalid", [("minimal_test", "wrong_type"), ("decisive_metric", "too_long")])
    assert reasons[("Alpha 1", "ctx_002__v1")] == ("invalid", [("falsifying_result", "missing")])


# --------------------------------------------------------------------- bad input


def assert_rejected(directory: Path, *expected: str) -> str:
    """The import fails naming every expected fragment, and the database is exactly as it was."""
    before = table_counts()
    rows = snapshot_rows()
    with pytest.raises(ReleaseImportError) as caught:
        release_import(directory=directory)
    message = str(caught.value)
    for fragment in expected:
        assert fragment in message, f"{fragment!r} not in:\n{message}"
    assert table_counts() == before
    assert snapshot_rows() == rows
    return message


@pytest.fixture
def already_imported(tmp_path: Path) -> None:
    """A benchmark already holds data, so 'exactly as it was' is not just 'empty'."""
    release_import(directory=b.write(tmp_path / "first", b.small_release()))


def test_truncated_json_is_rejected_with_its_line(tmp_path: Path, already_imported: None) -> None:
    files = b.small_release()
    text = "".join(json.dumps(r) + "\n" for r in files["corrected_folded_pairs.jsonl"])
    files["corrected_folded_pairs.jsonl"] = text + '{"pair_id": "ctx_003__v1__Alpha_1__vs__Beta-2", "context_id": "ctx_0'
    assert_rejected(b.write(tmp_path / "bad", files), "corrected_folded_pairs.jsonl, line 7", "invalid JSON")


def test_a_missing_required_field_is_rejected_naming_file_line_and_field(tmp_path: Path, already_imported: None) -> None:
    files = b.small_release()
    del files["contexts.jsonl"][1]["research_context"]
    assert_rejected(b.write(tmp_path / "bad", files), "contexts.jsonl, line 2: research_context: missing")


def test_an_empty_required_field_is_rejected(tmp_path: Path, already_imported: None) -> None:
    files = b.small_release()
    files["corrected_folded_pairs.jsonl"][3]["context_id"] = ""
    assert_rejected(b.write(tmp_path / "bad", files), "corrected_folded_pairs.jsonl, line 4: context_id: empty")


def test_an_empty_paper_title_is_rejected(tmp_path: Path, already_imported: None) -> None:
    files = b.small_release()
    files["contexts.jsonl"][0]["papers"][2]["title"] = ""
    assert_rejected(b.write(tmp_path / "bad", files), "contexts.jsonl, line 1: papers[2].title: empty")


def test_an_unknown_model_in_a_verdict_is_rejected(tmp_path: Path, already_imported: None) -> None:
    files = b.small_release()
    files["judgments.jsonl"] = [
        b.judgment("ctx_001__v1", "Alpha 1", "Beta-2", "original", "A"),
        b.judgment("ctx_001__v1", "Delta-9", "Beta-2", "reverse", "B"),
    ]
    assert_rejected(b.write(tmp_path / "bad", files), "judgments.jsonl, line 2: system_a: unknown model 'Delta-9'")


def test_a_winner_outside_the_pair_is_rejected(tmp_path: Path, already_imported: None) -> None:
    files = b.small_release()
    files["corrected_folded_pairs.jsonl"][2]["gemini_reverse_winner"] = "Alpha 1"  # pair is Beta-2 vs Gamma-3
    assert_rejected(
        b.write(tmp_path / "bad", files),
        "corrected_folded_pairs.jsonl, line 3: gemini_reverse_winner: 'Alpha 1' is not one of the pair's models",
    )


def test_a_judgment_whose_winning_system_contradicts_its_label_is_rejected(tmp_path: Path, already_imported: None) -> None:
    files = b.small_release()
    line = b.judgment("ctx_001__v1", "Alpha 1", "Beta-2", "original", "A")
    line["winning_system"] = "Gamma-3"
    files["judgments.jsonl"] = [line]
    assert_rejected(b.write(tmp_path / "bad", files), "judgments.jsonl, line 1: winning_system:")


def test_duplicate_lines_that_disagree_are_rejected(tmp_path: Path, already_imported: None) -> None:
    files = b.small_release()
    twin = dict(files["corrected_folded_pairs.jsonl"][0])
    twin["gemini_original_confidence"] = "low"
    files["corrected_folded_pairs.jsonl"].append(twin)
    assert_rejected(
        b.write(tmp_path / "bad", files),
        "corrected_folded_pairs.jsonl, line 7: confidence: duplicate pair disagrees with corrected_folded_pairs.jsonl, line 1",
    )


def test_identical_duplicate_lines_are_accepted_once(tmp_path: Path) -> None:
    files = b.small_release()
    files["corrected_folded_pairs.jsonl"].append(files["corrected_folded_pairs.jsonl"][0])
    summary = release_import(directory=b.write(tmp_path, files))
    assert summary.created["judgments"] == 12


def test_a_stability_label_that_contradicts_the_verdicts_is_rejected(tmp_path: Path, already_imported: None) -> None:
    files = b.small_release()
    files["corrected_folded_pairs.jsonl"][1]["stability_label"] = "order-stable"
    assert_rejected(b.write(tmp_path / "bad", files), "line 2: stability_label: says 'order-stable'")


def test_a_bad_last_line_after_many_good_ones_writes_nothing(tmp_path: Path, release_dir: Path) -> None:
    lines = (release_dir / "corrected_folded_pairs.jsonl").read_text().splitlines()
    last = json.loads(lines[-1])
    last["gemini_original_winner"] = "Nobody"
    (tmp_path / "corrected_folded_pairs.jsonl").write_text("\n".join([*lines[:-1], json.dumps(last)]) + "\n")
    message = assert_rejected(tmp_path, "corrected_folded_pairs.jsonl, line 1200: gemini_original_winner: 'Nobody'")
    assert Benchmark.objects.count() == 0, message


def test_changed_text_on_reimport_is_a_conflict_not_an_overwrite(tmp_path: Path, already_imported: None) -> None:
    files = b.small_release()
    files["proposals.jsonl"][4]["hypothesis"] = "A rewritten hypothesis."
    assert_rejected(b.write(tmp_path / "bad", files), "proposals.jsonl, line 5: content: proposal of 'Beta-2'")


def test_a_changed_verdict_on_reimport_is_a_conflict(tmp_path: Path, already_imported: None) -> None:
    files = b.small_release()
    row = files["corrected_folded_pairs.jsonl"][0]
    row["gemini_original_winner"] = "Beta-2"
    row["stability_label"], row["folded_winner"] = "order-unstable", "consistency_tie"
    assert_rejected(b.write(tmp_path / "bad", files), "line 1: winner:", "already holds a different original verdict")


def test_a_folder_without_release_files_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    assert_rejected(tmp_path, "no release files found")


# --------------------------------------------------------------------- judge and version rules


def test_second_judge_lines_keep_the_side_and_the_verdict(tmp_path: Path) -> None:
    files = b.small_release()
    files["judgments.jsonl"] = [
        b.judgment("ctx_001__v1", "Beta-2", "Alpha 1", "original", "B"),
        b.judgment("ctx_001__v1", "Alpha 1", "Beta-2", "reverse", "tie"),
    ]
    release_import(directory=b.write(tmp_path, files))
    run = JudgeRun.objects.get(judge_model="Judge-X")
    assert (run.is_canonical, run.label) == (False, "judgments")
    original, reverse = run.judgments.select_related("shown_a", "winner").order_by("order")
    assert (original.shown_a.name, original.verdict, original.winner.name) == ("Beta-2", "B", "Alpha 1")
    assert (reverse.shown_a.name, reverse.verdict, reverse.winner, reverse.is_tie) == ("Alpha 1", "TIE", None, True)
    assert (original.latency_seconds, original.main_reason) == (1.5, "A is more falsifiable.")


def test_a_canonical_run_of_another_judge_needs_a_new_version(tmp_path: Path, already_imported: None) -> None:
    files = b.small_release()
    line = b.judgment("ctx_001__v1", "Alpha 1", "Beta-2", "original", "A", judge="Other-Judge")
    line["is_canonical"] = True
    del files["corrected_folded_pairs.jsonl"]
    files["judgments.jsonl"] = [line]
    assert_rejected(b.write(tmp_path / "bad", files), "judge_model:", "needs a new benchmark version")
    release_import(directory=tmp_path / "bad", version="2")
    assert Benchmark.objects.get(version="2").canonical_judge == "Other-Judge"


def test_orientation_is_seeded_and_deterministic(tmp_path: Path) -> None:
    from arena.orientation import orientation_flipped

    keys = [f"ctx_{i}__A__vs__B" for i in range(400)]
    first = [orientation_flipped(7, k) for k in keys]
    assert first == [orientation_flipped(7, k) for k in keys]
    assert 150 < sum(first) < 250  # both orientations occur, about evenly
    assert first != [orientation_flipped(8, k) for k in keys]
    release_import(directory=b.write(tmp_path, b.small_release()))
    for pair in CanonicalPair.objects.select_related("participant_a", "participant_b"):
        expected_a = sorted((pair.participant_a.name, pair.participant_b.name))[
            1 if orientation_flipped(20260101, pair.internal_key) else 0
        ]
        assert pair.participant_a.name == expected_a


# --------------------------------------------------------------------- the command


def test_the_command_prints_a_one_line_summary(release_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    call_command("import_lit2test", str(release_dir), "--benchmark", "sample", "--version", "3")
    out = capsys.readouterr().out.strip().splitlines()
    assert out == [
        "created 200 contexts (13 with text), 52 papers, 4 participants, 52 proposals, 1200 pairs, "
        "2400 ordered judgments in 1 run(s) of sample v3"
    ]
    assert Benchmark.objects.filter(name="sample", version="3").exists()


def test_the_command_fails_with_the_problem(tmp_path: Path) -> None:
    files = b.small_release()
    files["proposals.jsonl"][0]["model"] = ""
    with pytest.raises(CommandError, match=r"proposals.jsonl, line 1: model: empty"):
        call_command("import_lit2test", str(b.write(tmp_path, files)))
    assert table_counts() == dict.fromkeys(table_counts(), 0)


def test_a_pair_id_spelt_otherwise_for_a_pair_already_held_is_refused_naming_the_held_one(
    tmp_path: Path, already_imported: None
) -> None:
    """One pair per context and two models (an import review of 2026-12-06): a second judge's file that kept the space
    of "Alpha 1" in its pair ids made a second pair of the same two proposals, and that judge's verdicts matched
    nothing of the first judge's."""
    files = b.small_release()
    spelt = "ctx_001__v1__Alpha 1__vs__Beta-2"
    files["judgments.jsonl"] = [
        b.judgment("ctx_001__v1", "Alpha 1", "Beta-2", "original", "A") | {"pair_id": spelt},
        b.judgment("ctx_001__v1", "Beta-2", "Alpha 1", "reverse", "B") | {"pair_id": spelt},
    ]
    assert_rejected(
        b.write(tmp_path / "second", files),
        "judgments.jsonl, line 1: pair_id:",
        "which pair 'ctx_001__v1__Alpha_1__vs__Beta-2' already does (one pair per context and two models); use that pair_id",
    )


def test_two_pair_ids_for_one_pair_in_the_same_files_are_refused(tmp_path: Path) -> None:
    files = b.small_release()
    files["judgments.jsonl"] = [
        b.judgment("ctx_002__v1", "Gamma-3", "Beta-2", "original", "A") | {"pair_id": "ctx_002__v1__other-name"},
        b.judgment("ctx_002__v1", "Beta-2", "Gamma-3", "reverse", "B") | {"pair_id": "ctx_002__v1__other-name"},
    ]
    message = assert_rejected(b.write(tmp_path, files), "judgments.jsonl, line 1: pair_id: pair 'ctx_002__v1__other-name'")
    assert "'ctx_002__v1__Beta-2__vs__Gamma-3' already does" in message
    assert Benchmark.objects.count() == 0


def test_pairing_new_proposals_skips_a_pair_held_under_another_id(tmp_path: Path) -> None:
    from lit2test.generation import pairs_create_for_contexts

    files = b.small_release()
    files["corrected_folded_pairs.jsonl"][0]["pair_id"] = "ctx_001__v1__custom-id"  # Alpha 1 vs Beta-2, its own id
    benchmark = release_import(directory=b.write(tmp_path, files)).benchmark
    context = benchmark.contexts.get(external_id="ctx_001__v1")
    assert pairs_create_for_contexts(benchmark=benchmark, context_ids={context.pk}) == 0  # it made a second pair
    assert benchmark.pairs.filter(context=context).count() == 3


# --------------------------------------------------------------------- names that only look the same


@pytest.mark.parametrize(
    ("where", "change", "expected"),
    [
        ("proposals", {"model": "Alpha 1 "}, '"Alpha 1 " starts or ends with white space'),
        ("contexts", {"context_id": "ctx_001__v1 "}, '"ctx_001__v1 " starts or ends with white space'),
        ("proposals", {"model": "alpha 1"}, "model 'alpha 1' differs from 'Alpha 1' only by case or Unicode form"),
        ("proposals", {"model": "Ａlpha 1"}, "model 'Ａlpha 1' differs from 'Alpha 1' only by case or Unicode form"),
    ],
)
def test_an_id_or_a_model_name_that_only_looks_like_a_stored_one_is_refused(
    tmp_path: Path, already_imported: None, where: str, change: dict, expected: str
) -> None:
    """An import review of 2026-12-06: "Alpha 1 " or "alpha 1" made a model of its own that reads as "Alpha 1", and a
    context id with a trailing space a second context."""
    files = b.small_release()
    files[f"{where}.jsonl"].append(dict(files[f"{where}.jsonl"][0], **change))
    assert_rejected(b.write(tmp_path / "again", files), expected)


def test_the_command_refuses_a_benchmark_name_or_version_with_white_space_around_it(release_dir: Path) -> None:
    for option, value in (("--benchmark", "lit2test "), ("--version", " 1")):
        with pytest.raises(CommandError, match="starts or ends with white space"):
            call_command("import_lit2test", str(release_dir), option, value)
    assert Benchmark.objects.count() == 0


@pytest.mark.parametrize("command", ["import_hypoarena", "import_reconstruction", "import_intrinsic"])
def test_the_protocol_importers_refuse_a_benchmark_name_with_white_space_around_it(tmp_path: Path, command: str) -> None:
    with pytest.raises(CommandError, match="starts or ends with white space"):
        call_command(command, "arena-demo ", str(tmp_path))
    assert Benchmark.objects.count() == 0


def test_a_problem_of_a_folded_line_is_reported_once_not_once_per_order(tmp_path: Path) -> None:
    files = b.small_release()
    files["corrected_folded_pairs.jsonl"].append(b.folded("ctx_001__v1", "Alpha 1", "Mystery", "Alpha 1", "Alpha 1"))
    message = assert_rejected(b.write(tmp_path, files), "line 7: model_pair: unknown model 'Mystery'")
    assert message.count("unknown model 'Mystery'") == 1, message
    assert "(1 problem(s))" in message


def test_a_benchmark_that_already_holds_two_pairs_of_one_context_and_models_still_takes_its_files_again(
    tmp_path: Path,
) -> None:
    """A review of this change: pairs stored twice before the rule (by an older import) made every later import of
    their verdicts impossible. A key already stored is taken as stored."""
    files = b.small_release()
    benchmark = release_import(directory=b.write(tmp_path / "first", files)).benchmark
    pair = benchmark.pairs.get(internal_key="ctx_001__v1__Alpha_1__vs__Beta-2")
    CanonicalPair.objects.create(  # as an import before the rule could leave it
        benchmark=benchmark,
        context=pair.context,
        participant_a=pair.participant_b,
        participant_b=pair.participant_a,
        internal_key="ctx_001__v1__Beta-2__vs__Alpha_1",
        public_id="0123456789abcdef",
    )
    files["corrected_folded_pairs.jsonl"].append(
        b.folded("ctx_001__v1", "Alpha 1", "Beta-2", "Alpha 1", "Alpha 1") | {"pair_id": "ctx_001__v1__Beta-2__vs__Alpha_1"}
    )
    summary = release_import(directory=b.write(tmp_path / "again", files))
    assert summary.created["pairs"] == 0 and summary.created["judgments"] == 2


def test_a_name_stored_with_white_space_around_it_before_the_rule_is_still_taken(tmp_path: Path, already_imported: None) -> None:
    """A review of this change: a model stored as "Gamma-3 " by an older import could not be named at all (refused
    with white space, a new model without)."""
    benchmark = Benchmark.objects.get()
    Participant.objects.create(benchmark=benchmark, name="Delta-4 ")
    files = b.small_release()
    files["proposals.jsonl"].append(dict(files["proposals.jsonl"][0], model="Delta-4 "))
    summary = release_import(directory=b.write(tmp_path / "again", files))
    assert summary.created["proposals"] == 1 and summary.created["participants"] == 0
