"""Bradley–Terry–Davidson (BT with ties; Davidson 1970) by maximum likelihood.

Model, with π_i = exp(θ_i) and tie parameter ν > 0:

    P(i beats j) = π_i / (π_i + π_j + ν √(π_i π_j))
    P(tie)       = ν √(π_i π_j) / (π_i + π_j + ν √(π_i π_j))

Input: a win matrix ``W`` (``W[i, j]`` = wins of i over j) and a symmetric tie matrix ``T`` (``T[i, j]`` =
``T[j, i]`` = ties between i and j), counts possibly fractional. Graded verdicts (the HypoArena 5-level
scale) become (win, tie, loss) weights through a win share: see :data:`FIVE_LEVEL_SHARES` and
:func:`share_to_outcome`.

The log-likelihood is maximised over (θ, log ν) with L-BFGS-B and its analytic gradient. The model is
invariant to adding a constant to all θ; a penalty ½(Σθ)² (zero at the optimum we report) pins Σθ = 0.
Bounds |θ|, |log ν| ≤ cap keep the optimiser's search finite; a fit that reaches one is flagged.

Separation. When the directed graph of wins is not strongly connected (a model, or a group of models, never loses
to the rest; ties do not count) or there is no decisive outcome at all, the maximum-likelihood estimate may not
exist: the likelihood keeps growing as some θ (and ν) run off to infinity. PROTOCOL.md then asks for the ordinal
structure as the result and the magnitudes as diagnostic. Such a fit is made on the data plus
:data:`SEPARATION_PSEUDO_COUNT` wins in every off-diagonal cell (the release's BT pseudo-count, 500 times weaker)
and flagged ``diverged``: a unique, finite maximum (the win graph becomes complete), found by the same fast batched
Newton as every other fit, whose order follows the data and whose magnitudes grow with the evidence (a model
winning all of n matches against another is log((n + c)/c) ahead of it, ν = 0 without ties). The cap does not
bound it (its maximum exists; with many ties and no loss it can lie beyond θ = 30), so the single and the batched
fits find the same point. Fits not flagged never get the pseudo-count: their values are the maximum-likelihood
ones, unchanged. The flag is conservative (ties can keep an MLE finite without a strongly connected win graph);
such a flagged fit moves by about c/n in θ from its MLE (a fraction of a rating point).

Before, a separated fit with ties was wherever L-BFGS-B stopped on the likelihood's ridge to infinity (an artefact
of its tolerance; a one-case, two-model benchmark took 77 s at 10,000 bootstrap replicates, fitted one by one),
and one without ties was capped at |θ| = 30, where two models that both never lost stood equal whatever their
records.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .bt import DEFAULT_CAP, blas_single_threaded_call, fit_bt, strongly_connected

#: HypoArena 5-level verdicts → win share of the first-named proposal (A). Data, not code: another scale is
#: another dict with the same meaning (label → share of the first side in [0, 1]).
FIVE_LEVEL_SHARES: dict[str, float] = {"A>>B": 1.0, "A>B": 0.75, "A=B": 0.5, "B>A": 0.25, "B>>A": 0.0}

#: Wins added to every off-diagonal cell of a fit whose MLE may not exist (see the module docstring). Small enough
#: that a separated pair stands far apart (one match won: θ gap log 1001 ≈ 6.9, a rating gap of 1200), large
#: enough that Newton's steps stay exact in floating point: the curvature along the separated direction is about
#: c/n per comparison of the pair, so rounding moves the solution by ~1e-16·n/c (1e-9 at n = 10,000 matches).
SEPARATION_PSEUDO_COUNT = 1e-3

#: Elo-like scale: rating = ELO_CENTER + ELO_SCALE * θ / ln 10 (θ centered natural-log strength).
ELO_CENTER = 1500.0
ELO_SCALE = 400.0


def share_to_outcome(share: float | np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Split a win share s ∈ [0, 1] of the first side into (win, tie, loss) weights summing to 1.

    The split uses as little tie mass as possible while keeping the expected score (win + tie/2) equal to
    s: s ≥ ½ → win 2s−1, tie 2−2s; s ≤ ½ → loss 1−2s, tie 2s. So 1 → a win, .75 → half a win + half a
    tie, .5 → a tie, .25 → half a tie + half a loss, 0 → a loss.
    """
    s = np.asarray(share, dtype=np.float64)
    if ((s < 0) | (s > 1)).any():
        raise ValueError("shares must lie in [0, 1]")
    win = np.maximum(0.0, 2 * s - 1)
    loss = np.maximum(0.0, 1 - 2 * s)
    tie = 1.0 - win - loss
    return win, tie, loss


def shares_from_verdicts(verdicts: Sequence[str], scale: Mapping[str, float] = FIVE_LEVEL_SHARES) -> np.ndarray:
    """Map verdict labels to win shares of the first side with ``scale`` (raises KeyError on an unknown label)."""
    return np.array([float(scale[v]) for v in verdicts], dtype=np.float64)


