"""Benchmark: the arena-scale statistics of issues 10 (items 2, 3, 5, 8) and 25 (items 2, 3), each against a
same-run reference, with the load average printed beside the timings (2 shared cores: ratios are the figures).

Run from the repository root (``--quick`` shrinks every size, for a smoke run):

    .venv/bin/python bench/bench_scale_stats.py [--quick] [--skip-memory] [--skip-coverage]

Prints, on synthetic data with known strengths (bench/synthetic.py, 4 models per context, 6 pairs each):

1. ``encode_cases`` at 1,000,000 cases: the vectorised version against the row-by-row one it replaced
   (``encode_cases_reference`` below), identical output checked;
2. case vs context-cluster bootstrap, 1,000 replicates at 50,000 contexts × 20 models (target: cluster
   ≤ 1.5× case), alternately with the code before issue 25 (``issue_10_paths``), the first issue-25 pass
   (commit a59ca5b, ``a59ca5b_paths``) and the current code; the cluster draw alone, the three of them (the
   current one is a new stream of the same law: equal sums checked, the law in tests/stats); and the
   pre-issue-10 cluster draw (``cluster_counts_reference``) on a few replicates, extrapolated and flagged;
3. peak RSS of a 200-model cluster bootstrap in a child process (target < 8 GB);
4. case bootstrap, 1,000 replicates at 200 models × 500,000 cases, alternately issue 10, a59ca5b and current
   paths (target < 3 s; wall and CPU); the draw alone; Newman against the old MM on 100 replicates; a scipy
   L-BFGS check; and the peers on the same win matrices, a few fits extrapolated and flagged: evalica 0.4.2's
   Rust Bradley–Terry and choix 0.4.1's dense I-LSR (targets ≥ 50× and ≥ 20×);
5. coverage of the 95% case-bootstrap CI of the ordered fit against the known truth at 200 models
   (~25 cases per pair), with the pseudo-count 0.5 and the prior-weight diagnostic.

The reference implementations at the top of this file are the code before issue 10 (commit 7e29fba), the
issue-10 cluster draw and the pieces of commit a59ca5b replaced since, verbatim except their names; tests/stats
import some of them too. They are not part of the package.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from arena.stats.folding import HI, LO, MISSING, REQUIRED_COLUMNS, TIE, TIE_CODE, EncodedCases  # noqa: E402
from arena.stats.matrices import CaseTypes  # noqa: E402

# --------------------------------------------------------------------------------------------------
# References: the code before issue 10
# --------------------------------------------------------------------------------------------------


def _is_missing(value: Any) -> bool:
    """True for None, NaN and pandas NA (verdict columns coming from a DataFrame may hold any)."""
    if value is None:
        return True
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def encode_cases_reference(cases: pd.DataFrame, models: Sequence[str] | None = None) -> EncodedCases:
    """Validate a ``cases`` frame and encode it as integer arrays.

    Preconditions:
        ``cases`` has the columns ``case, context, batch, model_1, model_2, original, reverse`` and optionally
        ``shown_a_original``; one row per canonical pair; ``case`` ids unique; ``model_1 != model_2``;
        ``original``/``reverse`` each hold one of the pair's model names, the literal ``"TIE"``, or a missing
        value (None/NaN); ``shown_a_original`` holds one of the pair's names or a missing value.
        No model may be named ``"TIE"``.
    Args:
        cases: the frame described above.
        models: optional model list fixing the index order (must contain every model of the frame); by
            default the sorted set of names, so the encoding does not depend on row order.
    Returns:
        The :class:`EncodedCases`.
    Raises:
        ValueError: on a missing column, duplicated case id, invalid pair, or verdict naming a model that is
            not in the pair.
    """
    missing_cols = [c for c in REQUIRED_COLUMNS if c not in cases.columns]
    if missing_cols:
        raise ValueError(f"cases frame lacks columns {missing_cols}")
    n = len(cases)
    case_ids = np.asarray(cases["case"].astype(str).to_numpy(), dtype=object)
    if len(set(case_ids.tolist())) != n:
        raise ValueError("case ids must be unique (one row per canonical pair)")
    m1 = [str(x) for x in cases["model_1"].tolist()]
    m2 = [str(x) for x in cases["model_2"].tolist()]
    names = sorted(set(m1) | set(m2))
    if models is None:
        model_list = tuple(names)
    else:
        model_list = tuple(str(m) for m in models)
        unknown = set(names) - set(model_list)
        if unknown:
            raise ValueError(f"models {sorted(unknown)} are not in the given model list")
        if len(set(model_list)) != len(model_list):
            raise ValueError("model list has duplicates")
    if TIE in model_list:
        raise ValueError(f"a model may not be named {TIE!r}: it is the tie verdict")
    index = {m: k for k, m in enumerate(model_list)}

    lo = np.empty(n, dtype=np.int64)
    hi = np.empty(n, dtype=np.int64)
    orig = np.empty(n, dtype=np.int8)
    rev = np.empty(n, dtype=np.int8)
    shown = np.full(n, MISSING, dtype=np.int8)
    originals = cases["original"].tolist()
    reverses = cases["reverse"].tolist()
    shown_col = cases["shown_a_original"].tolist() if "shown_a_original" in cases.columns else [None] * n

    def code(value: Any, a: str, b: str, row: int, column: str) -> int:
        # a/b are the pair's lo/hi names; a verdict is coded relative to them.
        if _is_missing(value):
            return MISSING
        v = str(value)
        if v == a:
            return LO
        if v == b:
            return HI
        if v == TIE and column != "shown_a_original":
            return TIE_CODE
        raise ValueError(f"case {case_ids[row]!r}: {column}={v!r} is neither {a!r}, {b!r} nor {TIE!r}")

    for r in range(n):
        if m1[r] == m2[r]:
            raise ValueError(f"case {case_ids[r]!r}: model_1 and model_2 are both {m1[r]!r}")
        i, j = index[m1[r]], index[m2[r]]
        if i > j:
            i, j = j, i
        lo[r], hi[r] = i, j
        a, b = model_list[i], model_list[j]
        orig[r] = code(originals[r], a, b, r, "original")
        rev[r] = code(reverses[r], a, b, r, "reverse")
        shown[r] = code(shown_col[r], a, b, r, "shown_a_original")

    return EncodedCases(
        models=model_list,
        case=case_ids,
        context=np.asarray(cases["context"].astype(str).to_numpy(), dtype=object),
        batch=np.asarray(cases["batch"].astype(str).to_numpy(), dtype=object),
        lo=lo,
        hi=hi,
        original=orig,
        reverse=rev,
        shown_a=shown,
    )


def fit_bt_batch_reference(
    w: np.ndarray, *, pseudo_count: float, init: np.ndarray | None = None, tol: float = 1e-10
) -> np.ndarray:
    """Old ``fit_bt_batch`` for data whose MLE exists (pseudo-count > 0): θ (R, K) by MM (``mm_batch``, which the
    package still uses for fits whose MLE does not exist)."""
    from arena.stats.bt import add_pseudo_count, mm_batch

    w_eff = add_pseudo_count(w, pseudo_count)
    r, k, _ = w_eff.shape
    theta0 = None if init is None else np.broadcast_to(np.asarray(init, dtype=np.float64), (r, k))
    theta, _, _ = mm_batch(w_eff, theta0, np.zeros(r, dtype=bool), tol, 20_000, 300, 30.0)
    return theta


def cluster_counts_reference(enc: EncodedCases, types: CaseTypes, replicates: int, rng: np.random.Generator) -> np.ndarray:
    """The old context-cluster draw: multinomial over distinct context compositions, dense int64 product."""
    ctx = enc.context[enc.complete]
    _, ctx_idx = np.unique(ctx.astype(str), return_inverse=True)
    n_ctx = int(ctx_idx.max()) + 1 if len(ctx_idx) else 0
    t = types.n_types
    per_ctx = np.bincount(ctx_idx.reshape(-1) * t + types.of_case, minlength=n_ctx * t).reshape(n_ctx, t)
    table, freq = np.unique(per_ctx, axis=0, return_counts=True)
    n = int(freq.sum())
    ctx_counts = rng.multinomial(n, freq / n, size=replicates)
    return ctx_counts @ table


def context_counts_reference(table: Any, replicates: int, rng: np.random.Generator) -> np.ndarray:
    """The issue-10 cluster draw (before issue 25), verbatim but for its name: one sparse mat-vec per replicate."""
    from scipy import sparse

    n_ctx, t = table.shape
    if n_ctx == 0:
        return np.zeros((replicates, t), dtype=np.int64)
    idx_type = np.int32 if n_ctx < 2**31 else np.int64  # 32-bit draws are about twice as fast
    picks = rng.integers(0, n_ctx, size=(replicates, n_ctx), dtype=idx_type)
    by_type = sparse.csc_matrix(table.T, dtype=np.float64)
    out = np.empty((replicates, t), dtype=np.int64)
    for r in range(replicates):
        out[r] = np.rint(by_type @ np.bincount(picks[r], minlength=n_ctx).astype(np.float64))
    return out


def context_type_table_reference(enc: EncodedCases, types: CaseTypes) -> Any:
    """``context_type_table`` before the second issue-25 pass, verbatim but for its name (np.unique on strings)."""
    from scipy import sparse

    ctx = enc.context[enc.complete]
    _, ctx_idx = np.unique(ctx.astype(str), return_inverse=True)
    ctx_idx = ctx_idx.reshape(-1)
    n_ctx = int(ctx_idx.max()) + 1 if len(ctx_idx) else 0
    ones = np.ones(len(ctx_idx), dtype=np.int64)
    return sparse.csr_matrix((ones, (ctx_idx, types.of_case)), shape=(n_ctx, types.n_types))


class Issue10ClusterCounts:
    """Stands in for ``bootstrap._ClusterCounts`` in :func:`issue_10_paths`: chunks drawn by :func:`context_counts_reference`."""

    def __init__(self, table: Any, replicates: int, rng: np.random.Generator) -> None:
        self.table, self.rng = table, rng

    def take(self, m: int) -> np.ndarray:
        return context_counts_reference(self.table, m, self.rng)


@contextlib.contextmanager
def issue_10_paths() -> Any:
    """The code paths before issue 25, restored by its switches: the multinomial case draw whatever its size, the
    dense Newman fit in one block per chunk, :func:`context_counts_reference` as the cluster draw (chunk by chunk) and
    :func:`context_type_table_reference`."""
    from arena.stats import bootstrap, bt

    saved = (bootstrap._POISSON_MIN_TYPES, bt._NEWMAN_BLOCK_ELEMENTS, bootstrap._ClusterCounts, bootstrap.context_type_table)
    bootstrap._POISSON_MIN_TYPES, bt._NEWMAN_BLOCK_ELEMENTS = 2**62, 2**62
    bootstrap._ClusterCounts = Issue10ClusterCounts  # type: ignore[assignment,misc]
    bootstrap.context_type_table = context_type_table_reference
    try:
        yield
    finally:
        bootstrap._POISSON_MIN_TYPES, bt._NEWMAN_BLOCK_ELEMENTS, bootstrap._ClusterCounts, bootstrap.context_type_table = saved


def poisson_invert_reference(self: Any, u: np.ndarray) -> np.ndarray:
    """``_PoissonMultinomial``'s inversion at commit a59ca5b (every type stepped until the last is done), as a method."""
    k = self.guide[self.guide_start + (u * self.cells).astype(np.intp)]
    step = self.cdf[k] < u
    while step.any():
        k += step
        step = self.cdf[k] < u
    return k - self.cdf_start


