"""What the Intrinsic run tests share: three hand-made papers (``PAPERS``) imported as a benchmark, the toy model's
values computed independently of the scorer (``expected_values``), readers of the fake endpoint's log, the commands
that start scoring and listwise runs, and the listwise judge's scripted answers."""

from __future__ import annotations

import io
import json
import math
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from arena.models import Benchmark, JudgeRun
from intrinsic.importing import intrinsic_import
from intrinsic.models import CandidateScore, IntrinsicScoringRun
from tests.fake_llm import FakeLLM, toy_lm

BENCH = "intrinsic-runs"
MODES = {"nll": "raw_logprobs", "energy": "raw_logits"}
PAPERS: list[dict[str, Any]] = [
    {
        "paper_id": "p-alpha",
        "discipline": "ecology",
        "background": "Alpine meadows warm faster than the lowlands.",
        "question": "Does warming shift the flowering of alpine plants?",
        "gold": 0,
        "texts": [
            "Flowering starts earlier in warm years.",
            "Snow cover sets the flowering date.",
            "Warming advances flowering through earlier snowmelt.",
            "(a) the pollinators arrive first",
            "Grazing delays flowering in the meadows.",
            "Température et lumière règlent la floraison.",
        ],
    },
    {
        "paper_id": "p-beta",
        "discipline": "physics",
        "background": "Superconducting qubits lose coherence.",
        "question": "What limits the coherence of the qubits?",
        "gold": 4,
        "texts": [
            "Two-level defects in the oxide limit coherence.",
            "Flux noise limits coherence.",
            "Photon shot noise in the readout limits it.",
            "Quasiparticles from cosmic rays limit it.",
            "The dielectric loss of the substrate limits it.",
            "Nothing limits it at low temperature.",
        ],
    },
    {
        "paper_id": "p-gamma",
        "discipline": "economics",
        "background": "Minimum wages rose in half of the regions.",
        "question": "How did employment respond to the minimum wage?",
        "gold": 5,
        "texts": [
            "Employment fell among the youngest workers.",
            "Hours fell but jobs did not.",
            "Firms raised prices instead of cutting jobs.",
            "Employment moved to the neighbouring regions.",
            "Self-employment grew after the rise.",
            "Employment held steady as search frictions eased.",
        ],
    },
]
#: The start of the energy probe's background (``intrinsic.endpoint.PROBE``), written out: its requests are no task's.
PROBE_TEXT = "A cell culture was grown"
FAULTS = [
    {"attempts": [1], "status": 429, "retry_after": 0.01},
    {"attempts": [2], "status": 500},
]


def cid(paper: dict[str, Any], k: int) -> str:
    return f"{paper['paper_id']}-cand-{k + 1:02d}"


def paper_lines() -> list[dict[str, Any]]:
    return [
        {
            "paper_id": p["paper_id"],
            "discipline": p["discipline"],
            "background": p["background"],
            "question": p["question"],
            "candidates": [{"id": cid(p, k), "text": t, "gold": k == p["gold"]} for k, t in enumerate(p["texts"])],
        }
        for p in PAPERS
    ]


def make_benchmark(tmp_path: Path) -> Benchmark:
    path = tmp_path / "papers.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in paper_lines()), encoding="utf-8")
    return intrinsic_import(name=BENCH, files={"papers": path}).benchmark


# --------------------------------------------------------------------------- the toy model, computed here


def log_softmax(prev: int, token: int) -> float:
    row = toy_lm.logits(prev)
    peak = max(row)
    return row[token] - (peak + math.log(sum(math.exp(z - peak) for z in row)))


def expected_values(paper: dict[str, Any], text: str, criterion: str) -> list[float]:
    """The span's values: the prompt's tokens after the prefix's own tokens, each −log softmax or −logit of the toy
    model given the token before it (a "(" candidate merges with the colon; the span still starts at the same index)."""
    prefix = f"Background: {paper['background']}\nResearch Question: {paper['question']}\nHypothesis:"
    full = toy_lm.tokenize(prefix + " " + text)
    start = len(toy_lm.tokenize(prefix))
    if criterion == "nll":
        return [-log_softmax(full[i - 1], full[i]) for i in range(start, len(full))]
    return [-toy_lm.logit(full[i - 1], full[i]) for i in range(start, len(full))]


