"""Small release folders written by hand, for tests that need exact control over each line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SIX = ("literature_gap", "hypothesis", "minimal_test", "decisive_metric", "supporting_result", "falsifying_result")
MODELS = ("Alpha 1", "Beta-2", "Gamma-3")


def context(context_id: str = "ctx_001__v1", *, papers: int = 4) -> dict[str, Any]:
    return {
        "context_id": context_id,
        "base_topic_id": context_id.split("__")[0],
        "condition": "coherent_neighborhood",
        "field": "test field",
        "research_context": f"Research context of {context_id}.",
        "open_problem": "An open problem.",
        "resource_constraint": "<=8 A100 GPU-days.",
        "task_instruction": "Formulate one minimal falsifiable next-step test.",
        "source_policy": "test_policy",
        "papers": [
            {
                "title": f"Paper {i} of {context_id}",
                "url": f"https://openreview.net/forum?id={context_id}-{i}",
                "abstract": "An abstract.",
                "key_contribution": "A contribution.",
                "limitation": "A limitation.",
                "important_result": "A result.",
                "primary_area": "area",
                "year": "2025",
                "venue": "ICLR.cc",
                "paper_id": f"{context_id}-{i}",
                "decision": "Accept",
                "review_count": 4,
            }
            for i in range(papers)
        ],
        "pool_metadata": {"construction": "hand-made"},
    }


def proposal(context_id: str, model: str, **overrides: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"context_id": context_id, "condition": "coherent_neighborhood"}
    row |= {f: f"{model} {f} for {context_id}." for f in SIX}
    row |= {"model": model, "schema_errors": [], "lit2test_valid": True, "lit2test_flags": {}, "lit2test_errors": []}
    row.update(overrides)
    return row


def pair_id(context_id: str, a: str, b: str) -> str:
    first, second = sorted((a, b))
    return f"{context_id}__{first.replace(' ', '_')}__vs__{second.replace(' ', '_')}"


def folded(context_id: str, a: str, b: str, original: str, reverse: str, batch: str = "b1") -> dict[str, Any]:
    stable = original == reverse
    return {
        "pair_id": pair_id(context_id, a, b),
        "context_id": context_id,
        "batch": batch,
        "model_pair": sorted((a, b)),
        "gemini_original_winner": original,
        "gemini_reverse_winner": reverse,
        "stability_label": "order-stable" if stable else "order-unstable",
        "folded_winner": original if stable else "consistency_tie",
        "gemini_original_confidence": "high",
        "gemini_reverse_confidence": "medium",
        "reverse_judgment_source": "frozen_original_source",
    }


def judgment(context_id: str, system_a: str, system_b: str, order: str, winner: str, judge: str = "Judge-X") -> dict[str, Any]:
    winning = {"A": system_a, "B": system_b, "tie": "tie"}[winner]
    return {
        "pair_id": pair_id(context_id, system_a, system_b),
        "order": order,
        "context_id": context_id,
        "judge_model": judge,
        "system_a": system_a,
        "system_b": system_b,
        "winner": winner,
        "winning_system": winning,
        "confidence": "medium",
        "main_reason": "A is more falsifiable.",
        "weakness_a": "none",
        "weakness_b": "vague metric",
        "judge_errors": [],
        "attempt": 1,
        "elapsed_seconds": 1.5,
    }


def small_release() -> dict[str, list[dict[str, Any]]]:
    """Two contexts with text, three models, both orders judged by the release judge."""
    contexts = [context("ctx_001__v1"), context("ctx_002__v1")]
    proposals = [proposal(c["context_id"], m) for c in contexts for m in MODELS]
    pairs = []
    for c in contexts:
        cid = c["context_id"]
        pairs += [
            folded(cid, "Alpha 1", "Beta-2", "Alpha 1", "Alpha 1"),
            folded(cid, "Alpha 1", "Gamma-3", "Alpha 1", "Gamma-3"),
            folded(cid, "Beta-2", "Gamma-3", "Beta-2", "Beta-2"),
        ]
    return {"contexts.jsonl": contexts, "proposals.jsonl": proposals, "corrected_folded_pairs.jsonl": pairs}


def encode(content: list[dict[str, Any]] | dict[str, Any] | str | bytes) -> bytes:
    """A file's bytes: JSONL for a list of records, JSON for one object (benchmark.json), text or bytes as given."""
    if isinstance(content, bytes):
        return content
    if isinstance(content, str):
        return content.encode()
    if isinstance(content, dict):
        return json.dumps(content, indent=2).encode()
    return "".join(json.dumps(row) + "\n" for row in content).encode()


def write(directory: Path, files: dict[str, Any]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        (directory / name).write_bytes(encode(content))
    return directory
