"""Issue 26 on the leaderboard at scale: the style-controlled fit's bootstrap, and the whole document with honest
intervals and style control, on 112,000 ordered judgments (2,000 contexts x 8 models, every pair judged in both
orders, as the issue's scale benchmarks count them). Pure statistics, in process (no database, no cache).

    .venv/bin/python bench/bench_style_leaderboard.py [--contexts 2000] [--models 8] [--replicates 1000] [--peer 5]

1. ``style_bootstrap`` (batched Newton over aggregated rows) for ``--replicates`` replicates, beside the peer measured
   in the same run: the per-replicate loop (``fit_style_bt`` refitted on each replicate's resampled judgments, the
   obvious implementation), timed on ``--peer`` replicates and extrapolated linearly (flagged EXTRAPOLATED); both
   on the same counts, with the largest difference of their coefficients (they must agree to 1e-8);
2. the point style fit alone;
3. ``leaderboard_document`` (both 10,000-replicate bootstraps and the honest intervals: sandwich SEs, rank sets,
   drop-k, 100 x 200 coverage simulations) and ``leaderboard_style`` (length, citations, structure) at the default
   replicates, each cold, and their sum: the issue's target is 2 s for the panel and the style fit.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from arena.stats import fit_style_bt, style_bootstrap  # noqa: E402
from arena.stats.folding import encode_cases  # noqa: E402
from arena.stats.leaderboard import leaderboard_document  # noqa: E402
from arena.stats.pairwise import PairJudgments, judgments_from_cases  # noqa: E402
from arena.stats.style_leaderboard import DEFAULT_STYLE, STYLE_FEATURES, STYLE_REPLICATES, leaderboard_style  # noqa: E402

PER_WORD = 0.004


def synthetic(contexts: int, models: int, seed: int = 0) -> tuple[pd.DataFrame, dict]:
    """Cases (every pair of every context, both orders drawn from BT with a length reward) and each side's counts."""
    rng = np.random.default_rng(seed)
    names = [f"Model-{i:02d}" for i in range(models)]
    theta = np.linspace(1.0, -1.0, models)
    verbosity = rng.uniform(150, 450, models)
    features, rows = {}, []
    for c in range(contexts):
        ctx = f"ctx{c:05d}"
        words = rng.normal(verbosity, 60)
        for m, name in enumerate(names):
            features[(ctx, name)] = {
                "words": float(max(words[m], 1)),
                "citations": float(rng.integers(0, 5)),
                "structure": float(rng.integers(0, 8)),
            }
        for i, j in itertools.combinations(range(models), 2):
            p = 1 / (1 + np.exp(-(theta[i] - theta[j] + PER_WORD * (words[i] - words[j]))))
            won = [names[i] if u < p else names[j] for u in rng.random(2)]
            rows.append(
                {
                    "case": f"{ctx}:{i}:{j}",
                    "context": ctx,
                    "batch": "",
                    "model_1": names[i],
                    "model_2": names[j],
                    "original": won[0],
                    "reverse": won[1],
                    "shown_a_original": names[i],
                }
            )
    return pd.DataFrame(rows), features


def timed(fn):  # noqa: ANN001, ANN201
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--contexts", type=int, default=2000)
    parser.add_argument("--models", type=int, default=8)
    parser.add_argument("--replicates", type=int, default=STYLE_REPLICATES)
    parser.add_argument("--peer", type=int, default=5, help="replicates the per-replicate loop is timed on")
    args = parser.parse_args()
    cases, features = synthetic(args.contexts, args.models)
    enc = encode_cases(cases)
    j = judgments_from_cases(enc)
    c = enc.complete
    side = [
        [features[(ctx, enc.models[m])][STYLE_FEATURES[f][0]] for f in DEFAULT_STYLE]
        for ctx, m in zip(enc.context[c], enc.lo[c], strict=True)
    ]
    other = [
        [features[(ctx, enc.models[m])][STYLE_FEATURES[f][0]] for f in DEFAULT_STYLE]
        for ctx, m in zip(enc.context[c], enc.hi[c], strict=True)
    ]
    diff = np.asarray(side) - np.asarray(other)
    diffs = np.vstack([diff, diff])
    print(
        f"{j.n:,} ordered judgments, {j.n_clusters:,} contexts, {args.models} models, 3 style features; load {os.getloadavg()[0]:.2f}"
    )

    t_fit, fit = timed(lambda: fit_style_bt(j, diffs, features=list(DEFAULT_STYLE), pseudo_count=0.5))
    print(
        f"point style fit: {t_fit:.3f} s ({fit.iterations} Newton steps, gradient {fit.grad_norm:.1e}, converged={fit.converged})"
    )

    rng = np.random.default_rng(1)
    counts = rng.multinomial(j.n_clusters, np.full(j.n_clusters, 1 / j.n_clusters), size=args.replicates)
    t_ours, boot = timed(lambda: style_bootstrap(j, diffs, fit, counts=counts))
    print(
        f"ours  batched style bootstrap, {args.replicates:,} replicates: {t_ours:.2f} s ({1000 * t_ours / args.replicates:.1f} ms per replicate)"
    )

    def peer() -> np.ndarray:
        out = []
        for r in range(args.peer):
            rows = np.repeat(np.arange(j.n), counts[r][j.cluster])
            jr = PairJudgments(j.n_models, j.a[rows], j.b[rows], j.y[rows], j.cluster[rows], j.n_clusters, j.models)
            out.append(fit_style_bt(jr, diffs[rows], pseudo_count=0.5).beta)
        return np.asarray(out)

    t_peer, ref = timed(peer)
    per = t_peer / args.peer
    print(
        f"peer  per-replicate loop (fit_style_bt on each resample): {1000 * per:.0f} ms per replicate, "
        f"{per * args.replicates:.1f} s for {args.replicates:,} (EXTRAPOLATED from {args.peer})"
    )
    print(
        f"ratio peer/ours: {per * args.replicates / t_ours:.1f}x; max |beta diff| on the {args.peer} shared replicates: {np.abs(ref - boot.beta[: args.peer]).max():.1e}"
    )

    t_doc, doc = timed(lambda: leaderboard_document(cases))
    # The same document without the honest intervals (the section swapped for None), to show what they add.
    import arena.stats.leaderboard as board

    section, board.honest_intervals_section = board.honest_intervals_section, lambda *a, **k: None
    try:
        t_plain, _ = timed(lambda: leaderboard_document(cases))
    finally:
        board.honest_intervals_section = section
    t_style, styled = timed(lambda: leaderboard_style(cases, features, DEFAULT_STYLE))
    print(f"leaderboard_document (10,000-replicate bootstraps + honest intervals): {t_doc:.2f} s")
    print(f"leaderboard_document without the honest intervals: {t_plain:.2f} s (they add {t_doc - t_plain:.2f} s)")
    print(f"leaderboard_style ({', '.join(DEFAULT_STYLE)}, {STYLE_REPLICATES:,} replicates): {t_style:.2f} s")
    print(
        f"whole leaderboard with style control: {t_doc + t_style:.2f} s (target < 2 s) -> {'met' if t_doc + t_style < 2 else 'NOT MET'}"
    )
    first = styled["models"][0]
    print(
        f"  style-controlled leader {first['model']} (plain rank {first['plain_rank']}); length per word {styled['coefficients']['length']['gamma_raw']:.4f} (planted {PER_WORD})"
    )
    print(f"  drop-k: {doc['honest_intervals']['drop_k']['k']} ({doc['honest_intervals']['drop_k']['method']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
