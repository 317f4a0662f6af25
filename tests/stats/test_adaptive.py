"""Adaptive judging (issue 27): the next batch, the stopping rules and the projection, on small hand-built designs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import ndtr

from arena.stats.adaptive import (
    Target,
    adaptive_state,
    all_pair_units,
    judgments_of_units,
    next_batch,
    overlap_gain,
    rule_weights,
    target_met,
    units,
)
from arena.stats.adaptive_projection import draw_outcomes, projection, simulate_run


def state_of(done, outcomes, pending, n_models: int):
    """An adaptive state from judged units (with their two orders' scores of ``a``) and pending units."""
    return adaptive_state(judgments_of_units(done, np.asarray(outcomes, dtype=float), n_models=n_models), pending)


def planted_state(n_models: int = 5, items: int = 8, judged: int = 20, seed: int = 3):
    """A state with ``judged`` units of a full design judged (verdicts from planted strengths), the rest pending."""
    design = all_pair_units([f"i{i}" for i in range(items)], n_models)
    rng = np.random.default_rng(seed)
    outcomes = draw_outcomes(design, np.linspace(0.8, -0.8, n_models), rng)
    order = rng.permutation(len(design))
    done, rest = order[:judged], order[judged:]
    return state_of(design.take(done), outcomes[done], design.take(rest), n_models)


def test_the_same_state_and_seed_give_the_same_batch_whatever_the_order_of_the_pending_units() -> None:
    state = planted_state()
    first = next_batch(state, 6, [11, 2])
    again = next_batch(state, 6, [11, 2])
    shuffled = np.random.default_rng(0).permutation(len(state.pending))
    other = adaptive_state(state.judgments, state.pending.take(shuffled))
    reordered = next_batch(other, 6, [11, 2])

    def keys(batch):
        return list(zip(batch.units.item.tolist(), batch.units.a.tolist(), batch.units.b.tolist(), strict=True))

    assert len(first.index) == 6
    assert keys(first) == keys(again) == keys(reordered)
    # The index points into the pending units as given.
    assert keys(reordered) == [(other.pending.item[i], other.pending.a[i], other.pending.b[i]) for i in reordered.index]
    # A batch never repeats a unit.
    assert len(set(keys(first))) == 6


def test_the_arena_weights_match_a_hand_worked_three_model_case() -> None:
    # Every judgment a tie, so the fit is θ = 0 and each judgment carries information p(1 − p) = 1/4.
    # Pair (0, 1): 2 units (4 judgments), pair (0, 2): 1 unit (2), pair (1, 2): none; pseudo-count c = 0.5 adds
    # 2c = 1 judgment per pair. Conductances g = 1/4 × judgments: g01 = 5/4, g02 = 3/4, g12 = 1/4.
    # Var(θi − θj) is the effective resistance between i and j of that triangle: 1 / (g_ij + g_ik g_jk / (g_ik + g_jk)).
    g01, g02, g12 = 1.25, 0.75, 0.25
    var = {
        (0, 1): 1 / (g01 + g02 * g12 / (g02 + g12)),
        (0, 2): 1 / (g02 + g01 * g12 / (g01 + g12)),
        (1, 2): 1 / (g12 + g01 * g02 / (g01 + g02)),
    }
    n = {(0, 1): 2.5, (0, 2): 1.5, (1, 2): 0.5}  # units judged + c
    hand = {p: math.sqrt(var[p]) * (1 - math.sqrt(n[p] / (n[p] + 1))) for p in var}
    total = sum(hand.values())
    done = units(["x", "y", "x"], [0, 0, 0], [1, 1, 2], n_models=3)
    pending = units(["z", "z", "z"], [0, 0, 1], [1, 2, 2], n_models=3)
    state = state_of(done, [[0.5, 0.5]] * 3, pending, 3)
    pairs, weights = rule_weights(state, rule="arena")
    got = {(int(a), int(b)): float(w) for (a, b), w in zip(pairs, weights, strict=True)}
    assert got == pytest.approx({p: w / total for p, w in hand.items()}, rel=1e-9)
    # Hand values: 0.1292, 0.2303, 0.4985 before normalising; the never-judged pair is the likeliest draw.
    assert hand[(1, 2)] == pytest.approx(0.49853, abs=1e-5)


def test_the_overlap_gain_is_the_expected_drop_in_misorder_chance_by_simulation() -> None:
    # A 4-model covariance (centered), strengths 0.3 apart; relevant pairs: the adjacent ones. For one unit of a
    # candidate pair with information w, the new covariance is inverted afresh here, the estimate's move drawn
    # from N(0, cov − new), and the drop of Σ Φ(−|d|/s) averaged over 500,000 draws.
    rng = np.random.default_rng(1)
    k = 4
    root = rng.normal(size=(k, k))
    center = np.eye(k) - 1.0 / k
    info = center @ (root @ root.T + 2.0 * np.eye(k)) @ center
    cov = np.linalg.pinv(info)
    theta = np.array([0.3, 0.1, -0.1, -0.3])
    rel = (np.array([0, 1, 2]), np.array([1, 2, 3]))
    cand = (np.array([0, 1]), np.array([1, 3]))
    w = np.array([0.5, 0.4])
    gains = overlap_gain(theta, cov, rel, cand, w)
    for c in range(2):
        e = np.zeros(k)
        e[cand[0][c]], e[cand[1][c]] = 1.0, -1.0
        new = np.linalg.pinv(info + w[c] * np.outer(e, e))
        vals, vecs = np.linalg.eigh(cov - new)
        moved = theta + rng.standard_normal((500_000, k)) @ (vecs * np.sqrt(np.clip(vals, 0, None))).T
        drop = 0.0
        for i, j in zip(*rel, strict=True):
            s_now = np.sqrt(cov[i, i] + cov[j, j] - 2 * cov[i, j])
            s_new = np.sqrt(new[i, i] + new[j, j] - 2 * new[i, j])
            drop += ndtr(-abs(theta[i] - theta[j]) / s_now) - ndtr(-np.abs(moved[:, i] - moved[:, j]) / s_new).mean()
        assert gains[c] == pytest.approx(drop, abs=6e-4)  # Monte Carlo standard error under 1.7e-4
    assert gains[0] > gains[1] > 0


def test_a_clear_leader_stops_a_top1_target_and_a_coin_toss_does_not() -> None:
    items = [f"i{i}" for i in range(10)]
    done = all_pair_units(items, 3)
    pending = all_pair_units([f"p{i}" for i in range(30)], 3)
    target = Target("top_k", k=1, alpha=0.05)
    # Model 0 wins both orders of every unit against 1 and 2; 1 and 2 tie.
    clear = [[1.0, 1.0] if a == 0 else [0.5, 0.5] for a in done.a]
    status = target_met(state_of(done, clear, pending, 3), target)
    assert status.met and status.reason == "target"
    assert status.uncertainty < 0.01
    # A less clear leader: 0 wins 15 of its 20 judgments against 1 (P(top-1) about 0.98 > 0.95).
    fifteen = iter([1.0] * 15 + [0.0] * 5)
    mostly = [[next(fifteen), next(fifteen)] if (a, b) == (0, 1) else [1.0, 1.0] for a, b in zip(done.a, done.b, strict=True)]
    status = target_met(state_of(done, mostly, pending, 3), target)
    assert status.reason == "target" and 0.005 < status.uncertainty < 0.05
    assert not target_met(state_of(done, mostly, pending, 3), Target("top_k", k=1, alpha=0.01, settle=False)).met
    # Models 0 and 1 tie every judgment, both beat 2: which of them leads is a coin toss.
    toss = [[0.5, 0.5] if (a, b) == (0, 1) else [1.0, 1.0] for a, b in zip(done.a, done.b, strict=True)]
    status = target_met(state_of(done, toss, pending, 3), target)
    assert not status.met and status.reason == ""
    assert 0.4 < status.uncertainty < 0.6
    assert status.unresolved == 1  # 0 vs 1 unresolved; 0 vs 2 separated


def test_a_coin_toss_the_remaining_units_cannot_change_is_settled() -> None:
    # 40 units of 0 vs 1, 0 slightly ahead (45 of 80 judgments), both far above 2; one unit left to judge.
    done = units([f"i{i}" for i in range(40)] + ["j"] * 2, [0] * 40 + [0, 1], [1] * 40 + [2, 2], n_models=3)
    scores = [[1.0, 1.0]] * 5 + [[1.0, 0.0]] * 35 + [[1.0, 1.0]] * 2
    state = state_of(done, scores, units(["k"], [0], [1], n_models=3), 3)
    status = target_met(state, Target("top_k", k=1, alpha=0.05))
    assert status.uncertainty > 0.05  # not known against the truth ...
    assert status.full_run_change < 0.05  # ... but one more unit cannot move the full run's answer
    assert status.met and status.reason == "settled"


def test_separated_and_budget_targets() -> None:
    items = [f"i{i}" for i in range(12)]
    done = all_pair_units(items, 3)
    pending = all_pair_units(["p"], 3)
    ordered = [[1.0, 1.0]] * len(done)  # the lower index wins every judgment: 0 > 1 > 2, far apart
    state = state_of(done, ordered, pending, 3)
    assert target_met(state, Target("separated")).reason == "target"
    toss = state_of(done, [[0.5, 0.5]] * len(done), pending, 3)
    status = target_met(toss, Target("separated"))
    assert not status.met and status.unresolved == 2
    budget = Target("budget", max_calls=len(done) * 2)
    assert target_met(toss, budget).reason == "budget"
    assert not target_met(toss, Target("budget", max_calls=len(done) * 2 + 2)).met
    # A cost budget: 72 calls at 0.01 each cost 0.72.
    assert target_met(toss, Target("budget", max_cost=0.72, price_per_call=0.01)).reason == "budget"
    # The budget also caps the next batch at the calls it has left (two per unit).
    assert len(next_batch(toss, 5, 0, target=Target("budget", max_calls=len(done) * 2 + 4)).index) == 2


def test_the_projection_counts_the_full_run_by_hand() -> None:
    design = all_pair_units([f"c{i}" for i in range(13)], 4)
    target = Target("top_k", k=1, price_per_call=0.002)
    proj = projection(np.array([1.3, 0.7, -0.7, -1.3]), target, design=design, batch_size=4, simulations=3)
    assert proj.full_calls == 13 * 6 * 2 == 156
    assert proj.full_cost == pytest.approx(156 * 0.002)
    assert 0 < proj.adaptive_calls <= 156 and proj.adaptive_cost == pytest.approx(proj.adaptive_calls * 0.002)
    assert proj.adaptive_ci_width >= proj.full_ci_width > 0
    # From a run under way: the calls made plus two per pending unit.
    state = planted_state(n_models=4, items=5, judged=10)
    from_state = projection(state, target, batch_size=3, simulations=2)
    assert from_state.full_calls == 20 + 2 * (5 * 6 - 10)


def test_adaptive_beats_uniform_sampling_at_equal_calls_on_a_planted_design() -> None:
    # A close leader pair (0.3 apart) far above three others: uniform sampling spends most calls where the top-1 is
    # already known. Both rules get exactly 60 calls (the budget) on the same verdicts, seed by seed.
    theta = np.array([0.3, 0.0, -1.5, -1.7, -1.9])
    design = all_pair_units([f"i{i:02d}" for i in range(12)], 5)
    target = Target("top_k", k=1, alpha=1e-9, max_calls=60)
    right = {"overlap": 0, "uniform": 0}
    for seed in range(30):
        outcomes = draw_outcomes(design, theta, np.random.default_rng(seed))
        for rule in right:
            run = simulate_run(design, outcomes, target, n_models=5, batch_size=6, seed=seed, rule=rule)
            assert run.calls == 60
            right[rule] += int(np.argmax(run.status.theta) == 0)
    assert right["overlap"] >= right["uniform"] + 3, right
