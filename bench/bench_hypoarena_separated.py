"""Benchmark: the HypoArena leaderboard page of tiny, fully separated benchmarks, cold (issue 22, item 5).

Run from the repository root:

    .venv/bin/python bench/bench_hypoarena_separated.py [--repeat K]
    DATABASE_URL=postgres://... CACHE_URL=rediscache://... .venv/bin/python bench/bench_hypoarena_separated.py

What it builds (``hypoarena_import``, in a scratch database made by Django's test-database machinery and dropped at
the end; ``bench/synthetic_release.py``):

* ``separated-mild``: issue 22's case: one case, two models, one judge run whose two verdicts ("A>B", then "B>A" in
  the reverse order) give the first model both orders, mildly: its debiased share is ¾, half a win and half a tie.
  The MLE does not exist; before the fix every bootstrap replicate was fitted alone by L-BFGS-B running up the
  likelihood's ridge (77 s in process at 10,000 replicates, 272 s as a page under load);
* ``separated-strong``: the same with "A>>B" / "B>>A": a plain win, no tie;
* ``separated-three``: one case, three models: Alpha beats Beta, Alpha and Beta each only tie Gamma (ties drive ν
  up while a model never loses: the hardest of the three for an optimiser);
* the peer, measured in the same run: ``hypoarena-demo`` (``hypoarena/demo.py``: 3 domains, 8 models, 1,680 matches
  judged in both orders by two judges), whose page fits well-separated strengths.

It prints, per benchmark, the leaderboard page's cold time (``GET /dashboard/benchmarks/<id>/hypoarena/leaderboard/``
with the Django test client, signed in as a researcher, after ``cache.clear()``; the page's default 10,000
case-bootstrap replicates; median of ``--repeat``), its ratio to the demo page's cold time, whether the fits were
flagged diverged and how many replicates left the batched Newton path. Target: every separated page < 2 s cold.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic_release import django_setup, scratch_database, scratch_database_drop  # noqa: E402

TARGET_S = 2.0


def case(case_id: str) -> dict[str, Any]:
    return {"case_id": case_id, "domain": "ops", "context": "The service slowed down on Monday."}


def submission(case_id: str, model: str) -> dict[str, Any]:
    return {"case_id": case_id, "model": model, "pairs": [{"hypothesis": f"{model}: a cache expired.", "evidence": "The logs."}]}


def verdict(a: str, b: str, order: str, level: str) -> dict[str, Any]:
    return {"case_id": "c1", "model_a": a, "model_b": b, "order": order, "verdict": level, "judge": "judge-x", "run_label": "r1"}


def separated_records() -> dict[str, dict[str, list[dict[str, Any]]]]:
    """The files of the three tiny separated benchmarks, by benchmark name."""
    two = [case("c1")], [submission("c1", m) for m in ("Alpha", "Beta")]
    three = [case("c1")], [submission("c1", m) for m in ("Alpha", "Beta", "Gamma")]
    return {
        "separated-mild": {
            "cases": two[0],
            "submissions": two[1],
            "verdicts": [verdict("Alpha", "Beta", "original", "A>B"), verdict("Beta", "Alpha", "reverse", "B>A")],
        },
        "separated-strong": {
            "cases": two[0],
            "submissions": two[1],
            "verdicts": [verdict("Alpha", "Beta", "original", "A>>B"), verdict("Beta", "Alpha", "reverse", "B>>A")],
        },
        "separated-three": {
            "cases": three[0],
            "submissions": three[1],
            "verdicts": [
                verdict("Alpha", "Beta", "original", "A>>B"),
                verdict("Beta", "Alpha", "reverse", "B>>A"),
                verdict("Alpha", "Gamma", "original", "A=B"),
                verdict("Gamma", "Alpha", "reverse", "A=B"),
                verdict("Beta", "Gamma", "original", "A=B"),
                verdict("Gamma", "Beta", "reverse", "A=B"),
            ],
        },
    }


def build(folder: Path) -> list[Any]:
    """Import the separated benchmarks and the demo; return the benchmarks, the demo last."""
    from arena.jsonl import jsonl_write
    from hypoarena.demo import demo_build
    from hypoarena.importing import hypoarena_import

    benchmarks = []
    for name, records in separated_records().items():
        files = {}
        for kind, rows in records.items():
            files[kind] = folder / name / f"{kind}.jsonl"
            files[kind].parent.mkdir(parents=True, exist_ok=True)
            jsonl_write(files[kind], rows)
        benchmarks.append(hypoarena_import(name=name, files=files).benchmark)
    benchmarks.append(demo_build().benchmark)
    return benchmarks


def cold_page(client: Any, benchmark: Any, repeat: int) -> tuple[float, list[float]]:  # noqa: ANN401
    """Median and all times of the leaderboard page, the cache cleared before each request."""
    from django.core.cache import cache
    from django.urls import reverse

    url = reverse("hypoarena:leaderboard", args=[benchmark.pk])
    times = []
    for _ in range(repeat):
        cache.clear()
        started = time.perf_counter()
        response = client.get(url, secure=True)
        times.append(time.perf_counter() - started)
        assert response.status_code == 200, (url, response.status_code)
        assert b"report-problem" not in response.content, f"{benchmark.name}: the page shows no leaderboard"
    return statistics.median(times), times


def fit_flags(benchmark: Any) -> str:  # noqa: ANN401
    """What the cached report says about the pooled fit (read after the page computed it)."""
    from arena.selectors import LEADERBOARD_REPLICATES, LEADERBOARD_SEED
    from hypoarena.reports import arena_runs, hypoarena_report_cached

    doc = hypoarena_report_cached(
        benchmark=benchmark, run=arena_runs(benchmark=benchmark)[0], replicates=LEADERBOARD_REPLICATES, seed=LEADERBOARD_SEED
    )
    pooled = doc["leaderboard"]["pooled"]
    ratings = ", ".join(f"{m} {e['rating']:.0f}" for m, e in pooled["models"].items())
    return (
        f"pooled fit: diverged {pooled['point_diverged']}, diverged replicates {pooled['diverged_replicates']:,}, "
        f"replicates off the Newton path {pooled['fallback_replicates']:,} (tie-free ones: one batched BT fit); ratings {ratings}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="cold requests per page (median)")
    args, _ = parser.parse_known_args()  # run_all.py forwards other benches' options
    django_setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client

    folder = Path(tempfile.mkdtemp(prefix="lit2test-bench-separated-"))
    old_name = scratch_database(suffix="_bench_separated")
    try:
        *separated, demo = build(folder)
        researcher = get_user_model().objects.create_user(username="rita", password="x", is_staff=True)
        settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
        client = Client()
        client.force_login(researcher)
        cold_page(client, demo, 1)  # warm-up: imports, templates, scipy, BLAS start-up (not counted)
        print(
            f"HypoArena leaderboard page, cold (cache cleared), 10,000 case-bootstrap replicates, median of {args.repeat}, "
            f"on {connection.vendor}"
        )
        peer, peer_times = cold_page(client, demo, args.repeat)
        print(f"  peer  {demo.name:<18} {peer:6.2f} s  (runs {', '.join(f'{t:.2f}' for t in peer_times)}): 1,680 matches")
        slowest = 0.0
        for benchmark in separated:
            seconds, times = cold_page(client, benchmark, args.repeat)
            slowest = max(slowest, seconds)
            print(
                f"  ours  {benchmark.name:<18} {seconds:6.2f} s  (runs {', '.join(f'{t:.2f}' for t in times)}): "
                f"{seconds / peer:.2f}x the demo page"
            )
            print(f"        {fit_flags(benchmark)}")
        met = "met" if slowest < TARGET_S else "NOT MET"
        print(f"  slowest separated page {slowest:.2f} s -> target < {TARGET_S:.0f} s {met}")
    finally:
        connection.close()
        scratch_database_drop(old_name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
