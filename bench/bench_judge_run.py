"""End-to-end throughput of a judge run: 2,400 ordered judgments through Celery and the database.

A local OpenAI-compatible server (tests/fake_llm) answers every request after a fixed 200 ms; the run uses
concurrency 32, so the ideal is 2,400 × 0.2 s / 32 = 15 s. The figure reported is the measured time as a
ratio of that ideal (target ≤ 1.3), from the moment the run is launched to the moment it is completed,
with a real Celery worker process and the configured database (a fresh SQLite file by default; PostgreSQL
and Redis when DATABASE_URL and CELERY_BROKER_URL are set).

    .venv/bin/python bench/bench_judge_run.py [--latency 0.2] [--concurrency 32] [--workers 1]
        [--checkout DIR] [--py-spy PATH]

``--workers N`` starts N Celery worker processes and launches the run with N drivers (one per worker), which
share the run through claims and the endpoint's shared limiter. ``--checkout DIR`` runs the workers from
another checkout (an older commit, as a same-session reference: ``git worktree add /tmp/ref HEAD``); the
database, release and endpoint are this one's. ``--py-spy PATH`` records each worker with py-spy (an
optional tool, not a dependency: ``pip install py-spy`` anywhere and put it on PATH) into PATH-<n>.txt
(collapsed stacks), and the bench prints where the worker CPU went.

Besides wall time it reports CPU: each worker's (user+sys, from wait4) per ordered judgment, and the fake
endpoint's, which shares the machine's cores, as a share of all CPU the run used.

The 1,200 judgeable pairs are the release's 1,200 canonical pairs, each context given the text of one of
the 13 sample contexts (cyclically) and each model the sample proposal of that context: real texts, real
prompt sizes.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
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


def _proc_cpu(pid: int) -> float:
    """User+system CPU seconds of a live process (Linux /proc), 0.0 where unavailable."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def _stop(process: subprocess.Popen) -> float:
    """Terminate a worker (warm shutdown) and return its CPU seconds, children included (wait4)."""
    process.terminate()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        pid, _status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        time.sleep(0.05)
    else:
        process.kill()
        _pid, _status, usage = os.wait4(process.pid, 0)
    process.returncode = 0
    return usage.ru_utime + usage.ru_stime


# Steps of ours, matched on any frame of a sample (first rule wins), then libraries on the innermost frame.
_STEPS = [
    ("limiter (jobs/limits.py)", r"\(jobs/limits\.py"),
    ("call ledger (count calls before sending)", r"(_CallLedger|_TaskCalls)\.|(^|\.)(calls_count|calls_failed_record) \(jobs/"),
    ("blindness gate (jobs/gates.py)", r"(^|\.)(blindness_problem|_scan|squash) \(jobs/gates\.py"),
    ("claim + render prompts", r"(^|\.)(claim|tasks_claim|render_judge_task|_blindness_problem|_proposal_map) \("),
    ("store judgments", r"(^|\.)(store|_create_judgments|_owned|_judgment|tasks_owned|rows_store) \(jobs/"),
    (
        "heartbeat / run status / others_open",
        r"(^|\.)(driver_heartbeat|tasks_open_elsewhere|<lambda>) \(jobs/(services|execution)\.py",
    ),
    ("parse answers", r"(^|\.)parse_judge_answer \("),
]
_LIBRARIES = [
    ("cache client (limiter round trips)", r"\((django/core/cache|redis)/"),
    ("openai client (incl. pydantic)", r"\((openai|pydantic|pydantic_core)/"),
    ("httpx / httpcore / h11 / anyio", r"\((httpx|httpcore|h11|anyio)/"),
    ("Django ORM / psycopg", r"\((django|psycopg|psycopg_pool)/"),
    ("asyncio event loop + selectors", r"\((asyncio/|selectors\.py|ssl\.py|socket\.py)"),
    ("celery / kombu", r"\((celery|kombu|billiard)/"),
    ("threads / executors", r"\((threading\.py|concurrent/|queue\.py)"),
]


def _profile_summary(paths: list[Path]) -> list[tuple[str, float]]:
    """Share of py-spy samples (collapsed stacks, ``frame;frame;... count``) per step of ours, else per library."""
    import re

    steps = [(name, re.compile(pattern)) for name, pattern in _STEPS]
    libraries = [(name, re.compile(pattern)) for name, pattern in _LIBRARIES]
    totals: dict[str, float] = {}
    grand = 0
    for path in paths:
        for line in path.read_text().splitlines():
            stack, _, count = line.rpartition(" ")
            if not count.isdigit():
                continue
            frames = stack.split(";")
            label = next((name for name, rx in steps if any(rx.search(f) for f in frames)), None)
            if label is None:
                label = next((name for f in reversed(frames) for name, rx in libraries if rx.search(f)), "other")
            totals[label] = totals.get(label, 0) + int(count)
            grand += int(count)
    return sorted(((k, v / grand) for k, v in totals.items()), key=lambda kv: -kv[1]) if grand else []


