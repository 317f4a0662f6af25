"""Bradley–Terry strengths by fixed-point iterations, single fits and vectorised batches.

Model: P(i beats j) = π_i / (π_i + π_j). Strengths are reported as centered natural-log abilities
θ_i = log π_i − mean_k log π_k (mean 0), as in the Lit2Test release.

Input is a win matrix ``W`` with ``W[i, j]`` = (possibly fractional) wins of i over j; the diagonal is
ignored. A pseudo-count ``c`` is added to every off-diagonal cell before fitting (the release uses 0.5;
0 gives the plain maximum-likelihood estimate).

MM update (Hunter 2004, eq. 3): π_i ← w_i / Σ_j N_ij / (π_i + π_j), with w_i = Σ_j W_ij the wins of i and
N_ij = W_ij + W_ji the comparisons of i and j; it increases the likelihood monotonically and converges to
the unique MLE whenever the directed win graph (edge i→j when W_ij > 0) is strongly connected
(Hunter's Assumption 1). When it is not, the MLE does not exist (some θ run off to ±∞): we then still stop
after a bounded number of iterations, cap θ to ``±cap`` and flag the fit ``diverged`` (never NaN, never an
endless loop).

Fits whose MLE exists use Newman's iteration instead ("Efficient computation of rankings from pairwise
comparisons", JMLR 24, 2023, eq. 12): π_i ← Σ_j W_ij π_j/(π_i + π_j) / Σ_j W_ji/(π_i + π_j). Its fixed
points are the same likelihood equations (w_i = Σ_j N_ij π_i/(π_i + π_j)), but it converges in far fewer
iterations than MM (14 against 228 from a warm start at 200 models; bench/bench_scale_stats.py), and at
the same stopping rule lands closer to the fixed point (MM's slow linear rate leaves ~1e-9 at tol 1e-10).
MM is kept for fits flagged diverged, where Newman's update is undefined (a model without losses has a
zero denominator) and the capped, bounded MM behaviour is the documented one.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components
from threadpoolctl import ThreadpoolController

#: Default convergence tolerance on max |Δθ| between two MM iterations.
DEFAULT_TOL = 1e-10
#: Default iteration limit for a fit whose MLE exists.
DEFAULT_MAX_ITER = 20_000
#: Iterations spent on a fit whose MLE does not exist before it is stopped (values are diagnostic only).
DEFAULT_DIVERGED_ITER = 300
#: Cap on |θ| for divergent fits (e^60 ≈ 1e26 strength ratio: far beyond any real-data estimate).
DEFAULT_CAP = 30.0


@dataclass(frozen=True)
class BTFit:
    """One Bradley–Terry fit.

    Attributes:
        theta: centered log-abilities, shape (K,).
        converged: the MM iteration met the tolerance.
        diverged: the MLE does not exist (the win graph after the pseudo-count is not strongly connected);
            ``theta`` is then a capped, finite, diagnostic-only value.
        iterations: MM iterations performed.
        capped: some |θ| reached the cap.
    """

    theta: np.ndarray
    converged: bool
    diverged: bool
    iterations: int
    capped: bool


@dataclass(frozen=True)
class BTBatch:
    """Bradley–Terry fits of a batch of win matrices (e.g. bootstrap replicates).

    Attributes:
        theta: centered log-abilities, shape (R, K).
        converged, diverged, capped: boolean flags per replicate, shape (R,).
        iterations: iterations per replicate, shape (R,).
    """

    theta: np.ndarray
    converged: np.ndarray
    diverged: np.ndarray
    capped: np.ndarray
    iterations: np.ndarray


def add_pseudo_count(w: np.ndarray, pseudo_count: float) -> np.ndarray:
    """Return a float copy of ``w`` (shape (..., K, K)) with ``pseudo_count`` added off the diagonal and a zero diagonal."""
    if not 0 <= pseudo_count < np.inf:  # NaN too
        raise ValueError(f"pseudo_count must be a finite number >= 0, not {pseudo_count!r}")
    out = np.array(w, dtype=np.float64, copy=True)
    k = out.shape[-1]
    off = 1.0 - np.eye(k)
    # Zeroing the diagonal: self-wins carry no information about relative strength.
    out *= off
    if pseudo_count:
        out += pseudo_count * off
    return out


def strongly_connected(w: np.ndarray) -> bool:
    """True when the directed graph with an edge i→j for every ``w[i, j] > 0`` (i ≠ j) is strongly connected.

    This is the condition for the BT maximum-likelihood estimate to exist (Hunter 2004, Assumption 1).
    A single model counts as connected.
    """
    k = w.shape[0]
    if k <= 1:
        return True
    adj = (np.asarray(w) > 0) & ~np.eye(k, dtype=bool)
    n_comp, _ = connected_components(csr_matrix(adj), directed=True, connection="strong")
    return bool(n_comp == 1)


def strong_components(w: np.ndarray) -> np.ndarray:
    """Label of the strongly connected component of each model in the win graph of ``w`` (edge i→j if w[i,j] > 0)."""
    k = w.shape[0]
    adj = (np.asarray(w) > 0) & ~np.eye(k, dtype=bool)
    _, labels = connected_components(csr_matrix(adj), directed=True, connection="strong")
    return labels


def strongly_connected_batch(w: np.ndarray) -> np.ndarray:
    """:func:`strongly_connected` for each matrix of a (R, K, K) stack; returns a boolean (R,) array."""
    r, k = w.shape[0], w.shape[-1]
    if k <= 1:
        return np.ones(r, dtype=bool)
    adj = (w > 0) & ~np.eye(k, dtype=bool)
    steps = int(np.ceil(np.log2(k)))
    if r * k**3 * steps <= 2e8:
        # Transitive closure by repeated squaring of the reachability matrix, all replicates at once.
        reach = (adj | np.eye(k, dtype=bool)).astype(np.float32)
        for _ in range(steps):
            reach = (reach @ reach > 0).astype(np.float32)
        return reach.all(axis=(1, 2))
    return np.array([strongly_connected(adj[i]) for i in range(r)], dtype=bool)


def mm_batch(
    w_eff: np.ndarray,
    theta0: np.ndarray | None,
    diverged: np.ndarray,
    tol: float,
    max_iter: int,
    diverged_iter: int,
    cap: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Hunter's MM on a (R, K, K) stack of win matrices (pseudo-count already added, zero diagonal).

    Works on π (not log π) normalised to sum 1 after every step, so an iteration needs no log/exp; the
    stopping rule is max_i |π_i(new)/π_i − 1| < tol (≈ max |Δθ|). Every replicate is updated until its own
    rule fires (or its iteration limit, which is ``diverged_iter`` for replicates flagged ``diverged``) and
    is then frozen, so a replicate gets exactly the values a single fit of it would get, whatever else is
    in the batch.

    Internally the replicate axis is last, (K, R): every elementwise step then runs over long contiguous
    rows, which is several times faster than (R, K) for many replicates of a few models.
    """
    r, k, _ = w_eff.shape
    wins = np.ascontiguousarray(w_eff.sum(axis=2).T)  # (K, R)
    n_full = w_eff + np.swapaxes(w_eff, 1, 2)
    use_pairs = k <= 8
    if use_pairs:
        # Few models: iterate over the K(K-1)/2 pairs with a (K, P) incidence matrix, which needs far fewer
        # operations than the dense (K, K) form (the release's 4 models: 6 pairs vs 16 cells).
        ii, jj = np.triu_indices(k, 1)
        n_pair = np.ascontiguousarray(n_full[:, ii, jj].T)  # (P, R)
        incidence = np.zeros((k, len(ii)))
        incidence[ii, np.arange(len(ii))] = 1.0
        incidence[jj, np.arange(len(ii))] = 1.0
    else:
        n_dense = np.ascontiguousarray(np.moveaxis(n_full, 0, -1))  # (K, K, R)
    logp0 = np.zeros((k, r)) if theta0 is None else np.array(np.asarray(theta0, dtype=np.float64).T, copy=True)
    p = np.exp(logp0 - logp0.max(axis=0, keepdims=True))
    p /= p.sum(axis=0, keepdims=True)
    limit = np.where(diverged, min(diverged_iter, max_iter), max_iter)
    active = limit > 0
    converged = np.zeros(r, dtype=bool)
    iterations = np.zeros(r, dtype=np.int64)
    # Floor for π (sum 1): a model without wins would reach 0; the floor keeps every quotient finite
    # (N / 2e-200 cannot overflow for any real count). It binds when the MLE does not exist, and (after the
    # normalisation) when a tiny pseudo-count's π underflows (PI_FLOOR).
    floor = PI_FLOOR
    need_floor = bool((wins <= 0).any())
    # A model without any comparison has denominator 0: it keeps its value (it is flagged diverged anyway).
    no_games = n_full.sum(axis=2).T <= 0
    any_no_games = bool(no_games.any())
    safe_wins = np.where(no_games, 1.0, wins)
    it = 0
    while active.any():
        it += 1
        if use_pairs:
            denom = incidence @ (n_pair / (p[ii] + p[jj]))
        else:
            denom = (n_dense / (p[:, None, :] + p[None, :, :])).sum(axis=1)
        if any_no_games:
            denom[no_games] = 1.0
            new = safe_wins / denom
            new[no_games] = p[no_games]
        else:
            new = wins / denom
        if need_floor:
            np.maximum(new, floor, out=new)
        new /= new.sum(axis=0, keepdims=True)
        if not need_floor:
            np.maximum(new, floor, out=new)
        ratio = new / p
        ratio -= 1.0
        np.abs(ratio, out=ratio)
        delta = ratio.max(axis=0)
        if active.all():
            p = new
        else:
            np.copyto(p, new, where=active[None, :])
        iterations[active] = it
        newly = active & (delta < tol)
        converged |= newly
        active &= ~newly & (it < limit)
    logp = np.log(p.T)
    theta = logp - logp.mean(axis=1, keepdims=True)
    np.clip(theta, -cap, cap, out=theta)
    return theta, converged, iterations


