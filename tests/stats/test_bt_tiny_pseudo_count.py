"""Bradley–Terry fits under a tiny pseudo-count (review): the weakest model's π underflowed to 0 and the next step
divided 0 by 0, so a fully ordered set of models gave NaN strengths (and the leaderboard API an HTTP 500) at
pseudo-count 1e-300 with 3 models, 1e-50 with 8, 1e-20 with 20, 1e-6 with 50. π is now held above a floor; the
strengths are finite, in the data's order, and clipped to the cap as a divergent fit's are."""

from __future__ import annotations

import numpy as np
import pytest

from arena.stats.bt import DEFAULT_CAP, fit_bt, fit_bt_batch


def _ordered(k: int, wins: float = 5.0) -> np.ndarray:
    """Model i beat model j ``wins`` times for every i < j, and never lost to a later one."""
    return np.triu(np.full((k, k), wins), 1)


@pytest.mark.parametrize(("k", "pseudo_count"), [(3, 1e-300), (8, 1e-50), (20, 1e-20), (50, 1e-6)])
def test_a_fully_ordered_set_under_a_tiny_pseudo_count_has_finite_ordered_strengths(k: int, pseudo_count: float) -> None:
    with np.errstate(divide="raise", invalid="raise"):  # no division by zero, no 0/0 on the way
        fit = fit_bt(_ordered(k), pseudo_count=pseudo_count)
    theta = fit.theta
    assert np.isfinite(theta).all()
    assert (np.diff(theta) <= 0).all(), "the strengths follow the order of the wins"
    assert theta[0] == DEFAULT_CAP and theta[-1] == -DEFAULT_CAP  # far beyond the cap both ways: clipped
    assert not fit.diverged  # the pseudo-count connects every pair: the MLE exists, it is only extreme


def test_a_batch_mixing_tiny_and_ordinary_fits_keeps_the_ordinary_ones() -> None:
    # Two models, 3 wins to 1 and 1 to 3 with pseudo-count 0.5 on each side: θ0 − θ1 = ln(3.5 / 1.5) by hand.
    ordinary = np.array([[0.0, 3.0], [1.0, 0.0]])
    w = np.stack([ordinary, _ordered(2, 4.0)])
    fit = fit_bt_batch(w, pseudo_count=0.5)
    assert fit.theta[0, 0] - fit.theta[0, 1] == pytest.approx(np.log(3.5 / 1.5), abs=1e-9)
    tiny = fit_bt_batch(np.stack([_ordered(3), _ordered(3)]), pseudo_count=1e-300)
    assert np.isfinite(tiny.theta).all() and np.array_equal(tiny.theta[0], tiny.theta[1])