def _worker_env(*, debug: bool) -> dict[str, str]:
    """The workers' environment: as deployed (DEBUG off, bytecode written), or as this bench ran until 2026-12-06."""
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="lit2test_web.settings")
    if debug:
        env["DEBUG"] = "1"
        return env
    # DEBUG off: with it on, Django keeps and logs every query, CPU per query a worker in production does not spend.
    # Bytecode written: an environment with PYTHONDONTWRITEBYTECODE compiled the project's modules at each start.
    env.pop("DEBUG", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
    return env


def _compile(checkout: Path, env: dict[str, str]) -> None:
    """The bytecode a deployed worker finds at its start, in the checkout's __pycache__ folders (ignored by git; the
    site-packages have theirs already)."""
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", "-x", r"/\.venv/|/node_modules/", str(checkout)],
        env=env,
        cwd=checkout,
        check=True,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--workers", type=int, default=1, help="Celery worker processes, one driver each")
    parser.add_argument("--checkout", type=Path, default=ROOT, help="run the workers from this checkout (a reference)")
    parser.add_argument("--py-spy", dest="py_spy", type=Path, default=None, help="record each worker with py-spy to PATH-<n>.txt")
    parser.add_argument(
        "--debug",
        action="store_true",
        help="run the workers with DEBUG=1 and no bytecode cache, as this bench did until 2026-12-06 (figures comparable to earlier ones)",
    )
    args = parser.parse_args()
    if not (DATA / "contexts.jsonl").is_file():
        print(f"release sample not found at {DATA}; set LIT2TEST_DATA", file=sys.stderr)
        return 2

    work = Path(tempfile.mkdtemp(prefix="lit2test-bench-"))
    env = _worker_env(debug=args.debug)
    if "DATABASE_URL" not in os.environ:
        env["LIT2TEST_VAR_DIR"] = str(work / "var")  # a fresh SQLite file and filesystem broker
    os.environ.update(env)

    import django

    django.setup()
    from django.core.management import call_command

    from jobs.services import JudgeRunRequest, judge_run_create, judge_run_launch
    from lit2test.release import release_import
    from tests.fake_llm import FakeLLM

    call_command("migrate", verbosity=0)
    build_release(work / "release")
    benchmark = release_import(directory=work / "release", benchmark_name=f"bench-{int(time.time())}").benchmark

    fake = FakeLLM.start()
    checkout = args.checkout.resolve()
    if not args.debug:
        _compile(checkout, env)
    workers, spies = [], []
    for n in range(args.workers):
        command = [
            str(ROOT / ".venv" / "bin" / "celery"),
            "-A",
            "lit2test_web",
            "worker",
            "--pool=threads",
            "--concurrency=1",
            "--loglevel=WARNING",
            "-n",
            f"bench{n}-{os.getpid()}@%h",
        ]
        workers.append(
            subprocess.Popen(
                command,
                cwd=checkout,
                env=dict(env, PYTHONPATH=str(checkout)),
                stdout=subprocess.DEVNULL,
                stderr=open(work / f"worker{n}.log", "w"),
                start_new_session=True,
            )
        )
    cpu_by_worker: list[float] = []
    try:
        fake.script(latency=args.latency, judge={"policy": "prefer_field", "field": "hypothesis"})
        time.sleep(3 + args.workers)  # let the workers connect
        run, skipped = judge_run_create(
            request=JudgeRunRequest(
                benchmark=benchmark, judge_model="Bench-Judge", base_url=fake.base_url, concurrency=args.concurrency
            )
        )
        tasks = run.tasks.count()
        if args.py_spy:
            for n, worker in enumerate(workers):
                out = Path(f"{args.py_spy}-{n}.txt")
                spies.append(
                    (
                        out,
                        subprocess.Popen(
                            [
                                "py-spy",
                                "record",
                                "--pid",
                                str(worker.pid),
                                "--format",
                                "raw",
                                "--output",
                                str(out),
                                "--rate",
                                "200",
                                "--gil",
                                "--nonblocking",
                            ],
                            stdout=subprocess.DEVNULL,
                            stderr=open(work / f"py-spy{n}.log", "w"),
                        ),
                    )
                )
            time.sleep(1)
        endpoint_cpu_before = _proc_cpu(fake.process.pid)
        workers_cpu_before = sum(_proc_cpu(w.pid) for w in workers)  # start-up (imports, Django, Celery) done
        started = time.perf_counter()
        launched_at = time.time()
        judge_run_launch(run=run, drivers=args.workers)
        while True:
            run.refresh_from_db()
            if run.status not in ("pending", "running"):
                break
            time.sleep(0.05)
        elapsed = time.perf_counter() - started
        run_cpu = sum(_proc_cpu(w.pid) for w in workers) - workers_cpu_before
        endpoint_cpu = _proc_cpu(fake.process.pid) - endpoint_cpu_before
        accepted = run.judgments.filter(status="accepted").count()
        ideal = tasks * args.latency / args.concurrency
        log = fake.log()
        requests = len(log)
        times = sorted(entry["t"] for entry in log)
        from jobs.models import RunDriver

        drivers = list(RunDriver.objects.filter(run_id=run.pk).values_list("worker", flat=True))
        starts = sorted(
            t.timestamp() - launched_at for t in RunDriver.objects.filter(run_id=run.pk).values_list("started_at", flat=True)
        )
        per_driver = {
            token: n
            for token, n in run.tasks.values_list("claimed_by")
            .annotate(n=django.db.models.Count("id"))
            .values_list("claimed_by", "n")
        }
    finally:
        for _out, spy in spies:
            spy.send_signal(2)  # SIGINT: py-spy writes its file and exits
        for _out, spy in spies:
            try:
                spy.wait(timeout=30)
            except subprocess.TimeoutExpired:
                spy.kill()
        for worker in workers:
            cpu_by_worker.append(_stop(worker))
        fake.stop()

    database = django.db.connection.vendor
    where = "" if checkout == ROOT else f", workers from {checkout}"
    print(
        f"judge run end to end ({database}, {args.workers} Celery worker(s){where}, fake endpoint latency "
        f"{args.latency * 1000:.0f} ms, concurrency {args.concurrency})"
    )
    print(
        f"  ordered judgments:   {accepted} accepted of {tasks} tasks ({skipped} pairs skipped), {requests} HTTP requests, status {run.status}"
    )
    print(
        f"  drivers:             {len(drivers)} ({', '.join(sorted(drivers))}); tasks per driver {sorted(per_driver.values(), reverse=True)}"
    )
    print(f"  measured:            {elapsed:.2f} s  ({tasks / elapsed:.0f} judgments/s)")
    print(
        f"  ideal:               {ideal:.2f} s  (tasks x latency / concurrency; {args.concurrency / args.latency:.0f} judgments/s)"
    )
    print(f"  ratio measured/ideal {elapsed / ideal:.2f}  (target <= 1.3 at concurrency 32)")
    print(
        "  workers ran with:    "
        + (
            "DEBUG=1, no bytecode cache (--debug: as before 2026-12-06)"
            if args.debug
            else "DEBUG off, bytecode cached (as deployed)"
        )
    )
    if times:
        span = times[-1] - times[0]
        print(
            f"  endpoint saw requests over {span:.2f} s ({len(times) / span:.0f} req/s; ideal {args.concurrency / args.latency:.0f} req/s);"
            f" launch-to-first-request {times[0] - launched_at:.2f} s (drivers started after {', '.join(f'{t:.2f}' for t in starts)} s)"
        )
    worker_cpu = sum(cpu_by_worker)
    print(
        f"  worker CPU:          {worker_cpu:.2f} s user+sys over {len(cpu_by_worker)} process(es) "
        f"({worker_cpu / max(1, tasks) * 1000:.2f} ms per ordered judgment; CPU time is steadier than wall time on a shared machine)"
    )
    print(
        f"  worker CPU, the run:  {run_cpu:.2f} s from launch to completion ({run_cpu / max(1, tasks) * 1000:.2f} ms per "
        f"ordered judgment; the rest, {worker_cpu - run_cpu:.2f} s, is start-up and shutdown)"
    )
    print(f"  load average:        {' / '.join(f'{x:.2f}' for x in os.getloadavg())} (1 / 5 / 15 min, at the end)")
    total = worker_cpu + endpoint_cpu
    if total:
        print(
            f"  endpoint CPU:        {endpoint_cpu:.2f} s ({endpoint_cpu / max(1, tasks) * 1000:.2f} ms per request), "
            f"{endpoint_cpu / total:.0%} of worker+endpoint CPU; the two share the machine's {os.cpu_count()} cores"
        )
    if spies:
        shares = _profile_summary([out for out, _ in spies if out.is_file()])
        print("  worker profile (py-spy --gil: samples of the thread holding the GIL, i.e. Python CPU):")
        for label, share in shares:
            print(f"    {label:<32} {share:6.1%}  ({share * run_cpu / max(1, tasks) * 1000:.2f} ms per judgment of the run)")
    return 0 if run.status == "completed" and accepted == tasks else 1


if __name__ == "__main__":
    raise SystemExit(main())
