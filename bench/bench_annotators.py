"""20 annotators at work under gunicorn + PostgreSQL: p50/p95 of the item page, draft save and submit.

Each simulated annotator does what a person does in a formal study, with short think times (this is a load
test): the list of their items (home), the item's start page, Start (POST), the item page, ``--drafts``
htmx autosaves (``HX-Request``, each with the page's current ``draft_version``, which the answer moves
on), Submit (POST, redirected to the next item's start page), and on to that next item, until
``--seconds`` have passed. Every request is timed alone (redirects are not followed) and checked for the
status a person would get; anything else counts as an error.

The peers, measured by the same server in the same run while the annotators work: ``/favicon.ico`` (the
whole middleware stack, a redirect, no database, no template) and the login page (a template, no
database), fetched by one extra client every 0.2 s. Each endpoint's p95 is printed with its ratio to the
login page's p95, so a run on a busy machine can be read against one on a quiet machine. Also printed:
the server's CPU time per annotator request (all gunicorn processes, from the kernel's accounting), which
is steadier than wall time on a shared machine. ``--baseline REF`` runs the same load against the code of
a git revision (``git archive``, into a temporary folder) on a copy of the same database in the same run,
and prints the ratios old/new: the before/after figures of issue 10.

    .venv/bin/python bench/bench_annotators.py [--annotators 20] [--seconds 60] [--workers 2] [--threads 4]
        [--drafts 3] [--think 0.3:1.2] [--warmup 8] [--baseline REF] [--rounds 1]

Server: gunicorn, ``--workers`` processes (default 2: one per core of a 2-core machine, since a request is
mostly Python) of ``--threads`` threads each (default 4: threads overlap the database round trips), the
gthread worker; each process has its own connection pool (``DB_POOL_MAX_SIZE``, default 8), so 2 x 4
threads never wait for a connection. PostgreSQL: the server of ``DATABASE_URL`` (a scratch database is
created there and dropped afterwards), else a private cluster (``tests/pgcluster.py``). Data: the release
sample (``$LIT2TEST_DATA``, else ``../shared/data/lit2test``), imported with ``import_lit2test``; one formal
study of every context with text, 5 pairs per context and 2 hidden naive controls among them (65 items), every item
seen by every annotator (``load01``..``load20``, signed in through server-side sessions).

Target (issue 10): p95 under 150 ms for the item page, draft save and submit with 20 annotators.
The load generator is asyncio + httpx (already a dependency) rather than locust: locust would add about
twenty packages (gevent, Flask, pyzmq, python-socketio, ...) to the pinned environment for one script, while
this one shares the database set-up and clean-up of bench_connections.py and runs under bench/run_all.py
like the others. Its own CPU time is printed (10-25% of one core at these rates), since it shares the
machine with the server.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import io
import json
import os
import random
import re
import resource
import secrets
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import httpx
import psycopg

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("LIT2TEST_DATA", ROOT.parent / "shared" / "data" / "lit2test"))
PY = sys.executable
sys.path.insert(0, str(ROOT))
from annotation.rubric import DIMENSION_KEYS as DIMENSIONS  # noqa: E402 - plain data, no settings needed
from bench.bench_connections import serving  # noqa: E402
from tests.pgcluster import Postgres, free_port, postgres_bin  # noqa: E402

SECRET_KEY = secrets.token_urlsafe(50)
TARGET_MS = 150.0
TARGETED = ("item page", "draft save", "submit")
ENDPOINTS = ("home", "start page", "start (POST)", "item page", "draft save", "submit")
PEERS = ("peer: /favicon.ico", "peer: login page")
RATIONALE = "A ties its gap to the papers' limitations and names a metric that separates the mechanisms."

CSRF_RE = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
VERSION_RE = re.compile(r'id="draft-version" name="draft_version" value="([^"]*)"')
NEXT_RE = re.compile(r'class="primary ann-next" href="([^"]+)"')


# --------------------------------------------------------------------------- database and server


@contextlib.contextmanager
def postgres_server() -> Iterator[str | None]:
    """The server URL (no database) of ``DATABASE_URL``, else of a private cluster; None without either."""
    given = os.environ.get("DATABASE_URL")
    if given:
        yield urlunsplit(urlsplit(given)._replace(path=""))
        return
    if postgres_bin() is None:
        yield None
        return
    cluster = Postgres(max_connections=100)
    try:
        yield cluster.server_url
    finally:
        cluster.destroy()


class Databases:
    """Scratch databases on one server, all dropped on exit (also when the benchmark fails half-way)."""

    def __init__(self, server_url: str) -> None:
        self.server_url = server_url
        self.names: list[str] = []

    def _admin(self) -> psycopg.Connection:
        return psycopg.connect(urlunsplit(urlsplit(self.server_url)._replace(path="/postgres")), autocommit=True)

    def create(self, name: str, template: str | None = None) -> str:
        with self._admin() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
        self.names.append(name)
        return urlunsplit(urlsplit(self.server_url)._replace(path=f"/{name}"))

    def drop_all(self) -> None:
        with self._admin() as conn:
            for name in reversed(self.names):
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        self.names.clear()


def server_env(url: str, var: Path) -> dict[str, str]:
    """The environment of the app's processes: production settings over plain HTTP on loopback."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DB_", "DATABASE_URL", "CACHE_URL", "CELERY_"))}
    return env | {
        "DATABASE_URL": url,
        "DEBUG": "0",
        "SECRET_KEY": SECRET_KEY,  # one for the setup and every server: the sessions are signed with it
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "SECURE_SSL_REDIRECT": "0",
        "SESSION_COOKIE_SECURE": "0",
        "CSRF_COOKIE_SECURE": "0",
        "STATICFILES_BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage",
        "LIT2TEST_VAR_DIR": str(var),
        "CACHE_URL": os.environ.get("CACHE_URL", "locmemcache://"),
        "LOG_LEVEL": "ERROR",
    }


