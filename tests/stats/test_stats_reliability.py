"""The judge-reliability statistics (arena.stats.reliability): hand-worked small cases, the fit against an independent
optimiser on the same likelihood, and planted effects whose 95% intervals must cover in 90–98% of seeds."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from arena.stats.reliability import (
    CONFOUNDED,
    NO_FAMILY,
    NO_KNOWN_ORDER,
    NO_OWN_FAMILY,
    RIDGE,
    judge_reliability,
)

NAN = float("nan")


def _small() -> dict[str, np.ndarray]:
    """Five items of participants 0 and 1, both orders each, worked by hand:

    item 0: A first → A wins; B first → A wins   (keeps its verdict)
    item 1: A first → A wins; B first → B wins   (flips: the first shown won both times, primacy)
    item 2: A first → B wins; B first → A wins   (flips: the second shown won both times, recency)
    item 3: A first → tie;    B first → invalid  (not valid in both orders)
    item 4: A first → tie;    B first → tie      (valid in both orders, a tie: does not keep a verdict)
    Words: A is longer in items 0 and 1 (100 against 50), shorter in item 2 (10 against 20), unknown after.
    """
    return {
        "item": np.array([0, 0, 1, 1, 2, 2, 3, 3, 4, 4]),
        "side_a": np.zeros(10, dtype=int),
        "side_b": np.ones(10, dtype=int),
        "a_first": np.array([1, 0] * 5),
        "outcome": np.array([1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.5, NAN, 0.5, 0.5]),
        "words_a": np.array([100, 100, 100, 100, 10, 10, NAN, NAN, NAN, NAN], dtype=float),
        "words_b": np.array([50, 50, 50, 50, 20, 20, NAN, NAN, NAN, NAN], dtype=float),
    }


def test_the_counts_of_a_hand_worked_run() -> None:
    r = judge_reliability(**_small(), replicates=0)
    assert (r.verdicts, r.valid, r.invalid, r.ties) == (10, 9, 1, 3)
    # Items 0, 1, 2 and 4 have both orders valid; only item 0 keeps its verdict.
    assert (r.consistency.items, r.consistency.consistent, r.consistency.flipped, r.consistency.with_tie) == (4, 1, 2, 1)
    assert r.consistency.share == pytest.approx(1 / 4)
    # Decisive verdicts with a known order: 6; the first shown won in item 0 once (A first), item 1 twice, item 2 never.
    assert (r.first_shown.decisive, r.first_shown.first_wins) == (6, 3)
    assert (r.first_shown.items, r.first_shown.primacy, r.first_shown.recency) == (3, 1, 1)
    assert r.first_shown.fairness == 0.0
    # Longer wins: items 0 (A longer, A wins twice), 1 (A longer: A wins, then B wins), 2 (B longer: B wins, then A).
    assert (r.longer_wins.agree, r.longer_wins.n) == (4, 6)
    assert (r.shorter_wins.agree, r.shorter_wins.n) == (2, 6)
    assert (r.first_wins.agree, r.first_wins.n) == (3, 6)


def test_a_run_without_recorded_positions_still_has_its_consistency_but_no_order_effect() -> None:
    data = _small() | {"a_first": np.full(10, -1), "order": np.array([0, 1] * 5)}
    r = judge_reliability(**data, replicates=0)
    assert (r.consistency.items, r.consistency.consistent) == (4, 1)
    assert r.first_shown.decisive == 0 and r.first_shown.share is None
    assert not r.order_effect.estimable and r.order_effect.reason == NO_KNOWN_ORDER
    assert r.self_preference.reason == NO_FAMILY


def _simulate(seed: int, *, contexts: int = 30, gamma: float = 0.4, delta: float = 0.6, reference: bool = True) -> dict:
    """Four participants (the first of the judge's family) judged on every pair of every context in both orders by
    the run's judge (first-shown advantage ``gamma``, self-preference ``delta``) and, with ``reference``, by a judge of
    another family (first-shown advantage −0.2, no self-preference)."""
    rng = np.random.default_rng(seed)
    beta = np.array([0.8, 0.2, -0.3, -0.7])
    family = np.array([True, False, False, False])
    rows = []
    item = 0
    judges = ((0, gamma, delta), (1, -0.2, 0.0)) if reference else ((0, gamma, delta),)
    for _ in range(contexts):
        for i in range(4):
            for j in range(i + 1, 4):
                for judge, g, d in judges:
                    for a_first in (1, 0):
                        own_a, own_b = (bool(family[i]), bool(family[j])) if judge == 0 else (False, False)
                        eta = beta[i] - beta[j] + g * (1 if a_first else -1) + d * (float(own_a) - float(own_b))
                        rows.append((item, i, j, a_first, float(rng.random() < 1 / (1 + np.exp(-eta))), judge, own_a, own_b))
                item += 1
    a = np.array(rows, dtype=float)
    names = ("item", "side_a", "side_b", "a_first", "outcome", "judge", "own_a", "own_b")
    return {name: a[:, k] for k, name in enumerate(names)}


def _independent_fit(data: dict) -> np.ndarray:
    """The same penalised likelihood, one row per verdict, minimised by scipy's BFGS: (β0..β3, γ0, γ1, δ)."""
    keep = data["outcome"] != 0.5
    a, b = data["side_a"][keep].astype(int), data["side_b"][keep].astype(int)
    s = np.select([data["a_first"][keep] == 1, data["a_first"][keep] == 0], [1.0, -1.0], 0.0)
    judge = data["judge"][keep].astype(int)
    own = np.where(judge == 0, data["own_a"][keep] - data["own_b"][keep], 0.0)
    y = data["outcome"][keep]

    def loss(t: np.ndarray) -> float:
        eta = t[a] - t[b] + t[4 + judge] * s + t[6] * own
        return float(np.sum(np.logaddexp(0, eta) - y * eta) + RIDGE / 2 * np.sum(t[:4] ** 2))

    return minimize(loss, np.zeros(7), method="BFGS", options={"gtol": 1e-9}).x


@pytest.mark.parametrize("reference_order_known", [True, False])
def test_the_fit_agrees_with_an_independent_optimiser_of_the_same_likelihood(reference_order_known: bool) -> None:
    """Also when the reference run did not record which side was shown first (as the release): its verdicts then inform
    the strengths only (s = 0)."""
    data = _simulate(7)
    if not reference_order_known:
        data["a_first"][data["judge"] == 1] = -1
    r = judge_reliability(**data, replicates=0)
    expected = _independent_fit(data)
    assert r.order_effect.estimate == pytest.approx(expected[4], abs=1e-5)
    assert r.self_preference.estimate == pytest.approx(expected[6], abs=1e-5)


def test_the_bootstrap_resamples_items_so_a_verdict_repeated_within_its_item_adds_nothing() -> None:
    """Every verdict stored twice under its item: the estimates and intervals stay as they were (a bootstrap of single
    verdicts would take the copies for independent evidence and narrow the intervals by about √2)."""
    data = _simulate(3)
    twice = {name: np.concatenate([values, values]) for name, values in data.items()}
    once, doubled = judge_reliability(**data, replicates=200, seed=5), judge_reliability(**twice, replicates=200, seed=5)
    for a, b in ((once.order_effect, doubled.order_effect), (once.self_preference, doubled.self_preference)):
        assert b.estimate == pytest.approx(a.estimate, abs=2e-3)
        assert np.diff(b.ci)[0] == pytest.approx(np.diff(a.ci)[0], rel=0.02)


def test_one_judge_alone_cannot_tell_self_preference_from_strength() -> None:
    r = judge_reliability(**_simulate(1, reference=False), replicates=20)
    assert r.order_effect.estimable and r.order_effect.ci is not None
    assert not r.self_preference.estimable and r.self_preference.reason == CONFOUNDED
    assert r.own_family["decisive"] > 0


def test_no_participant_of_the_judges_family_means_no_self_preference() -> None:
    data = _simulate(2)
    data["own_a"][:] = 0
    data["own_b"][:] = 0
    r = judge_reliability(**data, replicates=0)
    assert r.self_preference.reason == NO_OWN_FAMILY


def test_planted_effects_are_covered_by_the_95_percent_intervals_in_90_to_98_percent_of_seeds() -> None:
    covered_gamma = covered_delta = 0
    seeds = 100
    for seed in range(seeds):
        r = judge_reliability(**_simulate(seed), replicates=200, seed=seed)
        low, high = r.order_effect.ci
        covered_gamma += low <= 0.4 <= high
        low, high = r.self_preference.ci
        covered_delta += low <= 0.6 <= high
    assert 90 <= covered_gamma <= 98
    assert 90 <= covered_delta <= 98
