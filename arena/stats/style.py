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
warm-started at the point estimate). The scale stays that of the full data (a fixed reparametrisation).

Cost per Newton iteration and replicate: O(n·p + n·4) with sparse incidence products (no (n, K) dense design), plus
O((K + p)³) for the solve; the bootstrap is O(R·n·iters), chunked so at most ~4M (R·n) values live at once.
Nothing grows quadratically in the number of judgments.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse
from scipy.special import expit, log_expit

from .bootstrap import percentile_ci
from .bt import fit_bt, ranking_from_theta
from .pairwise import PairJudgments

#: Convergence: sup-norm of the log-likelihood gradient / number of judgments (the mean log-likelihood's gradient).
DEFAULT_GRAD_TOL = 1e-9
#: Newton iterations before a fit is reported unconverged (Newton needs ~5-10 from a cold start here).
DEFAULT_MAX_ITER = 100
#: Step halvings tried per iteration before accepting the smallest step.
_MAX_HALVINGS = 30
#: R·n values of one bootstrap chunk.
_CHUNK_ELEMENTS = 4_000_000


@dataclass(frozen=True)
class _Design:
    """The augmented design of a style fit: data judgments then the prior's pseudo-judgments.

    Attributes:
        k, p: models and style features.
        a, b, y, z: per row; z (rows, p) standardised differences (zero for prior rows).
        n_data: the first n_data rows are data; the rest carry the fixed prior weights ``prior_w``.
        inc: sparse (rows, K−1) incidence (+1 at a, −1 at b, model 0 dropped); ``inc_t`` its CSR transpose.
        quad_t: sparse (K−1)² × rows map of w·(e_a − e_b)(e_a − e_b)ᵀ; ``cross_t`` (K−1)·p × rows of w·(e_a − e_b)zᵀ.
    """

    k: int
    p: int
    a: np.ndarray
    b: np.ndarray
    y: np.ndarray
    z: np.ndarray
    n_data: int
    prior_w: np.ndarray
    inc_t: sparse.csr_matrix
    quad_t: sparse.csr_matrix
    cross_t: sparse.csr_matrix
    zz: np.ndarray


def _design(j: PairJudgments, z: np.ndarray, pseudo_count: float) -> _Design:
    """Build the sparse maps of the score and information (O(n·p) time and memory)."""
    k, p = j.n_models, z.shape[1]
    ii, jj = np.triu_indices(k, 1) if pseudo_count > 0 else (np.zeros(0, np.int64), np.zeros(0, np.int64))
    a = np.concatenate([j.a, ii]).astype(np.int64)
    b = np.concatenate([j.b, jj]).astype(np.int64)
    y = np.concatenate([j.y, np.full(len(ii), 0.5)])
    zfull = np.vstack([z, np.zeros((len(ii), p))])
    rows = len(a)
    q = k - 1
    # Incidence in the free coordinates β_1…β_{K−1}: model m is column m − 1, model 0 has no column.
    r_idx = np.concatenate([np.arange(rows), np.arange(rows)])
    m_idx = np.concatenate([a, b]) - 1
    vals = np.concatenate([np.ones(rows), -np.ones(rows)])
    keep = m_idx >= 0
    inc = sparse.csr_matrix((vals[keep], (r_idx[keep], m_idx[keep])), shape=(rows, q))
    # (e_a − e_b)(e_a − e_b)ᵀ has +1 at (a, a), (b, b) and −1 at (a, b), (b, a).
    qa, qb = a - 1, b - 1
    cells = [(qa, qa, 1.0), (qb, qb, 1.0), (qa, qb, -1.0), (qb, qa, -1.0)]
    q_rows, q_cols, q_vals = [], [], []
    for u, v, s in cells:
        ok = (u >= 0) & (v >= 0)
        q_rows.append(np.flatnonzero(ok))
        q_cols.append(u[ok] * q + v[ok])
        q_vals.append(np.full(int(ok.sum()), s))
    quad = sparse.csr_matrix(
        (np.concatenate(q_vals), (np.concatenate(q_rows), np.concatenate(q_cols))), shape=(rows, max(q * q, 1))
    )
    c_rows, c_cols, c_vals = [], [], []
    for u, s in ((qa, 1.0), (qb, -1.0)):
        ok = np.flatnonzero(u >= 0)
        for f in range(p):
            c_rows.append(ok)
            c_cols.append(u[ok] * p + f)
            c_vals.append(s * zfull[ok, f])
    cross = sparse.csr_matrix(
        (
            np.concatenate(c_vals) if c_vals else np.zeros(0),
            (
                np.concatenate(c_rows) if c_rows else np.zeros(0, np.int64),
                np.concatenate(c_cols) if c_cols else np.zeros(0, np.int64),
            ),
        ),
        shape=(rows, max(q * p, 1)),
    )
    zz = (zfull[:, :, None] * zfull[:, None, :]).reshape(rows, p * p)
    return _Design(
        k=k,
        p=p,
        a=a,
        b=b,
        y=y,
        z=zfull,
        n_data=j.n,
        prior_w=np.full(len(ii), 2.0 * pseudo_count),
        inc_t=inc.T.tocsr(),
        quad_t=quad.T.tocsr(),
        cross_t=cross.T.tocsr(),
        zz=zz,
    )


