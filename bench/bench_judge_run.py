"""End-to-end throughput of a judge run: 2,400 ordered judgments through Celery and the database.

A local OpenAI-compatible server (tests/fake_llm) answers every request after a fixed 200 ms; the run uses
concurrency 32, so the ideal is 2,400 × 0.2 s / 32 = 15 s. The figure reported is the measured time as a
ratio of that ideal (target ≤ 1.3), from the moment the run is launched to the moment it is completed,
with a real Celery worker process and the configured database (a fresh SQLite file by default; PostgreSQL
and Redis when DATABASE_URL and CELERY_BROKER_URL are set).

    .venv/bin/python bench/bench_judge_run.py [--latency 0.2] [--concurrency 32]

The 1,200 judgeable pairs are the release's 1,200 canonical pairs, each context given the text of one of
the 13 sample contexts (cyclically) and each model the sample proposal of that context: real texts, real
prompt sizes.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("LIT2TEST_DATA", ROOT.parent / "shared" / "data" / "lit2test"))
sys.path.insert(0, str(ROOT))


def build_release(folder: Path) -> None:
    """All 200 contexts of the verdict file with text borrowed from the 13 sample contexts."""
    contexts = [json.loads(line) for line in (DATA / "contexts.jsonl").read_text().splitlines()]
    proposals = [json.loads(line) for line in (DATA / "proposals.jsonl").read_text().splitlines()]
    folded = [json.loads(line) for line in (DATA / "corrected_folded_pairs.jsonl").read_text().splitlines()]
    by_context: dict[str, dict[str, dict]] = {}
    for p in proposals:
        by_context.setdefault(p["context_id"], {})[p["model"]] = p
    ids = sorted({row["context_id"] for row in folded})
    out_contexts, out_proposals = [], []
    for i, context_id in enumerate(ids):
        source = contexts[i % len(contexts)]
        papers = [dict(paper, paper_id=f"{paper['paper_id']}-{i}", url=f"{paper['url']}&copy={i}") for paper in source["papers"]]
        out_contexts.append(dict(source, context_id=context_id, papers=papers))
        for _model, proposal in by_context[source["context_id"]].items():
            out_proposals.append(dict(proposal, context_id=context_id))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "contexts.jsonl").write_text("".join(json.dumps(c) + "\n" for c in out_contexts))
    (folder / "proposals.jsonl").write_text("".join(json.dumps(p) + "\n" for p in out_proposals))
    (folder / "corrected_folded_pairs.jsonl").write_text((DATA / "corrected_folded_pairs.jsonl").read_text())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    if not (DATA / "contexts.jsonl").is_file():
        print(f"release sample not found at {DATA}; set LIT2TEST_DATA", file=sys.stderr)
        return 2

    work = Path(tempfile.mkdtemp(prefix="lit2test-bench-"))
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="lit2test_web.settings", DEBUG="1")
    if "DATABASE_URL" not in os.environ:
        env["LIT2TEST_VAR_DIR"] = str(work / "var")  # a fresh SQLite file and filesystem broker
    os.environ.update(env)

    import django

    django.setup()
    from django.core.management import call_command

    from arena.release import release_import
    from jobs.services import JudgeRunRequest, judge_run_create, judge_run_launch
    from tests.fake_llm import FakeLLM

    call_command("migrate", verbosity=0)
    build_release(work / "release")
    benchmark = release_import(directory=work / "release", benchmark_name=f"bench-{int(time.time())}").benchmark

    fake = FakeLLM.start()
    worker = subprocess.Popen(
        [str(ROOT / ".venv" / "bin" / "celery"), "-A", "lit2test_web", "worker", "--pool=threads", "--concurrency=2", "--loglevel=WARNING"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=open(work / "worker.log", "w"), start_new_session=True,
    )
    try:
        fake.script(latency=args.latency, judge={"policy": "prefer_field", "field": "hypothesis"})
        time.sleep(3)  # let the worker connect
        run, skipped = judge_run_create(
            request=JudgeRunRequest(benchmark=benchmark, judge_model="Bench-Judge", base_url=fake.base_url, concurrency=args.concurrency)
        )
        tasks = run.tasks.count()
        started = time.perf_counter()
        launched_at = time.time()
        judge_run_launch(run=run)
        while True:
            run.refresh_from_db()
            if run.status not in ("pending", "running"):
                break
            time.sleep(0.05)
        elapsed = time.perf_counter() - started
        accepted = run.judgments.filter(status="accepted").count()
        ideal = tasks * args.latency / args.concurrency
        log = fake.log()
        requests = len(log)
        times = sorted(entry["t"] for entry in log)
    finally:
        worker.terminate()
        deadline = time.monotonic() + 10
        usage = None
        while time.monotonic() < deadline:
            pid, _status, usage = os.wait4(worker.pid, os.WNOHANG)
            if pid:
                break
            time.sleep(0.05)
        else:
            worker.kill()
            _pid, _status, usage = os.wait4(worker.pid, 0)
        worker.returncode = 0
        fake.stop()

    database = django.db.connection.vendor
    print(f"judge run end to end ({database}, Celery worker, fake endpoint latency {args.latency * 1000:.0f} ms, concurrency {args.concurrency})")
    print(f"  ordered judgments:   {accepted} accepted of {tasks} tasks ({skipped} pairs skipped), {requests} HTTP requests, status {run.status}")
    print(f"  measured:            {elapsed:.2f} s")
    print(f"  ideal:               {ideal:.2f} s  (tasks x latency / concurrency)")
    print(f"  ratio measured/ideal {elapsed / ideal:.2f}  (target <= 1.3)")
    if times:
        span = times[-1] - times[0]
        print(f"  endpoint saw requests over {span:.2f} s ({len(times) / span:.0f} req/s; ideal {args.concurrency / args.latency:.0f} req/s);"
              f" launch-to-first-request {times[0] - launched_at:.2f} s")
    if usage is not None:
        cpu = usage.ru_utime + usage.ru_stime
        print(f"  worker CPU:          {cpu:.2f} s user+sys ({cpu / max(1, tasks) * 1000:.2f} ms per ordered judgment; "
              f"CPU time is steadier than wall time on a shared machine)")
    return 0 if run.status == "completed" and accepted == tasks else 1


if __name__ == "__main__":
    raise SystemExit(main())
