"""Import: line-numbered problems naming file, field, value and what is valid; all or nothing; idempotent; recusal
enforced. Export: importing it into a new benchmark reproduces the data and the frozen hashes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from arena.models import Benchmark
from reconstruction.importing import ReconstructionImportError, import_files, reconstruction_import
from reconstruction.models import BibliographyFreeze, Hypothesis, MatchLabel, Reference, SeedPaper, TournamentRecord
from reconstruction.services import ReconstructionError

from . import helpers as h

pytestmark = pytest.mark.django_db


def problems_of(folder: Path) -> list[str]:
    with pytest.raises(ReconstructionImportError) as caught:
        reconstruction_import(name="rec", files=import_files(folder))
    return [str(p) for p in caught.value.problems]


def nothing_stored() -> bool:
    return not (
        Benchmark.objects.exists() or SeedPaper.objects.exists() or Reference.objects.exists() or Hypothesis.objects.exists()
    )


def test_bad_lines_are_named_by_file_line_field_value_and_valid_values_and_nothing_is_written(tmp_path: Path) -> None:
    refs = h.references()
    refs[1]["published"] = "10/07/2020"
    refs[2]["anon_id"] = "X6"
    labels = h.labels()
    labels[1]["label"] = "maybe"
    problems = problems_of(h.folder(tmp_path, references=refs, labels=labels))
    assert problems == [
        'references.jsonl, line 2: published: must be a date "YYYY-MM-DD", "YYYY-MM", "YYYY" or null (undated), got "10/07/2020"',
        'references.jsonl, line 3: anon_id: must be "R" and a number from 1 (R1, R2, ...), got "X6"; leave it out to have one drawn',
        'labels.jsonl, line 2: label: must be one of "match", "no_match", got "maybe"; one of "match", "no_match" (or "recused": true)',
    ]
    assert nothing_stored()


def test_references_of_unknown_seeds_and_citations_outside_the_frozen_bibliography_are_refused_atomically(tmp_path: Path) -> None:
    refs = h.references() + [{"seed_id": "s9", "ref_id": "Z", "title": "t", "published": "2020-01-01"}]
    hyps = h.hypotheses()
    hyps[0]["cited"] = ["R2", "R1"]  # R2 is the same-day reference: excluded, so not citable
    problems = problems_of(h.folder(tmp_path, references=refs, hypotheses=hyps, labels=[], tournament=[]))
    assert problems == [
        'references.jsonl, line 11: seed_id: unknown seed "s9"; the seeds are "s1", "s2"',
    ]
    assert nothing_stored()
    problems = problems_of(h.folder(tmp_path, references=h.references(), hypotheses=hyps, labels=[], tournament=[]))
    assert problems == [
        'hypotheses.jsonl, line 1: cited: cites "R2", not in the frozen bibliography of seed "s1"; its ids are "R1", "R3", "R6" '
        '(or mark the hypothesis "valid": false with the reason)'
    ]
    assert nothing_stored()  # the seeds and references written before the check were rolled back


def test_hypotheses_of_a_seed_that_is_not_frozen_are_refused_with_the_reason(tmp_path: Path) -> None:
    hyps = [{"seed_id": "s2", "model": "Alpha", "family": "alpha", "slot": 1, "title": "t", "summary": "s", "cited": ["R1"]}]
    problems = problems_of(h.folder(tmp_path, hypotheses=hyps, labels=[], tournament=[]))
    assert len(problems) == 1 and problems[0].startswith(
        "hypotheses.jsonl, line 1: seed_id: seed \"s2\" has no frozen bibliography (seed 's2' has 2 eligible reference(s) of 3"
    )


def test_a_judge_never_labels_its_own_family_and_recusal_is_missing_not_no_match(tmp_path: Path) -> None:
    labels = h.labels()
    labels[2] = labels[2] | {"label": "no_match", "recused": False}  # Alpha-J labelling Alpha
    labels.append(
        {
            "seed_id": "s1",
            "model": "Beta",
            "slot": 2,
            "judge": "Gamma-J",
            "judge_family": "gamma",
            "run_label": "m1",
            "label": None,
            "recused": True,
        }
    )
    problems = problems_of(h.folder(tmp_path, labels=labels))
    assert problems == [
        'labels.jsonl, line 3: recused: judge "Alpha-J" is of family "alpha", the proposer\'s; a judge never labels its own family\'s '
        'hypotheses: record "recused": true with no label',
        'labels.jsonl, line 5: recused: is true, but judge family "gamma" is not the proposer\'s ("beta"); recusal is for the proposer\'s own family only',
    ]
    reconstruction_import(name="rec", files=import_files(h.folder(tmp_path / "ok")))
    recused = MatchLabel.objects.get(judge="Alpha-J", hypothesis__participant__name="Alpha")
    assert recused.recused and recused.label is None


def test_duplicate_slots_repeated_hypotheses_and_labels_of_invalid_hypotheses_are_refused(tmp_path: Path) -> None:
    hyps = h.hypotheses()
    hyps[1] = hyps[1] | {"title": hyps[0]["title"], "summary": hyps[0]["summary"]}
    hyps.append(dict(hyps[2]))
    labels = h.labels() + [
        {
            "seed_id": "s1",
            "model": "Beta",
            "slot": 5,
            "judge": "Gamma-J",
            "judge_family": "gamma",
            "run_label": "m1",
            "label": "match",
        }
    ]
    problems = problems_of(h.folder(tmp_path, hypotheses=hyps, labels=labels))
    assert problems == [
        'hypotheses.jsonl, line 2: title, summary: repeats slot 1 of "Alpha" for seed "s1"; the five hypotheses are distinct',
        'hypotheses.jsonl, line 11: slot: "Alpha" already has slot 3 for seed "s1" on line 3; one hypothesis per slot',
        'labels.jsonl, line 5: slot: the slot-5 hypothesis of "Beta" for seed "s1" is invalid (schema: no cited reference after 2 retries); invalid hypotheses are not judged',
    ]


def test_an_import_is_idempotent_and_a_changed_reference_is_refused(tmp_path: Path) -> None:
    first = reconstruction_import(name="rec", files=import_files(h.folder(tmp_path)))
    assert dict(first.created) == {
        "seeds": 2,
        "references": 10,
        "freezes": 1,
        "participants": 2,
        "hypotheses": 10,
        "labels": 4,
        "tournament lines": 1,
    }
    second = reconstruction_import(name="rec", files=import_files(h.folder(tmp_path)))
    assert not any(second.created.values()) and second.line().startswith("nothing new")
    refs = h.references()
    refs[0]["title"] = "Changed"
    assert problems_of(h.folder(tmp_path, references=refs)) == [
        'references.jsonl, line 1: title: reference "W100" of seed "s1" is already stored with a different title; a stored reference cannot change'
    ]


def test_anonymous_ids_are_drawn_when_not_given(tmp_path: Path) -> None:
    refs = [{k: v for k, v in r.items() if k != "anon_id"} for r in h.references()]
    reconstruction_import(
        name="rec", files=import_files(h.folder(tmp_path, references=refs, hypotheses=[], labels=[], tournament=[]))
    )
    ids = sorted(int(a[1:]) for a in Reference.objects.filter(seed__external_id="s1").values_list("anon_id", flat=True))
    assert ids == list(range(1, 8))


def test_the_export_imports_into_the_same_benchmark(tmp_path: Path) -> None:
    original = reconstruction_import(name="rec", files=import_files(h.folder(tmp_path / "in"))).benchmark
    call_command("export_reconstruction", "rec", str(tmp_path / "out"))
    call_command("import_reconstruction", "rec-copy", str(tmp_path / "out"))
    copy = Benchmark.objects.get(name="rec-copy")

    def snapshot(benchmark: Benchmark) -> dict:
        return {
            "seeds": sorted(
                SeedPaper.objects.filter(benchmark=benchmark).values_list("external_id", "domain", "title", "abstract", "t0")
            ),
            "refs": sorted(
                Reference.objects.filter(seed__benchmark=benchmark).values_list(
                    "seed__external_id",
                    "anon_id",
                    "original_id",
                    "title",
                    "abstract",
                    "published",
                    "published_precision",
                    "eligible",
                    "exclusion_reason",
                    "shown_abstract",
                )
            ),
            "hashes": sorted(
                BibliographyFreeze.objects.filter(seed__benchmark=benchmark).values_list("seed__external_id", "content_hash")
            ),
            "hyps": sorted(
                Hypothesis.objects.filter(seed__benchmark=benchmark).values_list(
                    "seed__external_id",
                    "participant__name",
                    "family",
                    "slot",
                    "title",
                    "summary",
                    "cited",
                    "valid",
                    "invalid_reason",
                )
            ),
            "labels": sorted(
                MatchLabel.objects.filter(hypothesis__seed__benchmark=benchmark).values_list(
                    "hypothesis__slot",
                    "hypothesis__participant__name",
                    "judge",
                    "judge_family",
                    "source",
                    "label",
                    "recused",
                    "reason",
                ),
                key=str,
            ),
            "tournament": [
                json.dumps(r, sort_keys=True)
                for r in TournamentRecord.objects.filter(seed__benchmark=benchmark).values_list("record", flat=True)
            ],
        }

    assert snapshot(copy) == snapshot(original) and copy.protocol == "reconstruction"
    assert snapshot(original)["hashes"] and len(snapshot(original)["labels"]) == 4


def test_the_commands_report_problems_and_refuse_other_protocols(tmp_path: Path) -> None:
    refs = h.references()
    refs[0]["published"] = 2019
    with pytest.raises(CommandError, match=r"references.jsonl, line 1: published: must be a date .* got number"):
        call_command("import_reconstruction", "rec", str(h.folder(tmp_path, references=refs)))
    Benchmark.objects.create(name="lit")
    with pytest.raises(ReconstructionError, match="lit v1 is a Lit2Test benchmark"):
        reconstruction_import(name="lit", files=import_files(h.folder(tmp_path)))
    with pytest.raises(CommandError, match="not a Reconstruction one"):
        call_command("export_reconstruction", "lit", str(tmp_path / "x"))


def test_the_demo_with_its_swiss_selection_exports_imports_and_exports_again_identically(tmp_path: Path) -> None:
    """A selection's champions are of several families (each keeps its origin's): the import accepts them by their
    ``selected_from`` line, and the selection's matches and votes travel as tournament lines."""
    from reconstruction import demo

    demo.demo_build()
    demo.demo_swiss()
    call_command("export_reconstruction", demo.DEMO_NAME, str(tmp_path / "one"))
    lines = [json.loads(x) for x in (tmp_path / "one" / "tournament.jsonl").read_text().splitlines()]
    assert lines and {x["selection"] for x in lines} == {demo.DEMO_SELECTION}
    assert sum(x["b"] is None for x in lines) == len({(x["seed_id"], x["slot"], x["round"]) for x in lines})  # a bye a round
    champions = [json.loads(x) for x in (tmp_path / "one" / "hypotheses.jsonl").read_text().splitlines() if "selected_from" in x]
    assert len(champions) == 20 and len({c["family"] for c in champions}) > 1
    call_command("import_reconstruction", "demo-copy", str(tmp_path / "one"))
    call_command("export_reconstruction", "demo-copy", str(tmp_path / "two"))
    for name in ("seeds", "references", "hypotheses", "labels", "tournament"):
        assert (tmp_path / "one" / f"{name}.jsonl").read_text() == (tmp_path / "two" / f"{name}.jsonl").read_text(), name
    copy = Hypothesis.objects.filter(seed__benchmark__name="demo-copy", participant__name=demo.DEMO_SELECTION).select_related(
        "origin__participant"
    )
    assert copy.count() == 20 and all(c.origin is not None and c.family == c.origin.family for c in copy)


