"""The whole `manage.py leaderboard lit2test --json` command, cold (no cached result): target < 2 s.

Peer measured in the same run: `manage.py check` (the same interpreter start and Django set-up, no work),
so the ratio shows what the statistics and the queries add on top of starting Django.

    .venv/bin/python bench/bench_leaderboard_command.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("LIT2TEST_DATA", ROOT.parent / "shared" / "data" / "lit2test"))


def timed(args: list[str], env: dict[str, str]) -> tuple[float, str]:
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    return time.perf_counter() - started, out.stdout


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="lit2test-bench-lb-"))
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CACHE_URL")}
    env |= {"LIT2TEST_VAR_DIR": str(work), "DEBUG": "1", "CACHE_URL": "dummycache://"}  # dummy cache: every run is cold
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    subprocess.run(
        [sys.executable, "manage.py", "import_lit2test", str(DATA)], cwd=ROOT, env=env, check=True, capture_output=True
    )
    command, baseline = [], []
    for _ in range(args.repeat):
        seconds, out = timed(["leaderboard", "lit2test", "--json"], env)
        command.append(seconds)
        baseline.append(timed(["check"], env)[0])
    doc = json.loads(out)
    cmd, base = statistics.median(command), statistics.median(baseline)
    print("leaderboard --json on the release sample (SQLite, no cache, 10,000-replicate case and cluster bootstraps)")
    print(f"  leaderboard --json:  {cmd:.2f} s (median of {args.repeat}; target < 2 s)")
    print(f"  manage.py check:     {base:.2f} s (Django start-up, the peer)")
    print(f"  ratio command/peer:  {cmd / base:.2f}; statistics and queries add {cmd - base:.2f} s")
    print(f"  models {doc['models']}, modal fraction {doc['bootstrap']['modal_fraction']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
