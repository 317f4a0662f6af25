"""Pairwise judgments as flat arrays, for the statistics that need more than a win matrix (issue 26).

The Bradley–Terry fits of :mod:`arena.stats.bt` only need the win matrix. Cluster-robust standard errors,
drop-k robustness, parametric-bootstrap coverage and style control need each judgment: which two models,
the outcome, the cluster (the context or item the judgment belongs to) and, for style control, covariates.
Every pairwise protocol can state its judgments this way, so these statistics serve all of them.

One judgment is ``(a, b, y, cluster)``: models ``a`` and ``b`` (indices), ``y`` the score of ``a`` (1 a win,
0 a loss, 0.5 a tie: half a win to each side, as in the ``ordered`` fit of :mod:`arena.stats.matrices`),
``cluster`` an integer code of its context. A Lit2Test case gives two judgments, one per presentation
order (:func:`judgments_from_cases`), so the win matrix of its judgments is the ``ordered`` win matrix.

Under BT the log-likelihood of a judgment is y·log σ(θ_a − θ_b) + (1 − y)·log σ(θ_b − θ_a) (a quasi-
likelihood when y = 0.5), whose score in θ_a is r = y − σ(θ_a − θ_b) and −r in θ_b, and whose information
adds w = σ(1 − σ) to the (a, a) and (b, b) cells and −w to (a, b) and (b, a). Everything below is built with
``np.bincount`` or a sparse product over the n judgments: O(n + C·K) time, never a (n, n) or (n, K) dense array.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.special import expit

from .bootstrap import as_generator
from .bt import BTBatch, fit_bt_batch
from .folding import HI, LO, TIE_CODE, EncodedCases

#: Elements (R·K·K or R·C) of one chunk of bootstrap matrices or counts: bounds memory whatever R, K and C are.
CHUNK_ELEMENTS = 4_000_000


@dataclass(frozen=True)
class PairJudgments:
    """Pairwise judgments as flat arrays (see the module docstring).

    Attributes:
        n_models: K; model indices are in ``[0, K)``.
        a, b: int64 model indices of each judgment, ``a != b``.
        y: float64 score of ``a``: 1, 0 or 0.5 (a tie).
        cluster: int64 cluster code of each judgment, in ``[0, n_clusters)``; every code is used.
        n_clusters: C.
        models: model names (index order), or None.
        clusters: cluster labels (code order), or None.
    """

    n_models: int
    a: np.ndarray
    b: np.ndarray
    y: np.ndarray
    cluster: np.ndarray
    n_clusters: int
    models: tuple[str, ...] | None = None
    clusters: tuple[str, ...] | None = None

    @property
    def n(self) -> int:
        """Number of judgments."""
        return len(self.a)

    def win_matrix(self, weights: np.ndarray | None = None) -> np.ndarray:
        """Win matrix (K, K): ``W[i, j]`` = (weighted) wins of i over j, a tie half a win to each side."""
        k = self.n_models
        wt = np.ones(self.n) if weights is None else np.asarray(weights, dtype=np.float64)
        flat = np.bincount(self.a * k + self.b, weights=wt * self.y, minlength=k * k)
        flat += np.bincount(self.b * k + self.a, weights=wt * (1.0 - self.y), minlength=k * k)
        return flat.reshape(k, k)

    def cluster_table(self) -> sparse.csr_matrix:
        """Each cluster's contribution to the flattened win matrix, as a sparse (C, K·K) matrix.

        The win matrix of any multiset of clusters with counts ``m`` (C,) is ``m @ table``; duplicates are
        summed by the conversion to CSR. nnz ≤ 2n.
        """
        k = self.n_models
        rows = np.concatenate([self.cluster, self.cluster])
        cols = np.concatenate([self.a * k + self.b, self.b * k + self.a])
        vals = np.concatenate([self.y, 1.0 - self.y])
        return sparse.csr_matrix((vals, (rows, cols)), shape=(self.n_clusters, k * k))

    def subset(self, mask: np.ndarray) -> PairJudgments:
        """The judgments selected by a boolean mask; clusters are re-coded densely (labels kept when known)."""
        mask = np.asarray(mask, dtype=bool)
        used, code = np.unique(self.cluster[mask], return_inverse=True)
        labels = None if self.clusters is None else tuple(self.clusters[i] for i in used)
        return PairJudgments(
            n_models=self.n_models,
            a=self.a[mask],
            b=self.b[mask],
            y=self.y[mask],
            cluster=code.reshape(-1).astype(np.int64),
            n_clusters=len(used),
            models=self.models,
            clusters=labels,
        )


def pair_judgments(
    a: np.ndarray,
    b: np.ndarray,
    y: np.ndarray,
    *,
    n_models: int | None = None,
    cluster: np.ndarray | None = None,
    models: tuple[str, ...] | list[str] | None = None,
) -> PairJudgments:
    """Validate and build :class:`PairJudgments` from arrays.

    Preconditions:
        ``a``, ``b`` integer model indices in ``[0, n_models)`` with ``a != b``; ``y`` in {0, 0.5, 1} (any value
        in [0, 1] is accepted as a fractional score); ``cluster`` any hashable labels (default: each judgment its
        own cluster), coded densely here in sorted order; ``n_models`` defaults to ``len(models)`` or max index + 1.
    Raises:
        ValueError: naming the offending argument and the first bad position.
    """
    a = np.asarray(a, dtype=np.int64).reshape(-1)
    b = np.asarray(b, dtype=np.int64).reshape(-1)
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    n = len(a)
    if len(b) != n or len(y) != n:
        raise ValueError(f"pair_judgments: a, b and y must have equal lengths (got {n}, {len(b)}, {len(y)})")
    if n_models is None:
        n_models = len(models) if models is not None else (int(max(a.max(), b.max())) + 1 if n else 0)
    for name, idx in (("a", a), ("b", b)):
        bad = np.flatnonzero((idx < 0) | (idx >= n_models))
        if len(bad):
            raise ValueError(f"pair_judgments: {name}[{bad[0]}] = {idx[bad[0]]} is not a model index in [0, {n_models})")
    same = np.flatnonzero(a == b)
    if len(same):
        raise ValueError(f"pair_judgments: judgment {same[0]} compares model {a[same[0]]} with itself; drop it")
    bad_y = np.flatnonzero(~((y >= 0) & (y <= 1)))
    if len(bad_y):
        raise ValueError(f"pair_judgments: y[{bad_y[0]}] = {y[bad_y[0]]} is not a score in [0, 1] (1 win, 0 loss, 0.5 tie)")
    if cluster is None:
        codes, labels = np.arange(n, dtype=np.int64), None
    else:
        cl = np.asarray(cluster)
        if len(cl) != n:
            raise ValueError(f"pair_judgments: cluster has length {len(cl)}, expected {n} (one label per judgment)")
        uniq, codes = np.unique(cl, return_inverse=True)
        codes = codes.reshape(-1).astype(np.int64)
        labels = tuple(str(u) for u in uniq)
    return PairJudgments(
        n_models=int(n_models),
        a=a,
        b=b,
        y=y,
        cluster=codes,
        n_clusters=int(codes.max()) + 1 if n else 0,
        models=None if models is None else tuple(models),
        clusters=labels,
    )


def judgments_from_cases(enc: EncodedCases) -> PairJudgments:
    """The ordered judgments of the complete cases of ``enc``, two per case, clustered by context.

    Each judgment is oriented as its canonical pair (a = lo, b = hi); the original order's verdict comes first,
    then the reverse order's. Its win matrix equals ``win_matrix(enc, "ordered")``.
    """
    c = enc.complete
    lo, hi = enc.lo[c].astype(np.int64), enc.hi[c].astype(np.int64)
    codes = np.concatenate([enc.original[c], enc.reverse[c]]).astype(np.int64)
    y = np.select([codes == LO, codes == HI, codes == TIE_CODE], [1.0, 0.0, 0.5], default=np.nan)
    ctx = enc.context[c].astype(str)
    return pair_judgments(
        np.concatenate([lo, lo]),
        np.concatenate([hi, hi]),
        y,
        n_models=enc.n_models,
        cluster=np.concatenate([ctx, ctx]),
        models=enc.models,
    )


def bt_probabilities(j: PairJudgments, theta: np.ndarray) -> np.ndarray:
    """σ(θ_a − θ_b) per judgment (n,)."""
    theta = np.asarray(theta, dtype=np.float64)
    return expit(theta[j.a] - theta[j.b])


def bt_information(j: PairJudgments, theta: np.ndarray, *, pseudo_count: float = 0.0) -> np.ndarray:
    """Fisher information (K, K) of the BT log-likelihood at ``theta`` (the negative Hessian), prior included.

    The pseudo-count c adds c wins each way to every pair: 2c comparisons per pair, information 2c·p(1 − p).
    Singular along the all-ones direction (strengths are defined up to a constant). O(n + K²).
    """
    k = j.n_models
    p = bt_probabilities(j, theta)
    w = p * (1.0 - p)
    flat = np.bincount(j.a * k + j.b, weights=w, minlength=k * k) + np.bincount(j.b * k + j.a, weights=w, minlength=k * k)
    off = flat.reshape(k, k)
    if pseudo_count:
        th = np.asarray(theta, dtype=np.float64)
        pp = expit(th[:, None] - th[None, :])
        prior = 2.0 * pseudo_count * pp * (1.0 - pp)
        np.fill_diagonal(prior, 0.0)
        off = off + prior
    info = -off
    info[np.diag_indices(k)] = off.sum(axis=1)
    return info


def cluster_scores(j: PairJudgments, theta: np.ndarray) -> sparse.csr_matrix:
    """Score of the data log-likelihood per cluster, as a sparse (C, K) matrix (row c: Σ over c's judgments).

    Sparse because a cluster touches a handful of models; nnz ≤ 2n. The prior's score is not included (it
    belongs to no cluster).
    """
    r = j.y - bt_probabilities(j, theta)
    rows = np.concatenate([j.cluster, j.cluster])
    cols = np.concatenate([j.a, j.b])
    return sparse.csr_matrix((np.concatenate([r, -r]), (rows, cols)), shape=(j.n_clusters, j.n_models))


def centered_inverse(info: np.ndarray) -> np.ndarray:
    """The inverse of a BT information matrix on the centered subspace (Σθ = 0), as a (K, K) matrix.

    The information is singular along the ones vector; fixing θ_0 = 0, inverting the (K−1)² block and mapping
    back with the centering projection gives the covariance of the centered strengths. Any reference model gives
    the same result (a linear reparametrisation). O(K³).
    """
    k = info.shape[0]
    inv_r = np.linalg.inv(info[1:, 1:])
    m = centering_map(k)
    return m @ inv_r @ m.T


def centering_map(k: int) -> np.ndarray:
    """The (K, K−1) map from (θ_1 … θ_{K−1}) with θ_0 = 0 to centered strengths θ − mean θ."""
    full = np.vstack([np.zeros((1, k - 1)), np.eye(k - 1)])
    return full - full.mean(axis=0, keepdims=True)


def cluster_bootstrap_fits(
    j: PairJudgments,
    *,
    replicates: int,
    seed: int | np.random.Generator | None = 0,
    pseudo_count: float = 0.5,
    init: np.ndarray | None = None,
) -> BTBatch:
    """Cluster (context) bootstrap of the BT fit: resample the C clusters with replacement, R times, and refit.

    Each replicate's cluster counts are Multinomial(C, 1/C) (the same distribution as drawing C indices), its
    win matrix is ``counts @ cluster_table`` and all replicates are fitted by :func:`fit_bt_batch`, chunk by
    chunk so memory stays bounded (chunks consume the random stream as one draw would). O(R·(C + K²·iters) + nnz).
    """
    rng = as_generator(seed)
    k, c = j.n_models, j.n_clusters
    table_t = j.cluster_table().T.tocsr()  # (K², C)
    chunk = max(1, CHUNK_ELEMENTS // max(1, k * k, c))
    parts = []
    for start in range(0, replicates, chunk):
        m = min(chunk, replicates - start)
        counts = rng.multinomial(c, np.full(c, 1.0 / c), size=m).astype(np.float64)
        w = np.asarray((table_t @ counts.T).T).reshape(m, k, k)
        parts.append(fit_bt_batch(w, pseudo_count=pseudo_count, init=init))
    return BTBatch(
        theta=np.concatenate([p.theta for p in parts]),
        converged=np.concatenate([p.converged for p in parts]),
        diverged=np.concatenate([p.diverged for p in parts]),
        capped=np.concatenate([p.capped for p in parts]),
        iterations=np.concatenate([p.iterations for p in parts]),
    )
