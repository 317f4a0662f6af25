"""Benchmark: Intrinsic-scoring report (issue 14) at the published size, against a plain numpy floor and a naive loop.

Run from the repository root:

    .venv/bin/python bench/bench_intrinsic.py [--replicates N] [--peer-replicates M] [--repeat K] [--no-listwise]

Data (synthetic, seeded): 14 scoring scorers (7 models × NLL/energy) × 1,323 papers × 16 candidates over 12
disciplines, plus one listwise scorer (top 5, 2% invalid lists; ``--no-listwise`` leaves it out). Scores are normal
with the gold shifted by a per-scorer amount (Hit@1 about 10–55%) and a per-paper difficulty shared by every scorer.

* ours: the whole ``intrinsic_report(scorers, replicates=10000)``: gold ranks, ties and beats from the raw scores,
  Hit@1/2/3/5, MRR and beats with percentile CIs per scorer for 12 disciplines + pooled, the cross-model agreement
  of both criteria, and the paired differences of every unordered pair of scorers (pooled) (median of K runs);
* floor: a plain numpy pass over the same data that any paper bootstrap must make at least: drawing the paper
  indices of every scope, ``rng.integers(0, P_s, size=(R, P_s))`` for the 12 disciplines and the pooled scope, and
  nothing else (no counting, no metric, no interval);
* naive: the obvious numpy loop — per replicate, resample papers, index each scorer's per-paper values and take the
  means — for the scorer metrics only (no pairs, no agreement: it flatters the peer), on M replicates per scope,
  EXTRAPOLATED linearly to R.
* ``--scale 1323,13230,132300``: issue 25 item 5 — CPU per paper of ``intrinsic_report`` at each size, ours and
  the code before (``arena/stats`` at ``REFERENCE_COMMIT``, extracted by ``bench.reference_code``), same run,
  reports checked equal.

The target (issue 14's Done-when) is absolute: ours < 1 s (wall). The machine is shared (2 cores), so the figures
to compare across runs are the ratios to the floor and to the naive loop, measured in this run; the load average
and our CPU time (single BLAS thread, so close to the wall time of an idle machine) are printed with them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from arena.stats.intrinsic import gold_beats, gold_ranks, intrinsic_report, listwise_gold_ranks, paper_metrics  # noqa: E402

TARGET_S = 1.0


def synthetic_benchmark(
    n_papers: int = 1323, n_candidates: int = 16, n_models: int = 7, n_disciplines: int = 12, listwise: bool = True, seed: int = 0
) -> dict:
    """Scorers, gold and disciplines in the shape ``intrinsic_report`` takes."""
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, n_candidates, n_papers)
    disciplines = [f"discipline-{i:02d}" for i in rng.integers(0, n_disciplines, n_papers)]
    difficulty = rng.normal(0.0, 0.7, n_papers)  # shared by every scorer, so pairing matters
    rows = np.arange(n_papers)
    scorers: dict[str, dict] = {}
    for m in range(n_models):
        for c, criterion in enumerate(("nll", "energy")):
            shift = 0.2 + 0.25 * m + 0.3 * c
            s = rng.normal(size=(n_papers, n_candidates))
            s[rows, gold] -= np.maximum(shift - difficulty, 0.0)
            scorers[f"model-{m}/{criterion}"] = {"model": f"model-{m}", "criterion": criterion, "scores": s}
    if listwise:
        noisy = rng.normal(size=(n_papers, n_candidates))
        noisy[rows, gold] -= 0.8
        top = np.argsort(noisy, axis=1)[:, :5]
        top[rng.random(n_papers) < 0.02] = -1
        scorers["listwise"] = {"model": "judge", "top": top}
    return {"scorers": scorers, "gold": gold, "disciplines": disciplines, "n_candidates": n_candidates}


def floor_pass(data: dict, replicates: int, seed: int) -> None:
    """The indices every paper bootstrap of these scopes draws, and nothing more."""
    disc = np.array(data["disciplines"])
    sizes = [int((disc == d).sum()) for d in sorted(set(data["disciplines"]))] + [len(disc)]
    for size, stream in zip(sizes, np.random.SeedSequence(seed).spawn(len(sizes)), strict=True):
        np.random.default_rng(stream).integers(0, size, size=(replicates, size))


def naive_bootstrap(data: dict, replicates: int, seed: int) -> list[tuple[float, float]]:
    """Per replicate and scope: resample papers, index each scorer's per-paper values, mean over the ranked ones."""
    values = []
    for spec in data["scorers"].values():
        if "scores" in spec:
            ranks = gold_ranks(spec["scores"], data["gold"])
            per = paper_metrics(ranks, gold_beats(spec["scores"], data["gold"]))
        else:
            per = paper_metrics(listwise_gold_ranks(spec["top"], data["gold"], data["n_candidates"]))
        values.extend(per.values())
    matrix = np.array(values)  # (metrics × scorers, papers), NaN where not ranked
    disc = np.array(data["disciplines"])
    scopes = [np.flatnonzero(disc == d) for d in sorted(set(data["disciplines"]))] + [np.arange(len(disc))]
    out = []
    for rows, stream in zip(scopes, np.random.SeedSequence(seed).spawn(len(scopes)), strict=True):
        rng = np.random.default_rng(stream)
        reps = []
        for _ in range(replicates):
            sample = matrix[:, rows[rng.integers(0, len(rows), len(rows))]]
            reps.append(np.nanmean(sample, axis=1))
        q = np.quantile(np.array(reps), [0.025, 0.975], axis=0)
        out.extend(zip(q[0], q[1], strict=True))
    return out


