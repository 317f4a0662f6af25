"""The leaderboard's ``honest_intervals`` section at 112k and 1.12M judgments: today's code against the code before
issue 25 item 1's aggregation, same run (issue 25).

What it measures: :func:`arena.stats.honest.honest_intervals_section` (the sandwich, the rank sets, drop-k, the
coverage simulation, the prior check) on a synthetic Lit2Test design of ``--contexts`` contexts x 8 models, every
pair judged in both orders (2,000 contexts: 112,000 ordered judgments; 20,000: 1.12M), strengths evenly spaced
from 1.3 to -1.3 as in ``bench/synthetic_release.py`` (a leader that holds against hundreds of removed contexts,
so drop-k runs its greedy search), 5% ties. The context-bootstrap replicates the section takes (they only feed
the rank sets) are the fitted strengths plus noise: the bootstrap is not what is measured here.

Reference: ``arena/stats`` at :data:`REFERENCE_COMMIT` (the commit before this change), extracted by
``bench.reference_code`` and run in the same process right after ours, on the same data; each line prints the
load average beside it. The outputs are compared: the coverage figures and drop-k must be equal, every other
number within 1e-9 relative (the sandwich now sums per (context, pair) cell).

    .venv/bin/python bench/bench_honest.py [--contexts 2000 20000] [--repeat 3] [--no-reference-above 20000]
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

#: The commit before the aggregated honest section (issue 25 item 1): the same-run reference.
REFERENCE_COMMIT = "a59ca5b95dd208cf524526a9f2d8fc955a44eb8d"
N_MODELS = 8
PSEUDO_COUNT = 0.5
LEVEL = 0.95


def _load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def _design(n_contexts: int) -> tuple[Any, np.ndarray, np.ndarray, list[int]]:
    from arena.stats import encode_cases
    from arena.stats.bt import fit_bt
    from arena.stats.matrices import win_matrix
    from bench.synthetic import synthetic_cases

    data = synthetic_cases(
        n_contexts, N_MODELS, models_per_context=N_MODELS, tie_prob=0.05, seed=1, theta=np.linspace(1.3, -1.3, N_MODELS)
    )
    enc = encode_cases(data.cases)
    theta = fit_bt(win_matrix(enc, "ordered"), pseudo_count=PSEUDO_COUNT).theta
    replicates = theta + np.random.default_rng(0).normal(0.0, 0.05, (10_000, N_MODELS))
    return enc, theta, replicates, [int(i) for i in np.argsort(-theta, kind="stable")]


def _differences(new: Any, old: Any, path: str = "") -> list[str]:  # noqa: ANN401
    """Where two sections differ: any difference in coverage or drop-k, floats elsewhere beyond 1e-9 relative."""
    if isinstance(new, dict) and isinstance(old, dict):
        return [
            d for key in sorted(set(new) | set(old), key=str) for d in _differences(new.get(key), old.get(key), f"{path}/{key}")
        ]
    if isinstance(new, list) and isinstance(old, list) and len(new) == len(old):
        return [d for i, (x, y) in enumerate(zip(new, old, strict=True)) for d in _differences(x, y, f"{path}[{i}]")]
    exact = path.startswith(("/coverage", "/drop_k"))
    if isinstance(new, float) and isinstance(old, float) and not exact:
        return [] if abs(new - old) <= 1e-9 * max(1.0, abs(old)) else [f"{path}: {new!r} vs {old!r}"]
    return [] if new == old else [f"{path}: {new!r} vs {old!r}"]


def _time(work: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        out = work()
        times.append(time.perf_counter() - started)
    return float(np.median(times)), out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--contexts", type=int, nargs="+", default=[2000, 20000])
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs per size (median); the reference runs once above 5,000 contexts"
    )
    parser.add_argument(
        "--no-reference-above",
        type=int,
        default=10**9,
        help="skip the old code above this many contexts (it takes ~1 min at 20,000)",
    )
    args = parser.parse_args()

    from arena.stats.honest import honest_intervals_section
    from bench.reference_code import reference_stats

    old_section = reference_stats(REFERENCE_COMMIT, "honest").honest_intervals_section
    print(
        f"honest_intervals_section, {N_MODELS} models, every pair in both orders; reference arena/stats@{REFERENCE_COMMIT[:10]}"
    )
    failures = 0
    for n_contexts in args.contexts:
        enc, theta, replicates, order = _design(n_contexts)

        args_ = (enc, theta, replicates, order)
        kwargs = {"pseudo_count": PSEUDO_COUNT, "level": LEVEL, "seed": 0}
        new_s, new = _time(functools.partial(honest_intervals_section, *args_, **kwargs), args.repeat)
        judgments = new["judgments"]
        line = f"  {n_contexts:>6,} contexts, {judgments:>9,} judgments: new {new_s:7.3f} s"
        if n_contexts > args.no_reference_above:
            print(f"{line}; reference skipped ({_load()})", flush=True)
            continue
        old_s, old = _time(functools.partial(old_section, *args_, **kwargs), args.repeat if n_contexts <= 5000 else 1)
        diffs = _differences(new, old)
        failures += bool(diffs)
        verdict = "outputs equal" if not diffs else f"OUTPUTS DIFFER ({len(diffs)}): " + "; ".join(diffs[:3])
        print(f"{line}; old {old_s:7.3f} s; old/new {old_s / new_s:5.1f}x; {verdict} ({_load()})", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
