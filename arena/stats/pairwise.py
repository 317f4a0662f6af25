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
Statistics evaluated many times over one design aggregate the judgments once to (cluster, a, b) cells
(:class:`ClusterCells`): a cell's judgments share p, so counts and score sums are sufficient (issue 25).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
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
        if self.n_clusters * k * k <= 4 * self.n + 1024:
            # Dense sums by np.bincount, then CSR: no sort of the 2n entries (equal values: sums of 0, 0.5, 1).
            base = self.cluster * (k * k)
            flat = np.bincount(base + self.a * k + self.b, weights=self.y, minlength=self.n_clusters * k * k)
            flat += np.bincount(base + self.b * k + self.a, weights=1.0 - self.y, minlength=self.n_clusters * k * k)
            return sparse.csr_matrix(flat.reshape(self.n_clusters, k * k))
        rows = np.concatenate([self.cluster, self.cluster])
        cols = np.concatenate([self.a * k + self.b, self.b * k + self.a])
        vals = np.concatenate([self.y, 1.0 - self.y])
        return sparse.csr_matrix((vals, (rows, cols)), shape=(self.n_clusters, k * k))

    def cells(self) -> ClusterCells:
        """The judgments aggregated to (cluster, a, b) cells: see :class:`ClusterCells`. O(n), computed once per
        instance (the arrays are not expected to change after construction)."""
        cached = self.__dict__.get("_cells")
        if cached is None:
            cached = self._aggregate_cells()
            object.__setattr__(self, "_cells", cached)
        return cached

    def _aggregate_cells(self) -> ClusterCells:
        k, n = self.n_models, self.n
        pair = self.a * k + self.b
        key = self.cluster * (k * k) + pair
        bins = self.n_clusters * k * k
        if bins <= 4 * n + 1024:
            count = np.bincount(key, minlength=bins)
            used = np.flatnonzero(count)
            count = count[used]
            # Sums of scores 0, 0.5 and 1 are exact in any order.
            ysum = np.bincount(key, weights=self.y, minlength=bins)[used]
        else:
            used, of_key, count = np.unique(key, return_inverse=True, return_counts=True)
            ysum = np.bincount(of_key.reshape(-1), weights=self.y, minlength=len(used))
        pair_used = used % (k * k)
        return ClusterCells(
            n_models=k,
            n_clusters=self.n_clusters,
            n_judgments=n,
            cluster=used // (k * k),
            a=pair_used // k,
            b=pair_used % k,
            count=count.astype(np.float64),
            ysum=np.asarray(ysum, dtype=np.float64),
        )

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


@dataclass(frozen=True)
class ClusterCells:
    """Judgments aggregated to (cluster, a, b) cells: the sufficient statistics of every BT quantity here.

    Under BT a judgment enters the likelihood, its score and its information only through (a, b, y), and the
    cluster-robust variance only through each cluster's summed score: a cell's judgment count and score sum
    give its score Σ(y − p) = ysum − count·p and its information count·p(1 − p). Statistics that run many
    times over the same design (the coverage simulation's sandwich, drop-k's influences) work on the cells,
    not on the n judgments. Build with :meth:`PairJudgments.cells`.

    Attributes:
        n_models, n_clusters, n_judgments: K, C and the judgments aggregated.
        cluster, a, b: int64 cell keys (sorted by cluster, then a, then b).
        count: float64 judgments per cell; ysum: float64 sum of their scores y.
    """

    n_models: int
    n_clusters: int
    n_judgments: int
    cluster: np.ndarray
    a: np.ndarray
    b: np.ndarray
    count: np.ndarray
    ysum: np.ndarray

    def information(self, theta: np.ndarray, *, pseudo_count: float = 0.0) -> np.ndarray:
        """:func:`bt_information` from the cells (equal up to rounding: a cell's terms are summed as count·w)."""
        k = self.n_models
        theta = np.asarray(theta, dtype=np.float64)
        p = expit(theta[self.a] - theta[self.b])
        w = self.count * p * (1.0 - p)
        flat = np.bincount(self.a * k + self.b, weights=w, minlength=k * k)
        flat += np.bincount(self.b * k + self.a, weights=w, minlength=k * k)
        return information_from_offdiagonal(flat.reshape(k, k), theta, pseudo_count)

    def scores(self, theta: np.ndarray) -> np.ndarray:
        """:func:`cluster_scores` from the cells, dense (C, K) (equal up to rounding)."""
        k = self.n_models
        theta = np.asarray(theta, dtype=np.float64)
        r = self.ysum - self.count * expit(theta[self.a] - theta[self.b])
        flat = np.bincount(self.cluster * k + self.a, weights=r, minlength=self.n_clusters * k)
        flat -= np.bincount(self.cluster * k + self.b, weights=r, minlength=self.n_clusters * k)
        return flat.reshape(self.n_clusters, k)

    def meat(self, theta: np.ndarray) -> np.ndarray:
        """Σ_c s_c s_cᵀ (K, K) over the clusters' scores at ``theta``: dense scores when C·K is small, else sparse."""
        if self.n_clusters * self.n_models <= CHUNK_ELEMENTS:
            s = self.scores(theta)
            return s.T @ s
        theta = np.asarray(theta, dtype=np.float64)
        r = self.ysum - self.count * expit(theta[self.a] - theta[self.b])
        rows = np.concatenate([self.cluster, self.cluster])
        cols = np.concatenate([self.a, self.b])
        sp = sparse.csr_matrix((np.concatenate([r, -r]), (rows, cols)), shape=(self.n_clusters, self.n_models))
        return np.asarray((sp.T @ sp).todense())


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
    then the reverse order's. Its win matrix equals ``win_matrix(enc, "ordered")``. Contexts are coded in the
    sorted order of their labels (as :func:`pair_judgments` codes them), by hashing the case contexts
    (``pandas.factorize``) and sorting only the distinct labels: sorting a million context strings cost seconds.
    """
    c = enc.complete
    lo, hi = enc.lo[c].astype(np.int64), enc.hi[c].astype(np.int64)
    codes = np.concatenate([enc.original[c], enc.reverse[c]]).astype(np.int64)
    y = np.select([codes == LO, codes == HI, codes == TIE_CODE], [1.0, 0.0, 0.5], default=np.nan)
    of_case, distinct = pd.factorize(enc.context[c], use_na_sentinel=False)
    # Labels as str (distinct objects with equal text are one cluster), coded in sorted order.
    labels, of_distinct = np.unique(np.asarray(distinct, dtype=object).astype(str), return_inverse=True)
    cluster = of_distinct.reshape(-1).astype(np.int64)[of_case]
    return PairJudgments(
        n_models=enc.n_models,
        a=np.concatenate([lo, lo]),
        b=np.concatenate([hi, hi]),
        y=y,
        cluster=np.concatenate([cluster, cluster]),
        n_clusters=len(labels) if len(cluster) else 0,
        models=None if enc.models is None else tuple(enc.models),
        clusters=tuple(str(u) for u in labels),
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
    return information_from_offdiagonal(flat.reshape(k, k), theta, pseudo_count)


def information_from_offdiagonal(off: np.ndarray, theta: np.ndarray, pseudo_count: float) -> np.ndarray:
    """The information (K, K) from the data's off-diagonal sums of w, with the pseudo-count's prior added."""
    k = off.shape[0]
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
