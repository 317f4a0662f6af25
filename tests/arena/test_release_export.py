from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from django.core.management import call_command

from arena.models import Benchmark, CanonicalPair, Context, JudgeRun, OrderedJudgment, Paper, Proposal
from lit2test.release import release_export, release_import

from . import builders as b

pytestmark = pytest.mark.django_db


def full_state() -> dict[str, list]:
    """Every stored fact of every benchmark, without database ids or timestamps."""
    return {
        "benchmarks": sorted(
            Benchmark.objects.values_list("name", "version", "canonical_judge", "verdict_rule", "orientation_seed")
        ),
        "contexts": sorted(
            (
                c.external_id,
                c.has_text,
                c.batch and c.batch.name,
                c.research_context,
                c.open_problem,
                json.dumps(c.metadata, sort_keys=True),
            )
            for c in Context.objects.select_related("batch")
        ),
        "papers": sorted(
            (
                p.context.external_id,
                p.position,
                p.title,
                p.abstract,
                p.limitation,
                p.url,
                p.source_paper_id,
                p.year,
                json.dumps(p.metadata, sort_keys=True),
            )
            for p in Paper.objects.select_related("context")
        ),
        "proposals": sorted(
            (
                p.context.external_id,
                p.participant.name,
                json.dumps(p.content, sort_keys=True),
                p.validation_status,
                json.dumps(p.release_metadata, sort_keys=True),
            )
            for p in Proposal.objects.select_related("context", "participant")
        ),
        "pairs": sorted(
            (p.internal_key, p.public_id, p.context.external_id, p.participant_a.name, p.participant_b.name)
            for p in CanonicalPair.objects.select_related("context", "participant_a", "participant_b")
        ),
        "runs": sorted(JudgeRun.objects.values_list("judge_model", "label", "provider", "is_canonical", "run_type", "status")),
        "judgments": sorted(
            (
                j.run.label,
                j.pair.internal_key,
                j.order,
                j.status,
                j.shown_a and j.shown_a.name,
                j.verdict,
                j.is_tie,
                j.winner and j.winner.name,
                j.confidence,
                j.main_reason,
                j.weakness_a,
                j.weakness_b,
                j.attempt,
                j.latency_seconds,
                json.dumps(j.metadata, sort_keys=True),
            )
            for j in OrderedJudgment.objects.select_related("run", "pair", "shown_a", "winner")
        ),
    }


def test_export_then_import_into_an_empty_database_reproduces_the_benchmark(release_dir: Path, tmp_path: Path) -> None:
    # The sample plus a second judge with recorded sides, so both verdict formats travel.
    release_import(directory=release_dir)
    extra = b.write(
        tmp_path / "second",
        {
            "judgments.jsonl": [
                {**b.judgment(c, "GPT 5.2", "GLM-5", "original", "A"), "pair_id": b.pair_id(c, "GPT 5.2", "GLM-5")}
                for c in Context.objects.filter(has_text=True).values_list("external_id", flat=True)[:3]
            ]
            + [b.judgment(Context.objects.filter(has_text=True).first().external_id, "GLM-5", "GPT 5.2", "reverse", "tie")]
        },
    )
    release_import(directory=extra, benchmark_name="lit2test")
    before = full_state()
    assert len(before["judgments"]) == 2404

    out = tmp_path / "export"
    call_command("export_lit2test", str(out))
    Benchmark.objects.all().delete()
    assert Context.objects.count() == 0

    summary = release_import(directory=out)
    assert summary.created["judgments"] == 2404 and summary.created["runs"] == 2
    assert full_state() == before


def test_the_export_writes_jsonl_and_csv_for_proposals_judgments_and_folded_cases(release_dir: Path, tmp_path: Path) -> None:
    benchmark = release_import(directory=release_dir).benchmark
    counts = release_export(benchmark=benchmark, directory=tmp_path)
    assert counts == {"contexts": 13, "proposals": 52, "judgments": 2400, "folded_cases": 1200}
    folded = pd.read_csv(tmp_path / "folded_cases.csv")
    assert len(folded) == 1200
    # The published split, recomputed from the exported rows by pandas rather than by our code.
    assert folded["stability_label"].value_counts().to_dict() == {"order-stable": 950, "order-unstable": 250}
    source = pd.read_json(release_dir / "corrected_folded_pairs.jsonl", lines=True).set_index("pair_id")
    merged = folded.set_index("pair_id").join(source, suffixes=("", "_src"))
    assert (merged["folded_winner"] == merged["folded_winner_src"]).all()
    judgments = pd.read_csv(tmp_path / "judgments.csv")
    assert len(judgments) == 2400 and set(judgments["order"]) == {"original", "reverse"}
    proposals = pd.read_csv(tmp_path / "proposals.csv")
    assert len(proposals) == 52 and {"hypothesis", "falsifying_result", "model"} <= set(proposals.columns)


def test_an_export_imports_as_another_version_beside_the_original(release_dir: Path, tmp_path: Path) -> None:
    benchmark = release_import(directory=release_dir).benchmark
    release_export(benchmark=benchmark, directory=tmp_path)
    copy = release_import(directory=tmp_path, version="2").benchmark
    assert (copy.name, copy.version) == ("lit2test", "2") and copy.pairs.count() == 1200
    original_ids = set(benchmark.pairs.values_list("public_id", flat=True))
    assert original_ids.isdisjoint(copy.pairs.values_list("public_id", flat=True))  # fresh ids where taken


def test_the_csv_model_pair_reads_as_one_model_vs_the_other_and_the_jsonl_keeps_the_list(
    release_dir: Path, tmp_path: Path
) -> None:
    benchmark = release_import(directory=release_dir).benchmark
    release_export(benchmark=benchmark, directory=tmp_path)
    source = {row["pair_id"]: row["model_pair"] for row in map(json.loads, (release_dir / "corrected_folded_pairs.jsonl").open())}
    for name in ("folded_cases", "judgments"):
        frame = pd.read_csv(tmp_path / f"{name}.csv")
        expected = frame["pair_id"].map(lambda pair_id: f"{source[pair_id][0]} vs {source[pair_id][1]}")
        assert (frame["model_pair"] == expected).all(), name
        assert not frame["model_pair"].str.contains(r"[\[\]']").any(), name
        jsonl = [json.loads(line) for line in (tmp_path / f"{name}.jsonl").open()]
        assert all(row["model_pair"] == source[row["pair_id"]] for row in jsonl), name
    folded = pd.read_csv(tmp_path / "folded_cases.csv")
    assert set(folded["model_pair"]) >= {"Claude-Sonnet-4.6 vs DeepSeek-V3.2", "GLM-5 vs GPT 5.2"}