#: Newman iterations after which a fit still running is handed to MM (globally convergent) for the rest.
NEWMAN_MAX_ITER = 500
#: Floor for π (sum 1) in every iteration. A model that loses nearly everything under a tiny pseudo-count has a true π
#: far below the smallest double (e^-700): it underflowed to 0, and the next step divided 0 by 0 (NaN strengths, an
#: HTTP 500 from the leaderboard API at pseudo-count 1e-300 with 3 models, 1e-50 with 8, 1e-6 with 50: review). Held
#: at the floor, such a model's θ is hundreds below the others' and clipped to −cap like a divergent fit's. A fit all
#: of whose π stay above the floor keeps its values bit for bit; one with a π between the smallest double and the floor
#: (pseudo-counts near 1e-200 and below) moves that model's log π up to the floor's, and through the centring the others'
#: θ by that difference over K (their differences, order and flags unchanged). N / 2e-200 cannot overflow for any count.
PI_FLOOR = 1e-200


def _newman_pairs(
    w_eff: np.ndarray, p: np.ndarray, converged: np.ndarray, iterations: np.ndarray, tol: float, limit: int
) -> None:
    """Newman's iteration for few models, in place on ``p`` (R, K), ``converged`` and ``iterations``.

    Works on the K(K-1)/2 pairs (the release's 4 models: 6 pairs instead of 16 cells) with the replicate axis
    last (long contiguous rows), scattering back to models with incidence matrices; a finished replicate is
    frozen in place.
    """
    r, k, _ = w_eff.shape
    ii, jj = np.triu_indices(k, 1)
    n_p = len(ii)
    w_lo = np.ascontiguousarray(w_eff[:, ii, jj].T)  # (P, R): wins of the lower index over the higher
    w_hi = np.ascontiguousarray(w_eff[:, jj, ii].T)
    inc_lo = np.zeros((k, n_p))
    inc_lo[ii, np.arange(n_p)] = 1.0
    inc_hi = np.zeros((k, n_p))
    inc_hi[jj, np.arange(n_p)] = 1.0
    pt = np.ascontiguousarray(p.T)  # (K, R)
    active = np.full(r, limit > 0)
    damped = np.zeros(r, dtype=bool)
    last = np.full(r, np.inf)
    it = 0
    while active.any():
        it += 1
        p_lo, p_hi = pt[ii], pt[jj]
        s = p_lo + p_hi
        a_lo = w_lo / s
        a_hi = w_hi / s
        new = (inc_lo @ (a_lo * p_hi) + inc_hi @ (a_hi * p_lo)) / (inc_lo @ a_hi + inc_hi @ a_lo)
        if damped.any():
            new[:, damped] = np.sqrt(new[:, damped] * pt[:, damped])
        new /= new.sum(axis=0, keepdims=True)
        np.maximum(new, PI_FLOOR, out=new)
        delta = np.abs(new / pt - 1.0).max(axis=0)
        if active.all():
            pt = new
        else:
            np.copyto(pt, new, where=active[None, :])
        iterations[active] = it
        newly = active & (delta < tol)
        converged |= newly
        damped |= active & ~newly & (delta >= last)
        last = np.where(active, delta, last)
        active &= ~newly & (it < limit)
    p[:] = pt.T


