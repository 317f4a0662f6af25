"""Rank intervals, comparison counts and the 1500 scale (issue 24, "Leaderboard readers"), on cases small enough to
work out by hand."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from arena.stats.leaderboard import leaderboard_document
from arena.stats.rank_intervals import comparison_counts, rank_intervals, replicate_ranks
from arena.stats.scales import document_on_scale

# Four replicates of three models. Ranks by hand (1 = best):
#   [3, 2, 1] -> 1 2 3;  [3, 2, 1] -> 1 2 3;  [2, 3, 1] -> 2 1 3;  [1, 2, 3] -> 3 2 1
THETA = np.array([[3.0, 2.0, 1.0], [3.0, 2.0, 1.0], [2.0, 3.0, 1.0], [1.0, 2.0, 3.0]])


def test_replicate_ranks_are_the_positions_best_first() -> None:
    assert replicate_ranks(THETA).tolist() == [[1, 2, 3], [1, 2, 3], [2, 1, 3], [3, 2, 1]]
    # Equal strengths are put in random order (fixed by the input), as for the rank probabilities: the tied models
    # share ranks 2 and 3, the other keeps rank 1 (tests/stats/test_stats_rank_ties.py).
    tied = replicate_ranks(np.array([[0.0, 0.0, 1.0]])).tolist()
    assert tied in ([[2, 3, 1]], [[3, 2, 1]])


def test_a_95_percent_rank_interval_spans_every_rank_a_replicate_gave_when_there_are_few() -> None:
    # With 4 replicates the 2.5th percentile is the smallest rank and the 97.5th the largest (1/4 > 2.5%).
    # Model 0 took ranks {1, 1, 2, 3}; model 1 {2, 2, 1, 2}; model 2 {3, 3, 3, 1}.
    assert rank_intervals(THETA, 0.95).tolist() == [[1, 3], [1, 2], [1, 3]]


def test_a_50_percent_rank_interval_is_the_quartiles_by_order_statistics() -> None:
    # Sorted ranks of model 0: 1 1 2 3 -> the 25th percentile is the first rank whose cumulative share reaches 1/4
    # (rank 1, share 2/4) and the 75th the first reaching 3/4 (rank 2, share 3/4). Model 1: 1 2 2 2 -> 1 (1/4), 2.
    # Model 2: 1 3 3 3 -> 1 (1/4), 3 (4/4).
    assert rank_intervals(THETA, 0.5).tolist() == [[1, 2], [1, 2], [1, 3]]


def test_a_model_that_always_takes_one_place_has_a_one_rank_interval() -> None:
    theta = np.array([[2.0, 1.0, 0.0]] * 50)
    assert rank_intervals(theta).tolist() == [[1, 1], [2, 2], [3, 3]]


@pytest.mark.parametrize("level", [0.0, 1.0, 1.5])
def test_a_level_outside_zero_and_one_is_refused(level: float) -> None:
    with pytest.raises(ValueError, match="level must be strictly between 0 and 1"):
        rank_intervals(THETA, level)


def test_comparisons_count_each_pairs_ordered_judgments_for_both_models() -> None:
    h2h = [
        {"a": "A", "b": "B", "a_wins": 3, "b_wins": 1, "ties": 2},  # 6 judgments, A won 3 of the 4 not tied
        {"a": "A", "b": "C", "a_wins": 0, "b_wins": 0, "ties": 2},  # only TIEs: no share
    ]
    out = comparison_counts(h2h, ["A", "B", "C", "D"])
    assert out["unit"] == "ordered judgment"
    assert out["models"] == {"A": 8, "B": 6, "C": 2, "D": 0}
    assert [(p["a"], p["b"], p["judgments"], p["a_share"]) for p in out["pairs"]] == [("A", "B", 6, 0.75), ("A", "C", 2, None)]


def test_the_elo_scale_maps_strengths_and_interval_ends_and_leaves_ranks_alone() -> None:
    doc = {
        "models": ["A", "B"],
        "bt": {
            "ordered": {"A": {"strength": math.log(10.0), "ci": [0.0, 2 * math.log(10.0)]}, "B": {"strength": -1.0, "ci": None}},
            "scale": "centered natural-log ability (mean 0)",
        },
        "bootstrap": {"rank_intervals": {"A": [1, 2], "B": [1, 2]}},
        "cluster_bootstrap": {"ci": {"A": [0.0, 0.0]}, "fits": {"ordered": {"ci": {"A": [math.log(10.0), math.log(10.0)]}}}},
        "tie_sensitivity": {"scheme_a": {"strengths": {"A": 0.0}}, "scheme_b": {"strengths": {"A": None}}},
        "batches": [{"strengths": {"B": -math.log(10.0)}}],
        "diagnostic": {"prior_weight": {"max_shift": math.log(10.0), "max_shift_ratio": 0.1}},
    }
    elo = document_on_scale(doc, "elo")
    # By hand: 1500 + 400 · θ / ln 10, so θ = ln 10 is 1900 and θ = 0 is 1500; a shift of ln 10 is 400 points.
    assert elo["bt"]["ordered"]["A"] == {"strength": pytest.approx(1900.0), "ci": [pytest.approx(1500.0), pytest.approx(2300.0)]}
    assert elo["bt"]["ordered"]["B"]["strength"] == pytest.approx(1500 - 400 / math.log(10.0))
    assert elo["bt"]["ordered"]["B"]["ci"] is None
    assert elo["cluster_bootstrap"]["ci"]["A"] == [1500.0, 1500.0]
    assert elo["cluster_bootstrap"]["fits"]["ordered"]["ci"]["A"] == [pytest.approx(1900.0)] * 2
    assert elo["tie_sensitivity"]["scheme_a"]["strengths"] == {"A": 1500.0}
    assert elo["tie_sensitivity"]["scheme_b"]["strengths"] == {"A": None}
    assert elo["batches"][0]["strengths"]["B"] == pytest.approx(1100.0)
    assert elo["diagnostic"]["prior_weight"] == {"max_shift": pytest.approx(400.0), "max_shift_ratio": 0.1}
    assert elo["bootstrap"] == doc["bootstrap"]
    assert elo["scale"]["name"] == "elo" and "1500" in elo["bt"]["scale"]
    # The document given is left as it was (a cached document is shared), and the log-ability scale changes nothing.
    assert doc["bt"]["ordered"]["A"]["strength"] == math.log(10.0)
    plain = document_on_scale(doc, "log-ability")
    assert plain["bt"] == doc["bt"] and plain["scale"]["name"] == "log-ability"
    with pytest.raises(ValueError, match="unknown scale 'logit': choose one of log-ability, elo"):
        document_on_scale(doc, "logit")


def _cases(rows: list[tuple[str, str, str, str | None, str | None]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "case": case,
                "context": case,
                "batch": "",
                "model_1": a,
                "model_2": b,
                "original": o,
                "reverse": r,
                "shown_a_original": a,
            }
            for case, a, b, o, r in rows
        ]
    )


def test_the_document_gives_rank_intervals_and_comparisons_from_the_bootstrap_it_drew() -> None:
    # A beats B and C in both orders, every time; B and C split. One pair (A–C) judged in one order only: incomplete.
    rows = [(f"ab{i}", "A", "B", "A", "A") for i in range(6)]
    rows += [(f"bc{i}", "B", "C", "B" if i % 2 else "C", "B" if i % 2 else "C") for i in range(6)]
    rows += [(f"ac{i}", "A", "C", "A", "A") for i in range(5)] + [("ac_open", "A", "C", "A", None)]
    doc = leaderboard_document(_cases(rows), replicates=200, seed=1)
    # Two ordered judgments per complete case: A 6 + 5 cases, B 6 + 6, C 6 + 5; the incomplete case counts for no one.
    assert doc["comparisons"]["models"] == {"A": 22, "B": 24, "C": 22}
    pairs = {(p["a"], p["b"]): (p["judgments"], p["a_share"]) for p in doc["comparisons"]["pairs"]}
    assert pairs[("A", "B")] == (12, 1.0) and pairs[("A", "C")] == (10, 1.0)
    assert pairs.get(("B", "C"), pairs.get(("C", "B")))[0] == 12
    # A wins every resample: always first. B and C trade places.
    assert doc["bootstrap"]["rank_intervals"]["A"] == [1, 1]
    assert doc["bootstrap"]["rank_intervals"]["B"] == [2, 3] and doc["bootstrap"]["rank_intervals"]["C"] == [2, 3]
    # Read from the same replicates as the rank probabilities: each bound is a rank some replicate gave.
    for model, (lo, hi) in doc["bootstrap"]["rank_intervals"].items():
        probabilities = doc["bootstrap"]["rank_probabilities"][model]
        assert probabilities[lo - 1] > 0 and probabilities[hi - 1] > 0, model
        assert sum(probabilities[: lo - 1]) <= 0.025 and sum(probabilities[hi:]) <= 0.025, model
    for kind in ("ordered", "folded", "stable"):
        assert doc["bootstrap"]["fits"][kind]["rank_intervals"]["A"] == [1, 1], kind
    assert doc["bootstrap"]["fits"]["ordered"]["rank_intervals"] == doc["bootstrap"]["rank_intervals"]


def test_a_document_with_nothing_to_fit_has_empty_rank_intervals_and_no_comparisons() -> None:
    doc = leaderboard_document(_cases([("ab0", "A", "B", "A", None)]), replicates=10)
    assert doc["bootstrap"]["rank_intervals"] == {}
    assert doc["comparisons"] == {"unit": "ordered judgment", "models": {"A": 0, "B": 0}, "pairs": []}
