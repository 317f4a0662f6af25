"""What the launch tests share (tests/test_concurrent_launches.py, tests/test_launch_again.py): a small Lit2Test
benchmark with a context no model has answered, and the study form's values."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from arena.models import Benchmark
from tests.arena import builders

NOWHERE = "http://127.0.0.1:9/v1"  # a launched run's endpoint, never called: no worker runs in these tests

WORDS = dict(
    zip(builders.MODELS, ("Lichen spreads on granite", "Moss holds water in dry summers", "Ferns shade seedlings"), strict=True)
)


def lit2test_release(folder: Path, name: str) -> Benchmark:
    """Two contexts with text, three models, the release judge's verdicts; a third context no model has answered."""
    from lit2test.release import release_import

    files = builders.small_release()
    # Each model's proposal in words of its own (the orientation gate refuses pairs that read the same once redacted).
    files["proposals.jsonl"] = [
        builders.proposal(
            p["context_id"], p["model"], **{f: f"{WORDS[p['model']]} {f} for {p['context_id']}." for f in builders.SIX}
        )
        for p in files["proposals.jsonl"]
    ]
    files["contexts.jsonl"].append(builders.context("ctx_003__v1"))
    return release_import(directory=builders.write(folder, files), benchmark_name=name).benchmark


def study_values(benchmark: Benchmark, annotators: list[Any]) -> dict[str, Any]:
    return {
        "benchmark": str(benchmark.pk),
        "name": "",
        "n_contexts": "1",
        "annotators": [str(a.pk) for a in annotators],
        "round": "formal",
        "n_naive_controls": "1",
        "pairs_per_context": "",
        "cap_minutes": "10",
        "annotators_per_item": "",
        "seed": "",
    }