@contextlib.contextmanager
def a59ca5b_paths() -> Any:
    """The code of the first issue-25 pass (commit a59ca5b), restored by the switches of the second: the cluster
    draw by ``rng.integers`` + ``bincount`` at any size (its issue-10 stream), :func:`context_type_table_reference`
    and :func:`poisson_invert_reference` (the same values as now, slower)."""
    from arena.stats import bootstrap

    pm = bootstrap._PoissonMultinomial
    saved = (bootstrap._FAST_MIN_CONTEXTS, bootstrap.context_type_table, pm.invert)
    bootstrap._FAST_MIN_CONTEXTS, bootstrap.context_type_table = 2**62, context_type_table_reference
    pm.invert = poisson_invert_reference  # type: ignore[method-assign]
    try:
        yield
    finally:
        bootstrap._FAST_MIN_CONTEXTS, bootstrap.context_type_table, pm.invert = saved


def code_paths(label: str) -> Any:
    """The context manager that runs ``label``'s code: "issue 10", "a59ca5b" or "now"."""
    return {"issue 10": issue_10_paths, "a59ca5b": a59ca5b_paths}.get(label, contextlib.nullcontext)()


def load() -> str:
    """The load average, printed beside every timing (2 shared cores: ratios are the figures)."""
    return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())