SETUP_CODE = """
import json, sys
import django
django.setup()
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client
from annotation.services import eligible_contexts, study_create
from arena.models import Benchmark
from arena.permissions import ANNOTATORS_GROUP

n, seed = int(sys.argv[1]), int(sys.argv[2])
group = Group.objects.get_or_create(name=ANNOTATORS_GROUP)[0]
users = []
for i in range(1, n + 1):
    user = get_user_model().objects.create_user(username=f"load{i:02d}", password=None)  # no password hashing
    user.groups.add(group)
    users.append(user)
benchmark = Benchmark.objects.get(name="lit2test")
contexts = len(eligible_contexts(benchmark=benchmark)[0])
study = study_create(benchmark=benchmark, n_contexts=contexts, annotators=users, n_naive_controls=2,
                     pairs_per_context=5, seed=seed, name="Load test")
sessions = {}
for user in users:
    client = Client()
    client.force_login(user)
    sessions[user.username] = client.cookies["sessionid"].value
print(json.dumps({"study": study.pk, "items": study.items.count(), "sessions": sessions}))
"""


def prepare(url: str, env: dict[str, str], annotators: int, seed: int) -> dict:
    """Migrate, import the release sample, create the annotators, their study and their sessions."""
    subprocess.run([PY, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    subprocess.run([PY, "manage.py", "import_lit2test", str(DATA)], cwd=ROOT, env=env, check=True, capture_output=True)
    out = subprocess.run(
        [PY, "-c", SETUP_CODE, str(annotators), str(seed)],
        cwd=ROOT,
        env=env | {"DJANGO_SETTINGS_MODULE": "lit2test_web.settings"},
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def code_tree(ref: str, into: Path) -> Path:
    """The repository's files at ``ref`` (``git archive``), without touching the working tree or its index."""
    tar = subprocess.run(["git", "archive", "--format=tar", ref], cwd=ROOT, check=True, capture_output=True).stdout
    target = into / f"tree-{ref.replace('/', '_')}"
    target.mkdir()
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        archive.extractall(target, filter="data")
    return target


@contextlib.contextmanager
def gunicorn(tree: Path, env: dict[str, str], workers: int, threads: int, log: Path) -> Iterator[tuple[str, subprocess.Popen]]:
    """gunicorn serving the app of ``tree``; stopped (its whole process group) on exit."""
    port = free_port()
    command = [
        PY,
        "-m",
        "gunicorn",
        "lit2test_web.wsgi:application",
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        str(workers),
        "--threads",
        str(threads),
        "--worker-class",
        "gthread",
        "--timeout",
        "120",
        "--log-level",
        "warning",
    ]
    with serving(command, name="gunicorn", port=port, cwd=tree, env=env, log=log) as served:
        yield served


# --------------------------------------------------------------------------- the annotators


@dataclass
class Phase:
    name: str
    timings: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    examples: list[str] = field(default_factory=list)
    finished: int = 0  # annotators who ran out of items
    submitted: int = 0
    server_cpu: float = 0.0
    client_cpu: float = 0.0
    seconds: float = 0.0

    def record(
        self, endpoint: str, started: float, response: httpx.Response | None, expected: tuple[int, ...], note: str = ""
    ) -> bool:
        self.timings[endpoint].append((time.perf_counter() - started) * 1000)
        if response is not None and response.status_code in expected:
            return True
        self.errors[endpoint] += 1
        if len(self.examples) < 5:
            self.examples.append(f"{endpoint}: {note or (response.status_code if response is not None else 'no answer')}")
        return False

    @property
    def annotator_requests(self) -> int:
        return sum(len(self.timings[e]) for e in ENDPOINTS)


def draft_values(step: int, n_steps: int) -> dict[str, str]:
    """What an annotator has typed after ``step`` of ``n_steps`` autosaves: screening, then scores, then the choice."""
    values = {"screening": "coherent"}
    dims = DIMENSIONS[: max(1, round(len(DIMENSIONS) * step / max(1, n_steps)))]
    for d in dims:
        values[f"a_{d}"] = "3"
        values[f"b_{d}"] = "2"
    if step >= n_steps:
        values |= {"choice": "A", "confidence": "medium", "rationale": RATIONALE[: 20 + 10 * step]}
    return values


def complete_values() -> dict[str, str]:
    values = {"screening": "coherent", "choice": "A", "reason": "", "confidence": "medium", "rationale": RATIONALE}
    for d in DIMENSIONS:
        values[f"a_{d}"] = "3"
        values[f"b_{d}"] = "2"
    return values


async def annotator(
    base: str, session: str, phase: Phase, deadline: float, drafts: int, think: tuple[float, float], rng: random.Random
) -> None:
    """One person working through their items until the deadline (or their last item)."""

    async def pause() -> None:
        await asyncio.sleep(rng.uniform(*think))

    async with httpx.AsyncClient(base_url=base, cookies={"sessionid": session}, timeout=60, follow_redirects=False) as http:

        async def call(
            endpoint: str, method: str, url: str, expected: tuple[int, ...], **kwargs: object
        ) -> httpx.Response | None:
            started = time.perf_counter()
            try:
                response = await http.request(method, url, **kwargs)
            except httpx.HTTPError as exc:
                phase.record(endpoint, started, None, expected, type(exc).__name__)
                return None
            return response if phase.record(endpoint, started, response, expected) else None

        await asyncio.sleep(rng.uniform(0, think[1]))  # people do not all arrive in the same millisecond
        next_url: str | None = None
        while time.monotonic() < deadline:
            if next_url is None:
                home = await call("home", "GET", "/annotate/", (200,))
                found = NEXT_RE.search(home.text) if home is not None else None
                if found is None:
                    phase.finished += home is not None
                    return
                next_url = found.group(1)
                await pause()
            start_url = next_url if next_url.endswith("/start") else next_url.rstrip("/") + "/start"
            item_url = start_url.removesuffix("start")
            next_url = None
            page = await call("start page", "GET", start_url, (200, 302))
            if page is None:
                continue
            if page.status_code == 200:  # not started yet: press Start
                await pause()
                token = CSRF_RE.search(page.text)
                started = await call(
                    "start (POST)", "POST", start_url, (302,), data={"csrfmiddlewaretoken": token.group(1) if token else ""}
                )
                if started is None:
                    continue
            item = await call("item page", "GET", item_url, (200,))
            if item is None:
                continue
            token, version = CSRF_RE.search(item.text), VERSION_RE.search(item.text)
            if token is None or version is None:
                phase.record("item page", time.perf_counter(), None, (200,), "no CSRF token or draft_version in the page")
                continue
            csrf, draft_version = token.group(1), version.group(1)
            headers = {"HX-Request": "true", "X-CSRFToken": csrf, "HX-Current-URL": base + item_url}
            for step in range(1, drafts + 1):
                await pause()
                saved = await call(
                    "draft save",
                    "POST",
                    item_url + "draft",
                    (200,),
                    data=draft_values(step, drafts) | {"draft_version": draft_version},
                    headers=headers,
                )
                moved = VERSION_RE.search(saved.text) if saved is not None else None
                if moved is not None:
                    draft_version = moved.group(1)
            await pause()
            done = await call(
                "submit",
                "POST",
                item_url + "submit",
                (302,),
                data=complete_values() | {"draft_version": draft_version, "csrfmiddlewaretoken": csrf},
            )
            if done is None:
                continue
            location = done.headers.get("location", "")
            if location.endswith("/start"):
                phase.submitted += 1
                next_url = location
            elif location.rstrip("/").endswith("/annotate"):
                phase.submitted += 1  # the last item: home tells what is left
            else:
                phase.record("submit", time.perf_counter(), None, (302,), f"submit went to {location!r}")
            await pause()


async def peer(base: str, phase: Phase, deadline: float) -> None:
    """The same server's cheapest answers, sampled every 0.2 s while the annotators work."""
    async with httpx.AsyncClient(base_url=base, timeout=60, follow_redirects=False) as http:
        i = 0
        while time.monotonic() < deadline:
            endpoint, path, expected = (PEERS[0], "/favicon.ico", 302) if i % 2 == 0 else (PEERS[1], "/accounts/login/", 200)
            started = time.perf_counter()
            try:
                response = await http.get(path)
            except httpx.HTTPError:
                response = None
            phase.record(endpoint, started, response, (expected,))
            i += 1
            await asyncio.sleep(0.2)


async def load(
    base: str, sessions: dict[str, str], phase: Phase, seconds: float, drafts: int, think: tuple[float, float], seed: int
) -> None:
    deadline = time.monotonic() + seconds
    tasks = [
        annotator(base, s, phase, deadline, drafts, think, random.Random(f"{seed}:{name}"))
        for name, s in sorted(sessions.items())
    ]
    await asyncio.gather(peer(base, phase, deadline), *tasks)


def run_phase(name: str, tree: Path, env: dict[str, str], sessions: dict[str, str], args: argparse.Namespace, log: Path) -> Phase:
    phase = Phase(name)
    with gunicorn(tree, env, args.workers, args.threads, log) as (base, _proc):
        # Every worker warm (imports, templates, connection pools) before the clock: the same load for
        # --warmup seconds, not recorded. The measured annotators then carry on where these stopped.
        asyncio.run(load(base, sessions, Phase("warm-up"), args.warmup, args.drafts, args.think, args.seed + 1))
        children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        self_before = resource.getrusage(resource.RUSAGE_SELF)
        started = time.monotonic()
        asyncio.run(load(base, sessions, phase, args.seconds, args.drafts, args.think, args.seed))
        phase.seconds = time.monotonic() - started
        self_after = resource.getrusage(resource.RUSAGE_SELF)
    # gunicorn (and its reaped workers) is accounted to this process's children once it has exited.
    children_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    phase.server_cpu = (children_after.ru_utime + children_after.ru_stime) - (children_before.ru_utime + children_before.ru_stime)
    phase.client_cpu = (self_after.ru_utime + self_after.ru_stime) - (self_before.ru_utime + self_before.ru_stime)
    return phase


# --------------------------------------------------------------------------- report


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (no interpolation: a p95 is a latency someone waited)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(-(-q * len(ordered) // 100)) - 1))]


def report(phase: Phase) -> None:
    peer_p95 = percentile(phase.timings[PEERS[1]], 95)
    print(
        f"\n{phase.name}: {phase.seconds:.0f} s, {phase.annotator_requests} annotator requests "
        f"({phase.annotator_requests / phase.seconds:.1f}/s), {phase.submitted} items submitted"
    )
    print(f"  {'endpoint':<20} {'n':>6} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'errors':>6} {'p95/login':>9}")
    for endpoint in (*ENDPOINTS, *PEERS):
        t = phase.timings[endpoint]
        p95 = percentile(t, 95)
        print(
            f"  {endpoint:<20} {len(t):>6} {percentile(t, 50):>8.1f} {p95:>8.1f} {max(t, default=float('nan')):>8.1f} "
            f"{phase.errors[endpoint]:>6} {p95 / peer_p95:>8.1f}x"
        )
    cpu_ms = 1000 * phase.server_cpu / max(1, phase.annotator_requests + sum(len(phase.timings[p]) for p in PEERS))
    print(
        f"  server CPU {phase.server_cpu:.1f} s = {cpu_ms:.1f} ms per request; load generator CPU {phase.client_cpu:.1f} s "
        f"({100 * phase.client_cpu / phase.seconds:.0f}% of a core)"
    )
    if phase.finished:
        print(f"  {phase.finished} annotators ran out of items before the end")
    for example in phase.examples:
        print(f"  error: {example}")
    met = all(percentile(phase.timings[e], 95) < TARGET_MS for e in TARGETED)
    figures = " / ".join(f"{percentile(phase.timings[e], 95):.0f}" for e in TARGETED)
    print(f"  target p95 < {TARGET_MS:.0f} ms for item page / draft save / submit: {figures} ms -> {'met' if met else 'NOT met'}")


def pooled(phases: list[Phase], name: str) -> Phase:
    """The phases of one code tree taken together (every request of every round)."""
    out = Phase(name)
    for p in phases:
        for endpoint, times in p.timings.items():
            out.timings[endpoint] += times
        for endpoint, n in p.errors.items():
            out.errors[endpoint] += n
        out.server_cpu += p.server_cpu
        out.client_cpu += p.client_cpu
        out.seconds += p.seconds
        out.submitted += p.submitted
    return out


def compare(old: Phase, new: Phase, rounds: int = 1) -> None:
    pooled_note = f", all {rounds} rounds pooled" if rounds > 1 else ""
    print(f"\nbefore ({old.name}) / after ({new.name}), same run, same database copy and server settings{pooled_note}:")
    print(
        f"  {'endpoint':<20} {'p50 before':>10} {'after':>7} {'p95 before':>10} {'after':>7} {'ratio':>6} {'p95/login before':>16} {'after':>6}"
    )
    old_peer, new_peer = percentile(old.timings[PEERS[1]], 95), percentile(new.timings[PEERS[1]], 95)
    for endpoint in (*ENDPOINTS, *PEERS):
        a50, b50 = percentile(old.timings[endpoint], 50), percentile(new.timings[endpoint], 50)
        a, b = percentile(old.timings[endpoint], 95), percentile(new.timings[endpoint], 95)
        print(
            f"  {endpoint:<20} {a50:>10.1f} {b50:>7.1f} {a:>10.1f} {b:>7.1f} {a / b:>5.1f}x {a / old_peer:>15.1f}x {b / new_peer:>5.1f}x"
        )
    per = [1000 * p.server_cpu / max(1, p.annotator_requests + sum(len(p.timings[q]) for q in PEERS)) for p in (old, new)]
    print(f"  server CPU per request: {per[0]:.1f} ms before, {per[1]:.1f} ms after ({per[0] / per[1]:.1f}x)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--annotators", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--warmup", type=float, default=8.0, help="seconds of the same load before each measured phase")
    parser.add_argument("--drafts", type=int, default=3, help="autosaves per item before Submit")
    parser.add_argument("--think", default="0.3:1.2", help="think time between an annotator's requests, MIN:MAX seconds")
    parser.add_argument(
        "--baseline", default=None, metavar="REF", help="also run the code of this git revision, before the current tree"
    )
    parser.add_argument("--rounds", type=int, default=1, help="with --baseline: alternate baseline and current this many times")
    parser.add_argument("--seed", type=int, default=20261201)
    args, _ = parser.parse_known_args()  # run_all.py forwards every script's arguments to all of them
    low, _sep, high = args.think.partition(":")
    args.think = (float(low), float(high or low))
    if not (DATA / "corrected_folded_pairs.jsonl").is_file():
        print(f"release sample not found at {DATA}; set LIT2TEST_DATA", file=sys.stderr)
        return 2
    if importlib.util.find_spec("gunicorn") is None:
        print("gunicorn is not installed: pip install -r requirements-dev.txt -c constraints.txt", file=sys.stderr)
        return 2

    work = Path(tempfile.mkdtemp(prefix="lit2test-bench-ann-"))
    phases: list[Phase] = []
    try:
        with postgres_server() as server_url:
            if server_url is None:
                print("SKIPPED: needs PostgreSQL (no initdb found and DATABASE_URL is not set)")
                return 0
            dbs = Databases(server_url)
            try:
                master = f"lit2test_bench_ann_{os.getpid()}"
                url = dbs.create(master)
                setup = prepare(url, server_env(url, work / "var"), args.annotators, args.seed)
                print(
                    f"{args.annotators} annotators, study {setup['study']} of {setup['items']} items each; gunicorn "
                    f"{args.workers} workers x {args.threads} threads (gthread); think {args.think[0]:g}-{args.think[1]:g} s, "
                    f"{args.drafts} autosaves per item, {args.seconds:g} s per phase",
                    flush=True,
                )
                trees = [("current tree", ROOT)]
                if args.baseline:
                    trees.insert(0, (f"baseline {args.baseline}", code_tree(args.baseline, work)))
                for r in range(args.rounds if args.baseline else 1):
                    for name, tree in trees:
                        copy = dbs.create(f"{master}_{len(phases)}", template=master)  # every phase starts from the same state
                        env = server_env(copy, work / f"var{len(phases)}")
                        phase = run_phase(
                            name + (f" (round {r + 1})" if args.rounds > 1 else ""),
                            tree,
                            env,
                            setup["sessions"],
                            args,
                            work / f"gunicorn-{len(phases)}.log",
                        )
                        phases.append(phase)
                        report(phase)
            finally:
                dbs.drop_all()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.baseline:
        if args.rounds > 1:
            for old, new in zip(phases[0::2], phases[1::2], strict=True):
                compare(old, new)
        compare(pooled(phases[0::2], f"baseline {args.baseline}"), pooled(phases[1::2], "current tree"), rounds=args.rounds)
    return 1 if any(sum(p.errors.values()) for p in phases) else 0


if __name__ == "__main__":
    raise SystemExit(main())