def test_a_champion_must_name_an_existing_proposer_hypothesis_of_its_family(tmp_path: Path) -> None:
    folder = h.folder(tmp_path / "in")
    lines = (folder / "hypotheses.jsonl").read_text().splitlines()
    first = json.loads(lines[0])  # Alpha, family alpha, slot 1 of s1
    champ = first | {"model": "Sel", "family": "beta", "selected_from": {"model": "Alpha", "slot": 1}}
    ghost = first | {"model": "Sel", "slot": 2, "selected_from": {"model": "Nobody", "slot": 1}}
    (folder / "hypotheses.jsonl").write_text("\n".join([*lines, json.dumps(champ), json.dumps(ghost)]) + "\n")
    found = problems_of(folder)
    assert any('selected from is of family "alpha"' in p for p in found), found
    assert any('no proposer hypothesis of "Nobody" in slot 1' in p for p in found), found
    assert nothing_stored()


def test_an_export_imported_back_into_its_own_benchmark_adds_no_tournament_line(tmp_path: Path) -> None:
    """An import review of 2026-12-06: the selection's matches, written as tournament lines by the export, were stored
    as new records when imported back into the same benchmark, and each export -> import cycle added them again."""
    from reconstruction import demo
    from reconstruction.models import TournamentRecord

    demo.demo_build()
    demo.demo_swiss()
    call_command("export_reconstruction", demo.DEMO_NAME, str(tmp_path / "one"))
    call_command("import_reconstruction", demo.DEMO_NAME, str(tmp_path / "one"))
    assert TournamentRecord.objects.count() == 0
    call_command("export_reconstruction", demo.DEMO_NAME, str(tmp_path / "two"))
    assert (tmp_path / "one" / "tournament.jsonl").read_text() == (tmp_path / "two" / "tournament.jsonl").read_text()
