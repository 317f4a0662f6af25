"""The leaderboard document on small synthetic data: structure, flags, JSON, edge cases."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from arena.stats import leaderboard_document

COLS = ["case", "context", "batch", "model_1", "model_2", "original", "reverse", "shown_a_original"]
REQUIRED = {
    "models",
    "cases",
    "stable_wlt",
    "head_to_head",
    "ordered_head_to_head",
    "bt",
    "bootstrap",
    "cluster_bootstrap",
    "condorcet",
    "tie_sensitivity",
    "separation",
    "side_bias",
    "batches",
    "diagnostic",
}


def bt_cases(n_contexts: int = 12, seed: int = 0, strengths: dict[str, float] | None = None) -> pd.DataFrame:
    strengths = strengths or {"Big Model": 1.5, "mid model": 0.0, "small-1": -1.5}
    names = list(strengths)
    rng = np.random.default_rng(seed)
    rows = []
    for c in range(n_contexts):
        for x in range(len(names)):
            for y in range(x + 1, len(names)):
                a, b = names[x], names[y]
                p = 1 / (1 + np.exp(strengths[b] - strengths[a]))
                o = a if rng.random() < p else b
                r = a if rng.random() < p else b
                shown = a if rng.random() < 0.5 else b
                rows.append((f"{c}:{a}|{b}", f"ctx{c}", f"batch{c % 3}", a, b, o, r, shown))
    return pd.DataFrame(rows, columns=COLS)


def test_document_structure_and_json() -> None:
    df = bt_cases()
    df.loc[0, "reverse"] = None  # one incomplete case
    doc = leaderboard_document(df, replicates=500, seed=3)
    assert REQUIRED <= set(doc)
    assert json.loads(json.dumps(doc)) == doc
    assert doc["cases"]["incomplete"] == 1
    assert doc["cases"]["total"] == len(df)
    assert set(doc["models"]) == {"Big Model", "mid model", "small-1"}
    for kind in ("ordered", "folded", "stable"):
        strengths = [v["strength"] for v in doc["bt"][kind].values()]
        assert abs(sum(strengths)) < 1e-9
        for v in doc["bt"][kind].values():
            assert v["ci"][0] <= v["ci"][1]
    assert doc["bt"]["pseudo_count"] == 0.5
    assert list(doc["bt"]["ordered"]) == doc["models"]  # best first
    assert doc["bootstrap"]["replicates"] == 500 and doc["bootstrap"]["seed"] == 3
    assert abs(sum(doc["bootstrap"]["top1"].values()) - 1) < 1e-12
    assert doc["side_bias"] is not None and doc["side_bias"]["rows"] == 2 * (len(df) - 1)
    assert len(doc["batches"]) == 3
    assert leaderboard_document(df, replicates=500, seed=3) == doc


def test_separation_is_flagged() -> None:
    # "Big Model" wins every comparison against "small-1" in both orders.
    df = bt_cases(n_contexts=6, strengths={"Big Model": 50.0, "mid model": 0.0, "small-1": -0.5})
    doc = leaderboard_document(df, replicates=200, seed=0)
    pairs = {(d["a"], d["b"]) for d in doc["separation"]}
    assert ("Big Model", "small-1") in pairs
    assert doc["diagnostic"]["separation"] is True
    assert doc["diagnostic"]["strengths_diagnostic_only"] is True
    # The pseudo-count keeps the strengths finite.
    assert all(np.isfinite(v["strength"]) for v in doc["bt"]["stable"].values())


def test_plain_mle_document_stays_finite() -> None:
    df = bt_cases(n_contexts=3, strengths={"Big Model": 50.0, "mid model": 0.0, "small-1": -50.0})
    doc = leaderboard_document(df, replicates=100, seed=0, pseudo_count=0.0)
    assert doc["diagnostic"]["fits"]["stable"]["diverged"] is True
    assert doc["bootstrap"]["fits"]["ordered"]["diverged_replicates"] == 100
    assert json.loads(json.dumps(doc)) == doc


def test_cycle_reported() -> None:
    # Rock–paper–scissors among three models, every case stable.
    rows = []
    for c, (a, b) in enumerate([("R", "S"), ("S", "P"), ("P", "R")] * 2):
        rows.append((f"k{c}", f"ctx{c}", "b", a, b, a, a, None))
    doc = leaderboard_document(pd.DataFrame(rows, columns=COLS), replicates=50, seed=0)
    assert doc["condorcet"]["transitive"] is False
    assert len(doc["condorcet"]["cycles"]) == 1
    assert doc["side_bias"] is None


def test_empty_and_single_model_documents() -> None:
    empty = pd.DataFrame(columns=COLS)
    doc = leaderboard_document(empty, replicates=10)
    assert doc["diagnostic"]["insufficient_data"] is True
    assert doc["cases"]["total"] == 0
    only_incomplete = pd.DataFrame([("k", "c", "b", "X", "Y", "X", None, None)], columns=COLS)
    doc = leaderboard_document(only_incomplete, replicates=10)
    assert doc["cases"]["incomplete"] == 1 and doc["diagnostic"]["insufficient_data"] is True
    assert REQUIRED <= set(doc)
    json.dumps(doc)
