"""Benchmark: HypoArena leaderboard (BTD per domain and pooled, 10,000-replicate case bootstrap) at issue 12's size.

Run from the repository root:

    .venv/bin/python bench/bench_hypoarena.py [--replicates N] [--peer-replicates M] [--cases C] [--repeat K]

Data: ``bench.synthetic.synthetic_hypoarena`` — 16 models, 6 domains, 1,000 cases per domain, every pair of
models judged on every case in both orders: 720,000 matches, 1,440,000 ordered verdicts, drawn from a
Davidson model with known strengths.

Times (wall clock, and the run's CPU time; the machine is shared, so the figures that matter are the ratios
measured in this run):

* ours: the whole ``hypoarena_leaderboard(verdicts, replicates=10_000)`` — debiasing, point fits, case
  draws, the 7 batched BTD fits (6 domains + pooled) of every replicate, intervals, ranks, modal ranking —
  and, separately, ``debias`` alone and the batched fits alone on one domain's replicates;
* peer: ``arena.stats.fit_btd`` (L-BFGS-B, one replicate at a time) on the first M replicates of domain 0 and of
  the pooled fit (the same case draws: the bootstrap's streams do not depend on R), EXTRAPOLATED linearly to
  7 × R fits; and the accuracy of ours against it (max |Δrating| over those replicates).
* ``--reference`` (issue 25, item 5): the same leaderboard by the code before (``arena/stats`` at
  ``REFERENCE_COMMIT``, extracted by ``bench.reference_code``), run after ours in the same process: CPU and wall
  of both, their ratio, and whether the two documents are equal bit for bit. ``--no-peer`` skips the fit_btd peer
  and the fits-alone figures (for the 7.2M-match size: ``--cases 10000 --reference --no-peer``; target < 15 s CPU).
  ``--reference-commit C`` runs the leaderboard at another commit instead (e.g. ``DEBIAS_REFERENCE_COMMIT``).
* ``--debias-only``: the debias step alone (``debias_coded``: verdict frame -> integer-coded matches), ours against
  the code before it was reworked (``DEBIAS_REFERENCE_COMMIT``) and ``debias`` at ``REFERENCE_COMMIT``, in that order
  ``--repeat`` times in one process (CPU, median), with a check that the frames and codes are equal.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from arena.stats.btd import btd_counts, elo_ratings, fit_btd, fit_btd_pairs  # noqa: E402
from arena.stats.hypoarena import (  # noqa: E402
    debias,
    draw_counts,
    encode_domain,
    hypoarena_bootstrap,
    hypoarena_leaderboard,
    pairs_from_features,
)
from bench.synthetic import synthetic_hypoarena  # noqa: E402

TARGET_S = 10.0
#: Issue 25 item 5: the whole leaderboard at 7.2M matches (--cases 10000) under this much CPU time.
TARGET_CPU_7M_S = 15.0
#: The commit before issue 25 item 5: the code ``--reference`` runs.
REFERENCE_COMMIT = "7629516a742dd1994392db927192c17137fb0cb2"
#: The last commit of ``debias_coded`` before runs of labels, direct match slots and an uncopied frame (issue 25).
DEBIAS_REFERENCE_COMMIT = "82fafc63879456feddcc35e2921c4d4e48a61692"


def timed(fn, repeat: int = 1) -> tuple[float, list[float], object]:
    """Median wall time over ``repeat`` runs, all times, and the last result."""
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), times, out


def replicate_matrices(
    matches: pd.DataFrame, cases: np.ndarray, counts: np.ndarray, models: list[str]
) -> tuple[np.ndarray, np.ndarray]:
    """Win and tie matrices of one resample, built the slow, obvious way: repeat each case ``count`` times."""
    rep = pd.DataFrame({"case": cases, "copies": counts})
    m = matches.merge(rep[rep["copies"] > 0], on="case")
    m = m.loc[m.index.repeat(m["copies"])]
    index = {name: i for i, name in enumerate(models)}
    return btd_counts(m["first"].map(index).to_numpy(), m["second"].map(index).to_numpy(), m["share"].to_numpy(), len(models))


def _gradient_norm(theta: np.ndarray, nu: float, w: np.ndarray, t: np.ndarray) -> float:
    """max |∂LL/∂(θ, log ν)| / (number of comparisons) of the Davidson likelihood, written out pair by pair."""
    k = len(theta)
    g = np.zeros(k + 1)
    total = 0.0
    for i in range(k):
        for j in range(i + 1, k):
            pi, pj, pt = math.exp(theta[i]), math.exp(theta[j]), nu * math.exp((theta[i] + theta[j]) / 2)
            d = pi + pj + pt
            n = w[i, j] + w[j, i] + t[i, j]
            g[i] += w[i, j] + t[i, j] / 2 - n * (pi + pt / 2) / d
            g[j] += w[j, i] + t[i, j] / 2 - n * (pj + pt / 2) / d
            g[k] += t[i, j] - n * pt / d
            total += n
    return float(np.abs(g).max() / total)


def reference(
    verdicts: pd.DataFrame, replicates: int, doc: dict, wall: float, cpu: float, commit: str = REFERENCE_COMMIT
) -> None:
    """The leaderboard by the code at ``commit`` (default: before issue 25 item 5), same data and process; ratios to
    ours and equality."""
    import json

    from bench.reference_code import reference_stats

    old = reference_stats(commit, "hypoarena")
    print(f"  load average before the reference: {os.getloadavg()}")
    c0, t0 = time.process_time(), time.perf_counter()
    old_doc = old.hypoarena_leaderboard(verdicts, replicates=replicates, seed=0)
    old_cpu, old_wall = time.process_time() - c0, time.perf_counter() - t0
    same = json.dumps(doc, sort_keys=True, default=str) == json.dumps(old_doc, sort_keys=True, default=str)
    n = len(verdicts) // 2
    target = f" -> target < {TARGET_CPU_7M_S:.0f} s CPU {'MET' if cpu < TARGET_CPU_7M_S else 'NOT MET'}" if n >= 7_000_000 else ""
    print(f"before: hypoarena_leaderboard at {commit[:10]}: CPU {old_cpu:.2f} s, wall {old_wall:.2f} s")
    print(f"  ours CPU {cpu:.2f} s{target}; before/ours CPU {old_cpu / cpu:.2f}x, wall {old_wall / wall:.2f}x")
    print(f"  documents equal bit for bit: {same}; load average {os.getloadavg()}")


def _cpu(fn) -> tuple[float, object]:
    """CPU time (user+sys of the process) of one call, and its result."""
    c0 = time.process_time()
    out = fn()
    return time.process_time() - c0, out


def debias_only(verdicts: pd.DataFrame, repeat: int) -> None:
    """``debias_coded`` alone: ours (first: it pays the cold start), the code before, ``debias`` at REFERENCE_COMMIT."""
    from arena.stats.hypoarena_verdicts import debias_coded
    from bench.reference_code import reference_stats

    before = reference_stats(DEBIAS_REFERENCE_COMMIT, "hypoarena_verdicts").debias_coded
    oldest = reference_stats(REFERENCE_COMMIT, "hypoarena").debias
    ours_t, before_t, oldest_t = [], [], []
    for _ in range(max(1, repeat)):
        t, ours = _cpu(lambda: debias_coded(verdicts))
        ours_t.append(t)
        t, ref = _cpu(lambda: before(verdicts))
        before_t.append(t)
        del ref
        t, _ = _cpu(lambda: oldest(verdicts))
        oldest_t.append(t)
        print(
            f"  run: ours {ours_t[-1]:.2f} s, before {before_t[-1]:.2f} s, at {REFERENCE_COMMIT[:10]} {oldest_t[-1]:.2f} s CPU; load average {os.getloadavg()}"
        )
    ref = before(verdicts)
    fields = ("domain", "case", "first", "second", "domains", "cases", "models")
    same = ours.frame.equals(ref.frame) and list(ours.frame.dtypes) == list(ref.frame.dtypes)
    same = same and all(np.array_equal(getattr(ours, f), getattr(ref, f)) for f in fields)
    same = same and ours.frame.equals(oldest(verdicts))
    o, b, r = statistics.median(ours_t), statistics.median(before_t), statistics.median(oldest_t)
    print(f"debias_coded, {len(verdicts):,} ordered verdicts -> {len(ours.frame):,} matches, CPU (median of {len(ours_t)}):")
    print(
        f"  ours {o:.2f} s; before ({DEBIAS_REFERENCE_COMMIT[:10]}) {b:.2f} s: {b / o:.2f}x; at {REFERENCE_COMMIT[:10]} {r:.2f} s: {r / o:.2f}x"
    )
    print(f"  frames and codes equal: {same}; load average {os.getloadavg()}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--replicates", type=int, default=10_000)
    ap.add_argument("--peer-replicates", type=int, default=20, help="replicates fitted one by one with fit_btd")
    ap.add_argument("--cases", type=int, default=1_000, help="cases per domain")
    ap.add_argument("--models", type=int, default=16)
    ap.add_argument("--domains", type=int, default=6)
    ap.add_argument("--repeat", type=int, default=1, help="runs of the full leaderboard (median reported)")
    ap.add_argument("--reference", action="store_true", help="also run the code before issue 25 item 5, same data")
    ap.add_argument(
        "--reference-commit",
        default=REFERENCE_COMMIT,
        help=f"the commit --reference runs (default {REFERENCE_COMMIT[:10]}; {DEBIAS_REFERENCE_COMMIT[:10]}: before the debias rework)",
    )
    ap.add_argument("--no-peer", action="store_true", help="skip the fit_btd peer and the fits-alone figures")
    ap.add_argument("--debias-only", action="store_true", help="time the debias step alone, ours against the code before")
    args = ap.parse_args()
    r, m_peer = args.replicates, args.peer_replicates

    print(f"python {platform.python_version()}, numpy {np.__version__}, pandas {pd.__version__}, {os.cpu_count()} CPUs")
    print(f"load average before: {os.getloadavg()}")
    t0 = time.perf_counter()
    data = synthetic_hypoarena(args.domains, args.models, args.cases, seed=12)
    n_matches = len(data.verdicts) // 2
    print(
        f"data: {args.models} models x {args.domains} domains x {args.cases} cases, all pairs, both orders: "
        f"{n_matches:,} matches, {len(data.verdicts):,} ordered verdicts (generated in {time.perf_counter() - t0:.1f} s)"
    )

    if args.debias_only:
        debias_only(data.verdicts, args.repeat)
        return
    t_deb, _, matches = timed(lambda: debias(data.verdicts))
    cpu0 = time.process_time()
    t_full, all_full, doc = timed(lambda: hypoarena_leaderboard(data.verdicts, replicates=r, seed=0), args.repeat)
    cpu_full = (time.process_time() - cpu0) / args.repeat
    runs = ", ".join(f"{t:.2f}" for t in all_full)
    verdict = "MET" if t_full < TARGET_S else "NOT MET"
    print(
        f"ours: hypoarena_leaderboard, {r:,} replicates, 6 domains + pooled: {t_full:.2f} s (runs: {runs}) -> target < {TARGET_S:.0f} s {verdict}"
    )
    print(
        f"  CPU time (user+sys, all threads) {cpu_full:.2f} s per run: wall/CPU {t_full / cpu_full:.2f} "
        "(> 1 means the run waited for a core held by other processes)"
    )
    print(f"  debias alone ({len(data.verdicts):,} ordered verdicts -> {n_matches:,} matches), wall: {t_deb:.2f} s")
    pooled = doc["pooled"]
    print(
        f"  pooled nu {pooled['nu']:.3f} {pooled['nu_ci']}, modal ranking fraction {pooled['modal_fraction']:.3f}, "
        f"fallback replicates {sum(d['fallback_replicates'] for d in doc['domains'].values()) + pooled['fallback_replicates']}"
    )

    if args.reference:
        reference(data.verdicts, r, doc, t_full, cpu_full, args.reference_commit)
    if args.no_peer:
        print(f"load average after: {os.getloadavg()}")
        return
    # Peer: fit_btd (L-BFGS) one replicate at a time, on the same first M replicates (domain 0 and pooled).
    boot = hypoarena_bootstrap(data.verdicts, replicates=m_peer, seed=0, keep_counts=True)
    models = boot.models
    dom_frames = [boot.matches[boot.matches["domain"] == d] for d in boot.domains]
    mats = []
    for i in range(m_peer):
        per_dom = [
            replicate_matrices(dom_frames[di], boot.cases[di], boot.fits[di].counts[i], models) for di in range(len(boot.domains))
        ]
        mats.append(per_dom)
    t_peer_dom, _, peer_dom = timed(lambda: [fit_btd(*mats[i][0]) for i in range(m_peer)])
    pooled_mats = [(sum(w for w, _ in md), sum(t for _, t in md)) for md in mats]
    t_peer_pool, _, peer_pool = timed(lambda: [fit_btd(w, t) for w, t in pooled_mats])
    per_fit = (t_peer_dom + t_peer_pool) / (2 * m_peer)
    peer_total = per_fit * 7 * r
    d_dom = max(np.abs(elo_ratings(p.theta) - elo_ratings(boot.fits[0].theta[i])).max() for i, p in enumerate(peer_dom))
    d_pool = max(np.abs(elo_ratings(p.theta) - elo_ratings(boot.pooled.theta[i])).max() for i, p in enumerate(peer_pool))
    d_nu = max(
        max(abs(p.nu - boot.fits[0].nu[i]) for i, p in enumerate(peer_dom)),
        max(abs(p.nu - boot.pooled.nu[i]) for i, p in enumerate(peer_pool)),
    )
    print(
        f"peer: fit_btd (L-BFGS-B) per replicate: {1e3 * per_fit:.1f} ms (mean of {2 * m_peer} fits, domain 0 and pooled) -> "
        f"EXTRAPOLATED {peer_total:,.0f} s for 7 x {r:,} fits; ours whole leaderboard {peer_total / t_full:,.0f}x faster"
    )
    print(
        f"  accuracy, ours vs fit_btd on those replicates: max |Δrating| domain 0 {d_dom:.1e}, pooled {d_pool:.1e}; max |Δν| {d_nu:.1e}"
    )

    # Fits alone: the batched chord/Newton fit on R replicates of domain 0 (pair arrays prepared outside the timer,
    # from the same case draws as the bootstrap's).
    enc = encode_domain(boot.domains[0], dom_frames[0], models)
    rng = np.random.default_rng(np.random.SeedSequence(0).spawn(len(boot.domains))[0])
    counts = draw_counts(rng, r, len(enc.cases))
    arrs = pairs_from_features(enc, counts.astype(enc.contrib.dtype) @ enc.contrib)
    pt = boot.fits[0].point
    t_fit, _, fit = timed(lambda: fit_btd_pairs(*arrs, enc.k, init=pt.theta[0], init_nu=pt.nu[0], chord_data=enc.point))
    print(
        f"fits alone: {r:,} domain-0 replicates in {t_fit:.3f} s ({1e6 * t_fit / r:.0f} µs per fit, "
        f"{fit.iterations.mean():.1f} iterations on average, {int(fit.fallback.sum())} fallbacks) vs fit_btd "
        f"{1e3 * per_fit:.1f} ms per fit: {per_fit * r / t_fit:,.0f}x; first {m_peer} equal the bootstrap's to "
        f"{np.abs(fit.theta[:m_peer] - boot.fits[0].theta).max():.1e}"
    )
    # Which optimiser is closer to the MLE: the log-likelihood gradient per comparison at both solutions.
    g_ours = max(_gradient_norm(boot.fits[0].theta[i], boot.fits[0].nu[i], *mats[i][0]) for i in range(m_peer))
    g_peer = max(_gradient_norm(p.theta, p.nu, *mats[i][0]) for i, p in enumerate(peer_dom))
    print(f"  max |∇LL| per comparison at the solution (domain 0 replicates): ours {g_ours:.1e}, fit_btd {g_peer:.1e}")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
