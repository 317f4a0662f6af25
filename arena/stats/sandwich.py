"""Cluster-robust (sandwich) standard errors of Bradley–Terry strengths, and the prior-influence warning (issue 26).

Judgments of one context share its texts, so they are not independent; the bootstrap handles that by resampling
contexts (:func:`arena.stats.bootstrap.bootstrap_fits` with ``unit="context"``). The sandwich is the analytic
counterpart, shown beside it: with the information I (negative Hessian of the log-likelihood, prior included) and
the per-cluster scores s_c at the estimate,

    V = I⁻¹ (Σ_c s_c s_cᵀ) I⁻¹      (CR0; "CR1" multiplies by G/(G−1) · (N−1)/(N−p)),

computed on the free coordinates θ_1 … θ_{K−1} (θ_0 = 0) and mapped to the centered strengths. CR1 with G
clusters, N judgments and p = K − 1 parameters is the default of statsmodels' ``cov_type="cluster"`` (and
Stata's regress); ``small_sample=False`` gives CR0. With ties (y = 0.5) the fit is a quasi-likelihood and the
sandwich is the right variance for it (the model-based one assumes Bernoulli outcomes).

With a pseudo-count the estimate is a penalised one: the bread includes the prior's curvature and the meat only
the data's cluster scores (the prior is not random). Without a pseudo-count it is the textbook estimator.

Cost: O(n) once to aggregate the judgments to (cluster, pair) cells (:meth:`PairJudgments.cells`; a cell's
judgments share p, so its score is Σy − count·p), then O(cells) for the scores and information, O(C·K²) for
the meat, O(K³) for the inverse. Nothing grows quadratically in the number of judgments.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .bt import fit_bt, strongly_connected
from .pairwise import PairJudgments, centering_map


@dataclass(frozen=True)
class SandwichSE:
    """Cluster-robust covariance of centered BT strengths.

    Attributes:
        theta: the centered strengths the covariance is evaluated at (K,).
        cov: cluster-robust covariance (K, K) of the centered strengths.
        se: its square-root diagonal (K,).
        model_cov: the model-based (inverse-information) covariance, for comparison (K, K).
        model_se: its square-root diagonal (K,).
        n_clusters, n_judgments: G and N.
        correction: the factor applied to CR0 (1 for CR0).
        pseudo_count: the prior of the fit.
    """

    theta: np.ndarray
    cov: np.ndarray
    se: np.ndarray
    model_cov: np.ndarray
    model_se: np.ndarray
    n_clusters: int
    n_judgments: int
    correction: float
    pseudo_count: float

    def se_difference(self) -> np.ndarray:
        """Standard error of θ_i − θ_j for every pair (K, K): sqrt(V_ii + V_jj − 2V_ij); zero on the diagonal."""
        d = np.diag(self.cov)
        return np.sqrt(np.maximum(d[:, None] + d[None, :] - 2.0 * self.cov, 0.0))


def cluster_robust_se(
    j: PairJudgments,
    theta: np.ndarray | None = None,
    *,
    pseudo_count: float = 0.0,
    small_sample: bool = True,
) -> SandwichSE:
    """Cluster-robust (sandwich) covariance of the BT strengths of ``j`` (clusters = ``j.cluster``).

    Preconditions:
        ``j`` has at least two models and two clusters; ``theta`` (optional) the centered strengths of the fit
        with ``pseudo_count``, computed here when absent (with ``pseudo_count=0`` the MLE must exist, else the
        information is singular and a ValueError says so).
    Returns:
        :class:`SandwichSE`. CR1 (``small_sample=True``, statsmodels' default) or CR0.
    """
    k, g, n = j.n_models, j.n_clusters, j.n
    if k < 2 or g < 2:
        raise ValueError(f"cluster_robust_se: needs at least 2 models and 2 clusters (got {k} models, {g} clusters)")
    if theta is None:
        w = j.win_matrix()
        if pseudo_count == 0 and not strongly_connected(w):
            raise ValueError(
                "cluster_robust_se: the plain MLE does not exist (the win graph is not strongly connected); "
                "use a pseudo-count or report ranks only"
            )
        theta = fit_bt(w, pseudo_count=pseudo_count).theta
    theta = np.asarray(theta, dtype=np.float64)
    cells = j.cells()
    return sandwich_from_parts(
        theta, cells.information(theta, pseudo_count=pseudo_count), cells.meat(theta), g, n, pseudo_count, small_sample
    )


def sandwich_from_parts(
    theta: np.ndarray, info: np.ndarray, meat: np.ndarray, g: int, n: int, pseudo_count: float, small_sample: bool = True
) -> SandwichSE:
    """:class:`SandwichSE` from the information (K, K) and the meat Σ_c s_c s_cᵀ (K, K) at ``theta`` (G clusters,
    N judgments): the part of :func:`cluster_robust_se` after the data, shared with the coverage simulation, which
    builds both from aggregated counts."""
    k = len(theta)
    try:
        bread = np.linalg.inv(info[1:, 1:])
    except np.linalg.LinAlgError as exc:
        raise ValueError("cluster_robust_se: the information matrix is singular (a model has no comparison?)") from exc
    p = k - 1
    correction = g / (g - 1.0) * (n - 1.0) / (n - p) if small_sample and n > p else 1.0
    v_r = correction * bread @ meat[1:, 1:] @ bread
    m = centering_map(k)
    cov = m @ v_r @ m.T
    model_cov = m @ bread @ m.T
    return SandwichSE(
        theta=theta,
        cov=cov,
        se=np.sqrt(np.maximum(np.diag(cov), 0.0)),
        model_cov=model_cov,
        model_se=np.sqrt(np.maximum(np.diag(model_cov), 0.0)),
        n_clusters=g,
        n_judgments=n,
        correction=float(correction),
        pseudo_count=float(pseudo_count),
    )


def prior_influence(j: PairJudgments, *, pseudo_count: float = 0.5, se: np.ndarray | None = None) -> dict[str, Any]:
    """Which strengths the pseudo-count prior moves by more than their standard error (issue 26's warning).

    Compares the fit with ``pseudo_count`` to the plain MLE on the same judgments. ``se`` (K,) defaults to the
    cluster-robust SE of the plain MLE (:func:`cluster_robust_se`, CR1). A bias of δ standard errors gives a
    nominal 95% interval coverage P(|Z + δ| < 1.96): 83% at δ = 1, hence the threshold.

    Returns:
        A JSON-ready dict: ``pseudo_count``; ``mle_exists`` (False: the prior decides the magnitudes, and every
        model is flagged); ``shift`` {model: θ_prior − θ_mle} and ``se`` {model: SE} (None without an MLE);
        ``ratio`` {model: |shift| / SE}; ``flagged`` (models with |shift| > SE, largest ratio first); ``warning``.
    """
    names = list(j.models) if j.models is not None else [str(i) for i in range(j.n_models)]
    w = j.win_matrix()
    with_prior = fit_bt(w, pseudo_count=pseudo_count).theta
    out: dict[str, Any] = {"pseudo_count": float(pseudo_count), "mle_exists": bool(strongly_connected(w))}
    if not out["mle_exists"]:
        return {**out, "shift": None, "se": None, "ratio": None, "flagged": names, "warning": True}
    mle = fit_bt(w).theta
    if se is None:
        se = cluster_robust_se(j, mle).se
    se = np.asarray(se, dtype=np.float64)
    shift = with_prior - mle
    ratio = np.where(se > 0, np.abs(shift) / np.where(se > 0, se, 1.0), np.where(np.abs(shift) > 1e-12, np.inf, 0.0))
    order = np.argsort(-ratio, kind="stable")
    flagged = [names[i] for i in order if ratio[i] > 1.0]
    return {
        **out,
        "shift": {names[i]: float(shift[i]) for i in range(j.n_models)},
        "se": {names[i]: float(se[i]) for i in range(j.n_models)},
        "ratio": {names[i]: float(ratio[i]) if np.isfinite(ratio[i]) else None for i in range(j.n_models)},
        "flagged": flagged,
        "warning": bool(flagged),
    }