def debiased_share(share_original: float | np.ndarray, share_reverse: float | np.ndarray) -> np.ndarray:
    """Average a match judged in both orders into the first model's share.

    ``share_original`` is the first model's share when shown as A; ``share_reverse`` is the share of the
    side shown as A in the reverse order, i.e. of the *second* model, hence the ``1 −``.
    """
    return (np.asarray(share_original, dtype=np.float64) + 1.0 - np.asarray(share_reverse, dtype=np.float64)) / 2.0


def btd_counts(first: np.ndarray, second: np.ndarray, shares: np.ndarray, n_models: int) -> tuple[np.ndarray, np.ndarray]:
    """Win and tie matrices from matches (first[m], second[m]) with the first side's win share ``shares[m]``."""
    first = np.asarray(first, dtype=np.int64)
    second = np.asarray(second, dtype=np.int64)
    win, tie, loss = share_to_outcome(shares)
    k2 = n_models * n_models
    w = np.bincount(first * n_models + second, weights=win, minlength=k2)
    w += np.bincount(second * n_models + first, weights=loss, minlength=k2)
    t = np.bincount(first * n_models + second, weights=tie, minlength=k2)
    t = t.reshape(n_models, n_models)
    return w.reshape(n_models, n_models), t + t.T


@dataclass(frozen=True)
class BTDFit:
    """A Bradley–Terry–Davidson fit.

    Attributes:
        theta: centered natural-log strengths (K,).
        nu: tie parameter ν (0 when the data has no tie: the model is then plain BT).
        ratings: Elo-like ratings 1500 + 400 θ / ln 10.
        log_likelihood: the log-likelihood of the data (with ``pseudo_count``, without the separation one) at the fit.
        converged: optimiser success.
        diverged: the MLE may not exist (graph of wins not strongly connected, or no decisive outcome: the fit
            is then of the data plus :data:`SEPARATION_PSEUDO_COUNT` wins per cell), or a bound was reached;
            values are finite and correctly ordered, but their magnitudes are diagnostic.
    """

    theta: np.ndarray
    nu: float
    ratings: np.ndarray
    log_likelihood: float
    converged: bool
    diverged: bool


def elo_ratings(theta: np.ndarray) -> np.ndarray:
    """1500 + 400 · θ / ln 10 (so a 400-point gap is a factor 10 in strength)."""
    return ELO_CENTER + ELO_SCALE * np.asarray(theta, dtype=np.float64) / math.log(10.0)


def btd_log_likelihood(theta: np.ndarray, nu: float, w: np.ndarray, t: np.ndarray) -> float:
    """Davidson log-likelihood of (θ, ν) for win matrix ``w`` and symmetric tie matrix ``t``."""
    k = len(theta)
    ii, jj = np.triu_indices(k, 1)
    th = np.asarray(theta, dtype=np.float64)
    lam = math.log(nu) if nu > 0 else -np.inf
    log_d = np.logaddexp(np.logaddexp(th[ii], th[jj]), lam + (th[ii] + th[jj]) / 2)
    wij, wji, tij = w[ii, jj], w[jj, ii], t[ii, jj]
    ll = wij * (th[ii] - log_d) + wji * (th[jj] - log_d)
    with np.errstate(invalid="ignore"):
        tie_term = np.where(tij > 0, tij * (lam + (th[ii] + th[jj]) / 2 - log_d), 0.0)
    return float((ll + tie_term).sum())


