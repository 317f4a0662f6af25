"""Where ``leaderboard_document`` spends its time, section by section, at 112k and 1.12M ordered judgments, against the
code before issue 25's section work, same run (issue 25 item 1).

What it measures: :func:`arena.stats.leaderboard.leaderboard_document` (10,000 replicates) on cases held in memory
(no database), 8 models, every pair judged in both orders (2,000 contexts: 112,000 ordered judgments; 20,000:
1.12M). ``--design release`` (default) is the release ``bench/bench_api.py`` imports (bench/synthetic_release.py:
one construction batch per 40 contexts, so 500 batches at 20,000 contexts); ``--design synthetic`` is
``bench/bench_honest.py``'s (bench/synthetic.py, 5 batches). Each section's time is read by wrapping the functions
``leaderboard_document`` calls (inclusive times; the honest section also split into its parts).

Reference: ``arena/stats`` at :data:`REFERENCE_COMMIT`, extracted by ``bench.reference_code`` and run in the same
process on the same cases, alternating with today's code (new, old, old, new, ...: neither always runs first); the
two documents must be equal (``==`` on the JSON document: bit for bit), else the bench exits 1. Each line prints the
load average beside it. Also printed: the two 10,000-replicate bootstraps alone (their draws and 3 fits each), the
floor the cold API is compared with.

    .venv/bin/python bench/bench_leaderboard_sections.py [--contexts 2000 20000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import os
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

#: The commit before this change (issue 25 item 1, the document's sections): the same-run reference.
REFERENCE_COMMIT = "7c847d6"
N_MODELS = 8
REPLICATES = 10_000

#: (module, function name) wrapped in ``leaderboard`` and their display names: the document's sections.
LEADERBOARD_SECTIONS = (
    ("case counts", "case_counts"),
    ("point fits", "_point_fits"),
    ("two bootstraps", "_bootstraps"),
    ("condorcet", "condorcet"),
    ("separation", "complete_separation"),
    ("stable W/L/T", "stable_wlt"),
    ("ordered h2h", "ordered_head_to_head"),
    ("folded h2h", "folded_head_to_head"),
    ("comparisons", "comparison_counts"),
    ("bt section", "_bt_section"),
    ("bootstrap section", "_bootstrap_section"),
    ("cluster section", "_cluster_section"),
    ("tie sensitivity", "_tie_section"),
    ("side bias", "side_bias"),
    ("batches", "_batches"),
    ("diagnostic", "_diagnostic"),
    ("judgments", "judgments_from_cases"),
    ("honest intervals", "honest_intervals_section"),
    ("to_builtin", "to_builtin"),
)
#: The honest section's parts (wrapped in ``honest``).
HONEST_PARTS = (
    ("  judgments", "judgments_from_cases"),  # the code before computed them here
    ("  sandwich", "cluster_robust_se"),
    ("  rank sets", "rank_confidence_sets"),
    ("  drop-k", "_drop_k_block"),
    ("  coverage", "_coverage_block"),
    ("  prior", "prior_influence"),
)


def _load() -> str:
    return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def _design(n_contexts: int, design: str) -> Any:  # noqa: ANN401
    """The encoded cases: ``synthetic`` (bench.synthetic, 5 batches) or ``release`` (the release bench_api imports,
    bench/synthetic_release.py: one batch per 40 contexts, so 500 batches at 20,000 contexts)."""
    from arena.stats import encode_cases

    if design == "release":
        from arena.stats.folding import load_release_cases
        from bench.synthetic_release import write_release

        folder = Path(tempfile.mkdtemp(prefix="bench-sections-"))
        write_release(folder, n_contexts=n_contexts, n_models=N_MODELS, seed=3, text_contexts=0)
        cases = load_release_cases(folder / "corrected_folded_pairs.jsonl")
        shutil.rmtree(folder)
        return encode_cases(cases.replace({"original": {"tie": "TIE"}, "reverse": {"tie": "TIE"}}))
    from bench.synthetic import synthetic_cases

    data = synthetic_cases(
        n_contexts, N_MODELS, models_per_context=N_MODELS, tie_prob=0.05, seed=1, theta=np.linspace(1.3, -1.3, N_MODELS)
    )
    return encode_cases(data.cases)


@contextlib.contextmanager
def _timed(module: ModuleType, names: tuple[tuple[str, str], ...], into: dict[str, float]) -> Iterator[None]:
    """Wrap ``module.<name>`` for every name so that its inclusive time (outermost call only) adds to ``into``."""
    saved = {}
    depth: dict[str, int] = defaultdict(int)

    def wrap(label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:  # noqa: ANN401
            depth[label] += 1
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                depth[label] -= 1
                if depth[label] == 0:
                    into[label] += time.perf_counter() - started

        return timed

    for label, name in names:
        if hasattr(module, name):
            saved[name] = getattr(module, name)
            setattr(module, name, wrap(label, saved[name]))
    try:
        yield
    finally:
        for name, fn in saved.items():
            setattr(module, name, fn)


def _run_once(stats: ModuleType, enc: Any) -> tuple[float, dict[str, float], Any]:  # noqa: ANN401
    """One timed ``stats.leaderboard.leaderboard_document`` on ``enc`` (that code's own EncodedCases), its sections'
    times and the document."""
    leaderboard = sys.modules[stats.__name__ + ".leaderboard"]
    honest = sys.modules[stats.__name__ + ".honest"]
    encoded = sys.modules[stats.__name__ + ".folding"].EncodedCases
    enc = encoded(**{f.name: getattr(enc, f.name) for f in dataclasses.fields(enc)})
    times: dict[str, float] = defaultdict(float)
    with _timed(leaderboard, LEADERBOARD_SECTIONS, times), _timed(honest, HONEST_PARTS, times):
        started = time.perf_counter()
        doc = leaderboard.leaderboard_document(enc, replicates=REPLICATES)
        total = time.perf_counter() - started
    return total, dict(times), doc


def _profile(codes: dict[str, ModuleType], enc: Any, repeat: int) -> dict[str, tuple[float, dict[str, float], Any, str]]:  # noqa: ANN401
    """Per code: the median total, each section's median time, the document and the load average, the codes run
    alternately (new, old, old, new, ...) so that neither always runs first."""
    runs: dict[str, list[tuple[float, dict[str, float], Any]]] = {name: [] for name in codes}
    loads: dict[str, list[float]] = {name: [] for name in codes}
    names = list(codes)
    for rep in range(repeat):
        for name in names if rep % 2 == 0 else names[::-1]:
            runs[name].append(_run_once(codes[name], enc))
            loads[name].append(os.getloadavg()[0])
    out = {}
    for name, results in runs.items():
        labels = [label for label, _ in LEADERBOARD_SECTIONS + HONEST_PARTS]
        parts = {label: float(np.median([r[1].get(label, 0.0) for r in results])) for label in labels}
        load = f"load {np.mean(loads[name]):.2f} (1-min average over its runs)"
        out[name] = (float(np.median([r[0] for r in results])), parts, results[-1][2], load)
    return out


def _fits_alone(enc: Any) -> float:  # noqa: ANN401
    """The two 10,000-replicate bootstraps (draws and 3 fits each) alone: the floor of the cold API."""
    from arena.stats import bootstrap_fits, fit_bt, win_matrix

    init = {kind: fit_bt(win_matrix(enc, kind), pseudo_count=0.5).theta for kind in ("ordered", "folded", "stable")}
    started = time.perf_counter()
    for unit, seed in (("case", 1), ("context", 2)):
        bootstrap_fits(enc, unit=unit, replicates=REPLICATES, seed=seed, pseudo_count=0.5, init=init)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--contexts", type=int, nargs="+", default=[2000, 20000])
    parser.add_argument("--repeat", type=int, default=3, help="runs of each code per size, alternating (median)")
    parser.add_argument(
        "--design", choices=["release", "synthetic"], default="release", help="the cases (see _design); default: release"
    )
    args = parser.parse_args()

    import arena.stats as new_stats
    import arena.stats.honest  # noqa: F401  (the modules whose functions are wrapped)
    import arena.stats.leaderboard  # noqa: F401
    from bench.reference_code import reference_stats

    old_stats = sys.modules[reference_stats(REFERENCE_COMMIT, "leaderboard").__name__.rsplit(".", 1)[0]]
    reference_stats(REFERENCE_COMMIT, "honest")
    reference_stats(REFERENCE_COMMIT, "folding")
    print(
        f"leaderboard_document ({REPLICATES:,} replicates), {N_MODELS} models, {args.design} design; reference arena/stats@{REFERENCE_COMMIT}"
    )
    failures = 0
    for n_contexts in args.contexts:
        enc = _design(n_contexts, args.design)
        profiles = _profile({"new": new_stats, "old": old_stats}, enc, args.repeat)
        new_s, new_parts, new_doc, load_new = profiles["new"]
        old_s, old_parts, old_doc, load_old = profiles["old"]
        fits = float(np.median([_fits_alone(enc) for _ in range(args.repeat)]))
        equal = new_doc == old_doc
        failures += not equal
        print(
            f"  {n_contexts:,} contexts, {2 * len(enc.lo):,} ordered judgments: new {new_s:6.3f} s ({load_new}); "
            f"old {old_s:6.3f} s ({load_old}); old/new {old_s / new_s:4.2f}x; "
            f"{'documents equal' if equal else 'DOCUMENTS DIFFER'}"
        )
        print(
            f"    the two bootstraps alone (draws + 3 fits each) {fits:6.3f} s ({_load()}): "
            f"new document = {new_s / fits:4.2f}x that, old = {old_s / fits:4.2f}x"
        )
        print(f"    {'section':<20} {'old s':>7} {'old %':>6} {'new s':>7} {'new %':>6}")
        for label, _ in LEADERBOARD_SECTIONS + HONEST_PARTS:
            o, n = old_parts.get(label, 0.0), new_parts.get(label, 0.0)
            print(f"    {label:<20} {o:7.3f} {100 * o / old_s:5.1f}% {n:7.3f} {100 * n / new_s:5.1f}%")
        covered_old = sum(old_parts[label] for label, _ in LEADERBOARD_SECTIONS)
        covered_new = sum(new_parts[label] for label, _ in LEADERBOARD_SECTIONS)
        print(f"    {'(unwrapped rest)':<20} {old_s - covered_old:7.3f} {'':>6} {new_s - covered_new:7.3f}", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