#: Elements (R·K·K) of one block of :func:`_newman_dense`: about 2 MiB of float64, so that the several passes
#: of an iteration over the block run from the core's cache instead of main memory.
_NEWMAN_BLOCK_ELEMENTS = 262_144


def _newman_dense(
    w_eff: np.ndarray, p: np.ndarray, converged: np.ndarray, iterations: np.ndarray, tol: float, limit: int
) -> None:
    """Newman's iteration on dense (R, K, K) matrices, in place on ``p`` (R, K), ``converged``, ``iterations``.

    Runs block by block of replicates (:data:`_NEWMAN_BLOCK_ELEMENTS`): an iteration makes about five passes
    over its (R, K, K) arrays, and at 200 models a block of 100 replicates (32 MB) streamed them from main
    memory, several times slower than from cache (bench/bench_scale_stats.py). Every replicate's path depends
    only on itself, so blocking changes no value.
    """
    r, k, _ = w_eff.shape
    step = max(1, _NEWMAN_BLOCK_ELEMENTS // (k * k))
    for s in range(0, r, step):
        e = min(r, s + step)
        _newman_dense_block(w_eff[s:e], p[s:e], converged[s:e], iterations[s:e], tol, limit)


def _newman_dense_block(
    w_eff: np.ndarray, p: np.ndarray, converged: np.ndarray, iterations: np.ndarray, tol: float, limit: int
) -> None:
    """:func:`_newman_dense` on one block (views into the caller's arrays, updated in place).

    With A = W / (π_i + π_j) the numerator is A @ π and the denominator the column sums of A (the divisor is
    symmetric). The working set shrinks to the still-active replicates as they finish.
    """
    r = w_eff.shape[0]
    work = np.arange(r) if limit > 0 else np.zeros(0, dtype=np.int64)
    w_work = w_eff
    p_work = p.copy()
    last = np.full(r, np.inf)
    damped = np.zeros(r, dtype=bool)
    it = 0
    while len(work):
        it += 1
        a = w_work / (p_work[:, :, None] + p_work[:, None, :])
        new = np.matmul(a, p_work[:, :, None])[:, :, 0] / a.sum(axis=1)
        half = damped[work]
        if half.any():
            new[half] = np.sqrt(new[half] * p_work[half])
        new /= new.sum(axis=1, keepdims=True)
        np.maximum(new, PI_FLOOR, out=new)
        delta = np.abs(new / p_work - 1.0).max(axis=1)
        p_work = new
        iterations[work] = it
        done = delta < tol
        converged[work[done]] = True
        damped[work[~done & (delta >= last[work])]] = True
        last[work] = delta
        stop = done | (it >= limit)
        if stop.any():
            p[work[stop]] = p_work[stop]
            keep = ~stop
            work, p_work, w_work = work[keep], p_work[keep], w_work[keep]


def _newman_batch(
    w_eff: np.ndarray,
    theta0: np.ndarray | None,
    tol: float,
    max_iter: int,
    cap: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Newman's iteration on a (R, K, K) stack whose every win graph is strongly connected (K >= 2).

    Preconditions: pseudo-count already added, zero diagonal, every replicate's MLE exists (so every model
    has a win and a loss: numerators and denominators stay positive).

    Near the solution the update's Jacobian (in log π) is close to the random-walk matrix of the comparison
    graph, whose eigenvalues lie in [−1, 1]: on a (nearly) bipartite graph, e.g. two models, the plain update
    oscillates. A replicate whose step stops shrinking therefore switches for good to the half step
    log π ← (log π + log F(π))/2 (eigenvalues (1 + λ)/2, no oscillation). A replicate still running after
    :data:`NEWMAN_MAX_ITER` iterations continues with MM, which increases the likelihood monotonically.

    Stopping rule and freezing as in :func:`mm_batch`: a replicate stops when max_i |π_i(new)/π_i − 1| <
    tol and is then left alone, and every decision above uses only its own history, so its value does not
    depend on the rest of the batch.
    """
    r, k, _ = w_eff.shape
    if theta0 is None:
        p = np.full((r, k), 1.0 / k)
    else:
        logp0 = np.asarray(theta0, dtype=np.float64)
        p = np.exp(logp0 - logp0.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        np.maximum(p, PI_FLOOR, out=p)
    converged = np.zeros(r, dtype=bool)
    iterations = np.zeros(r, dtype=np.int64)
    limit = min(max_iter, NEWMAN_MAX_ITER)

    if k <= 8:
        _newman_pairs(w_eff, p, converged, iterations, tol, limit)
    else:
        _newman_dense(w_eff, p, converged, iterations, tol, limit)

    rest = ~converged & (iterations < max_iter)
    if rest.any():
        # Rare: hand the still-unconverged fits to MM from where Newman left them.
        logp = np.log(p[rest])
        theta_mm, conv_mm, it_mm = mm_batch(
            w_eff[rest], logp, np.zeros(int(rest.sum()), dtype=bool), tol, max_iter - limit, 0, np.inf
        )
        p[rest] = np.exp(theta_mm)
        converged[rest] = conv_mm
        iterations[rest] += it_mm
    logp = np.log(p)
    theta = logp - logp.mean(axis=1, keepdims=True)
    np.clip(theta, -cap, cap, out=theta)
    return theta, converged, iterations


_THREADPOOLS: ThreadpoolController | None = None


def blas_single_threaded() -> Any:
    """A context in which BLAS uses one thread. The fits' matrix products are small in one dimension (K models
    by K(K-1)/2 pairs, times R replicates) and memory-bound: extra BLAS threads cannot speed them up, and on a
    machine whose cores are busy (a web server's other workers, a test run) OpenBLAS's threads wait for each
    other: the case-bootstrap fits of a 10,000-replicate leaderboard took 2.6 s with two BLAS threads at load 4
    and 0.8 s with one (bench/README.md). The controller is made once, on first use (it scans loaded libraries)."""
    global _THREADPOOLS
    if _THREADPOOLS is None:
        _THREADPOOLS = ThreadpoolController()
    return _THREADPOOLS.limit(limits=1, user_api="blas")


def blas_single_threaded_call[**P, T](fn: Callable[P, T]) -> Callable[P, T]:
    """Decorator: ``fn`` runs in :func:`blas_single_threaded`."""

    @functools.wraps(fn)
    def call(*args: P.args, **kwargs: P.kwargs) -> T:
        with blas_single_threaded():
            return fn(*args, **kwargs)

    return call


@blas_single_threaded_call
def fit_bt_batch(
    w: np.ndarray,
    *,
    pseudo_count: float = 0.0,
    tol: float = DEFAULT_TOL,
    max_iter: int = DEFAULT_MAX_ITER,
    diverged_iter: int = DEFAULT_DIVERGED_ITER,
    cap: float = DEFAULT_CAP,
    init: np.ndarray | None = None,
) -> BTBatch:
    """Fit BT to every matrix of a (R, K, K) stack at once (vectorised; Newman's iteration, MM when diverged).

    Preconditions:
        ``w`` non-negative, shape (R, K, K); ``pseudo_count >= 0``; ``init`` (optional) log-abilities of
        shape (K,) or (R, K) to start from (a warm start, e.g. the point estimate, saves iterations and does
        not change the limit).
    Returns:
        A :class:`BTBatch`.
    """
    w = np.asarray(w, dtype=np.float64)
    if w.ndim != 3 or w.shape[1] != w.shape[2]:
        raise ValueError("w must have shape (R, K, K)")
    if not (np.isfinite(w) & (w >= 0)).all():  # a NaN or inf count made NaN strengths after 20,000 iterations
        raise ValueError("win counts must be finite and non-negative")
    r, k, _ = w.shape
    w_eff = add_pseudo_count(w, pseudo_count)
    if pseudo_count > 0 or k <= 1:
        # Every off-diagonal cell is positive: the graph is complete, the MLE exists.
        diverged = np.zeros(r, dtype=bool)
    else:
        diverged = ~strongly_connected_batch(w_eff)
    theta0 = None if init is None else np.broadcast_to(np.asarray(init, dtype=np.float64), (r, k))
    if k <= 1 or diverged.all():
        theta, converged, iterations = mm_batch(w_eff, theta0, diverged, tol, max_iter, diverged_iter, cap)
    elif not diverged.any():
        theta, converged, iterations = _newman_batch(w_eff, theta0, tol, max_iter, cap)
    else:
        # Each replicate's path depends only on itself, so splitting the batch changes no value.
        theta = np.empty((r, k))
        converged = np.empty(r, dtype=bool)
        iterations = np.empty(r, dtype=np.int64)
        ok = ~diverged
        t0_ok = None if theta0 is None else theta0[ok]
        t0_div = None if theta0 is None else theta0[diverged]
        theta[ok], converged[ok], iterations[ok] = _newman_batch(w_eff[ok], t0_ok, tol, max_iter, cap)
        theta[diverged], converged[diverged], iterations[diverged] = mm_batch(
            w_eff[diverged], t0_div, diverged[diverged], tol, max_iter, diverged_iter, cap
        )
    capped = (np.abs(theta) >= cap).any(axis=1)
    return BTBatch(theta=theta, converged=converged, diverged=diverged, capped=capped, iterations=iterations)


def fit_bt(
    w: np.ndarray,
    *,
    pseudo_count: float = 0.0,
    tol: float = DEFAULT_TOL,
    max_iter: int = DEFAULT_MAX_ITER,
    diverged_iter: int = DEFAULT_DIVERGED_ITER,
    cap: float = DEFAULT_CAP,
) -> BTFit:
    """Fit BT to one win matrix.

    Preconditions:
        ``w`` non-negative, shape (K, K), ``w[i, j]`` = wins of i over j (fractional allowed, diagonal ignored);
        ``pseudo_count >= 0`` is added to every off-diagonal cell (0.5 reproduces the Lit2Test release).
    Returns:
        A :class:`BTFit` with centered natural-log abilities. With ``pseudo_count=0`` and a win graph that is
        not strongly connected, ``diverged`` is True and ``theta`` is capped and diagnostic only.
    """
    w = np.asarray(w, dtype=np.float64)
    if w.ndim != 2 or w.shape[0] != w.shape[1]:
        raise ValueError("w must be a square matrix")
    b = fit_bt_batch(w[None], pseudo_count=pseudo_count, tol=tol, max_iter=max_iter, diverged_iter=diverged_iter, cap=cap)
    return BTFit(
        theta=b.theta[0],
        converged=bool(b.converged[0]),
        diverged=bool(b.diverged[0]),
        iterations=int(b.iterations[0]),
        capped=bool(b.capped[0]),
    )


def win_matrix_from_judgments(
    winners: np.ndarray,
    losers: np.ndarray,
    n_models: int,
    *,
    ties: np.ndarray | None = None,
    weights: np.ndarray | None = None,
) -> np.ndarray:
    """Aggregate judgments into a win matrix with one ``np.bincount`` (no Python loop).

    Preconditions:
        ``winners``/``losers`` integer model indices in ``[0, n_models)`` of equal length (for a tie, the two
        models in any order); ``ties`` optional boolean mask of tied judgments (half a win to each side);
        ``weights`` optional non-negative weight per judgment.
    Returns:
        ``W`` (n_models, n_models) with ``W[i, j]`` = (weighted) wins of i over j.
    """
    winners = np.asarray(winners, dtype=np.int64)
    losers = np.asarray(losers, dtype=np.int64)
    wt = np.ones(len(winners)) if weights is None else np.asarray(weights, dtype=np.float64)
    if weights is not None and not (np.isfinite(wt) & (wt >= 0)).all():
        raise ValueError("weights must be finite and non-negative")
    k2 = n_models * n_models
    if ties is None:
        flat = np.bincount(winners * n_models + losers, weights=wt, minlength=k2)
    else:
        ties = np.asarray(ties, dtype=bool)
        half = np.where(ties, 0.5 * wt, wt)
        flat = np.bincount(winners * n_models + losers, weights=half, minlength=k2)
        flat += np.bincount((losers * n_models + winners)[ties], weights=half[ties], minlength=k2)
    return flat.reshape(n_models, n_models)


def ranking_from_theta(theta: np.ndarray) -> np.ndarray:
    """Model indices best first; equal strengths keep index order (a stable sort, so results are deterministic).

    For one ranking to show (a leaderboard's order). Summaries over bootstrap replicates use
    :func:`replicate_rankings`, where index order would credit every tie to the model listed first."""
    return np.argsort(-np.asarray(theta), axis=-1, kind="stable")


#: Strengths closer than this (log-ability) are a tie in :func:`replicate_rankings`: far above what the fits' stopping
#: rule leaves between two models with the same record (~1e-9), far below any difference the data can show (a win
#: probability moves by 2.5e-8).
TIE_TOLERANCE = 1e-7


def replicate_rankings(theta: np.ndarray, *, tol: float = TIE_TOLERANCE, seed: int = 0) -> np.ndarray:
    """Model indices best first in each replicate of ``theta`` (R, K), models whose strengths tie in random order.

    A tie is a run of strengths, in sorted order, each within ``tol`` of the next. Its models are put in an order
    drawn from a generator seeded with ``seed`` (draws only for replicates holding a tie, so the result is fixed by
    the input), so that over the replicates a tie counts alike for each of its models: index order (a stable sort)
    made the model listed first — the alphabetically first name — the leader in 100% of replicates of data that are
    all ties, and in ~63% of those of two models with equal records. Replicates without a tie are ranked exactly as
    :func:`ranking_from_theta` ranks them. A NaN strength (a diverged fit) ties with nothing.
    """
    theta = np.atleast_2d(np.asarray(theta, dtype=np.float64))
    order = np.argsort(-theta, axis=-1, kind="stable")
    if theta.shape[-1] < 2:
        return order
    ordered = np.take_along_axis(theta, order, axis=-1)
    joined = ordered[:, :-1] - ordered[:, 1:] <= tol  # the next strength is within tol: the same tie
    rows = np.flatnonzero(joined.any(axis=1))
    if not len(rows):
        return order
    group_sorted = np.zeros((len(rows), theta.shape[1]), dtype=np.int64)
    np.cumsum(~joined[rows], axis=1, out=group_sorted[:, 1:])
    group = np.empty_like(group_sorted)
    np.put_along_axis(group, order[rows], group_sorted, axis=1)  # each model's place among the ties, best first
    draws = np.random.default_rng(seed).random(group.shape)
    order[rows] = np.lexsort((draws, group), axis=-1)
    return order
