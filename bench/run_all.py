"""Run every benchmark script of this folder (bench_*.py) in turn, forwarding command-line arguments.

.venv/bin/python bench/run_all.py [args passed to each script]
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    status = 0
    for script in sorted(HERE.glob("bench_*.py")):
        print(f"== {script.name}", flush=True)
        status |= subprocess.call([sys.executable, str(script), *sys.argv[1:]], cwd=HERE.parent)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