def fit_btd(
    w: np.ndarray,
    t: np.ndarray,
    *,
    pseudo_count: float = 0.0,
    cap: float = DEFAULT_CAP,
    gtol: float = 1e-10,
    max_iter: int = 10_000,
) -> BTDFit:
    """Maximum-likelihood Bradley–Terry–Davidson fit.

    Preconditions:
        ``w`` (K, K) non-negative wins (diagonal ignored); ``t`` (K, K) non-negative and symmetric ties
        (diagonal ignored); ``pseudo_count >= 0`` added to every off-diagonal cell of ``w`` (not of ``t``).
    Returns:
        :class:`BTDFit`. When the MLE may not exist (see the module docstring) the fit is of ``w`` plus
        :data:`SEPARATION_PSEUDO_COUNT` per off-diagonal cell, flagged ``diverged``.
    """
    w = np.array(w, dtype=np.float64)
    t = np.array(t, dtype=np.float64)
    k = w.shape[0]
    if w.shape != (k, k) or t.shape != (k, k):
        raise ValueError("w and t must be square matrices of the same shape")
    if not ((np.isfinite(w) & (w >= 0)).all() and (np.isfinite(t) & (t >= 0)).all()):  # NaN or inf: NaN strengths
        raise ValueError("counts must be finite and non-negative")
    if not np.allclose(t, t.T):
        raise ValueError("the tie matrix must be symmetric (t[i, j] = t[j, i] = ties between i and j)")
    off = 1.0 - np.eye(k)
    w *= off
    t *= off
    if pseudo_count:
        w += pseudo_count * off
    ii, jj = np.triu_indices(k, 1)
    # Sufficient condition for a finite MLE: the graph of wins (ties not counted) is strongly connected and
    # there is at least one decisive outcome. Ties alone can keep some fits finite, but not reliably (a model
    # with ties and no wins can still run off with ν → ∞), so we flag conservatively; a flagged fit is made
    # with the separation pseudo-count, whose maximum always exists (and is the MLE's limit when one exists).
    separated = k >= 2 and not (strongly_connected(w) and float(w[ii, jj].sum() + w[jj, ii].sum()) > 0)
    w_data = w.copy()  # the log-likelihood we report is of the data, without the separation pseudo-count
    if separated:
        w += SEPARATION_PSEUDO_COUNT * off
    wij, wji, tij = w[ii, jj], w[jj, ii], t[ii, jj]
    total_ties = float(tij.sum())
    total_wins = float(wij.sum() + wji.sum())

    if total_ties == 0:
        # No tie: the likelihood increases as ν → 0, where Davidson is plain Bradley–Terry.
        bt = fit_bt(w, cap=math.inf if separated else cap)
        ll = btd_log_likelihood(bt.theta, 0.0, w_data, t)
        return BTDFit(bt.theta, 0.0, elo_ratings(bt.theta), ll, bt.converged, separated or bt.diverged)

    n_ij = wij + wji + tij
    scale = 1.0 / max(n_ij.sum(), 1.0)  # per-comparison scale keeps gtol meaningful for any data size
    lo_gain = (wij + tij / 2) * scale  # ∂LL/∂θ_i terms that do not depend on the parameters
    hi_gain = (wji + tij / 2) * scale
    n_s = n_ij * scale
    t_s = tij * scale

    def objective(x: np.ndarray) -> tuple[float, np.ndarray]:
        th, lam = x[:k], x[k]
        mid = lam + (th[ii] + th[jj]) / 2
        log_d = np.logaddexp(np.logaddexp(th[ii], th[jj]), mid)
        p_i = np.exp(th[ii] - log_d)
        p_j = np.exp(th[jj] - log_d)
        p_t = np.exp(mid - log_d)
        ll = (wij * (th[ii] - log_d) + wji * (th[jj] - log_d) + tij * (mid - log_d)).sum() * scale
        g = np.zeros(k + 1)
        # ∂LL/∂θ_i = Σ_j [w_ij + t_ij/2 − n_ij (P_i + P_tie/2)]; ∂LL/∂logν = Σ [t_ij − n_ij P_tie].
        np.add.at(g, ii, lo_gain - n_s * (p_i + p_t / 2))
        np.add.at(g, jj, hi_gain - n_s * (p_j + p_t / 2))
        g[k] = (t_s - n_s * p_t).sum()
        s = th.sum()
        return -ll + 0.5 * s * s, np.concatenate([-g[:k] + s, [-g[k]]])

    from scipy.optimize import minimize  # imported here: scipy.optimize is slow to import

    x0 = np.zeros(k + 1)
    # Start ν at its value for equal strengths: P(tie) = ν/(2+ν) = tie share.
    share = total_ties / (total_ties + total_wins) if total_wins > 0 else 0.5
    x0[k] = math.log(max(2 * share / max(1 - share, 1e-12), 1e-12))
    x0[k] = min(max(x0[k], -cap), cap)
    res = minimize(
        objective,
        x0,
        jac=True,
        method="L-BFGS-B",
        bounds=None if separated else [(-cap, cap)] * (k + 1),
        options={"gtol": gtol, "ftol": 1e-15, "maxiter": max_iter, "maxcor": 30},
    )
    th = res.x[:k] - res.x[:k].mean()
    lam = float(res.x[k])
    at_bound = not separated and bool((np.abs(res.x) >= cap - 1e-9).any())
    diverged = separated or at_bound
    nu = math.exp(lam)
    ll = btd_log_likelihood(th, nu, w_data, t)
    return BTDFit(th, nu, elo_ratings(th), ll, bool(res.success), diverged)


# ---------------------------------------------------------------- batched fits (bootstraps)

#: Newton iterations after which a replicate still running is handed to :func:`fit_btd` (never reached in
#: practice: the Davidson log-likelihood is concave in (θ, log ν) and Newton from a warm start needs 3–5).
BTD_NEWTON_MAX_ITER = 100
#: Step halvings tried before a replicate whose likelihood will not increase is handed to :func:`fit_btd`.
_MAX_HALVINGS = 40


