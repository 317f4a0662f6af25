"""Simulation: adaptive judging against the full run, seed by seed (issue 27, "Done when", first bullet).

Run from the repository root (``--quick`` for a smoke run):

    .venv/bin/python bench/bench_adaptive.py [--seeds 100] [--quick] [--rules overlap,arena] [--alpha 0.002] [--only NAME]

Designs (every pair of models on every context, each unit judged in both orders, verdicts drawn from BT):

1. ``release 13x4``: the release sample's 13 contexts with text × its 4 models (78 units, 156 calls), strengths the
   release's ordered BT fit on all 1,200 cases (pseudo-count 0.5), read from ``$LIT2TEST_DATA`` (else
   ``../shared/data/lit2test``; without it, evenly spread strengths of the same SD); target: the top-1;
2. ``release 200x4``: the same strengths on the 200 contexts of the release's verdicts (1,200 units);
3. ``synthetic 40x12``: 40 contexts × 12 models (2,640 units, 5,280 calls), known strengths evenly spread with the
   release's SD (1.04, neighbours 0.30 apart); targets top-1 and top-3;
4. ``synthetic 40x12 close``: the same with SD 0.5 (neighbours 0.14 apart), where the full run itself misses.

Per seed, verdicts for every unit are drawn once; the full run fits all of them, the adaptive run reveals them round
by round (rule ``overlap`` or ``arena``, batches of ``batch`` units, round r seeded [seed, r]) until ``target_met``
stops it: P(top-k set) ≥ 1 − alpha, or "settled" (judging every unit left would change the top-k set with chance
≤ alpha), alpha 0.002 by default. Top-k recovery = the share of seeds whose fit's top-k set equals the true one.
Printed per design and rule: the full run's recovery, the adaptive run's, the uniform-random baseline's at the
adaptive run's calls (same seed and verdicts), the paired disagreements, and the savings 1 − adaptive calls / full
calls (median, quartiles, min, mean; the share of seeds reaching ≥ 40%). "REACHED" = adaptive recovery ≥ full
recovery and median savings ≥ 40%.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from arena.stats import encode_cases, fit_bt, load_release_cases, read_jsonl, win_matrix  # noqa: E402
from arena.stats.adaptive import Target, all_pair_units, judgments_of_units  # noqa: E402
from arena.stats.adaptive_projection import RELEASE_SD, draw_outcomes, simulate_run, spread_prior  # noqa: E402

DATA = Path(os.environ.get("LIT2TEST_DATA", ROOT.parent / "shared" / "data" / "lit2test"))


def release_strengths() -> tuple[np.ndarray, int, str]:
    """The release's ordered BT strengths (best first), its number of contexts with text, and where they came from."""
    pairs = DATA / "corrected_folded_pairs.jsonl"
    if not pairs.exists():
        return spread_prior(4, RELEASE_SD), 13, f"evenly spread, SD {RELEASE_SD} (no release data at {DATA})"
    enc = encode_cases(load_release_cases(pairs))
    theta = fit_bt(win_matrix(enc, "ordered"), pseudo_count=0.5).theta
    order = np.argsort(-theta)
    n_text = sum(1 for _ in read_jsonl(DATA / "contexts.jsonl"))
    names = ", ".join(f"{enc.models[i]} {theta[i]:+.2f}" for i in order)
    return theta[order], n_text, f"release ordered BT fit: {names}"


def top_set(theta: np.ndarray, k: int) -> frozenset[int]:
    return frozenset(np.argsort(-theta, kind="stable")[:k].tolist())


def fit_top(design, outcomes, mask, k: int, n_models: int) -> frozenset[int]:
    idx = np.flatnonzero(mask)
    j = judgments_of_units(design.take(idx), outcomes[idx], n_models=n_models)
    return top_set(fit_bt(j.win_matrix(), pseudo_count=0.5).theta, k)


