"""Issue 25: the cluster draw from 4,096 contexts on (:class:`arena.stats.bootstrap._ContextCounts`, a new stream).

Resampling C contexts with replacement gives context counts Multinomial(C, 1/C). The fast sampler draws
independent Poisson counts two contexts per 16-bit lookup and corrects their sum to C; these tests check the
law exactly on a tiny C (chi-square over every composition, both corrections exercised), its marginals and
sums at a size where the fast path is the default, seeds and chunking, and that the cluster bootstrap's CIs
match the issue-10 sampler (``rng.integers`` + ``bincount``) within Monte Carlo error.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import sparse, stats

from arena.stats import bootstrap as bootstrap_module
from arena.stats import bootstrap_fits, encode_cases, percentile_ci
from arena.stats.bootstrap import draw_context_counts
from bench.synthetic import synthetic_cases


def _identity(n_ctx: int) -> sparse.csr_matrix:
    """A (C, C) table whose type counts are the context counts themselves."""
    return sparse.identity(n_ctx, dtype=np.int64, format="csr")


def _chi2_p(observed: np.ndarray, p: np.ndarray) -> float:
    """Chi-square p-value of counts against probabilities, cells expected below 5 pooled into one."""
    r = observed.sum()
    keep = p * r >= 5
    obs, exp = observed[keep], p[keep] * r
    if not keep.all():
        obs, exp = np.append(obs, observed[~keep].sum()), np.append(exp, p[~keep].sum() * r)
    chi2 = float(((obs - exp) ** 2 / exp).sum())
    return float(stats.chi2.sf(chi2, len(obs) - 1))


@pytest.mark.parametrize("lookup", ["table", "refined"])
def test_fast_cluster_draw_has_the_exact_multinomial_law_on_five_contexts(lookup: str) -> None:
    # C = 5: every composition x of 5 into 5 parts has P(x) = 5! / Π x_c! / 5^5 (126 cells). The Poisson mean
    # is 0.5 at this size, so the sum misses 5 both ways (adds, and removals in ~4% of replicates). "table":
    # the 16-bit lookups as they are (the cells needing more bits are hit ~80 times in all); "refined": every
    # cell marked as needing more bits, so every pair comes from the refinement.
    c, r = 5, 60_000
    sampler = bootstrap_module._ContextCounts(c)
    if lookup == "refined":
        sampler.lut[:] = sampler.SPLIT
    rng = np.random.default_rng(21)
    draws = np.concatenate([sampler.draw_block(100, rng, np.float64).T for _ in range(r // 100)]).astype(np.int64)
    assert (draws.sum(axis=1) == c).all()
    cells = [x for x in itertools.product(range(c + 1), repeat=c) if sum(x) == c]
    p = np.array([math.factorial(c) / math.prod(math.factorial(v) for v in x) / c**c for x in cells])
    assert p.sum() == pytest.approx(1.0)
    index = {x: i for i, x in enumerate(cells)}
    observed = np.bincount([index[tuple(d)] for d in draws.tolist()], minlength=len(cells))
    assert _chi2_p(observed, p) > 1e-3


def test_fast_cluster_draw_is_the_default_and_has_binomial_marginals() -> None:
    # 6,000 contexts (fast path by default): every replicate sums to C and each context's count is
    # Binomial(C, 1/C): the pooled histogram of counts against it, and the correlation of two counts (-1/(C-1)).
    c, r = 6000, 400
    assert c >= bootstrap_module._FAST_MIN_CONTEXTS
    draws = draw_context_counts(_identity(c), r, np.random.default_rng(2))
    assert (draws.sum(axis=1) == c).all()
    hist = np.bincount(draws.ravel(), minlength=8)[:8]
    p = stats.binom.pmf(np.arange(8), c, 1 / c)
    observed = np.append(hist, draws.size - hist.sum())
    assert _chi2_p(observed, np.append(p, 1 - p.sum())) > 1e-3
    # Per context mean 1: the mean over replicates of each context is ~N(1, 1/R); over all C, |z| < 5.5.
    z = (draws.mean(axis=0) - 1.0) * np.sqrt(r)
    assert np.abs(z).max() < 5.5


def test_fast_cluster_draw_seed_and_chunking() -> None:
    rng = np.random.default_rng(0)
    table = sparse.random(5000, 40, density=0.05, format="csr", random_state=rng, data_rvs=lambda n: rng.integers(1, 4, n))
    whole = draw_context_counts(table, 150, np.random.default_rng(3))
    # Chunks of any size (blocks of 64 are drawn whole and served in pieces) give the values of one draw.
    sampler = bootstrap_module._ClusterCounts(table, 150, np.random.default_rng(3))
    parts = np.concatenate([sampler.take(m) for m in (7, 1, 64, 78)])
    assert np.array_equal(whole, parts)
    with pytest.raises(ValueError, match="only 0 of the replicates are left"):
        sampler.take(1)
    assert not np.array_equal(whole, draw_context_counts(table, 150, np.random.default_rng(4)))
    # Type counts are the context counts through the table (checked with the context counts of an identity).
    ctx = draw_context_counts(_identity(5000), 150, np.random.default_rng(3))
    assert np.array_equal(whole, ctx @ table.toarray())


def test_fast_cluster_bootstrap_does_not_depend_on_the_chunk_size(monkeypatch: pytest.MonkeyPatch) -> None:
    enc = encode_cases(synthetic_cases(4200, 6, tie_prob=0.05, seed=4).cases)
    run = lambda: bootstrap_fits(enc, unit="context", kinds=("ordered",), replicates=150, seed=8)  # noqa: E731
    whole = run()
    monkeypatch.setattr(bootstrap_module, "_CHUNK_ELEMENTS", 36 * 9)  # 9 replicates per chunk at 6 models
    chunked = run()
    assert np.array_equal(whole.theta["ordered"], chunked.theta["ordered"])


def test_fast_cluster_bootstrap_cis_match_the_issue_10_draw_within_monte_carlo_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Same data (1,500 contexts of 3 models), both samplers, independent streams, R = 2000 each; bounds as in
    # test_stats_bootstrap_draws.py (4 Monte Carlo SE per model: 0.34 SD for CI ends, 0.15 SD means, 10% SDs).
    enc = encode_cases(synthetic_cases(1500, 12, models_per_context=3, tie_prob=0.1, seed=9).cases)
    r = 2000
    monkeypatch.setattr(bootstrap_module, "_FAST_MIN_CONTEXTS", 0)
    fast = bootstrap_fits(enc, unit="context", kinds=("ordered",), replicates=r, seed=1).theta["ordered"]
    monkeypatch.setattr(bootstrap_module, "_FAST_MIN_CONTEXTS", 10**9)
    old = bootstrap_fits(enc, unit="context", kinds=("ordered",), replicates=r, seed=2).theta["ordered"]
    sd = old.std(axis=0)
    assert fast.std(axis=0) == pytest.approx(sd, rel=0.1)
    assert (np.abs(percentile_ci(fast) - percentile_ci(old)) < 0.34 * sd[:, None]).all()
    assert (np.abs(fast.mean(axis=0) - old.mean(axis=0)) < 0.15 * sd).all()


def test_context_ids_that_differ_only_by_a_trailing_nul_stay_two_clusters() -> None:
    # The table sorts the distinct ids as numpy strings, which drop a trailing NUL: "c1" and "c1\x00" were one cluster
    # (review). Ids with a NUL are sorted as Python strings.
    from arena.stats.bootstrap import context_type_table
    from arena.stats.matrices import case_types

    cases = synthetic_cases(6, 4, seed=4).cases.copy()
    ids = sorted(cases["context"].astype(str).unique())
    cases["context"] = cases["context"].astype(str).map({ids[0]: "c1", ids[1]: "c1\x00"}).fillna(cases["context"].astype(str))
    enc = encode_cases(cases)
    table = context_type_table(enc, case_types(enc))
    assert table.shape[0] == len(set(enc.context[enc.complete]))
    assert table.shape[0] == 6
