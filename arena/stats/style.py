"""Style control: Bradley–Terry with style covariates of the judged texts (issue 26).

Model (as Chatbot Arena's style control): P(a ≻ b) = σ(β_a − β_b + γᵀ z_ab), where z_ab are the standardised
style differences s_a − s_b (length in words, cited-paper count, structure, …). β are the style-controlled
strengths (centered, mean 0), γ the style coefficients. A judge that rewards length shows γ_length > 0, and a
verbose model's plain BT strength absorbs that reward, which β does not.

Standardisation divides each difference column by its root mean square (not by its SD around the mean): the
model stays antisymmetric (swapping a and b flips z), γ is the effect of one typical difference, and
``gamma_raw = gamma / scale`` is the effect per unit (per word, per citation).

Fit: Newton's method with step halving on the (quasi-)log-likelihood (ties y = 0.5), parameters (β_1…β_{K−1}, γ)
with β_0 = 0, centered afterwards. It stops when the sup-norm of the gradient divided by the number of
judgments is below ``tol`` (:data:`DEFAULT_GRAD_TOL` = 1e-9, i.e. the gradient of the mean log-likelihood; a
port of the arena's style control that stopped early was found reordering a whole leaderboard). The
pseudo-count c adds c wins each way to every pair with zero style difference, exactly the prior of
:func:`arena.stats.bt.fit_bt`, so with no covariates the fit equals ``fit_bt(W, pseudo_count=c)``.

Bootstrap: clusters (contexts) are resampled as in :mod:`arena.stats.pairwise`; a replicate is the same fit with
each judgment weighted by its cluster's count, and all replicates run Newton together (a batch of weighted fits,
warm-started at the point estimate). The first step is taken from per-cluster sums at the point estimate, where
every replicate has the same η (:func:`_cluster_sums`, :func:`_first_steps`); then one Newton step checked by the gradient alone
(:func:`_newton_checked`), and a replicate not converged by then is finished by full Newton with step halving from
its first step. Every replicate stops on the same gradient criterion as the point fit, so the result is the same fit
whichever iterations reach it (the tests check it against one fit per replicate). The scale stays that of the
full data.

Cost: identical judgments (same cluster, models and style difference: in Lit2Test the two presentation orders of a
case) are aggregated once into weighted rows sorted by model pair (O(n log n)). Per Newton iteration and replicate
the work is O(rows·(p + 2)) elementwise, with the model block of the information a weighted Laplacian of per-pair
sums (``np.add.reduceat`` over contiguous rows), the cross blocks per-pair sums mapped by the pairs' edges and the
style block a (rows, p²) product; then O((K + p)³) for the solve. The bootstrap is chunked so at most ~0.5M (R·rows)
values live in each array. Nothing grows quadratically in the number of judgments, and no (rows, K) design exists.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse
from scipy.special import expit

from .bootstrap import as_generator, percentile_ci
from .bt import blas_single_threaded_call, fit_bt, ranking_from_theta
from .pairwise import PairJudgments
from .rank_intervals import replicate_ranks

#: Convergence: sup-norm of the log-likelihood gradient / number of judgments (the mean log-likelihood's gradient).
DEFAULT_GRAD_TOL = 1e-9
#: Newton iterations before a fit is reported unconverged (Newton needs ~5-10 from a cold start here).
DEFAULT_MAX_ITER = 100
#: Step halvings tried per iteration before accepting the smallest step.
_MAX_HALVINGS = 30
#: R·rows values of one bootstrap chunk: 4 MB per (R, rows) array, so that an iteration's arrays stay in cache
#: (at 2M values the same work took 3x longer on this machine: every product then streams from memory).
_CHUNK_ELEMENTS = 500_000


@dataclass(frozen=True)
class _Design:
    """The aggregated design of a style fit: distinct data rows, then the prior's pseudo-rows, grouped by pair.

    Judgments that share their cluster, models and style difference are one row with weight ``w`` (their count)
    and score ``y`` (their mean score): the log-likelihood is linear in y for a fixed η, so the fit is unchanged
    and a cluster's bootstrap weight multiplies the row. In Lit2Test both presentation orders of a case are such
    a pair of judgments, so the rows halve. Rows are sorted by their unordered model pair, so every per-pair sum
    is one ``np.add.reduceat`` over contiguous slices.

    Attributes:
        k, p: models and style features.
        sign: +1 when the row's a is its pair's lower model index, −1 otherwise (rows,).
        pair: index of the row's pair in ``lo``/``hi`` (rows,); ``starts`` the first row of each pair;
            ``signed_pair`` the pair's index, plus P when the row is oriented against its pair (sign −1).
        lo, hi: the pairs' model indices (P,); ``edge`` (P, K) is e_lo − e_hi; ``lap`` (P, K·K) maps a pair's
            curvature to the Laplacian cells (+1 at (lo, lo), (hi, hi), −1 at (lo, hi), (hi, lo)).
        y, z, w: per row the mean score, the standardised differences (rows, p) and the count (prior rows: 2c).
        sz: ``sign · z``, the differences oriented as the pair (rows, p); ``zz`` (rows, p²) the products z zᵀ.
        cluster: per row the cluster code, or ``n_clusters`` for a prior row (its weight is never resampled).
        n_clusters: C.
    """

    k: int
    p: int
    sign: np.ndarray
    pair: np.ndarray
    signed_pair: np.ndarray
    starts: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    edge: np.ndarray
    lap: np.ndarray
    y: np.ndarray
    z: np.ndarray
    w: np.ndarray
    sz: np.ndarray
    zz: np.ndarray
    cluster: np.ndarray
    n_clusters: int


def _design(j: PairJudgments, z: np.ndarray, pseudo_count: float) -> _Design:
    """Aggregate identical judgments and sort the rows by pair (O(n log n) once; see :class:`_Design`)."""
    k, p = j.n_models, z.shape[1]
    key = np.column_stack([j.cluster, j.a, j.b, z]).astype(np.float64)
    # Distinct rows by a lexicographic sort of the columns (np.unique(axis=0) sorts rows as bytes: 5x slower here).
    order = np.lexsort(key.T[::-1])
    ranked = key[order]
    first = np.ones(len(key), dtype=bool)
    first[1:] = (ranked[1:] != ranked[:-1]).any(axis=1)
    inverse = np.empty(len(key), dtype=np.int64)
    inverse[order] = np.cumsum(first) - 1
    rows, counts = ranked[first], np.bincount(inverse)
    ysum = np.bincount(inverse, weights=j.y, minlength=len(rows))
    cl, a, b, zr = rows[:, 0].astype(np.int64), rows[:, 1].astype(np.int64), rows[:, 2].astype(np.int64), rows[:, 3:]
    w, y = counts.astype(np.float64), ysum / counts
    if pseudo_count > 0:
        # c wins each way for every pair, no style difference: weight 2c, score 0.5 (the prior of fit_bt).
        ii, jj = np.triu_indices(k, 1)
        a, b = np.concatenate([a, ii]), np.concatenate([b, jj])
        zr = np.vstack([zr, np.zeros((len(ii), p))])
        w = np.concatenate([w, np.full(len(ii), 2.0 * pseudo_count)])
        y = np.concatenate([y, np.full(len(ii), 0.5)])
        cl = np.concatenate([cl, np.full(len(ii), j.n_clusters)])
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    order = np.argsort(lo * k + hi, kind="stable")
    a, b, lo, hi, zr, w, y, cl = (x[order] for x in (a, b, lo, hi, zr, w, y, cl))
    pair_key, starts, pair = np.unique(lo * k + hi, return_index=True, return_inverse=True)
    plo, phi = pair_key // k, pair_key % k
    n_pairs = len(pair_key)
    edge = np.zeros((n_pairs, k))
    edge[np.arange(n_pairs), plo] = 1.0
    edge[np.arange(n_pairs), phi] = -1.0
    lap = np.zeros((n_pairs, k * k))
    lap[np.arange(n_pairs), plo * k + plo] = 1.0
    lap[np.arange(n_pairs), phi * k + phi] = 1.0
    lap[np.arange(n_pairs), plo * k + phi] = -1.0
    lap[np.arange(n_pairs), phi * k + plo] = -1.0
    sign = np.where(a == lo, 1.0, -1.0)
    return _Design(
        k=k,
        p=p,
        sign=sign,
        pair=pair.reshape(-1),
        signed_pair=pair.reshape(-1) + np.where(sign > 0, 0, n_pairs),
        starts=starts,
        lo=plo,
        hi=phi,
        edge=edge,
        lap=lap,
        y=y,
        z=zr,
        w=w,
        sz=sign[:, None] * zr,
        zz=(zr[:, :, None] * zr[:, None, :]).reshape(len(y), p * p),
        cluster=cl,
        n_clusters=j.n_clusters,
    )


def _weights(d: _Design, counts: np.ndarray) -> np.ndarray:
    """Row weights (R, rows) for cluster counts (R, C): a data row's count times its cluster's, a prior row's fixed."""
    mult = np.concatenate([counts, np.ones((len(counts), 1))], axis=1)
    return d.w * mult[:, d.cluster]