def run_design(name: str, theta: np.ndarray, contexts: int, k: int, rule: str, seeds: int, batch: int, alpha: float) -> None:
    """Simulate ``seeds`` paired full / adaptive / uniform runs of one design and print the figures."""
    n_models = len(theta)
    truth = top_set(theta, k)
    design = all_pair_units([f"c{i:03d}" for i in range(contexts)], n_models)
    full_calls = 2 * len(design)
    target = Target("top_k", k=k, alpha=alpha)
    full_ok, ada_ok, uni_ok, agree, calls, reasons = [], [], [], [], [], []
    start = time.perf_counter()
    for seed in range(seeds):
        rng = np.random.default_rng([seed, 7])
        outcomes = draw_outcomes(design, theta, rng)
        full = fit_top(design, outcomes, np.ones(len(design), dtype=bool), k, n_models)
        run = simulate_run(design, outcomes, target, n_models=n_models, batch_size=batch, seed=seed, rule=rule)
        ada = top_set(run.status.theta, k)
        uniform = np.zeros(len(design), dtype=bool)
        uniform[rng.permutation(len(design))[: int(run.revealed.sum())]] = True
        full_ok.append(full == truth)
        ada_ok.append(ada == truth)
        uni_ok.append(fit_top(design, outcomes, uniform, k, n_models) == truth)
        agree.append(ada == full)
        calls.append(run.calls)
        reasons.append(run.status.reason)
    secs = time.perf_counter() - start
    full_ok, ada_ok = np.array(full_ok), np.array(ada_ok)
    savings = 1.0 - np.array(calls) / full_calls
    q1, med, q3 = np.percentile(savings, [25, 50, 75])
    stops = {r: reasons.count(r) for r in sorted(set(reasons))}
    verdict = "REACHED" if ada_ok.mean() >= full_ok.mean() and med >= 0.40 else "NOT reached"
    print(
        f"{name:<24} top-{k} rule={rule:<7} alpha={alpha} {seeds} seeds, {len(design)} units ({full_calls} calls), batch {batch} units\n"
        f"  top-{k} recovery: full {full_ok.mean():.3f}  adaptive {ada_ok.mean():.3f}  uniform at adaptive's calls "
        f"{np.mean(uni_ok):.3f}  (adaptive = full run's set on {np.mean(agree):.3f} of seeds; full right & adaptive "
        f"wrong {int((full_ok & ~ada_ok).sum())}, the reverse {int((~full_ok & ada_ok).sum())})\n"
        f"  adaptive calls median {np.median(calls):.0f} of {full_calls}; savings median {med:.1%}  quartiles "
        f"{q1:.1%}–{q3:.1%}  min {savings.min():.1%}  mean {savings.mean():.1%}  seeds with >= 40%: "
        f"{np.mean(savings >= 0.40):.2f}; stops {stops}\n"
        f"  -> >= 40% fewer calls at the full run's recovery: {verdict}   ({secs:.1f} s)",
        flush=True,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--quick", action="store_true", help="10 seeds, smaller 12-model design")
    parser.add_argument("--alpha", type=float, default=0.002, help="the target's alpha: P(top-k set) >= 1 - alpha")
    parser.add_argument("--only", default="", help="run only the designs whose name contains this")
    parser.add_argument("--rules", default="overlap,arena", help="comma-separated rules (overlap, arena, uniform)")
    args = parser.parse_args()
    seeds = 10 if args.quick else args.seeds
    rules = [r for r in args.rules.split(",") if r]
    release, n_text, origin = release_strengths()
    print(f"strengths of designs 1-2: {origin}")
    synthetic = spread_prior(12, RELEASE_SD)
    close = spread_prior(12, 0.5)
    designs = [
        ("release 13x4", release, n_text, 1, 4),
        ("release 200x4", release, 200, 1, 24),
        ("synthetic 40x12", synthetic, 20 if args.quick else 40, 1, 40),
        ("synthetic 40x12", synthetic, 20 if args.quick else 40, 3, 40),
        ("synthetic 40x12 close", close, 20 if args.quick else 40, 3, 40),
    ]
    for name, theta, contexts, k, batch in designs:
        if args.only not in name:
            continue
        for rule in rules:
            run_design(name, theta, contexts, k, rule, seeds, batch, args.alpha)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
