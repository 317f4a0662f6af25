"""Condorcet head-to-head relations and complete-separation detection on a win matrix.

Both work on the stable folded win matrix in the leaderboard (``W[i, j]`` = stable cases won by i
against j), but accept any win matrix.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components


def as_number(x: float) -> int | float:
    """A plain Python int when ``x`` is integral (counts), else a float (fractional wins)."""
    xf = float(x)
    return int(xf) if xf.is_integer() else xf


def _positions(models: Sequence[str], order: Sequence[str] | None) -> list[int]:
    rank = {m: r for r, m in enumerate(order if order is not None else models)}
    return [rank[m] for m in models]


def beat_matrix(w: np.ndarray) -> np.ndarray:
    """``B[i, j]`` is True when i beats j head to head: ``w[i, j] > w[j, i]`` (equal counts: neither beats)."""
    w = np.asarray(w, dtype=np.float64)
    return w > w.T


def _simple_cycles(adj: np.ndarray, max_cycles: int, max_steps: int) -> tuple[list[list[int]], bool]:
    """Simple directed cycles of a boolean adjacency matrix, each reported once, starting at its smallest node.

    Only nodes of one strongly connected component can share a cycle, so the search runs inside each
    non-trivial component. Bounded by ``max_cycles`` results and ``max_steps`` DFS steps (the number of
    cycles can grow exponentially with the number of models); returns (cycles, truncated).
    """
    k = adj.shape[0]
    n_comp, labels = connected_components(csr_matrix(adj), directed=True, connection="strong")
    cycles: list[list[int]] = []
    steps = 0
    for comp in range(n_comp):
        nodes = np.flatnonzero(labels == comp)
        if len(nodes) < 2:
            continue
        members = set(nodes.tolist())
        for start in sorted(members):
            # Cycles through `start` using only nodes > start (so each cycle is found from its smallest node).
            stack: list[tuple[int, list[int]]] = [(start, [start])]
            while stack:
                steps += 1
                if steps > max_steps or len(cycles) >= max_cycles:
                    return cycles, True
                node, path = stack.pop()
                for nxt in range(k - 1, -1, -1):
                    if not adj[node, nxt] or nxt not in members:
                        continue
                    if nxt == start and len(path) >= 2:
                        cycles.append(list(path))
                    elif nxt > start and nxt not in path:
                        stack.append((nxt, [*path, nxt]))
    return cycles, False


def condorcet(
    w: np.ndarray,
    models: Sequence[str],
    *,
    order: Sequence[str] | None = None,
    max_cycles: int = 100,
    max_steps: int = 200_000,
) -> dict[str, Any]:
    """Condorcet analysis of the head-to-head relation "i beats j when w[i, j] > w[j, i]".

    Preconditions:
        ``w`` square (K, K) non-negative; ``models`` the K names; ``order`` optional names order for listing.
    Returns:
        ``{"beat_counts": {model: n}, "winner": model | None, "transitive": bool, "acyclic": bool,
        "cycles": [[model, ...], ...], "cycles_truncated": bool, "undecided": [[a, b], ...]}``.
        ``transitive`` is the strict property (a beats b and b beats c ⇒ a beats c); ``acyclic`` means no
        cycle; a cycle is listed as its models in beating order, the last beating the first.
        ``undecided`` lists compared pairs with equal counts (neither beats).
    """
    w = np.asarray(w, dtype=np.float64)
    k = len(models)
    b = beat_matrix(w)
    pos = _positions(models, order)
    idx_order = sorted(range(k), key=lambda i: pos[i])
    counts = b.sum(axis=1)
    bi = b.astype(np.int64)
    two_step = (bi @ bi) > 0
    transitive = not bool((two_step & ~b).any())
    cycles, truncated = _simple_cycles(b, max_cycles, max_steps)
    winner = [i for i in range(k) if counts[i] == k - 1]
    compared = (w + w.T) > 0
    undecided = [
        [models[i], models[j]]
        for x, i in enumerate(idx_order)
        for j in idx_order[x + 1 :]
        if compared[i, j] and w[i, j] == w[j, i]
    ]
    return {
        "beat_counts": {models[i]: int(counts[i]) for i in idx_order},
        "winner": models[winner[0]] if winner and k > 1 else None,
        "transitive": transitive,
        "acyclic": not cycles,
        "cycles": [[models[i] for i in cyc] for cyc in cycles],
        "cycles_truncated": truncated,
        "undecided": undecided,
    }


def complete_separation(w: np.ndarray, models: Sequence[str], *, order: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Model pairs with complete separation: compared, and one side has zero wins against the other.

    With such a pair (or, more generally, a win graph that is not strongly connected, which always shows
    up as such a pair unless the graph is disconnected) the BT maximum-likelihood strengths diverge; per
    the protocol the ordinal result stands and strengths are diagnostic.

    Returns:
        ``[{"a": winner, "b": loser, "a_wins": n, "b_wins": 0}]`` in ``order`` (default ``models``).
    """
    w = np.asarray(w, dtype=np.float64)
    k = len(models)
    pos = _positions(models, order)
    out = []
    for i in range(k):
        for j in range(k):
            if i != j and w[i, j] > 0 and w[j, i] == 0:
                out.append((pos[i], pos[j], {"a": models[i], "b": models[j], "a_wins": as_number(w[i, j]), "b_wins": 0}))
    out.sort(key=lambda t: (min(t[0], t[1]), max(t[0], t[1])))
    return [d for _, _, d in out]