def assert_scores_match_the_toy_model(run: IntrinsicScoringRun, criterion: str) -> None:
    stored = {
        (s.candidate.paper.external_id, s.candidate.external_id): s
        for s in CandidateScore.objects.filter(run=run).select_related("candidate__paper")
    }
    assert len(stored) == sum(len(p["texts"]) for p in PAPERS)
    for paper in PAPERS:
        for k, text in enumerate(paper["texts"]):
            mine = expected_values(paper, text, criterion)
            score = stored[(paper["paper_id"], cid(paper, k))]
            assert score.tokens == len(mine)
            assert score.total == pytest.approx(sum(mine), abs=1e-9)
            assert score.mean == pytest.approx(sum(mine) / len(mine), abs=1e-9)
            assert score.detail["values"] == pytest.approx(mine, abs=1e-9)
            assert score.source == f"run {run.pk}" and score.scorer_id == run.scorer_id


# --------------------------------------------------------------------------- the fake endpoint's log, scoring runs


def completions(log: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in log if e["endpoint"] == "completions"]


def scored_prompts(log: list[dict[str, Any]]) -> Counter[str]:
    """How many answered completion requests each candidate's prompt got (the probe's prompt left out; a request slowed
    past the client's timeout is answered to nobody)."""
    return Counter(
        e["prompt"]
        for e in completions(log)
        if e["status"] == 200 and not e["fault"] and "Hypothesis: The medium" not in e["prompt"]
    )


def score_command(benchmark: Benchmark, fake: FakeLLM, criterion: str, *extra: str) -> tuple[IntrinsicScoringRun, str]:
    out = io.StringIO()
    call_command(
        "intrinsic_score",
        str(benchmark.pk),
        "--model",
        "toy",
        "--criterion",
        criterion,
        "--logprobs-mode",
        MODES[criterion],
        "--base-url",
        fake.base_url,
        "--concurrency",
        "4",
        "--timeout",
        "5",
        *extra,
        "--wait",
        stdout=out,
    )
    return IntrinsicScoringRun.objects.latest("id"), out.getvalue()


# --------------------------------------------------------------------------- listwise runs


def shown_labels(prompt: str) -> dict[str, str]:
    """Label -> candidate text, read from the prompt's candidates block."""
    block = prompt.split("=== CANDIDATES ===\n", 1)[1].split("\n=== END ===", 1)[0]
    return dict(re.fullmatch(r"(C\d+): (.*)", line).groups() for line in block.splitlines())  # type: ignore[union-attr]


def chat_prompts(log: list[dict[str, Any]]) -> list[str]:
    return ["\n".join(m["content"] for m in e["messages"]) for e in log if e["endpoint"] == "chat" and e["messages"]]


def top(*labels: str) -> dict[str, Any]:
    return {"top": list(labels)}


def listwise_replies(judge: str) -> list[dict[str, Any]]:
    """alpha: a good answer at once; beta: an unknown label, a duplicate, then a good one; gamma: a short list, an
    unknown label and a duplicate: invalid after three answers."""
    alpha, beta, gamma = PAPERS
    return [
        {"model": judge, "contains": alpha["question"], "answers": [top("C2", "C4", "C6", "C1", "C3")]},
        {
            "model": judge,
            "contains": beta["question"],
            "answers": [top("C1", "C2", "C3", "C4", "C9"), top("C1", "C1", "C2", "C3", "C4"), top("c6", "C5", " C4", "C3", "C2")],
        },
        {
            "model": judge,
            "contains": gamma["question"],
            "answers": [top("C1", "C2", "C3"), top("C7", "C1", "C2", "C3", "C4"), top("C5", "C4", "C5", "C3", "C2")],
        },
    ]


def run_listwise(benchmark: Benchmark, fake: FakeLLM, *extra: str) -> JudgeRun:
    out = io.StringIO()
    try:
        call_command(
            "run_judge",
            str(benchmark.pk),
            "--model",
            "Judge-X",
            "--base-url",
            fake.base_url,
            "--timeout",
            "5",
            *extra,
            "--wait",
            stdout=out,
        )
    finally:
        print(out.getvalue())
    return JudgeRun.objects.latest("id")


# --------------------------------------------------------------------------- the full cycle


def gold_rank(scores: list[float], gold: int) -> int:
    """Pessimistic: 1 + the distractors scoring <= the gold (lower is better; a tie counts against the gold)."""
    return 1 + sum(1 for i, s in enumerate(scores) if i != gold and s <= scores[gold])