@dataclass(frozen=True)
class BTDBatch:
    """Bradley–Terry–Davidson fits of a batch of problems (e.g. bootstrap replicates).

    Attributes:
        theta: centered natural-log strengths, shape (R, K).
        nu: tie parameters, shape (R,).
        converged: the fit met its tolerance, (R,).
        diverged: the MLE may not exist (as :attr:`BTDFit.diverged`: fitted with the separation pseudo-count), (R,).
        fallback: the replicate was not fitted by the batched Newton: no tie (a batched Bradley–Terry fit, ν = 0)
            or, never seen in practice, a Newton failure (fitted alone by :func:`fit_btd`), (R,).
        iterations: Newton iterations (0 for fallbacks), (R,).
    """

    theta: np.ndarray
    nu: np.ndarray
    converged: np.ndarray
    diverged: np.ndarray
    fallback: np.ndarray
    iterations: np.ndarray

    @property
    def ratings(self) -> np.ndarray:
        """Elo-like ratings (R, K)."""
        return elo_ratings(self.theta)


def pairs_to_matrices(w_lo: np.ndarray, w_hi: np.ndarray, ties: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(R, P) pair arrays over ``np.triu_indices(k, 1)`` → (R, K, K) win and symmetric tie matrices."""
    ii, jj = np.triu_indices(k, 1)
    r = w_lo.shape[0]
    w = np.zeros((r, k, k))
    t = np.zeros((r, k, k))
    w[:, ii, jj] = w_lo
    w[:, jj, ii] = w_hi
    t[:, ii, jj] = ties
    t[:, jj, ii] = ties
    return w, t


def pair_to_model_sum(k: int) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """A function (x_lo, x_hi) → (R, K) summing per-pair values (R, P) onto models.

    For the pair (i, j), i < j, of ``np.triu_indices(k, 1)``, ``x_lo`` goes to model i and ``x_hi`` to model j.
    A gather over a (K, K−1) table of each model's pairs, not a product with a (P, K) incidence matrix: such
    thin products are dominated by BLAS thread start-up, which on a loaded machine made them 10–50x slower.
    """
    table = _model_pairs(k)

    def to_models(x_lo: np.ndarray, x_hi: np.ndarray) -> np.ndarray:
        return np.concatenate([x_lo, x_hi], axis=1)[:, table].sum(axis=2)

    return to_models


def _model_pairs(k: int) -> np.ndarray:
    """(K, K−1) table of each model's pairs: index p into ``np.triu_indices(k, 1)`` when the model is the lower
    index of pair p, P + p when it is the higher one (so it indexes the stack [x_lo; x_hi] of 2P rows)."""
    ii, jj = np.triu_indices(k, 1)
    n_p = len(ii)
    table = np.empty((k, k - 1), dtype=np.intp)
    fill = np.zeros(k, dtype=np.intp)
    for p in range(n_p):
        for model, row in ((ii[p], p), (jj[p], n_p + p)):
            table[model, fill[model]] = row
            fill[model] += 1
    return table


@dataclass(frozen=True)
class _PairData:
    """Scaled sufficient statistics of R problems, pair by pair, replicate axis LAST: (P, R).

    With x = θ_i − θ_j, D = e^{x/2} + e^{−x/2} + ν (the Davidson denominator divided by √(π_i π_j)):
    LL = Σ_pairs [(w_ij − w_ji)·x/2 − n_ij log D] + λ·Σ t_ij, λ = log ν. Everything is multiplied by
    ``scale`` = 1 / (number of comparisons), so tolerances mean the same for any data size. The replicate
    axis is last so that every elementwise step runs over long contiguous rows and per-model sums add whole
    rows (several times faster than (R, P) at 16 models).
    """

    half_diff: np.ndarray  # (w_lo − w_hi)/2 · scale
    gain: np.ndarray  # (w_lo + t/2) · scale: the observed score of the lower index
    n: np.ndarray  # n · scale
    ties: np.ndarray  # (R,) Σ t · scale

    def take(self, cols: np.ndarray) -> _PairData:
        return _PairData(self.half_diff[:, cols], self.gain[:, cols], self.n[:, cols], self.ties[cols])


def _pair_data(w_lo: np.ndarray, w_hi: np.ndarray, ties: np.ndarray) -> _PairData:
    """:class:`_PairData` from (R, P) pair arrays."""
    n = w_lo + w_hi + ties
    scale = 1.0 / np.maximum(n.sum(axis=1), 1.0)
    sc = scale[:, None]
    return _PairData(
        np.ascontiguousarray(((w_lo - w_hi) * (0.5 * sc)).T),
        np.ascontiguousarray(((w_lo + 0.5 * ties) * sc).T),
        np.ascontiguousarray((n * sc).T),
        ties.sum(axis=1) * scale,
    )


def _btd_eval(theta: np.ndarray, lam: np.ndarray, data: _PairData, ii: np.ndarray, jj: np.ndarray) -> tuple[np.ndarray, ...]:
    """Scaled log-likelihood (R,), and per pair P(lower index wins) and P(tie) (P, R), at θ (K, R), λ = log ν (R,)."""
    x = theta[ii] - theta[jj]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        e = np.exp(0.5 * x)
        nu = np.exp(lam)
        d = 1.0 / e
        d += e
        d += nu
        ll = (data.half_diff * x - data.n * np.log(d)).sum(axis=0) + lam * data.ties
        np.reciprocal(d, out=d)
        e *= d
        d *= nu
    return ll, e, d


def _btd_gradient(data: _PairData, p_lo: np.ndarray, p_t: np.ndarray, table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Gradient of the scaled log-likelihood (K+1, R), and s = P(lo wins) + P(tie)/2 per pair (P, R).

    The pair (i, j) adds u = w_ij + t_ij/2 − n_ij·s to ∂/∂θ_i and −u to ∂/∂θ_j (the two scores sum to n_ij);
    ∂/∂λ = Σ (t_ij − n_ij·P(tie)).
    """
    s = 0.5 * p_t
    s += p_lo
    n_p, r = s.shape
    k = table.shape[0]
    both = np.empty((2 * n_p, r))
    u = both[:n_p]
    np.multiply(data.n, s, out=u)
    np.subtract(data.gain, u, out=u)
    np.negative(u, out=both[n_p:])
    g = np.empty((k + 1, r))
    g[:k] = both[table].sum(axis=1)
    g[k] = data.ties - (data.n * p_t).sum(axis=0)
    return g, s


def _btd_hessian(
    data: _PairData, s: np.ndarray, p_t: np.ndarray, table: np.ndarray, ii: np.ndarray, jj: np.ndarray
) -> np.ndarray:
    """Hessian of the scaled negative log-likelihood (the Fisher information), plus c̄·uuᵀ, shape (R, K+1, K+1).

    The log-likelihood is a log-sum-exp of linear functions of (θ_i, θ_j, λ), so the pair (i, j) adds
    c = n·(s(1 − s) − p_t/4) to H_ii and H_jj and −c to H_ij (a weighted graph Laplacian on θ),
    v = n·p_t·(½ − s) to H_iλ and −v to H_jλ, and n·p_t(1 − p_t) to H_λλ. H has the null vector
    u = (1, …, 1, 0) (adding a constant to θ changes nothing): adding c̄·uuᵀ (c̄ the mean θ-diagonal) makes it
    invertible without changing the step orthogonal to u.
    """
    n_p, r = s.shape
    k = table.shape[0]
    c = data.n * (s * (1.0 - s) - 0.25 * p_t)
    v = data.n * p_t * (0.5 - s)
    h = np.zeros((r, k + 1, k + 1))
    diag = np.arange(k)
    h[:, diag, diag] = np.concatenate([c, c])[table].sum(axis=1).T
    h[:, ii, jj] = -c.T
    h[:, jj, ii] = -c.T
    col = np.concatenate([v, -v])[table].sum(axis=1).T
    h[:, :k, k] = col
    h[:, k, :k] = col
    h[:, k, k] = (data.n * p_t * (1.0 - p_t)).sum(axis=0)
    h[:, :k, :k] += h[:, diag, diag].mean(axis=1)[:, None, None]
    return h


#: A replicate on the fixed-matrix (chord) iteration whose step shrinks by less than this factor per iteration
#: switches to full Newton.
_CHORD_SLOW = 0.25


def _btd_newton(
    data: _PairData,
    k: int,
    theta0: np.ndarray,
    lam0: np.ndarray,
    tol: float,
    max_iter: int,
    cap: np.ndarray,
    h0: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Damped Newton (or chord) iterations on (θ, λ) for problems whose maximum exists (the MLE, or with the separation
    pseudo-count).

    ``theta0`` is (R, K); returns θ (R, K), λ (R,), converged, iterations. The Davidson model is a log-linear
    multinomial model, so the log-likelihood is concave and its Hessian is the Fisher information
    (:func:`_btd_hessian`).

    With ``h0`` (a (K+1, K+1) Hessian from :func:`_btd_hessian`, e.g. at the point fit) a replicate starts on
    the chord iteration Δ = h0⁻¹ g: bootstrap replicates sit close to the point fit and their Hessians differ
    from h0 by a few per cent, so the step shrinks by that factor per iteration, and an iteration costs no
    Hessian and no batched solve (which dominate Newton's cost at 16 models). A replicate whose step shrinks
    slower than :data:`_CHORD_SLOW`, or that needs backtracking, switches to Newton for good. Both directions
    are ascent directions (h0 and H are positive definite orthogonal to u); a step that lowers the likelihood
    is halved. Every replicate stops when its step has max |Δ| < ``tol`` and is then frozen: its path depends
    only on its own data and ``h0``, not on the rest of the batch (up to rounding: BLAS may order the sums
    of h0⁻¹ g differently for another batch width, ~1e-16 relative). ``converged`` False marks replicates to hand to
    :func:`fit_btd` (no convergence, or a parameter beyond the replicate's ``cap``, (R,)).
    """
    r = data.n.shape[1]
    ii, jj = np.triu_indices(k, 1)
    table = _model_pairs(k)
    h0_inv = None if h0 is None else np.linalg.inv(h0)
    theta_out = np.array(np.asarray(theta0, dtype=np.float64).T, copy=True)  # (K, R)
    theta_out -= theta_out.mean(axis=0, keepdims=True)
    lam_out = np.array(lam0, dtype=np.float64, copy=True)
    converged = np.zeros(r, dtype=bool)
    iterations = np.zeros(r, dtype=np.int64)

    work = np.arange(r)
    th, lam, dat = theta_out.copy(), lam_out.copy(), data
    newton = np.full(r, h0_inv is None)
    last = np.full(r, np.inf)
    ll, p_lo, p_t = _btd_eval(th, lam, dat, ii, jj)
    it = 0
    while len(work) and it < max_iter:
        it += 1
        g, s = _btd_gradient(dat, p_lo, p_t, table)
        step = h0_inv @ g if h0_inv is not None else np.empty_like(g)
        nw = np.flatnonzero(newton)
        if len(nw):
            h = _btd_hessian(dat.take(nw), s[:, nw], p_t[:, nw], table, ii, jj)
            try:
                step[:, nw] = np.linalg.solve(h, g[:, nw].T[:, :, None])[:, :, 0].T
            except np.linalg.LinAlgError:
                break  # a singular system (impossible when the MLE exists): these replicates go to fit_btd
        step[:k] -= step[:k].mean(axis=0, keepdims=True)
        size = np.abs(step).max(axis=0)
        t_new, l_new = th + step[:k], lam + step[k]
        ll_new, pl_new, pt_new = _btd_eval(t_new, l_new, dat, ii, jj)
        # Backtracking on the few replicates whose likelihood dropped (rounding allowance 1e-13 per comparison).
        bad = ~(ll_new >= ll - 1e-13)
        backtracked = bad.copy()
        frac = np.ones(len(work))
        halvings = 0
        while bad.any() and halvings < _MAX_HALVINGS:
            halvings += 1
            frac[bad] *= 0.5
            sub = np.flatnonzero(bad)
            t_new[:, sub] = th[:, sub] + frac[sub] * step[:k, sub]
            l_new[sub] = lam[sub] + frac[sub] * step[k, sub]
            ll_sub, pl_sub, pt_sub = _btd_eval(t_new[:, sub], l_new[sub], dat.take(sub), ii, jj)
            ll_new[sub], pl_new[:, sub], pt_new[:, sub] = ll_sub, pl_sub, pt_sub
            bad[sub] = ~(ll_sub >= ll[sub] - 1e-13)
        th, lam, ll, p_lo, p_t = t_new, l_new, ll_new, pl_new, pt_new
        iterations[work] = it
        done = (size < tol) & ~bad
        failed = bad | (np.abs(th).max(axis=0) > cap[work]) | (np.abs(lam) > cap[work]) | ~np.isfinite(ll)
        newton |= backtracked | ((it > 1) & (size > _CHORD_SLOW * last))
        last = size
        converged[work[done & ~failed]] = True
        stop = done | failed
        if stop.any():
            theta_out[:, work[stop]] = th[:, stop]
            lam_out[work[stop]] = lam[stop]
            keep = np.flatnonzero(~stop)
            work, th, lam, ll = work[keep], th[:, keep], lam[keep], ll[keep]
            p_lo, p_t, newton, last, dat = p_lo[:, keep], p_t[:, keep], newton[keep], last[keep], dat.take(keep)
    if len(work):
        theta_out[:, work] = th
        lam_out[work] = lam
    theta_out -= theta_out.mean(axis=0, keepdims=True)
    return np.ascontiguousarray(theta_out.T), lam_out, converged, iterations


@blas_single_threaded_call
def fit_btd_pairs(
    w_lo: np.ndarray,
    w_hi: np.ndarray,
    ties: np.ndarray,
    n_models: int,
    *,
    init: np.ndarray | None = None,
    init_nu: float | np.ndarray | None = None,
    chord_data: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
    tol: float = 1e-9,
    max_iter: int = BTD_NEWTON_MAX_ITER,
    cap: float = DEFAULT_CAP,
) -> BTDBatch:
    """Fit Bradley–Terry–Davidson to a batch of problems given pair by pair (vectorised damped Newton).

    Preconditions:
        ``w_lo``, ``w_hi``, ``ties`` non-negative, shape (R, P) with P = K(K−1)/2 in the order of
        ``np.triu_indices(n_models, 1)``: for the pair (i, j), i < j, the wins of i over j, of j over i, and
        their ties (counts possibly fractional). ``init`` (K,) or (R, K) and ``init_nu`` (scalar or (R,)) are
        an optional warm start (e.g. the point fit), which saves iterations and does not change the limit.
        With a warm start, replicates iterate with a fixed matrix (see :func:`_btd_newton`): the Hessian at the
        warm start for the pair counts ``chord_data`` = (w_lo, w_hi, ties), each (P,) — pass the point data,
        so that a replicate's value depends on its own data only, whatever else is in the batch (up to
        rounding); the default, the batch's mean counts, makes the path depend on the batch (values agree
        to the tolerance).
    Returns:
        :class:`BTDBatch`. A replicate whose MLE may not exist (no decisive outcome, a win graph that is not
        strongly connected) is fitted with the separation pseudo-count and flagged ``diverged``, as by
        :func:`fit_btd`, and stays on the batched path. Replicates without a tie (the maximum is then plain BT
        with ν = 0) are fitted together by :func:`arena.stats.bt.fit_bt_batch`, and a replicate on which Newton
        fails alone by :func:`fit_btd`; both are flagged ``fallback``. So every replicate gets the value
        :func:`fit_btd` would give, up to the two optimisers' tolerances (Newton here stops at max |step| <
        ``tol`` and is the more precise of the two).
    """
    w_lo = np.asarray(w_lo, dtype=np.float64)
    w_hi = np.asarray(w_hi, dtype=np.float64)
    ties = np.asarray(ties, dtype=np.float64)
    k = int(n_models)
    p = k * (k - 1) // 2
    if w_lo.ndim != 2 or w_lo.shape[1] != p or w_hi.shape != w_lo.shape or ties.shape != w_lo.shape:
        raise ValueError(f"w_lo, w_hi and ties must all have shape (R, {p}) for {k} models (pairs of np.triu_indices)")
    if (w_lo < 0).any() or (w_hi < 0).any() or (ties < 0).any():
        raise ValueError("counts must be non-negative")
    r = w_lo.shape[0]
    theta = np.zeros((r, k))
    lam = np.zeros(r)
    converged = np.zeros(r, dtype=bool)
    diverged = np.zeros(r, dtype=bool)
    iterations = np.zeros(r, dtype=np.int64)
    if k < 2:
        return BTDBatch(theta, np.zeros(r), np.ones(r, dtype=bool), diverged, np.zeros(r, dtype=bool), iterations)

    total_ties = ties.sum(axis=1)
    # A problem whose MLE may not exist is fitted with the separation pseudo-count (module docstring): then every
    # problem's maximum exists, and every one with a tie takes the batched Newton path.
    separated = separated_pairs(w_lo, w_hi, k)
    w_lo_fit, w_hi_fit = with_separation_counts(w_lo, w_hi, separated)
    total_wins = (w_lo_fit + w_hi_fit).sum(axis=1)
    diverged |= separated

    if init is None:
        theta0 = np.zeros((r, k))
    else:
        theta0 = np.broadcast_to(np.asarray(init, dtype=np.float64), (r, k))
    if init_nu is None:
        # As fit_btd: ν at equal strengths, P(tie) = ν/(2+ν) = the tie share.
        share = total_ties / np.maximum(total_ties + total_wins, 1e-300)
        lam0 = np.log(np.maximum(2 * share / np.maximum(1 - share, 1e-12), 1e-12))
    else:
        lam0 = np.log(np.maximum(np.broadcast_to(np.asarray(init_nu, dtype=np.float64), (r,)), 1e-300))
    lam0 = np.clip(lam0, -cap, cap)

    idx = np.flatnonzero(total_ties > 0)
    if len(idx):
        data = _pair_data(w_lo_fit[idx], w_hi_fit[idx], ties[idx])
        h0 = None
        if init is not None and (len(idx) > 1 or chord_data is not None):
            if chord_data is None:
                chord_data = (w_lo_fit[idx].mean(axis=0), w_hi_fit[idx].mean(axis=0), ties[idx].mean(axis=0))
            t0 = theta0[idx[0]] - theta0[idx[0]].mean()
            h0 = _chord_matrix(chord_data, k, t0, lam0[idx[0]])
        # The cap guards against a run-away only where the maximum might not exist; a separated fit's always does.
        caps = np.where(separated[idx], np.inf, cap)
        th_n, lam_n, conv_n, it_n = _btd_newton(data, k, theta0[idx], lam0[idx], tol, max_iter, caps, h0)
        theta[idx], lam[idx], converged[idx], iterations[idx] = th_n, lam_n, conv_n, it_n
    fallback = ~converged
    nu = np.exp(lam)
    # No tie in a replicate: the maximum is plain Bradley–Terry with ν = 0 (as fit_btd gives it), fitted for all such
    # replicates at once: one by one, a tiny fully separated benchmark (every bootstrap replicate tie-free and
    # diverged) took ~10 ms a replicate.
    no_ties = np.flatnonzero(fallback & (total_ties == 0))
    if len(no_ties):
        from .bt import fit_bt_batch

        w_m, _ = pairs_to_matrices(w_lo_fit[no_ties], w_hi_fit[no_ties], ties[no_ties], k)
        bt = fit_bt_batch(w_m, cap=np.inf)  # capped below, as fit_btd does, where the data are not separated
        capped = np.where(separated[no_ties, None], bt.theta, np.clip(bt.theta, -cap, cap))
        theta[no_ties], nu[no_ties], converged[no_ties] = capped, 0.0, bt.converged
        diverged[no_ties] |= bt.diverged
        iterations[no_ties] = 0
    # A Newton failure (never seen: the maximum exists and the log-likelihood is concave) is fitted alone by fit_btd,
    # on the data as given (fit_btd applies the same separation rule).
    for i in np.flatnonzero(fallback & (total_ties > 0)):
        w_m, t_m = pairs_to_matrices(w_lo[i : i + 1], w_hi[i : i + 1], ties[i : i + 1], k)
        fit = fit_btd(w_m[0], t_m[0], cap=cap)
        theta[i], nu[i], converged[i], diverged[i] = fit.theta, fit.nu, fit.converged, fit.diverged
        iterations[i] = 0
    return BTDBatch(theta=theta, nu=nu, converged=converged, diverged=diverged, fallback=fallback, iterations=iterations)


def separated_pairs(w_lo: np.ndarray, w_hi: np.ndarray, k: int) -> np.ndarray:
    """(R,) True where the MLE of a problem given pair by pair ((R, P) wins of the lower and the higher index) may not
    exist: its win graph is not strongly connected, or it has no decisive outcome (ties are not counted)."""
    if k < 2:
        return np.zeros(w_lo.shape[0], dtype=bool)
    # Strongly connected for sure when every pair has wins both ways (the usual bootstrap replicate); the
    # transitive-closure test runs only on the rest.
    connected = ((w_lo > 0) & (w_hi > 0)).all(axis=1)
    unsure = np.flatnonzero(~connected)
    if len(unsure):
        from .bt import strongly_connected_batch

        w_u, _ = pairs_to_matrices(w_lo[unsure], w_hi[unsure], np.zeros_like(w_lo[unsure]), k)
        connected[unsure] = strongly_connected_batch(w_u)
    return ~connected | ((w_lo + w_hi).sum(axis=1) <= 0)


def with_separation_counts(w_lo: np.ndarray, w_hi: np.ndarray, separated: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The wins with :data:`SEPARATION_PSEUDO_COUNT` added to both cells of every pair of the ``separated`` problems."""
    if not separated.any():
        return w_lo, w_hi
    extra = np.where(separated, SEPARATION_PSEUDO_COUNT, 0.0)[:, None]
    return w_lo + extra, w_hi + extra


def _chord_matrix(chord_data: tuple[np.ndarray, ...], k: int, theta0: np.ndarray, lam0: float) -> np.ndarray:
    """The chord matrix of :func:`_btd_newton`: the Hessian at the warm start (θ (K,), λ) for the pair counts
    ``chord_data`` = (w_lo, w_hi, ties), each (P,), with the separation pseudo-count when they need it (so the matrix
    is invertible whenever the replicates' problems are, e.g. for a pooled fit of models that never met)."""
    p = k * (k - 1) // 2
    lo, hi, ti = (np.asarray(x, dtype=np.float64).reshape(1, p) for x in chord_data)
    lo, hi = with_separation_counts(lo, hi, separated_pairs(lo, hi, k))
    point = _pair_data(lo, hi, ti)
    ii, jj = np.triu_indices(k, 1)
    table = _model_pairs(k)
    _, p_lo0, p_t0 = _btd_eval(theta0[:, None], np.array([lam0]), point, ii, jj)
    _, s0 = _btd_gradient(point, p_lo0, p_t0, table)
    return _btd_hessian(point, s0, p_t0, table, ii, jj)[0]


@blas_single_threaded_call
def fit_btd_batch(
    w: np.ndarray,
    t: np.ndarray,
    *,
    init: np.ndarray | None = None,
    init_nu: float | np.ndarray | None = None,
    tol: float = 1e-9,
    max_iter: int = BTD_NEWTON_MAX_ITER,
    cap: float = DEFAULT_CAP,
) -> BTDBatch:
    """:func:`fit_btd` for every problem of a (R, K, K) stack of win matrices and symmetric tie matrices at once.

    Preconditions as :func:`fit_btd` (diagonals ignored, ``t`` symmetric), without a pseudo-count. See
    :func:`fit_btd_pairs` for the algorithm, the warm start and the fallback.
    """
    w = np.asarray(w, dtype=np.float64)
    t = np.asarray(t, dtype=np.float64)
    if w.ndim != 3 or w.shape[1] != w.shape[2] or t.shape != w.shape:
        raise ValueError("w and t must both have shape (R, K, K)")
    if not np.allclose(t, np.swapaxes(t, 1, 2)):
        raise ValueError("the tie matrices must be symmetric (t[r, i, j] = t[r, j, i] = ties between i and j)")
    k = w.shape[1]
    ii, jj = np.triu_indices(k, 1)
    return fit_btd_pairs(
        w[:, ii, jj], w[:, jj, ii], t[:, ii, jj], k, init=init, init_nu=init_nu, tol=tol, max_iter=max_iter, cap=cap
    )
