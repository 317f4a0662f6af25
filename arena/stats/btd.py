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
Bounds |θ|, |log ν| ≤ cap keep divergent problems finite; such fits are flagged.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .bt import DEFAULT_CAP, fit_bt, strongly_connected

#: HypoArena 5-level verdicts → win share of the first-named proposal (A). Data, not code: another scale is
#: another dict with the same meaning (label → share of the first side in [0, 1]).
FIVE_LEVEL_SHARES: dict[str, float] = {"A>>B": 1.0, "A>B": 0.75, "A=B": 0.5, "B>A": 0.25, "B>>A": 0.0}

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
        log_likelihood: maximised log-likelihood.
        converged: optimiser success.
        diverged: the MLE may not exist (graph of wins not strongly connected, no decisive outcome, or a bound
            reached); values are finite but diagnostic.
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
        :class:`BTDFit`.
    """
    w = np.array(w, dtype=np.float64)
    t = np.array(t, dtype=np.float64)
    k = w.shape[0]
    if w.shape != (k, k) or t.shape != (k, k):
        raise ValueError("w and t must be square matrices of the same shape")
    if (w < 0).any() or (t < 0).any():
        raise ValueError("counts must be non-negative")
    if not np.allclose(t, t.T):
        raise ValueError("the tie matrix must be symmetric (t[i, j] = t[j, i] = ties between i and j)")
    off = 1.0 - np.eye(k)
    w *= off
    t *= off
    if pseudo_count:
        w += pseudo_count * off
    ii, jj = np.triu_indices(k, 1)
    wij, wji, tij = w[ii, jj], w[jj, ii], t[ii, jj]
    total_ties = float(tij.sum())
    total_wins = float(wij.sum() + wji.sum())
    # Sufficient condition for a finite MLE: the graph of wins (ties not counted) is strongly connected and
    # there is at least one tie and one decisive outcome. Ties alone can keep some fits finite, but not
    # reliably (a model with ties and no wins can still run off with ν → ∞), so we flag conservatively.
    connected = strongly_connected(w)

    if total_ties == 0:
        # No tie: the likelihood increases as ν → 0, where Davidson is plain Bradley–Terry.
        bt = fit_bt(w, cap=cap)
        ll = btd_log_likelihood(bt.theta, 0.0, w, t)
        return BTDFit(bt.theta, 0.0, elo_ratings(bt.theta), ll, bt.converged, bt.diverged)

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
        bounds=[(-cap, cap)] * (k + 1),
        options={"gtol": gtol, "ftol": 1e-15, "maxiter": max_iter, "maxcor": 30},
    )
    th = res.x[:k] - res.x[:k].mean()
    lam = float(res.x[k])
    at_bound = bool((np.abs(res.x) >= cap - 1e-9).any())
    diverged = (not connected) or total_wins == 0 or at_bound
    nu = math.exp(lam)
    ll = btd_log_likelihood(th, nu, w, t)
    return BTDFit(th, nu, elo_ratings(th), ll, bool(res.success), diverged)
