"""Drop-k robustness of the top rank: the fewest contexts whose removal changes the leader (issue 26).

"The top rank holds when any k − 1 contexts are removed; removing these k changes it." Two searches:

* **Exhaustive** (exact): for m = 1, 2, … every subset of m clusters is removed and the BT fit redone, all
  subsets of one size as one batch of :func:`arena.stats.bt.fit_bt_batch`, while the number of subsets fits the
  budget ``exhaustive_fits``. A size whose every subset keeps the leader is a proven lower bound.
* **Influence-greedy** (an upper bound): when the exhaustive search runs out of budget. For each challenger j
  the one-step (Newton) change of the gap θ_top − θ_j when cluster c is removed is −(e_top − e_j)ᵀ I⁻¹ s_c
  (I the information, s_c the cluster's score at the fit); clusters are removed in order of that predicted
  effect and prefixes of that order are refitted **exactly** until one changes the leader. Whatever the quality
  of the linear prediction, the returned set is a verified witness: removing it changes the leader in an exact
  refit, so the true minimum k* ≤ the returned k. It is exact when it meets the exhaustive lower bound.

The leader is the arg-max of the fit with ``pseudo_count`` (ties by index, as :func:`ranking_from_theta`); a
removal changes it when another model's strength then exceeds the leader's (by more than 1e-8), not on a tie.

Cost: the exhaustive part is at most ``exhaustive_fits`` fits of K×K matrices; the greedy part O(n + C·K + K³)
to build the influences, O(K·C log C) to order them, and for each challenger O(log C) batched prefix refits plus
a scan of one bracket. Removal works on the (C, K²) sparse cluster table: nothing is quadratic in judgments. A
bracket's prefixes are running sums of the ordered rows (O(C·K²)); a selection matrix per prefix made the scan
quadratic in contexts (38 s of the 1.12M-judgment leaderboard, issue 25).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from .bt import fit_bt, fit_bt_batch
from .pairwise import CHUNK_ELEMENTS, PairJudgments, bt_information, centered_inverse, cluster_scores

#: Default budget of exact refits spent on the exhaustive search before switching to the greedy one.
DEFAULT_EXHAUSTIVE_FITS = 20_000
#: Challengers examined by the greedy search (those with the smallest predicted k); each costs O(log C) refits.
GREEDY_CHALLENGERS = 10
#: A rival overtakes the leader when its strength is higher by more than this (well above the fits' 1e-10 tolerance).
OVERTAKE_TOL = 1e-8


@dataclass(frozen=True)
class DropK:
    """Result of :func:`drop_k_robustness`.

    Attributes:
        top: index of the leader on all the data.
        k: size of the smallest removal found that changes the leader (None when none was found).
        removed: the cluster codes of that removal (sorted), empty when ``k`` is None.
        new_top: the leader after that removal (None when ``k`` is None).
        exact: ``k`` is the true minimum (found by, or matching the bound of, the exhaustive search).
        lower_bound: every removal of fewer clusters keeps the leader (proven by the exhaustive search; 1 if none).
        method: ``"exhaustive"`` or ``"influence-greedy"``.
    """

    top: int
    k: int | None
    removed: tuple[int, ...]
    new_top: int | None
    exact: bool
    lower_bound: int
    method: str

    @property
    def holds_up_to(self) -> int:
        """The leader holds when any this many clusters are removed (proven: lower_bound − 1)."""
        return self.lower_bound - 1


def _leaders(w: np.ndarray, pseudo_count: float, init: np.ndarray, top: int) -> np.ndarray:
    """Per matrix of a (M, K, K) stack: the model that overtakes ``top`` in its BT fit, or −1 if none does.

    Overtaking means a strength above the leader's by more than :data:`OVERTAKE_TOL` (the fits' precision), so
    a removal that only ties the leader (e.g. removing everything, which leaves all strengths 0) keeps it.
    """
    theta = fit_bt_batch(w, pseudo_count=pseudo_count, init=init).theta
    rivals = theta.copy()
    rivals[:, top] = -np.inf
    best = np.argmax(rivals, axis=1)
    ahead = rivals[np.arange(len(theta)), best] > theta[:, top] + OVERTAKE_TOL
    return np.where(ahead, best, -1)


def _removal_matrices(full: np.ndarray, table: sparse.csr_matrix, sel: sparse.csr_matrix) -> np.ndarray:
    """Win matrices (M, K, K) of the data without the clusters selected by each row of ``sel`` (M, C)."""
    k = full.shape[0]
    removed = np.asarray((sel @ table).todense())
    # Clipped at 0: subtracting fractional scores can leave -1e-16 where a cell is emptied.
    return np.maximum(full.reshape(1, -1) - removed, 0.0).reshape(-1, k, k)


def _exhaustive(
    full: np.ndarray, table: sparse.csr_matrix, top: int, pseudo_count: float, theta: np.ndarray, budget: int
) -> tuple[int | None, tuple[int, ...], int | None, int]:
    """Exact search by subset size; returns (k, removed, new_top, proven lower bound)."""
    c, k = table.shape[0], full.shape[0]
    chunk = max(1, CHUNK_ELEMENTS // (k * k))
    spent, m = 0, 1
    while m <= c and spent + math.comb(c, m) <= budget:
        combos = itertools.combinations(range(c), m)
        while True:
            block = np.array(list(itertools.islice(combos, chunk)), dtype=np.int64).reshape(-1, m)
            if len(block) == 0:
                break
            rows = np.repeat(np.arange(len(block)), m)
            sel = sparse.csr_matrix((np.ones(block.size), (rows, block.reshape(-1))), shape=(len(block), c))
            leaders = _leaders(_removal_matrices(full, table, sel), pseudo_count, theta, top)
            changed = np.flatnonzero(leaders >= 0)
            if len(changed):
                i = int(changed[0])
                return m, tuple(int(x) for x in block[i]), int(leaders[i]), m
        spent += math.comb(c, m)
        m += 1
    return None, (), None, m


def first_change(
    full: np.ndarray, table: sparse.csr_matrix, order: np.ndarray, sizes: np.ndarray, top: int, pc: float, theta: np.ndarray
) -> tuple[int | None, int | None]:
    """Smallest prefix size in ``sizes`` (ascending) whose removal (prefix of ``order``) changes the leader.

    The removed win counts of the prefixes are running sums of the ordered cluster rows, kept for the sizes asked
    (the same additions, in the same order, as summing each prefix): O(max size · K²), where a selection matrix
    per prefix cost the sum of the sizes. Sizes are fitted in the same batches as before (a batch's fits are
    independent, so its first change is the same).
    """
    k = full.shape[0]
    chunk = max(1, CHUNK_ELEMENTS // (k * k))
    sizes = np.asarray(sizes, dtype=np.int64)
    removed = prefix_sums(table, order, sizes)
    for s in range(0, len(sizes), chunk):
        part = sizes[s : s + chunk]
        w = np.maximum(full.reshape(1, -1) - removed[s : s + chunk], 0.0).reshape(-1, k, k)
        leaders = _leaders(w, pc, theta, top)
        changed = np.flatnonzero(leaders >= 0)
        if len(changed):
            return int(part[changed[0]]), int(leaders[changed[0]])
    return None, None


def prefix_sums(table: sparse.csr_matrix, order: np.ndarray, sizes: np.ndarray, block: int | None = None) -> np.ndarray:
    """(len(sizes), K²): the sum of the ``table`` rows ``order[:m]`` for each m of ``sizes`` (ascending, ≥ 1),
    accumulated row by row, ``block`` rows at a time (memory O(block · K²); default from CHUNK_ELEMENTS)."""
    width = table.shape[1]
    out = np.zeros((len(sizes), width))
    if not len(sizes):
        return out
    block = max(1, CHUNK_ELEMENTS // width) if block is None else block
    running = np.zeros(width)
    for start in range(0, int(sizes[-1]), block):
        stop = min(start + block, int(sizes[-1]))
        rows = table[order[start:stop]].toarray()
        rows[0] += running
        np.cumsum(rows, axis=0, out=rows)
        want = (sizes > start) & (sizes <= stop)
        out[want] = rows[sizes[want] - start - 1]
        running = rows[-1].copy()
    return out


def _greedy(
    j: PairJudgments, full: np.ndarray, table: sparse.csr_matrix, theta: np.ndarray, top: int, pc: float, best: int | None
) -> tuple[int | None, tuple[int, ...], int | None]:
    """Influence-ordered removal per challenger, verified by exact prefix refits (an upper bound)."""
    c = j.n_clusters
    cov = centered_inverse(bt_information(j, theta, pseudo_count=pc))
    delta = -np.asarray(cluster_scores(j, theta) @ cov)  # (C, K): one-step change of θ when cluster c is removed
    gaps = theta[top] - theta
    effects = delta[:, [top]] - delta  # (C, K): predicted change of each gap θ_top − θ_j
    order_all = np.argsort(effects, axis=0, kind="stable")  # most gap-reducing first, per challenger
    predicted = np.full(j.n_models, c + 1)
    for ch in range(j.n_models):
        if ch == top:
            continue
        cum = gaps[ch] + np.cumsum(effects[order_all[:, ch], ch])
        below = np.flatnonzero(cum < 0)
        predicted[ch] = below[0] + 1 if len(below) else c
    challengers = [ch for ch in np.argsort(predicted, kind="stable") if ch != top][:GREEDY_CHALLENGERS]
    k_best, removed, new_top = best, (), None
    for ch in challengers:
        order = order_all[:, ch]
        limit = c if k_best is None else k_best - 1
        if limit < 1:
            break
        grid = np.unique(np.minimum(limit, 2 ** np.arange(int(np.ceil(np.log2(max(limit, 1)))) + 1)))
        hit, _ = first_change(full, table, order, grid, top, pc, theta)
        if hit is None:
            continue
        lower = int(grid[grid < hit].max()) if (grid < hit).any() else 0
        m, leader = first_change(full, table, order, np.arange(lower + 1, hit + 1), top, pc, theta)
        if m is not None and (k_best is None or m < k_best):
            k_best, removed, new_top = m, tuple(sorted(int(x) for x in order[:m])), leader
    return k_best if removed else None, removed, new_top


def drop_k_robustness(
    j: PairJudgments,
    *,
    pseudo_count: float = 0.5,
    exhaustive_fits: int = DEFAULT_EXHAUSTIVE_FITS,
) -> DropK:
    """The smallest number of clusters (contexts) whose removal changes the BT leader of ``j``.

    Preconditions:
        ``j`` has at least two models; ``pseudo_count > 0`` is advised (a removal can leave the plain MLE
        undefined); ``exhaustive_fits >= 0`` bounds the exact search (0 goes straight to the greedy one).
    Returns:
        :class:`DropK`; see the module docstring for which answer is exact.
    """
    if j.n_models < 2:
        raise ValueError("drop_k_robustness: needs at least 2 models")
    full = j.win_matrix()
    theta = fit_bt(full, pseudo_count=pseudo_count).theta
    top = int(np.argmax(theta))
    table = j.cluster_table()
    k, removed, new_top, lower = _exhaustive(full, table, top, pseudo_count, theta, exhaustive_fits)
    if k is not None:
        return DropK(top, k, removed, new_top, True, lower, "exhaustive")
    if lower > j.n_clusters:
        # Every subset was tried (removing all clusters included): no removal changes the leader.
        return DropK(top, None, (), None, True, lower, "exhaustive")
    k, removed, new_top = _greedy(j, full, table, theta, top, pseudo_count, None)
    return DropK(top, k, removed, new_top, k is not None and k == lower, lower, "influence-greedy")