# --------------------------------------------------------------------------------------------------
# Benchmarks
# --------------------------------------------------------------------------------------------------


def timed(fn: Any) -> tuple[float, Any]:
    """Wall time of one call and its result."""
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def peak_rss_gib() -> float:
    """Peak resident set size of this process (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def _same_encoding(a: EncodedCases, b: EncodedCases) -> bool:
    fields = ("case", "context", "batch", "lo", "hi", "original", "reverse", "shown_a")
    return a.models == b.models and all(
        getattr(a, f).dtype == getattr(b, f).dtype and np.array_equal(getattr(a, f), getattr(b, f)) for f in fields
    )


def bench_encode(n_cases: int) -> None:
    from arena.stats import encode_cases
    from bench.synthetic import synthetic_cases

    data = synthetic_cases(n_cases // 6, 20, tie_prob=0.05, missing_prob=0.01, order_bias=0.3, seed=3)
    t_new, new = timed(lambda: encode_cases(data.cases))
    t_old, old = timed(lambda: encode_cases_reference(data.cases))
    print(f"encode_cases, {len(data.cases):,} cases, 20 models (ties, missing verdicts):")
    print(
        f"  old row-by-row {t_old:7.3f} s   new vectorised {t_new:7.3f} s   old/new {t_old / t_new:6.1f}x   identical: {_same_encoding(old, new)}"
    )


def bench_cluster(n_contexts: int, n_models: int, replicates: int, old_replicates: int) -> None:
    from arena.stats import bootstrap_fits, encode_cases, fit_bt, percentile_ci, win_matrix
    from arena.stats.bootstrap import context_type_table, draw_context_counts
    from arena.stats.matrices import case_types
    from bench.synthetic import synthetic_cases

    enc = encode_cases(synthetic_cases(n_contexts, n_models, tie_prob=0.05, order_bias=0.2, seed=5).cases)
    init = {"ordered": fit_bt(win_matrix(enc, "ordered"), pseudo_count=0.5).theta}

    def run(unit: str) -> Any:
        return bootstrap_fits(enc, unit=unit, kinds=("ordered",), replicates=replicates, seed=0, init=init)

    run("case")  # warm-up
    print(
        f"bootstrap, {replicates:,} replicates, ordered fit, {n_contexts:,} contexts x {n_models} models ({len(enc.lo):,} cases):"
    )
    ratios: dict[str, list[float]] = {}
    cpu_ratios: dict[str, list[float]] = {}
    thetas = {}
    for label in ("issue 10", "a59ca5b", "now") * 3:
        with code_paths(label):
            c0 = time.process_time()
            t_case, case = timed(lambda: run("case"))
            c1 = time.process_time()
            t_ctx, ctx = timed(lambda: run("context"))
            c_case, c_ctx = c1 - c0, time.process_time() - c1
        ratios.setdefault(label, []).append(t_ctx / t_case)
        cpu_ratios.setdefault(label, []).append(c_ctx / c_case)
        thetas[label] = ctx.theta["ordered"]
        print(
            f"  [{label:8}] case {t_case:7.3f} s   context-cluster {t_ctx:7.3f} s   cluster/case {t_ctx / t_case:5.2f}x"
            f" (target <= 1.5); CPU {c_case:.3f} / {c_ctx:.3f} s = {c_ctx / c_case:.2f}x   {load()}"
        )
    print(
        "  cluster/case, median of 3, wall (CPU): "
        + ", ".join(f"{k} {np.median(v):.2f}x ({np.median(cpu_ratios[k]):.2f}x)" for k, v in ratios.items())
    )
    width = lambda th: np.diff(percentile_ci(th), axis=1).ravel()  # noqa: E731
    ratio_w = width(ctx.theta["ordered"]) / width(case.theta["ordered"])
    print(f"  cluster/case CI width ratio: median {np.median(ratio_w):.2f} (range {ratio_w.min():.2f}-{ratio_w.max():.2f})")
    # The new cluster stream against the old one (same seed, different streams): CI ends apart in bootstrap SDs.
    sd = thetas["a59ca5b"].std(axis=0)
    gap = np.abs(percentile_ci(thetas["now"]) - percentile_ci(thetas["a59ca5b"])).max(axis=1) / sd
    se = np.sqrt(2 * 0.025 * 0.975 / replicates) / 0.0584  # SD of the gap of two independent 2.5% ends, normal θ
    print(
        f"  cluster CI ends, now vs a59ca5b stream: max gap {gap.max():.2f} bootstrap SD over {gap.size * 2} ends"
        f" (Monte Carlo: {se:.2f} SD per end for independent streams)"
    )
    types = case_types(enc)
    t_table_old, _ = timed(lambda: context_type_table_reference(enc, types))
    t_table, table = timed(lambda: context_type_table(enc, types))
    t_old, old = timed(lambda: context_counts_reference(table, replicates, np.random.default_rng(0)))
    with a59ca5b_paths():
        t_mid, _ = timed(lambda: draw_context_counts(table, replicates, np.random.default_rng(0)))
    t_new, new = timed(lambda: draw_context_counts(table, replicates, np.random.default_rng(0)))
    print(
        f"  cluster draw alone: issue 10 {t_old:.3f} s, a59ca5b {t_mid:.3f} s, now {t_new:.3f} s"
        f" (a59ca5b/now {t_mid / t_new:.2f}x; a new stream of the same law, sums equal {np.array_equal(old.sum(axis=1), new.sum(axis=1))});"
        f" context_type_table a59ca5b {t_table_old:.3f} s, now {t_table:.3f} s   {load()}"
    )
    if old_replicates:
        t_old, _ = timed(lambda: cluster_counts_reference(enc, types, old_replicates, np.random.default_rng(0)))
        est = t_old * replicates / old_replicates
        print(
            f"  pre-issue-10 cluster draw alone (dense int64 table): {t_old:.3f} s for {old_replicates} replicates -> "
            f"EXTRAPOLATED {est:.1f} s for {replicates:,}; old draw / new whole bootstrap {est / t_ctx:.0f}x"
        )


def child_cluster_memory(n_contexts: int, n_models: int, replicates: int) -> None:
    """Run in a child process: one cluster bootstrap, then print the peak RSS."""
    from arena.stats import bootstrap_fits, encode_cases, fit_bt, win_matrix
    from bench.synthetic import synthetic_cases

    enc = encode_cases(synthetic_cases(n_contexts, n_models, seed=7).cases)
    before = peak_rss_gib()
    init = {"ordered": fit_bt(win_matrix(enc, "ordered"), pseudo_count=0.5).theta}
    t, boot = timed(lambda: bootstrap_fits(enc, unit="context", kinds=("ordered",), replicates=replicates, seed=0, init=init))
    print(f"{t:.3f} {before:.3f} {peak_rss_gib():.3f} {int(boot.converged['ordered'].sum())}")


def bench_memory(n_contexts: int, n_models: int, replicates: int) -> None:
    out = subprocess.run(
        [sys.executable, __file__, "--child-memory", str(n_contexts), str(n_models), str(replicates)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout.split()
    t, before, peak, conv = float(out[0]), float(out[1]), float(out[2]), int(out[3])
    print(f"context-cluster bootstrap at {n_models} models, {n_contexts:,} contexts, {replicates:,} replicates (child process):")
    print(
        f"  {t:.1f} s, peak RSS {peak:.2f} GiB (after data generation {before:.2f} GiB; target < 8 GB), converged {conv}/{replicates}"
    )


def scipy_fit(w: np.ndarray, pseudo_count: float) -> np.ndarray:
    """Independent BT fit: L-BFGS on the negative log-likelihood, centered θ (for a check, not speed)."""
    from scipy.optimize import minimize

    k = w.shape[0]
    we = w + pseudo_count * (1 - np.eye(k))
    np.fill_diagonal(we, 0)

    def nll(th: np.ndarray) -> tuple[float, np.ndarray]:
        d = th[:, None] - th[None, :]
        log_p = -np.logaddexp(0.0, -d)  # log σ(θ_i − θ_j)
        f = -(we * log_p).sum()
        s = 1 / (1 + np.exp(d))  # 1 − σ
        g = -((we * s).sum(axis=1) - (we.T * s.T).sum(axis=1))
        return f, g

    res = minimize(nll, np.zeros(k), jac=True, method="L-BFGS-B", options={"maxiter": 10_000, "gtol": 1e-11, "ftol": 1e-16})
    return res.x - res.x.mean()


def evalica_fit(w: np.ndarray, pseudo_count: float) -> np.ndarray:
    """evalica 0.4.2's Bradley–Terry (Rust, its default tolerance 1e-6 and 100 iterations) on one win matrix fed as
    weighted rows (one per ordered cell, the pseudo-count included): the cheapest input it takes."""
    import evalica

    k = w.shape[0]
    we = w + pseudo_count * (1 - np.eye(k))
    ii, jj = np.nonzero(we)
    res = evalica.bradley_terry(ii, jj, [evalica.Winner.X] * len(ii), weights=we[ii, jj], index=None)
    log_p = np.log(res.scores.sort_index().to_numpy())
    return log_p - log_p.mean()


def choix_fit(w: np.ndarray, pseudo_count: float) -> np.ndarray:
    """choix 0.4.1's dense I-LSR (the spectral method) on one win matrix, the pseudo-count included."""
    import choix

    k = w.shape[0]
    th = choix.ilsr_pairwise_dense(w + pseudo_count * (1 - np.eye(k)), alpha=0.0, tol=1e-10, max_iter=10_000)
    return th - th.mean()


