from __future__ import annotations

import sys
import time
from collections.abc import Callable

from django.db import close_old_connections

from jobs.selectors import Progress

ENDED = ("completed", "failed", "cancelled")


def wait_with_bar(read: Callable[[], Progress], write: Callable[[str], None], *, poll: float = 0.5) -> Progress:
    """Redraw a one-line progress bar until the run ends; returns the final progress."""
    tty = sys.stdout.isatty()
    last = last_reason = ""
    while True:
        close_old_connections()
        p = read()
        width = 30
        filled = int(width * p.fraction)
        eta = f" ETA {p.eta_seconds:.0f}s" if p.eta_seconds else ""
        line = (
            f"[{'#' * filled}{'.' * (width - filled)}] {p.done + p.failed}/{p.total} "
            f"done {p.done} failed {p.failed} remaining {p.remaining} · {p.status}{eta}"
        )
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