def _rmul(dense: np.ndarray, sparse_t: sparse.csr_matrix) -> np.ndarray:
    """``dense (R, rows) @ S`` for S given as its CSR transpose (cols, rows): returns (R, cols)."""
    return np.asarray((sparse_t @ dense.T).T)


def _linear(d: _Design, phi: np.ndarray) -> np.ndarray:
    """η = β_a − β_b + zγ for parameters φ (R, K−1+p): (R, rows)."""
    q = d.k - 1
    beta = np.concatenate([np.zeros((len(phi), 1)), phi[:, :q]], axis=1)
    return beta[:, d.a] - beta[:, d.b] + phi[:, q:] @ d.z.T


def _loglik(d: _Design, wt: np.ndarray, eta: np.ndarray) -> np.ndarray:
    """Weighted (quasi-)log-likelihood per replicate (R,).

    y·log σ(η) + (1 − y)·log σ(−η) = y·η + log σ(−η) (as log σ(η) = η + log σ(−η)): one transcendental call.
    """
    return (wt * (d.y * eta + log_expit(-eta))).sum(axis=1)


def _score_info(d: _Design, wt: np.ndarray, eta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Gradient (R, P) and information (R, P, P) of the weighted log-likelihood in the free coordinates."""
    q, p = d.k - 1, d.p
    pr = expit(eta)
    res = wt * (d.y - pr)
    cur = wt * pr * (1.0 - pr)
    r = len(eta)
    score = np.concatenate([_rmul(res, d.inc_t), res @ d.z], axis=1)
    info = np.empty((r, q + p, q + p))
    info[:, :q, :q] = _rmul(cur, d.quad_t)[:, : q * q].reshape(r, q, q)
    if p:
        cross = _rmul(cur, d.cross_t)[:, : q * p].reshape(r, q, p)
        info[:, :q, q:] = cross
        info[:, q:, :q] = np.swapaxes(cross, 1, 2)
        info[:, q:, q:] = (cur @ d.zz).reshape(r, p, p)
    return score, info


def _newton(
    d: _Design, wt_data: np.ndarray, phi0: np.ndarray, tol: float, max_iter: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Batched Newton with step halving; returns φ (R, P), converged (R,), iterations (R,), gradient norm (R,).

    Each replicate stops on its own rule and is frozen, so its value does not depend on the rest of the batch.
    """
    r = len(wt_data)
    wt = np.concatenate([wt_data, np.broadcast_to(d.prior_w, (r, len(d.prior_w)))], axis=1)
    scale = np.maximum(wt_data.sum(axis=1), 1.0)
    phi = phi0.copy()
    eta = _linear(d, phi)
    ll = _loglik(d, wt, eta)
    score, info = _score_info(d, wt, eta)
    gnorm = np.abs(score).max(axis=1) / scale
    converged = gnorm < tol
    iterations = np.zeros(r, dtype=np.int64)
    active = np.flatnonzero(~converged)
    for it in range(1, max_iter + 1):
        if not len(active):
            break
        step = np.linalg.solve(info[active], score[active][:, :, None])[:, :, 0]
        t = np.ones(len(active))
        wt_a = wt[active]
        for _ in range(_MAX_HALVINGS):
            cand = phi[active] + t[:, None] * step
            eta_c = _linear(d, cand)
            ll_c = _loglik(d, wt_a, eta_c)
            worse = ll_c < ll[active] - 1e-12 * np.abs(ll[active])
            if not worse.any():
                break
            t = np.where(worse, t / 2.0, t)
        phi[active] = cand
        ll[active] = ll_c
        s_a, i_a = _score_info(d, wt_a, eta_c)
        score[active], info[active] = s_a, i_a
        gnorm[active] = np.abs(s_a).max(axis=1) / scale[active]
        iterations[active] = it
        done = gnorm[active] < tol
        converged[active[done]] = True
        active = active[~done]
    return phi, converged, iterations, gnorm


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
    phi, conv, its, gnorm = _newton(des, np.ones((1, j.n)), phi0, tol, max_iter)
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


def style_bootstrap(
    j: PairJudgments,
    diffs: np.ndarray,
    fit: StyleFit,
    *,
    replicates: int = 1000,
    seed: int | np.random.Generator | None = 0,
) -> StyleBootstrap:
    """Cluster bootstrap of :func:`fit_style_bt` (see the module docstring); ``fit`` is the point fit (warm start)."""
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    d, _ = _check_diffs(j, diffs, fit.features)
    z, _ = standardise(d, fit.scale)
    des = _design(j, z, fit.pseudo_count)
    k = j.n_models
    phi_hat = np.concatenate([fit.beta[1:] - fit.beta[0], fit.gamma])[None]
    chunk = max(1, _CHUNK_ELEMENTS // max(1, j.n + len(des.prior_w), j.n_clusters))
    betas, gammas, convs = [], [], []
    for start in range(0, replicates, chunk):
        m = min(chunk, replicates - start)
        counts = rng.multinomial(j.n_clusters, np.full(j.n_clusters, 1.0 / j.n_clusters), size=m).astype(np.float64)
        phi, conv, _, _ = _newton(des, counts[:, j.cluster], np.repeat(phi_hat, m, axis=0), fit.tol, DEFAULT_MAX_ITER)
        beta = np.concatenate([np.zeros((m, 1)), phi[:, : k - 1]], axis=1)
        betas.append(beta - beta.mean(axis=1, keepdims=True))
        gammas.append(phi[:, k - 1 :])
        convs.append(conv)
    return StyleBootstrap(beta=np.concatenate(betas), gamma=np.concatenate(gammas), converged=np.concatenate(convs))


def _ranks(theta: np.ndarray) -> np.ndarray:
    """Rank of each model, 1 = best (stable on ties, as :func:`ranking_from_theta`)."""
    order = ranking_from_theta(theta)
    ranks = np.empty(len(theta), dtype=np.int64)
    ranks[order] = np.arange(1, len(theta) + 1)
    return ranks


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
    beta_ci = percentile_ci(boot.beta, level)
    gamma_ci = percentile_ci(boot.gamma, level)
    style_rank, plain_rank = _ranks(fit.beta), _ranks(plain)
    coefficients = {
        f: {
            "gamma": float(fit.gamma[i]),
            "ci": [float(gamma_ci[i, 0]), float(gamma_ci[i, 1])],
            "gamma_raw": float(fit.gamma_raw[i]),
            "ci_raw": [float(gamma_ci[i, 0] / fit.scale[i]), float(gamma_ci[i, 1] / fit.scale[i])],
            "scale": float(fit.scale[i]),
        }
        for i, f in enumerate(fit.features)
    }
    models = [
        {
            "model": names[i],
            "strength": float(fit.beta[i]),
            "ci": [float(beta_ci[i, 0]), float(beta_ci[i, 1])],
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