def bench_case(n_cases: int, n_models: int, replicates: int, old_replicates: int, peer_replicates: int) -> None:
    from arena.stats import bootstrap_fits, encode_cases, fit_bt, win_matrix
    from arena.stats.bootstrap import draw_case_counts
    from arena.stats.bt import blas_single_threaded, fit_bt_batch
    from arena.stats.matrices import case_types, win_matrices_from_counts
    from bench.synthetic import synthetic_cases

    enc = encode_cases(synthetic_cases(n_cases // 6, n_models, seed=11).cases)
    point = fit_bt(win_matrix(enc, "ordered"), pseudo_count=0.5)
    init = {"ordered": point.theta}

    def run() -> Any:
        return bootstrap_fits(enc, unit="case", kinds=("ordered",), replicates=replicates, seed=0, init=init)

    types = case_types(enc)
    print(
        f"case bootstrap, {replicates:,} replicates, ordered fit, {n_models} models x {len(enc.lo):,} cases"
        f" ({types.n_types:,} case types):"
    )
    times: dict[str, list[float]] = {}
    cpus: dict[str, list[float]] = {}
    thetas = {}
    for label in ("issue 10", "a59ca5b", "now") * 2:
        with code_paths(label):
            c0 = time.process_time()
            t, boot = timed(run)
            cpu = time.process_time() - c0
        times.setdefault(label, []).append(t)
        cpus.setdefault(label, []).append(cpu)
        thetas[label] = boot.theta["ordered"]
        print(f"  [{label:8}] bootstrap_fits {t:7.3f} s wall (target < 3 s), {cpu:6.3f} s CPU   {load()}")
    t_new = min(times["now"])
    print(
        "  best of 2, wall (CPU): "
        + ", ".join(f"{k} {min(v):.3f} s ({min(cpus[k]):.3f} s)" for k, v in times.items())
        + f"; issue 10 / now {min(times['issue 10']) / t_new:.2f}x, a59ca5b / now {min(times['a59ca5b']) / t_new:.2f}x;"
        f" now identical to a59ca5b: {np.array_equal(thetas['now'], thetas['a59ca5b'])}"
    )
    # The draw alone, in chunks of 100 replicates as bootstrap_fits draws at 200 models (CPU time: less
    # sensitive to the other processes on the machine than wall time), against numpy's multinomial.
    n = int(types.counts.sum())
    rng = np.random.default_rng(0)
    c0 = time.process_time()
    counts = [draw_case_counts(types, 100, rng) for _ in range(max(1, replicates // 100))]
    c_draw = time.process_time() - c0
    with a59ca5b_paths():
        c0 = time.process_time()
        for _ in range(max(1, replicates // 100)):
            draw_case_counts(types, 100, rng)
        c_mid = time.process_time() - c0
    c0 = time.process_time()
    for _ in range(max(1, replicates // 100)):
        rng.multinomial(n, types.counts / n, size=100)
    c_multi = time.process_time() - c0
    print(
        f"  draw alone, CPU for {replicates:,}: now {c_draw:.3f} s, a59ca5b {c_mid:.3f} s, numpy multinomial (issue 10)"
        f" {c_multi:.3f} s; a59ca5b/now {c_mid / c_draw:.2f}x, issue 10/now {c_multi / c_draw:.2f}x   {load()}"
    )
    w = win_matrices_from_counts(types, counts[0][:old_replicates], "ordered")
    t_fit_new, fit_new = timed(lambda: fit_bt_batch(w, pseudo_count=0.5, init=point.theta))
    t_fit_old, theta_old = timed(lambda: fit_bt_batch_reference(w, pseudo_count=0.5, init=point.theta))
    print(
        f"  fits alone on {old_replicates}: Newman {t_fit_new:.3f} s"
        f" ({fit_new.iterations.mean():.1f} iterations), old MM {t_fit_old:.3f} s   {load()}"
    )
    diff = float(np.abs(fit_new.theta - theta_old).max())
    sci = max(float(np.abs(scipy_fit(w[r], 0.5) - fit_new.theta[r]).max()) for r in range(min(3, len(w))))
    print(f"  max |θ new − θ old MM| {diff:.1e}; max |θ new − scipy L-BFGS| on 3 replicates {sci:.1e}")
    for label, fn in (("evalica", evalica_fit), ("choix", choix_fit)):
        try:
            __import__(label)
        except ImportError:
            print(f"  {label} not installed: skipped")
            continue
        # One BLAS thread, as our fits run (choix's linear algebra took 100× longer in some runs with two BLAS
        # threads on two busy cores: 3.9-5.1 s against 0.04 s for 10 fits).
        with blas_single_threaded():
            t_peer, thetas = timed(lambda fn=fn: [fn(w[r], 0.5) for r in range(peer_replicates)])
        est = t_peer * replicates / peer_replicates
        err = max(float(np.abs(th - fit_new.theta[r]).max()) for r, th in enumerate(thetas))
        print(
            f"  {label} loop: {t_peer:.3f} s for {peer_replicates} fits -> EXTRAPOLATED {est:.1f} s for {replicates:,}"
            f" (fits only, no draw); {label}/ours (whole bootstrap, best wall) {est / t_new:.1f}x; max |Δθ| {err:.1e}   {load()}"
        )


def coverage(n_cases: int, n_models: int, replicates: int, datasets: int, pseudo_count: float) -> None:
    from arena.stats import bootstrap_fits, encode_cases, fit_bt, percentile_ci, prior_weight, win_matrix
    from bench.synthetic import synthetic_cases

    covered, flags, slopes = [], [], []
    for s in range(datasets):
        data = synthetic_cases(n_cases // 6, n_models, seed=100 + s)
        enc = encode_cases(data.cases)
        w = win_matrix(enc, "ordered")
        fit = fit_bt(w, pseudo_count=pseudo_count)
        boot = bootstrap_fits(
            enc, kinds=("ordered",), replicates=replicates, seed=s, pseudo_count=pseudo_count, init={"ordered": fit.theta}
        )
        ci = percentile_ci(boot.theta["ordered"])
        covered.append((ci[:, 0] <= data.theta) & (data.theta <= ci[:, 1]))
        slopes.append(float(np.polyfit(data.theta, fit.theta, 1)[0]))
        flags.append(prior_weight(w, pseudo_count, theta=fit.theta, ci=ci))
    cov = np.concatenate(covered).mean()
    pw = flags[0]
    print(
        f"coverage of the 95% case CI (ordered fit, pseudo-count {pseudo_count}), {n_models} models x {n_cases:,} cases"
        f" (~{2 * n_cases / (n_models * (n_models - 1)):.0f} cases per pair), {replicates} replicates, {datasets} data set(s):"
    )
    print(f"  coverage {cov:.3f} (nominal 0.95); slope of fit on truth {np.mean(slopes):.3f}")
    print(
        f"  prior_weight: prior_share {pw['prior_share']:.4f}, cell_share_max {pw['cell_share_max']:.3f},"
        f" max_shift {pw['max_shift']:.3f}, median/max shift ratio {pw['median_shift_ratio']:.2f}/{pw['max_shift_ratio']:.2f}, large {[f['large'] for f in flags]}"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run; figures not comparable)")
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--skip-coverage", action="store_true")
    parser.add_argument("--child-memory", nargs=3, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child_memory:
        child_cluster_memory(*args.child_memory)
        return
    q = args.quick
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, pandas {pd.__version__}{'  [--quick sizes]' if q else ''}")
    print()
    bench_encode(100_000 if q else 1_000_000)
    print()
    bench_cluster(5_000 if q else 50_000, 20, 200 if q else 1_000, old_replicates=5 if q else 10)
    print()
    if not args.skip_memory:
        bench_memory(5_000 if q else 50_000, 50 if q else 200, 100 if q else 1_000)
        print()
    bench_case(
        50_000 if q else 500_000,
        50 if q else 200,
        200 if q else 1_000,
        old_replicates=20 if q else 100,
        peer_replicates=5 if q else 10,
    )
    print()
    if not args.skip_coverage:
        coverage(50_000 if q else 500_000, 50 if q else 200, 200 if q else 1_000, 1, 0.5)


if __name__ == "__main__":
    main()
