"""Win rate per model with its count and item-bootstrap CI (the leaderboard's "Human WR"), on hand-made labels."""

from __future__ import annotations

import pandas as pd
import pytest

from arena.stats import win_rates


def labels(rows: list[tuple[str, str, str, str]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["item", "model_1", "model_2", "winner"])


HAND = labels(
    [
        ("i1", "X", "Y", "X"),
        ("i1", "X", "Y", "X"),
        ("i1", "X", "Y", "TIE"),
        ("i2", "X", "Z", "Z"),
        ("i2", "X", "Z", "INVALID"),
        ("i3", "Y", "Z", "Y"),
    ]
)


def test_rates_count_ties_as_half_and_drop_invalid_labels() -> None:
    res = win_rates(HAND, replicates=4000, seed=2)
    models = res["models"]
    # X: 1 + 1 + 0.5 on i1, 0 on i2 (the INVALID label is dropped) = 2.5 over 4 labels in 2 items.
    # Z: 1 on i2, 0 on i3 = 1 over 2.  Y: 0 + 0 + 0.5 on i1, 1 on i3 = 1.5 over 4.
    assert list(models) == ["X", "Z", "Y"]
    assert {m: (v["rate"], v["n"], v["items"]) for m, v in models.items()} == {
        "X": (0.625, 4, 2),
        "Z": (0.5, 2, 2),
        "Y": (0.375, 4, 2),
    }
    assert res["method"].startswith("item bootstrap") and res["level"] == 0.95


def test_the_ci_resamples_items_with_all_their_labels() -> None:
    # X's rate in a replicate is 2.5·c1 / (3·c1 + c2) for c1 copies of i1 and c2 of i2 among 3 items drawn.
    # Only i2 (no i1) is drawn with probability 7/27 (rate 0), only i1 with 7/27 (rate 2.5/3): both tails hold
    # far more than 2.5% of the replicates, so the 95% interval is [0, 5/6].
    ci = win_rates(HAND, replicates=4000, seed=2)["models"]["X"]["ci"]
    assert ci == [0.0, pytest.approx(2.5 / 3)]


def test_a_model_seen_in_one_item_has_no_interval_and_no_labels_give_no_models() -> None:
    one = win_rates(labels([("i1", "X", "Y", "X"), ("i1", "X", "Y", "Y")]))
    assert one["models"]["X"] == {"rate": 0.5, "n": 2, "items": 1, "ci": None}
    assert win_rates(labels([("i1", "X", "Y", "INVALID")]))["models"] == {}
    assert win_rates(labels([]))["models"] == {}