#: Commit before issue 25 item 5: the reference of ``--scale`` (``bench.reference_code``).
REFERENCE_COMMIT = "7629516a742dd1994392db927192c17137fb0cb2"


def scale(sizes: list[int], replicates: int) -> None:
    """CPU per paper of ``intrinsic_report`` at each size, today's code and the code before issue 25 (same run).

    Issue 25 item 5's target: CPU per paper at the largest size within 1.5x of that at the smallest. Each report is
    checked equal (bit for bit, as JSON) to the reference's.
    """
    import json

    from bench.reference_code import reference_stats

    old = reference_stats(REFERENCE_COMMIT, "intrinsic")
    per_paper: dict[str, list[float]] = {"ours": [], "before": []}
    for n in sizes:
        data = synthetic_benchmark(n_papers=n)
        kwargs = {k: data[k] for k in ("gold", "disciplines", "n_candidates")}
        docs = {}
        for name, fn in (("ours", intrinsic_report), ("before", old.intrinsic_report)):
            fn(data["scorers"], replicates=10, **kwargs)
            c0 = time.process_time()
            docs[name] = fn(data["scorers"], replicates=replicates, seed=0, **kwargs)
            cpu = time.process_time() - c0
            per_paper[name].append(cpu / n)
            print(
                f"  {n:>8,} papers  {name:6s} CPU {cpu:8.2f} s  {1e6 * cpu / n:7.1f} µs per paper  "
                f"load average {os.getloadavg()[0]:.2f}",
                flush=True,
            )
        same = json.dumps(docs["ours"], sort_keys=True) == json.dumps(docs["before"], sort_keys=True)
        print(f"  {n:>8,} papers  reports equal bit for bit: {same}")
    for name, values in per_paper.items():
        growth = values[-1] / values[0]
        spread = max(values) / min(values)
        verdict = "" if name == "before" else f" (target <= 1.5x: {'MET' if growth <= 1.5 else 'NOT MET'})"
        print(
            f"{name:6s} CPU per paper at {sizes[-1]:,} / at {sizes[0]:,} papers: {growth:.2f}x{verdict}; "
            f"largest / smallest over every size: {spread:.2f}x; at {sizes[-1]:,} / at {sizes[-2]:,}: "
            f"{values[-1] / values[-2]:.2f}x"
        )
    print(f"before/ours CPU at {sizes[-1]:,} papers: {per_paper['before'][-1] / per_paper['ours'][-1]:.2f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--replicates", type=int, default=10_000)
    ap.add_argument("--peer-replicates", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-listwise", action="store_true")
    ap.add_argument(
        "--scale",
        metavar="SIZES",
        help="comma-separated paper counts (e.g. 1323,13230,132300): CPU per paper, ours and before, then exit",
    )
    args = ap.parse_args()
    if args.scale:
        scale([int(x) for x in args.scale.split(",")], args.replicates)
        return
    data = synthetic_benchmark(listwise=not args.no_listwise)
    kwargs = {k: data[k] for k in ("gold", "disciplines", "n_candidates")}
    n_scorers = len(data["scorers"])
    n_disc = len(set(data["disciplines"]))
    print(
        f"data: {n_scorers} scorers ({'14 scoring + 1 listwise' if not args.no_listwise else 'scoring'}) × "
        f"{len(data['gold']):,} papers × {data['n_candidates']} candidates, {n_disc} disciplines + pooled; "
        f"{n_scorers * (n_scorers - 1) // 2} pooled pairs; load average {os.getloadavg()[0]:.2f}"
    )
    intrinsic_report(data["scorers"], replicates=10, **kwargs)  # warm imports and the BLAS controller
    ours_t, ours_cpu, floor_t = [], [], []
    for _ in range(args.repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        report = intrinsic_report(data["scorers"], replicates=args.replicates, seed=0, **kwargs)
        ours_t.append(time.perf_counter() - t0)
        ours_cpu.append(time.process_time() - c0)
        t0 = time.perf_counter()
        floor_pass(data, args.replicates, seed=0)
        floor_t.append(time.perf_counter() - t0)
    ours, floor = statistics.median(ours_t), statistics.median(floor_t)
    t0 = time.perf_counter()
    naive_bootstrap(data, args.peer_replicates, seed=0)
    naive_measured = time.perf_counter() - t0
    naive = naive_measured / args.peer_replicates * args.replicates
    print(
        f"ours   intrinsic_report, {args.replicates:,} replicates, every metric/scope/pair:  {ours:7.3f} s  "
        f"(median of {args.repeat}, min {min(ours_t):.3f}, CPU {statistics.median(ours_cpu):.3f}; "
        f"target < {TARGET_S:.0f} s: {'OK' if ours < TARGET_S else 'MISSED'})"
    )
    print(
        f"floor  drawing the paper indices of the {n_disc + 1} scopes only:              {floor:7.3f} s  (median of {args.repeat})"
    )
    print(
        f"naive  numpy loop per replicate, scorer metrics only, {n_disc + 1} scopes:        {naive:7.1f} s  "
        f"(EXTRAPOLATED from {args.peer_replicates} replicates per scope, {naive_measured:.2f} s)"
    )
    print(f"ratio ours/floor: {ours / floor:.1f}x   naive/ours: {naive / ours:,.0f}x   load average {os.getloadavg()[0]:.2f}")
    print(
        f"document: {len(report['results'])} metric rows, {len(report['pairs'])} pairs, {len(report['agreement'])} agreement rows"
    )
    for r in report["results"]:
        if r["discipline"] != "all":
            continue
        h1 = r["metrics"]["hit_at_1"]
        mrr = r["metrics"]["mrr"]
        print(
            f"  {r['scorer']:18s} Hit@1 {h1['value']:.3f} [{h1['ci'][0]:.3f}, {h1['ci'][1]:.3f}]  "
            f"Hit@5 {r['metrics']['hit_at_5']['value']:.3f}  MRR {'—' if mrr is None else f'{mrr["value"]:.3f}'}"
        )


if __name__ == "__main__":
    main()
