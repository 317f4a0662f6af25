"""The seeded A/B orientation of a two-sided task (a canonical pair, a diagnostic control against its source): which
side is shown as A in the original order, drawn from the benchmark's orientation seed and the task's own key, so
that no side is always first and a re-import orients every pair as before."""

from __future__ import annotations

import hashlib


def orientation_flipped(seed: int, pair_key: str) -> bool:
    """Whether the seeded orientation shows the alphabetically second side as A."""
    return hashlib.sha256(f"{seed}:{pair_key}".encode()).digest()[0] & 1 == 1