def _linear(d: _Design, phi: np.ndarray) -> np.ndarray:
    """η = β_a − β_b + zγ for parameters φ (R, K−1+p): (R, rows), through the pairs' differences."""
    q = d.k - 1
    beta = np.concatenate([np.zeros((len(phi), 1)), phi[:, :q]], axis=1)
    gap = beta[:, d.lo] - beta[:, d.hi]  # (R, P)
    # A contiguous γ: numpy's matmul leaves BLAS for a strided operand (30x slower here).
    eta = np.ascontiguousarray(phi[:, q:]) @ d.z.T if d.p else np.zeros((len(phi), len(d.y)))
    eta += np.take(np.concatenate([gap, -gap], axis=1), d.signed_pair, axis=1)
    return eta


def _evaluate(d: _Design, wt: np.ndarray, phi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """σ(η) (R, rows) and the weighted (quasi-)log-likelihood (R,) at φ.

    y·log σ(η) + (1 − y)·log σ(−η) = (y − 1)·η + log σ(η): σ(η) is needed for the score anyway, and its logarithm
    is accurate at both ends (σ is computed with a relative error of ~1e-16 even where it is tiny).
    """
    eta = _linear(d, phi)
    pr = expit(eta)
    eta *= d.y - 1.0
    eta += np.log(pr)
    eta *= wt
    return pr, eta.sum(axis=1)


def _score_info(d: _Design, wt: np.ndarray, pr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Gradient (R, P) and information (R, P, P) of the weighted log-likelihood in the free coordinates, at σ(η) ``pr``.

    The model block is the weighted Laplacian of the pairs' curvature sums, the cross block each feature's
    oriented sums mapped by the pairs' edges, the style block ``cur @ zz``: O(R·rows·(p + 2)) per call, plus
    O(R·P·K²) for the Laplacian (P pairs), never a (rows, K) design.
    """
    q, p, k = d.k - 1, d.p, d.k
    res = d.y - pr
    res *= wt
    cur = 1.0 - pr
    cur *= pr
    cur *= wt
    r = len(pr)
    pair_res = np.add.reduceat(res * d.sign, d.starts, axis=1)  # (R, P)
    score = np.concatenate([(pair_res @ d.edge)[:, 1:], res @ d.z], axis=1)
    info = np.empty((r, q + p, q + p))
    lap = (np.add.reduceat(cur, d.starts, axis=1) @ d.lap).reshape(r, k, k)
    info[:, :q, :q] = lap[:, 1:, 1:]
    if p:
        cross = np.stack([np.add.reduceat(cur * d.sz[:, f], d.starts, axis=1) @ d.edge for f in range(p)], axis=2)
        info[:, :q, q:] = cross[:, 1:, :]
        info[:, q:, :q] = np.swapaxes(cross[:, 1:, :], 1, 2)
        info[:, q:, q:] = (cur @ d.zz).reshape(r, p, p)
    return score, info


def _newton_steps(info: np.ndarray, score: np.ndarray) -> np.ndarray:
    """Newton steps I⁻¹s of a batch (R, P); a replicate whose information is singular gets a row of NaN."""
    try:
        return np.linalg.solve(info, score[:, :, None])[:, :, 0]
    except np.linalg.LinAlgError:
        steps = np.full(score.shape, np.nan)
        for i in range(len(score)):
            try:
                steps[i] = np.linalg.solve(info[i], score[i])
            except np.linalg.LinAlgError:
                continue
        return steps


def _newton(
    d: _Design, wt: np.ndarray, phi0: np.ndarray, tol: float, max_iter: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Batched Newton with step halving on row weights ``wt`` (R, rows); returns φ (R, P), converged (R,),
    iterations (R,), gradient norm (R,).

    Each replicate stops on its own rule and is frozen, so its value does not depend on the rest of the batch.
    The gradient is divided by the replicate's number of judgments (its data rows' weight).
    """
    r = len(wt)
    scale = np.maximum((wt * (d.cluster < d.n_clusters)).sum(axis=1), 1.0)
    phi = phi0.copy()
    pr, ll = _evaluate(d, wt, phi)
    score, info = _score_info(d, wt, pr)
    gnorm = np.abs(score).max(axis=1) / scale
    converged = gnorm < tol
    iterations = np.zeros(r, dtype=np.int64)
    active = np.flatnonzero(~converged)
    for it in range(1, max_iter + 1):
        if not len(active):
            break
        step = _newton_steps(info[active], score[active])
        singular = ~np.isfinite(step).all(axis=1)
        if singular.any():
            # Not identified in this replicate (e.g. a resample where a feature never differs): left unconverged.
            active, step = active[~singular], step[~singular]
            if not len(active):
                break
        t = np.ones(len(active))
        wt_a = wt[active]
        for _ in range(_MAX_HALVINGS):
            cand = phi[active] + t[:, None] * step
            pr_c, ll_c = _evaluate(d, wt_a, cand)
            worse = ll_c < ll[active] - 1e-12 * np.abs(ll[active])
            if not worse.any():
                break
            t = np.where(worse, t / 2.0, t)
        phi[active] = cand
        ll[active] = ll_c
        s_a, i_a = _score_info(d, wt_a, pr_c)
        score[active], info[active] = s_a, i_a
        gnorm[active] = np.abs(s_a).max(axis=1) / scale[active]
        iterations[active] = it
        done = gnorm[active] < tol
        converged[active[done]] = True
        active = active[~done]
    return phi, converged, iterations, gnorm


def _cluster_sums(d: _Design, phi_hat: np.ndarray) -> np.ndarray:
    """Each cluster's score and information at the point estimate φ̂ (P,), as a (C + 1, P + P²) array (the last row
    the prior's): at φ̂ every replicate shares η, so a replicate's score and information are its counts times these."""
    q = d.k - 1
    pr = expit(_linear(d, phi_hat[None]))[0]
    res = d.w * (d.y - pr)
    cur = d.w * pr * (1.0 - pr)
    x = np.concatenate([(d.sign[:, None] * d.edge[d.pair])[:, 1:], d.z], axis=1)  # (rows, P): ∂η/∂φ
    n_par, n_rows = q + d.p, len(res)
    sums = np.zeros((d.n_clusters + 1, n_par + n_par * n_par))
    step = max(1, _CHUNK_ELEMENTS // (n_par * n_par))
    for start in range(0, n_rows, step):
        part = slice(start, min(n_rows, start + step))
        xs = x[part]
        block = np.concatenate(
            [res[part, None] * xs, (cur[part, None, None] * xs[:, :, None] * xs[:, None, :]).reshape(len(xs), -1)], axis=1
        )
        member = sparse.csr_matrix((np.ones(len(xs)), (d.cluster[part], np.arange(len(xs)))), shape=(d.n_clusters + 1, len(xs)))
        sums += member @ block
    return sums


def _first_steps(phi_hat: np.ndarray, sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Every replicate's first Newton step from φ̂, without a pass over (R, rows): its cluster counts (R, C) times
    :func:`_cluster_sums`, one (R, C) @ (C, P + P²) product. Returns φ̂ + step (R, P); a replicate whose information
    is singular stays at φ̂ (the Newton iterations then leave it unconverged)."""
    n_par = len(phi_hat)
    total = np.concatenate([counts, np.ones((len(counts), 1))], axis=1) @ sums
    steps = _newton_steps(total[:, n_par:].reshape(-1, n_par, n_par), total[:, :n_par])
    return phi_hat[None] + np.nan_to_num(steps, nan=0.0)


def _score(d: _Design, wt: np.ndarray, phi: np.ndarray) -> np.ndarray:
    """The gradient (R, P) alone at φ: the chord iterations' only pass over (R, rows)."""
    res = d.y - expit(_linear(d, phi))
    res *= wt
    pair_res = np.add.reduceat(res * d.sign, d.starts, axis=1)
    return np.concatenate([(pair_res @ d.edge)[:, 1:], res @ d.z], axis=1)


def _newton_checked(d: _Design, wt: np.ndarray, phi0: np.ndarray, tol: float) -> tuple[np.ndarray, np.ndarray]:
    """One full Newton step from φ₀ (R, P) without a line search, then the gradient alone at the result.

    From the first step off the point estimate a replicate is close enough that one more Newton step meets the
    gradient criterion (quadratic convergence: ~1e-5 → ~1e-11 on 112,000 judgments), so the likelihood a line
    search needs is skipped. Returns φ and which replicates met the criterion (at φ₀ or after the step); the
    others (a step that did not reduce the gradient enough, a singular information) are left for :func:`_newton`.
    """
    scale = np.maximum((wt * (d.cluster < d.n_clusters)).sum(axis=1), 1.0)
    score, info = _score_info(d, wt, expit(_linear(d, phi0)))
    converged = np.abs(score).max(axis=1) / scale < tol
    phi = phi0.copy()
    active = np.flatnonzero(~converged)
    if len(active):
        step = _newton_steps(info[active], score[active])
        finite = np.isfinite(step).all(axis=1)
        active, step = active[finite], step[finite]
        phi[active] += step
        if len(active):
            converged[active] = np.abs(_score(d, wt[active], phi[active])).max(axis=1) / scale[active] < tol
    return phi, converged


@dataclass(frozen=True)
class StyleFit:
    """A style-controlled BT fit.

    Attributes:
        features: names of the style features, in column order.
        beta: centered style-controlled strengths (K,).
        gamma: coefficients of the standardised differences (p,).
        scale: the root-mean-square difference each feature was divided by (p,).
        converged: the gradient criterion was met; ``grad_norm`` its final value; ``iterations`` Newton steps.
        tol: the gradient tolerance used.
        pseudo_count: the prior.
    """

    features: tuple[str, ...]
    beta: np.ndarray
    gamma: np.ndarray
    scale: np.ndarray
    converged: bool
    grad_norm: float
    iterations: int
    tol: float
    pseudo_count: float

    @property
    def gamma_raw(self) -> np.ndarray:
        """Coefficients per unit of each feature (per word, per citation): γ / scale."""
        return self.gamma / self.scale


def standardise(diffs: np.ndarray, scale: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Divide each difference column by its root mean square (or by ``scale``); returns (z, scale).

    Raises ValueError naming the column when a feature never differs (its coefficient is not identified).
    """
    d = np.asarray(diffs, dtype=np.float64)
    if d.ndim == 1:
        d = d[:, None]
    if scale is None:
        scale = np.sqrt((d**2).mean(axis=0)) if len(d) else np.ones(d.shape[1])
    scale = np.asarray(scale, dtype=np.float64)
    flat = np.flatnonzero(~(scale > 0))
    if len(flat):
        raise ValueError(f"style control: feature column {int(flat[0])} never differs between the two sides; drop it")
    return d / scale, scale


def _check_diffs(j: PairJudgments, diffs: np.ndarray, features: Sequence[str] | None) -> tuple[np.ndarray, tuple[str, ...]]:
    d = np.asarray(diffs, dtype=np.float64)
    d = d[:, None] if d.ndim == 1 else d
    if d.shape[0] != j.n:
        raise ValueError(f"style control: diffs has {d.shape[0]} rows, expected one per judgment ({j.n})")
    if not np.isfinite(d).all():
        row = int(np.flatnonzero(~np.isfinite(d).all(axis=1))[0])
        raise ValueError(f"style control: diffs row {row} is not finite; fill or drop that judgment")
    names = tuple(features) if features is not None else tuple(f"x{i}" for i in range(d.shape[1]))
    if len(names) != d.shape[1]:
        raise ValueError(f"style control: {len(names)} feature names for {d.shape[1]} columns")
    return d, names


@blas_single_threaded_call  # small, memory-bound products: extra BLAS threads only wait for each other (see bt)
def fit_style_bt(
    j: PairJudgments,
    diffs: np.ndarray,
    *,
    features: Sequence[str] | None = None,
    pseudo_count: float = 0.5,
    tol: float = DEFAULT_GRAD_TOL,
    max_iter: int = DEFAULT_MAX_ITER,
) -> StyleFit:
    """Fit P(a ≻ b) = σ(β_a − β_b + γᵀ z) to the judgments ``j`` with raw style differences ``diffs`` (n, p).

    Preconditions:
        ``diffs[i]`` = style of a minus style of b for judgment i (same orientation as ``j.a``/``j.b``); every
        column varies; ``pseudo_count >= 0`` (0 needs a strongly connected win graph and no separation).
    Returns:
        :class:`StyleFit`; ``converged`` False (never an exception) when the gradient criterion is not met.
    """
    d, names = _check_diffs(j, diffs, features)
    z, scale = standardise(d)
    des = _design(j, z, pseudo_count)
    phi0 = np.zeros((1, j.n_models - 1 + z.shape[1]))
    phi, conv, its, gnorm = _newton(des, _weights(des, np.ones((1, j.n_clusters))), phi0, tol, max_iter)
    beta = np.concatenate([[0.0], phi[0, : j.n_models - 1]])
    return StyleFit(
        features=names,
        beta=beta - beta.mean(),
        gamma=phi[0, j.n_models - 1 :].copy(),
        scale=scale,
        converged=bool(conv[0]),
        grad_norm=float(gnorm[0]),
        iterations=int(its[0]),
        tol=tol,
        pseudo_count=float(pseudo_count),
    )


@dataclass(frozen=True)
class StyleBootstrap:
    """Cluster-bootstrap replicates of a style fit: ``beta`` (R, K), ``gamma`` (R, p), ``converged`` (R,)."""

    beta: np.ndarray
    gamma: np.ndarray
    converged: np.ndarray


@blas_single_threaded_call  # (R, rows) @ (rows, p) products: one BLAS thread was 300x faster at load 6 (bench)
def style_bootstrap(
    j: PairJudgments,
    diffs: np.ndarray,
    fit: StyleFit,
    *,
    replicates: int = 1000,
    seed: int | np.random.Generator | None = 0,
    counts: np.ndarray | None = None,
) -> StyleBootstrap:
    """Cluster bootstrap of :func:`fit_style_bt` (see the module docstring); ``fit`` is the point fit (warm start).

    ``counts`` (optional, (R, C)) gives each replicate's cluster counts instead of drawing ``replicates``
    multinomial ones: replicate r is then exactly the fit of the judgments with cluster c repeated counts[r, c]
    times (at the full data's scale), which is how the tests check the batch against one fit per replicate.
    Replicates are fitted together, :data:`_CHUNK_ELEMENTS` // rows at a time (memory stays bounded).
    """
    rng = as_generator(seed)
    d, _ = _check_diffs(j, diffs, fit.features)
    z, _ = standardise(d, fit.scale)
    des = _design(j, z, fit.pseudo_count)
    k, c = j.n_models, j.n_clusters
    if counts is not None:
        counts = np.asarray(counts, dtype=np.float64)
        if counts.ndim != 2 or counts.shape[1] != c:
            raise ValueError(f"style_bootstrap: counts must have shape (R, {c}) (one count per cluster), got {counts.shape}")
        replicates = len(counts)
    phi_hat = np.concatenate([fit.beta[1:] - fit.beta[0], fit.gamma])[None]
    chunk = max(1, _CHUNK_ELEMENTS // max(1, len(des.y), c))
    sums = _cluster_sums(des, phi_hat[0])
    betas, gammas, convs = [], [], []
    for start in range(0, replicates, chunk):
        m = min(chunk, replicates - start)
        drawn = (
            rng.multinomial(c, np.full(c, 1.0 / c), size=m).astype(np.float64) if counts is None else counts[start : start + m]
        )
        wt = _weights(des, drawn)
        phi0 = _first_steps(phi_hat[0], sums, drawn)
        phi, conv = _newton_checked(des, wt, phi0, fit.tol)
        rest = np.flatnonzero(~conv)
        if len(rest):  # not there yet (or a singular information): full Newton with step halving from the start
            phi[rest], conv[rest], _, _ = _newton(des, wt[rest], phi0[rest], fit.tol, DEFAULT_MAX_ITER)
        beta = np.concatenate([np.zeros((m, 1)), phi[:, : k - 1]], axis=1)
        betas.append(beta - beta.mean(axis=1, keepdims=True))
        gammas.append(phi[:, k - 1 :])
        convs.append(conv)
    return StyleBootstrap(beta=np.concatenate(betas), gamma=np.concatenate(gammas), converged=np.concatenate(convs))


def _ranks(theta: np.ndarray) -> np.ndarray:
    """Rank of each model, 1 = best (stable on ties, as :func:`ranking_from_theta`)."""
    return replicate_ranks(theta, break_ties=False)[0]


def _interval(ci: np.ndarray) -> list[float] | None:
    """``[lo, hi]`` as floats, None when no replicate converged (NaN ends)."""
    return [float(ci[0]), float(ci[1])] if np.isfinite(ci).all() else None


def style_control(
    j: PairJudgments,
    diffs: np.ndarray,
    *,
    features: Sequence[str] | None = None,
    pseudo_count: float = 0.5,
    replicates: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> dict[str, Any]:
    """The style-controlled leaderboard beside the plain one, as a JSON-ready dict.

    Returns:
        ``features``; ``coefficients`` {feature: {gamma, ci, gamma_raw, ci_raw, scale}} (standardised and per
        unit); ``models`` best first by the style-controlled strength, each {strength, ci, rank, plain_strength,
        plain_rank, rank_delta} where ``rank_delta = plain_rank − rank`` (positive: the model rises once style is
        controlled); ``fit`` {converged, grad_norm, tol, iterations, unconverged_replicates}; the settings.
    """
    fit = fit_style_bt(j, diffs, features=features, pseudo_count=pseudo_count)
    boot = style_bootstrap(j, diffs, fit, replicates=replicates, seed=seed)
    plain = fit_bt(j.win_matrix(), pseudo_count=pseudo_count).theta
    names = list(j.models) if j.models is not None else [str(i) for i in range(j.n_models)]
    # A replicate that did not converge (e.g. a resample where a feature never differs, so its γ is not identified)
    # is left out of the intervals and counted in ``fit.unconverged_replicates``.
    ok = boot.converged
    beta_ci = percentile_ci(boot.beta[ok], level) if ok.any() else np.full((j.n_models, 2), np.nan)
    gamma_ci = percentile_ci(boot.gamma[ok], level) if ok.any() else np.full((len(fit.features), 2), np.nan)
    style_rank, plain_rank = _ranks(fit.beta), _ranks(plain)
    coefficients = {
        f: {
            "gamma": float(fit.gamma[i]),
            "ci": _interval(gamma_ci[i]),
            "gamma_raw": float(fit.gamma_raw[i]),
            "ci_raw": _interval(gamma_ci[i] / fit.scale[i]),
            "scale": float(fit.scale[i]),
        }
        for i, f in enumerate(fit.features)
    }
    models = [
        {
            "model": names[i],
            "strength": float(fit.beta[i]),
            "ci": _interval(beta_ci[i]),
            "rank": int(style_rank[i]),
            "plain_strength": float(plain[i]),
            "plain_rank": int(plain_rank[i]),
            "rank_delta": int(plain_rank[i] - style_rank[i]),
        }
        for i in ranking_from_theta(fit.beta)
    ]
    return {
        "features": list(fit.features),
        "coefficients": coefficients,
        "models": models,
        "fit": {
            "converged": fit.converged,
            "grad_norm": fit.grad_norm,
            "tol": fit.tol,
            "iterations": fit.iterations,
            "unconverged_replicates": int((~boot.converged).sum()),
        },
        "pseudo_count": float(pseudo_count),
        "replicates": replicates,
        "seed": seed,
        "level": level,
    }
