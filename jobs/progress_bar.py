from __future__ import annotations

import sys
import time
from collections.abc import Callable

from django.db import close_old_connections

from jobs.selectors import Progress

ENDED = ("completed", "failed", "cancelled")


def progress_counts(p: Progress) -> str:
    """'6/8 · 5 done, 1 failed, 2 remaining · running · ETA 4s': each count before its name, so that
    "done 8 failed 0" can no longer be read as "8 failed"."""
    counts = [f"{p.done} done", f"{p.failed} failed", f"{p.remaining} remaining"] + (
        [f"{p.skipped} skipped"] if p.skipped else []
    )
    eta = f" · ETA {p.eta_seconds:.0f}s" if p.eta_seconds and p.status == "running" else ""  # none while paused
    return f"{p.done + p.failed}/{p.total} · {', '.join(counts)} · {p.status}{eta}"


def wait_with_bar(read: Callable[[], Progress], write: Callable[[str], None], *, poll: float = 0.5) -> Progress:
    """Redraw a one-line progress bar until the run ends; returns the final progress."""
    tty = sys.stdout.isatty()
    last = last_reason = ""
    while True:
        close_old_connections()
        p = read()
        width = 30
        filled = int(width * p.fraction)
        line = f"[{'#' * filled}{'.' * (width - filled)}] {progress_counts(p)}"
        if p.status_reason and p.status not in ENDED and p.status_reason != last_reason:
            write(("\n" if tty else "") + f"warning: {p.status_reason}")
        last_reason = p.status_reason
        if line != last:
            write(("\r" + line) if tty else line)
            last = line
        if p.status in ENDED:
            if tty:
                write("\n")
            return p
        time.sleep(poll)
