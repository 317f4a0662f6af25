"""Import: every malformed line is named by file, line, field and what to do; all or nothing; idempotent; the database
holds one gold per paper and unique ids on its own. Export: importing it reproduces the benchmark, byte for byte."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import IntegrityError, transaction

from arena.models import Benchmark
from intrinsic.exporting import intrinsic_export
from intrinsic.importing import IntrinsicError, IntrinsicImportError, import_files, intrinsic_import
from intrinsic.models import Candidate, CandidateScore, ListwiseRanking, Paper, Scorer

pytestmark = pytest.mark.django_db


# --------------------------------------------------------------------------- hand-made files


def papers() -> list[dict[str, Any]]:
    """p1: six candidates, gold c4; p2: three candidates, gold b1."""
    return [
        {
            "paper_id": "p1",
            "discipline": "ecology",
            "background": "Meadows warm.",
            "question": "Does warming shift flowering?",
            "candidates": [{"id": f"c{k}", "text": f"Hypothesis {k} about flowering.", "gold": k == 4} for k in range(1, 7)],
        },
        {
            "paper_id": "p2",
            "discipline": "physics",
            "background": "Qubits decohere.",
            "question": "What limits coherence?",
            "candidates": [
                {"id": "b1", "text": "Two-level defects limit coherence.", "gold": True},
                {"id": "b2", "text": "Flux noise limits it.", "gold": False},
                {"id": "b3", "text": "Photon shot noise limits it.", "gold": False},
            ],
        },
    ]


def scores() -> list[dict[str, Any]]:
    """Scorer m1-nll scores all of p1 and p2; m1-energy scores p1 only."""
    rows = []
    for paper in papers():
        for k, c in enumerate(paper["candidates"]):
            rows.append(
                {
                    "paper_id": paper["paper_id"],
                    "candidate_id": c["id"],
                    "scorer": "m1-nll",
                    "model": "M1",
                    "criterion": "nll",
                    "mean": 1.5 + k / 4,
                    "sum": (1.5 + k / 4) * 4,
                    "tokens": 4,
                }
            )
    for k, c in enumerate(papers()[0]["candidates"]):
        rows.append(
            {
                "paper_id": "p1",
                "candidate_id": c["id"],
                "scorer": "m1-energy",
                "model": "M1",
                "criterion": "energy",
                "mean": -10.0 - k,
                "sum": (-10.0 - k) * 8,
                "tokens": 8,
                "endpoint": "vLLM test",
            }
        )
    return rows


def listwise() -> list[dict[str, Any]]:
    return [
        {"paper_id": "p1", "scorer": "judge", "model": "J", "top": ["c4", "c1", "c2", "c3", "c5"]},
        {"paper_id": "p2", "scorer": "judge", "model": "J", "status": "invalid", "reason": "unknown label after 2 retries"},
    ]


def write(folder: Path, name: str, rows: list[Any]) -> None:
    (folder / f"{name}.jsonl").write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8"
    )


def folder(
    path: Path,
    *,
    papers_: list[Any] | None = None,
    scores_: list[Any] | None | bool = None,
    listwise_: list[Any] | None | bool = None,
) -> Path:
    """The three files (the hand-made ones unless given); ``False`` leaves a file out."""
    path.mkdir(parents=True, exist_ok=True)
    write(path, "papers", papers() if papers_ is None else papers_)
    for name, rows, default in (("scores", scores_, scores), ("listwise", listwise_, listwise)):
        if rows is not False:
            write(path, name, default() if rows is None else rows)  # type: ignore[arg-type]
    return path


def problems_of(path: Path, name: str = "intr") -> list[str]:
    with pytest.raises(IntrinsicImportError) as caught:
        intrinsic_import(name=name, files=import_files(path))
    return [str(p) for p in caught.value.problems]


def nothing_stored() -> bool:
    return not (
        Benchmark.objects.exists()
        or Paper.objects.exists()
        or Scorer.objects.exists()
        or CandidateScore.objects.exists()
        or ListwiseRanking.objects.exists()
    )


# --------------------------------------------------------------------------- malformed papers


def test_two_golds_no_gold_and_too_few_candidates_are_refused_with_their_line(tmp_path: Path) -> None:
    rows = papers()
    rows[0]["candidates"][0]["gold"] = True  # c1 and c4
    rows[1]["candidates"][0]["gold"] = False  # none
    rows.append(
        {
            "paper_id": "p3",
            "discipline": "x",
            "background": "b",
            "question": "q",
            "candidates": [{"id": "a", "text": "t", "gold": True}],
        }
    )
    assert problems_of(folder(tmp_path, papers_=rows, scores_=False, listwise_=[])) == [
        'papers.jsonl, line 1: candidates: 2 candidates are gold ("c1", "c4"); exactly one, the paper\'s own hypothesis, has "gold": true: set the others to false',
        'papers.jsonl, line 2: candidates: no candidate has "gold": true; mark the paper\'s own hypothesis "gold": true (exactly one per paper)',
        "papers.jsonl, line 3: candidates: has 1 candidate(s); a paper has 2 to 1000 (its gold hypothesis and at least one distractor)",
        "listwise.jsonl: no listwise lines (the file is empty); remove it or fill it",
    ]
    assert nothing_stored()


def test_duplicate_ids_empty_text_unknown_keys_and_bad_json_are_each_named(tmp_path: Path) -> None:
    rows: list[Any] = papers()
    rows[0]["candidates"][2]["id"] = "c1"
    rows[0]["candidates"][5]["text"] = "   "
    rows[1]["abstract"] = "not a field"
    rows[1]["candidates"][1]["score"] = 3
    rows.append('{"paper_id": "p3", "discipline": "x",')  # truncated
    assert problems_of(folder(tmp_path / "a", papers_=rows, scores_=[scores()[0]], listwise_=[listwise()[0]])) == [
        'papers.jsonl, line 1: candidates[2].id: "c1" repeats candidates[0]; candidate ids are unique within a paper',
        'papers.jsonl, line 1: candidates[5].text: empty; give candidate "c6" its hypothesis text (an empty candidate cannot be scored), or remove it',
        "papers.jsonl, line 2: abstract: is not a field of a papers.jsonl line; the fields are paper_id, discipline, background, question, candidates (remove it, or check its spelling)",
        "papers.jsonl, line 2: candidates[1].score: is not a field of a candidate; the fields are id, text, gold (remove it, or check its spelling)",
        "papers.jsonl, line 3: invalid JSON (Expecting property name enclosed in double quotes at column 38); truncated line?",
        # p1 was refused: the score and the ranking naming it are not reported again as naming an unknown paper.
    ]
    assert nothing_stored()
    rows = papers()
    rows[1]["candidates"][2]["text"] = "two-level  DEFECTS limit coherence."
    rows.append(papers()[1])
    assert problems_of(folder(tmp_path / "b", papers_=rows, scores_=False, listwise_=False)) == [
        "papers.jsonl, line 2: candidates[2].text: repeats the text of candidates[0]; the candidates of a paper are distinct hypotheses",
        'papers.jsonl, line 3: paper_id: "p2" repeats line 2; each paper appears once',
    ]
    assert nothing_stored()


# --------------------------------------------------------------------------- malformed scores and rankings


def test_scores_of_unknown_papers_and_candidates_and_partial_coverage_are_refused_and_nothing_is_written(tmp_path: Path) -> None:
    rows = scores()
    rows[0] = rows[0] | {"paper_id": "p9"}  # line 1: unknown paper
    rows[7] = rows[7] | {"candidate_id": "b7"}  # line 8: p2 has b1..b3
    assert problems_of(folder(tmp_path, scores_=rows)) == [
        'scores.jsonl, line 1: paper_id: unknown paper "p9"; the papers are "p1", "p2" (add its line to papers.jsonl)',
        'scores.jsonl, line 8: candidate_id: paper "p2" has no candidate "b7"; its candidates are "b1", "b2", "b3"',
        'scores.jsonl, line 2: candidate_id: scorer "m1-nll" scores 5 of the 6 candidates of paper "p1"; add lines for "c1" '
        "(a scorer that scores a paper scores all its candidates: the gold is ranked among all of them)",
        'scores.jsonl, line 7: candidate_id: scorer "m1-nll" scores 2 of the 3 candidates of paper "p2"; add lines for "b2" '
        "(a scorer that scores a paper scores all its candidates: the gold is ranked among all of them)",
    ]
    assert nothing_stored()  # the papers, written before the scores were checked, were rolled back


def test_numbers_criteria_and_scorer_identity_are_checked(tmp_path: Path) -> None:
    rows = scores()
    rows[0]["mean"] = -0.5  # an NLL below 0
    rows[0]["sum"] = -2.0
    rows[1]["sum"] = 99.0  # mean 1.75 × 4 tokens = 7
    rows[2]["tokens"] = 0
    rows[3]["criterion"] = "listwise"
    rows[8]["model"] = "M2"  # m1-nll is M1 on line 5, its first good line
    del rows[5]["mean"]
    rows[6]["mean"] = "1.2"
    assert problems_of(folder(tmp_path, scores_=rows)) == [
        'scores.jsonl, line 1: mean: is -0.5; an NLL is −log of a probability, never negative (is this an "energy" scorer, or a log-probability not negated?)',
        'scores.jsonl, line 1: sum: is -2.0; an NLL is −log of a probability, never negative (is this an "energy" scorer, or a log-probability not negated?)',
        "scores.jsonl, line 2: sum: is 99.0, but mean × tokens = 7; the mean is the sum over the hypothesis tokens divided by their number",
        "scores.jsonl, line 3: tokens: must be a whole number from 1 to 2147483647, got 0",
        'scores.jsonl, line 4: criterion: must be one of "nll", "energy", got "listwise"; a listwise scorer\'s rankings go in listwise.jsonl; '
        '"nll" for the mean/sum of −log softmax at each target token, "energy" for the negated raw target logit',
        "scores.jsonl, line 6: mean: missing; the mean score over the hypothesis tokens (lower is better)",
        'scores.jsonl, line 7: mean: must be a number, got "1.2"',
        'scores.jsonl, line 9: model: scorer "m1-nll" is model "M1", criterion "nll" on scores.jsonl line 5; this line says "M2", "nll": a scorer is one model read by one criterion',
    ]
    assert nothing_stored()


def test_listwise_rankings_list_the_paper_s_best_five_distinct_candidates(tmp_path: Path) -> None:
    rows = listwise() + [
        {"paper_id": "p1", "scorer": "judge2", "model": "J", "top": ["c4", "c1", "c4", "c2", "c3"]},
        {"paper_id": "p1", "scorer": "judge3", "model": "J", "top": ["c4", "c1", "zz", "c2", "c3"]},
        {"paper_id": "p1", "scorer": "judge4", "model": "J", "top": ["c4", "c1"]},
        {"paper_id": "p2", "scorer": "judge4", "model": "J", "top": ["b2", "b1", "b3"]},  # three candidates: all three
        {"paper_id": "p2", "scorer": "judge5", "model": "J", "status": "invalid", "top": ["b1"], "reason": "short"},
        {"paper_id": "p2", "scorer": "judge5", "model": "J", "status": "invalid"},
        {"paper_id": "p2", "scorer": "m1-nll", "model": "M1", "top": ["b2", "b1", "b3"]},
    ]
    assert problems_of(folder(tmp_path, listwise_=rows)) == [
        'listwise.jsonl, line 3: top[2]: "c4" is already listed at top[0]; a ranking lists each candidate once',
        'listwise.jsonl, line 7: top: must be empty or left out in an invalid ranking (the judge\'s answer was refused; say why in "reason")',
        "listwise.jsonl, line 8: reason: missing",
        'listwise.jsonl, line 9: criterion: scorer "m1-nll" is model "M1", criterion "nll" on scores.jsonl line 1; this line says "M1", "listwise": a scorer is one model read by one criterion',
        'listwise.jsonl, line 4: top: names "zz", not candidates of paper "p1"; its candidates are "c1", "c2", "c3", "c4", "c5", "c6"',
        'listwise.jsonl, line 5: top: lists 2 candidate(s); an accepted ranking of paper "p1" lists its best 5, best first '
        '(a judge\'s answer that is short is "status": "invalid" with the reason)',
    ]
    assert nothing_stored()


# --------------------------------------------------------------------------- what is stored


def test_a_good_import_stores_what_the_files_say_and_a_second_changes_nothing(tmp_path: Path) -> None:
    first = intrinsic_import(name="intr", files=import_files(folder(tmp_path)))
    assert dict(first.created) == {"papers": 2, "candidates": 9, "scorers": 3, "scores": 15, "rankings": 2}
    benchmark = Benchmark.objects.get(name="intr")
    assert benchmark.protocol == "intrinsic"
    assert list(Candidate.objects.filter(paper__external_id="p1").values_list("external_id", "position", "gold")) == [
        ("c1", 0, False),
        ("c2", 1, False),
        ("c3", 2, False),
        ("c4", 3, True),
        ("c5", 4, False),
        ("c6", 5, False),
    ]
    assert {(s.name, s.model, s.criterion, s.endpoint) for s in Scorer.objects.all()} == {
        ("m1-nll", "M1", "nll", ""),
        ("m1-energy", "M1", "energy", "vLLM test"),
        ("judge", "J", "listwise", ""),
    }
    score = CandidateScore.objects.get(scorer__name="m1-energy", candidate__external_id="c3")
    assert (score.mean, score.total, score.tokens, score.source) == (-12.0, -96.0, 8, "import")
    assert list(ListwiseRanking.objects.order_by("paper__external_id").values_list("top", "status", "reason")) == [
        (["c4", "c1", "c2", "c3", "c5"], "accepted", ""),
        ([], "invalid", "unknown label after 2 retries"),
    ]
    second = intrinsic_import(name="intr", files=import_files(folder(tmp_path)))
    assert not any(second.created.values()) and second.line().startswith("nothing new")
    assert dict(second.unchanged) == {"papers": 2, "scores": 15, "rankings": 2}


def test_a_stored_paper_or_score_cannot_change_and_new_scores_may_be_added_later(tmp_path: Path) -> None:
    intrinsic_import(name="intr", files=import_files(folder(tmp_path / "a", scores_=scores()[:6], listwise_=listwise()[:1])))
    changed = papers()
    changed[0]["candidates"][1]["text"] = "Another text."
    more = scores()
    more[0] = more[0] | {"mean": 9.0, "sum": 36.0}
    assert problems_of(folder(tmp_path / "b", papers_=changed, scores_=more)) == [
        'papers.jsonl, line 1: candidates: paper "p1" is already in intr v1 with a different candidates; a stored paper cannot change under its scores: '
        "give the changed paper its own paper_id (or import into a new benchmark)",
        'scores.jsonl, line 1: mean: scorer "m1-nll" already has mean 1.5, sum 6.0, 4 tokens for candidate "c1" of paper "p1"; '
        "a stored score cannot be replaced by an import (import the new numbers under another scorer name)",
    ]
    (folder(tmp_path / "c") / "papers.jsonl").unlink()  # the papers are stored: scores alone may follow
    summary = intrinsic_import(name="intr", files=import_files(tmp_path / "c"))
    assert dict(+summary.created) == {
        "scorers": 1,
        "scores": 9,
        "rankings": 1,
    }  # p2's nll scores, m1-energy, p2's invalid ranking


def test_the_database_holds_one_gold_per_paper_and_unique_ids_by_itself(tmp_path: Path) -> None:
    intrinsic_import(name="intr", files=import_files(folder(tmp_path)))
    paper = Paper.objects.get(external_id="p1")
    for bad in (
        lambda: Candidate.objects.filter(paper=paper, external_id="c1").update(gold=True),
        lambda: Candidate.objects.create(paper=paper, external_id="c1", text="again", position=9),
        lambda: Candidate.objects.create(paper=paper, external_id="c9", text="", position=9),
        lambda: Paper.objects.create(benchmark=paper.benchmark, external_id="p1", discipline="d", background="b", question="q"),
        lambda: Scorer.objects.create(benchmark=paper.benchmark, name="judge", model="J", criterion="listwise"),
        lambda: CandidateScore.objects.create(
            scorer=Scorer.objects.get(name="m1-nll"),
            candidate=Candidate.objects.get(paper=paper, external_id="c1"),
            mean=1,
            total=1,
            tokens=1,
        ),
        lambda: ListwiseRanking.objects.create(scorer=Scorer.objects.get(name="judge"), paper=paper, status="invalid", reason=""),
    ):
        with pytest.raises(IntegrityError), transaction.atomic():
            bad()


# --------------------------------------------------------------------------- export


def test_the_export_holds_the_imported_lines_and_imports_back_byte_for_byte(tmp_path: Path) -> None:
    call_command("import_intrinsic", "intr", str(folder(tmp_path / "in")))
    call_command("export_intrinsic", "intr", str(tmp_path / "out"))
    exported = {
        k: [json.loads(x) for x in (tmp_path / "out" / f"{k}.jsonl").read_text(encoding="utf-8").splitlines()]
        for k in ("papers", "scores", "listwise")
    }
    # The hand-written lines come back as written (ordered by discipline and paper, then scorer name).
    assert exported["papers"] == papers()
    assert sorted(map(json.dumps, exported["scores"])) == sorted(map(json.dumps, scores()))
    assert exported["listwise"] == listwise()
    call_command("import_intrinsic", "intr-copy", str(tmp_path / "out"))
    call_command("export_intrinsic", "intr-copy", str(tmp_path / "again"))
    for name in ("papers.jsonl", "scores.jsonl", "listwise.jsonl"):
        assert (tmp_path / "again" / name).read_bytes() == (tmp_path / "out" / name).read_bytes(), name
    assert Benchmark.objects.get(name="intr-copy").protocol == "intrinsic"


def test_the_commands_report_problems_and_refuse_other_protocols(tmp_path: Path) -> None:
    rows = papers()
    rows[1]["candidates"][0]["gold"] = "yes"
    with pytest.raises(CommandError, match=r'papers.jsonl, line 2: candidates\[0\].gold: must be true or false, got "yes"'):
        call_command("import_intrinsic", "intr", str(folder(tmp_path, papers_=rows)))
    (tmp_path / "empty").mkdir()
    with pytest.raises(CommandError, match="no Intrinsic file in this folder"):
        call_command("import_intrinsic", "intr", str(tmp_path / "empty"))
    lit = Benchmark.objects.create(name="lit")
    with pytest.raises(IntrinsicError, match="lit v1 is a Lit2Test benchmark"):
        intrinsic_import(name="lit", files=import_files(folder(tmp_path / "ok")))
    with pytest.raises(IntrinsicError, match="not an Intrinsic-scoring one"):
        intrinsic_export(benchmark=lit, directory=tmp_path / "x")
    with pytest.raises(CommandError, match="no benchmark 'nope'"):
        call_command("export_intrinsic", "nope", str(tmp_path / "x"))
    with pytest.raises(CommandError, match=r"no benchmark '999999' \(give its id, name or name@version\)"):
        call_command("intrinsic_score", "999999", "--model", "m")  # an id names the benchmark it did not find too


def test_a_paper_a_scorer_scored_in_part_is_left_out_of_the_export_and_counted(tmp_path: Path) -> None:
    """A run that ended with failed candidates leaves a paper scored in part; the export writes whole papers only, so
    it still imports, and says what it left out."""
    summary = intrinsic_import(name="intr", files=import_files(folder(tmp_path / "in")))
    scorer = Scorer.objects.filter(benchmark=summary.benchmark).exclude(criterion="listwise").order_by("name").first()
    one = CandidateScore.objects.filter(scorer=scorer).order_by("candidate__paper__external_id", "candidate__position").first()
    paper_id = one.candidate.paper.external_id
    one.delete()  # as if that candidate's request had failed
    written = intrinsic_export(benchmark=summary.benchmark, directory=tmp_path / "out")
    assert written["partial (scorer, paper) left out"] == 1
    lines = [json.loads(x) for x in (tmp_path / "out" / "scores.jsonl").read_text().splitlines()]
    assert not [x for x in lines if x["scorer"] == scorer.name and x["paper_id"] == paper_id]
    n_candidates = Candidate.objects.filter(paper__benchmark=summary.benchmark, paper__external_id=paper_id).count()
    # Every other (scorer, paper) is written whole: all stored scores but that paper's remaining ones.
    assert len(lines) == CandidateScore.objects.filter(scorer__benchmark=summary.benchmark).count() - (n_candidates - 1)
    intrinsic_import(name="intr-copy", files=import_files(tmp_path / "out"))  # imports without a problem
    out = __import__("io").StringIO()
    call_command("export_intrinsic", "intr", str(tmp_path / "again"), stdout=out)
    assert "1 (scorer, paper) left out: scored in part" in out.getvalue()
