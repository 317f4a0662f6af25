"""Issue 25: the faster bootstrap draws and fits give the old values (same stream) or the old distribution.

* The cluster draw's block-wise product: bit for bit the issue-10 per-replicate draw (kept verbatim in
  bench/bench_scale_stats.py as ``context_counts_reference``).
* The blocked dense Newman fit: bit for bit the unblocked one (one block as large as the batch).
* The case draw through Poisson counts corrected to n (large data): a new stream of the same
  Multinomial(n, p); checked against the exact law on a small case (chi-square), by its moments on a large
  one, and by the bootstrap CIs against numpy's multinomial within Monte Carlo error.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from arena.stats import bootstrap as bootstrap_module
from arena.stats import bootstrap_fits, bt, encode_cases, fit_bt, fit_bt_batch, percentile_ci, win_matrix
from arena.stats.bootstrap import context_type_table, draw_case_counts, draw_context_counts
from arena.stats.matrices import case_types, win_matrices_from_counts
from bench.bench_scale_stats import context_counts_reference, fit_bt_batch_reference
from bench.synthetic import synthetic_cases


@pytest.fixture(scope="module")
def uneven_enc():  # type: ignore[no-untyped-def]
    """Contexts of 6 and of 10 cases (two sizes on purpose), ties, 6 models."""
    full = synthetic_cases(120, 6, models_per_context=5, tie_prob=0.05, seed=6).cases
    keep = full.index % 10 < np.where(full["context"].str[3:].astype(int) % 2 == 0, 10, 6)
    return encode_cases(full[keep])


@pytest.mark.parametrize("replicates", [1, 15, 64, 130])
def test_cluster_draw_equals_issue_10_draw(uneven_enc, replicates: int) -> None:  # type: ignore[no-untyped-def]
    types = case_types(uneven_enc)
    table = context_type_table(uneven_enc, types)
    new = draw_context_counts(table, replicates, np.random.default_rng(5))
    old = context_counts_reference(table, replicates, np.random.default_rng(5))
    assert new.dtype == old.dtype
    assert np.array_equal(new, old)


def test_blocked_newman_equals_one_block(monkeypatch: pytest.MonkeyPatch) -> None:
    enc = encode_cases(synthetic_cases(400, 12, theta_sd=1.5, tie_prob=0.05, seed=2).cases)
    types = case_types(enc)
    w = win_matrices_from_counts(types, draw_case_counts(types, 50, np.random.default_rng(0)), "ordered")
    point = fit_bt(win_matrix(enc, "ordered"), pseudo_count=0.5).theta
    settings = ((0.5, point), (0.5, None), (0.0, None))
    monkeypatch.setattr(bt, "_NEWMAN_BLOCK_ELEMENTS", 10**12)  # one block: the code before issue 25
    one = [fit_bt_batch(w, pseudo_count=p, init=i) for p, i in settings]
    monkeypatch.setattr(bt, "_NEWMAN_BLOCK_ELEMENTS", 7 * 144)  # 7 replicates per block (12 models), 8 blocks
    for (p, i), ref in zip(settings, one, strict=True):
        blocked = fit_bt_batch(w, pseudo_count=p, init=i)
        assert np.array_equal(blocked.theta, ref.theta)
        assert np.array_equal(blocked.iterations, ref.iterations)
        assert np.array_equal(blocked.converged, ref.converged)
    # And the value is the MLE: the old MM (bench reference) to 1e-8.
    assert np.abs(one[0].theta - fit_bt_batch_reference(w, pseudo_count=0.5, init=point, tol=1e-13)).max() < 1e-8


def _sparse_types(n_types: int = 5000, seed: int = 0):  # type: ignore[no-untyped-def]
    """Case types of a sparse data set: 200 models, few cases per type (the Poisson path by default)."""
    enc = encode_cases(synthetic_cases(n_types // 2, 200, models_per_context=3, tie_prob=0.1, seed=seed).cases)
    return enc, case_types(enc)


def test_poisson_sampler_has_the_exact_multinomial_law_on_a_small_case() -> None:
    # counts (1, 2, 4), n = 7: P(x) = 7! / (x0! x1! x2!) (1/7)^x0 (2/7)^x1 (4/7)^x2 for every x summing to 7.
    # Poisson totals differ from 7 in ~85% of draws, so both corrections (drop, add) are exercised.
    sampler = bootstrap_module._PoissonMultinomial(np.array([1, 2, 4]))
    rng = np.random.default_rng(11)
    r = 40_000
    draws = np.array([sampler.draw(rng) for _ in range(r)])
    assert (draws.sum(axis=1) == 7).all()
    cells = [(a, b, 7 - a - b) for a in range(8) for b in range(8 - a)]
    p = np.array(
        [
            math.factorial(7) / math.prod(math.factorial(v) for v in x) * (1 / 7) ** x[0] * (2 / 7) ** x[1] * (4 / 7) ** x[2]
            for x in cells
        ]
    )
    index = {x: i for i, x in enumerate(cells)}
    observed = np.bincount([index[tuple(d)] for d in draws.tolist()], minlength=len(cells))
    keep = p * r >= 5  # pool the rare cells (expected < 5) into one
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = np.append(p[keep] * r, p[~keep].sum() * r)
    chi2 = float(((obs - exp) ** 2 / exp).sum())
    # 0.999 quantile of chi-square with len(obs) - 1 (about 25) degrees of freedom is below 55.
    assert chi2 < stats.chi2.ppf(0.999, len(obs) - 1), chi2


def test_poisson_path_is_taken_and_has_multinomial_moments() -> None:
    _, types = _sparse_types()
    n, t = int(types.counts.sum()), types.n_types
    values = np.unique(types.counts)
    assert t >= bootstrap_module._POISSON_MIN_TYPES
    assert (values + 12 * np.sqrt(values) + 30).sum() <= bootstrap_module._POISSON_MAX_TABLE
    r = 3000
    draws = draw_case_counts(types, r, np.random.default_rng(1))
    assert (draws.sum(axis=1) == n).all()
    p = types.counts / n
    # Exact moments of Multinomial(n, p): mean n p, variance n p (1 - p), covariance -n p_i p_j. With R
    # draws the standardised mean error of every type is ~N(0, 1): |z| < 5 for all T of them (a broken
    # sampler, e.g. uniform over types, gives |z| in the hundreds).
    var = n * p * (1 - p)
    z = (draws.mean(axis=0) - n * p) / np.sqrt(var / r)
    assert np.abs(z).max() < 5.5
    # Variances: the mean over types of sample var / exact var is 1 within ~ sqrt(2 / R / T)-ish.
    assert (draws.var(axis=0, ddof=1) / var).mean() == pytest.approx(1.0, abs=0.02)
    # Covariance of the two largest types: -n p_i p_j.
    i, j = np.argsort(-types.counts)[:2]
    cov = np.cov(draws[:, i], draws[:, j])[0, 1]
    assert cov == pytest.approx(-n * p[i] * p[j], abs=5 * np.sqrt(var[i] * var[j] / r))


def test_poisson_path_chunking_and_seed() -> None:
    _, types = _sparse_types()
    whole = draw_case_counts(types, 30, np.random.default_rng(3))
    rng = np.random.default_rng(3)
    parts = np.concatenate([draw_case_counts(types, m, rng) for m in (7, 1, 22)])
    assert np.array_equal(whole, parts)
    assert not np.array_equal(whole, draw_case_counts(types, 30, np.random.default_rng(4)))


def test_poisson_bootstrap_cis_match_multinomial_within_monte_carlo_error(monkeypatch: pytest.MonkeyPatch) -> None:
    # Same data, both samplers, independent streams, R = 2000 each. Monte Carlo SE of a 2.5% / 97.5% percentile
    # endpoint: sqrt(q(1 - q) / R) / f(x_q) = 0.060 SD for a normal, so two independent runs differ by ~0.085 SD
    # (0.032 SD for the means, 1.6% × √2 for the SDs). With 12 models × 2 endpoints the largest |z| of two
    # multinomial runs was 2.4-3.1 in trials; the bounds below are 4 SE per model (0.34 SD, 0.15 SD, 10%).
    enc = encode_cases(synthetic_cases(1500, 12, models_per_context=3, tie_prob=0.1, seed=9).cases)
    monkeypatch.setattr(bootstrap_module, "_POISSON_MIN_TYPES", 0)  # Poisson path on this small data
    r = 2000
    poisson = bootstrap_fits(enc, kinds=("ordered",), replicates=r, seed=1).theta["ordered"]
    monkeypatch.setattr(bootstrap_module, "_POISSON_MIN_TYPES", 10**9)  # numpy's multinomial
    multi = bootstrap_fits(enc, kinds=("ordered",), replicates=r, seed=2).theta["ordered"]
    sd = multi.std(axis=0)
    assert poisson.std(axis=0) == pytest.approx(sd, rel=0.1)
    assert (np.abs(percentile_ci(poisson) - percentile_ci(multi)) < 0.34 * sd[:, None]).all()
    assert (np.abs(poisson.mean(axis=0) - multi.mean(axis=0)) < 0.15 * sd).all()


def test_poisson_inversion_equals_a_search_of_each_types_cdf() -> None:
    # The guide table and the stepping (all types one step, then only those still short) must give, for every
    # type, searchsorted(F_t, u_t, "left") on the Poisson(c_t) CDF (scipy.special.pdtr, last entry 1). Half the
    # uniforms sit in the top 1e-3 of [0, 1), where a table's tail entries crowd into its last guide cell
    # and a u needs many steps.
    from scipy import special

    counts = np.array([1, 1, 2, 3, 5, 9, 9, 40, 41, 250, 1000] * 30)
    sampler = bootstrap_module._PoissonMultinomial(counts)
    rng = np.random.default_rng(12)
    for u in (rng.random(len(counts)), 1 - 1e-3 * rng.random(len(counts)), np.nextafter(1.0, 0) * np.ones(len(counts))):
        expect = []
        for c, ut in zip(counts.tolist(), u.tolist(), strict=True):
            cdf = special.pdtr(np.arange(int(c + 12 * np.sqrt(c) + 30)), c)
            cdf[-1] = 1.0
            expect.append(int(np.searchsorted(cdf, ut, side="left")))
        assert sampler.invert(u).tolist() == expect


def test_context_table_codes_follow_sorted_context_ids_in_any_row_order() -> None:
    # Contexts interleaved and repeated in runs: rows of the table follow the sorted context ids.
    enc = encode_cases(synthetic_cases(40, 5, seed=1).cases)
    order = np.random.default_rng(0).permutation(len(enc.case))
    for e in (enc, enc.subset(order)):  # grouped by context (the usual layout), and shuffled
        types = case_types(e)
        table = context_type_table(e, types).toarray()
        ids = sorted(set(e.context[e.complete].tolist()))
        ctx = e.context[e.complete]
        expect = np.zeros_like(table)
        for case_type, c in zip(types.of_case.tolist(), ctx.tolist(), strict=True):
            expect[ids.index(c), case_type] += 1
        assert np.array_equal(table, expect)
