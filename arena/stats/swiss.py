"""Swiss selection of one slot's champion among proposers' hypotheses (PROTOCOL.md §3). Pure Python + numpy.

A tournament over n candidates runs ``max(1, n − 1)`` rounds. Each round (:func:`swiss_pairings`):

1. **Ranking.** Candidates are ranked by points (descending); equal points are ordered by a seeded lot drawn
   afresh each round (``numpy.random.default_rng([seed, round_no])`` permutes the candidates sorted by ``str``).
2. **Bye** (odd n only, exactly one per round). Bye options are ordered by how many byes the candidate already
   had (fewest first), then from the lowest-ranked up.
3. **Pairing.** Among all pairings of the remaining candidates (over every bye option), the chosen one has, in
   this order of priority: (a) the fewest rematches (pairs in ``history``); (b) a bye to a candidate with the
   fewest previous byes; (c) the earliest bye option; (d) the first pairing in rank order — the highest-ranked
   unpaired candidate meets the highest-ranked candidate still available to it (1 v 2, 3 v 4, … when nothing
   is forbidden), which is what pairs candidates with similar points.

When a rematch is unavoidable (precisely). A round contains a rematch only if, for every possible bye candidate
(odd n), the graph of not-yet-played pairs among the other candidates has no perfect matching; the round then has
the fewest rematches possible (exact, per round, given the history). A bye goes to a candidate who already had
one only if every candidate with fewer byes would force more rematches. Pairing by points alone could paint a
later round into a corner (a "premature" set of rounds: no rematch-free round left although a round robin
exists), so a round looks ahead: among its rematch-free pairings with a fewest-byes bye, it takes the first in
preference order after which the remaining rounds (``rounds_left``) can still all be paired with no rematch and
no second bye, searched exactly within :data:`LOOKAHEAD_NODES` nodes per round; if none is proven completable
(or the budget runs out) it keeps the first preferred pairing. On the random tournaments of the tests
(n = 1…20) no rematch and no second bye occurs.

Search: iterative deepening on the number of allowed rematches, depth-first in rank order, memoising failed
(remaining set, budget) states, so the first pairing found is the preferred one; fine for the n ≤ 20 of the app.

Points and the champion (:func:`swiss_standings`). A match's ``votes`` (judged in both orders by non-proposer
judges in the app) give points = votes / 2; a bye scores ``bye_points`` (default 0: the bye candidate simply
plays one match fewer). Standings order candidates by points, and break ties within a group of equal points by
(1) head-to-head: points earned in matches between members of the group; (2) Buchholz: the sum of the final
points of every opponent met (once per match); (3) a seeded lot (``default_rng([seed, 0])`` permutation of the
candidates sorted by ``str``). The champion is first in the standings; the rule that separated it is recorded.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

Pair = tuple[Hashable, Hashable]
#: Nodes (candidate pairings of later rounds) the look-ahead may explore per round; bounds time at n ≈ 20.
LOOKAHEAD_NODES = 20_000


def _lot(candidates: Sequence[Hashable], key: Sequence[int]) -> dict[Hashable, int]:
    """A seeded random position for every candidate (independent of the input order)."""
    base = sorted(candidates, key=str)
    perm = np.random.default_rng(list(key)).permutation(len(base))
    return {base[int(i)]: pos for pos, i in enumerate(perm)}


def _check_candidates(candidates: Sequence[Hashable], where: str) -> list[Hashable]:
    cands = list(candidates)
    if len(set(cands)) != len(cands):
        dup = sorted({str(c) for c in cands if cands.count(c) > 1})
        raise ValueError(f"{where}: candidates must be distinct; repeated: {dup}.")
    if len({str(c) for c in cands}) != len(cands):
        raise ValueError(f"{where}: candidates must have distinct str() (the seeded lot sorts by it).")
    return cands


def _pairings(order: list[Hashable], played: set[frozenset], budget: int) -> Iterator[list[Pair]]:
    """Pairings of ``order`` with at most ``budget`` rematches, in preference order (see the module doc).

    Depth-first: the first remaining candidate (highest-ranked) meets the first remaining candidate after it
    that the budget allows. States (remaining set, budget) that yielded nothing are memoised, so an impossible
    pairing is proven in bounded time.
    """
    n = len(order)
    rematch = [[frozenset((order[i], order[j])) in played for j in range(n)] for i in range(n)]
    failed: set[tuple[int, int]] = set()

    def search(mask: int, left: int) -> Iterator[list[tuple[int, int]]]:
        if mask == 0:
            yield []
            return
        if (mask, left) in failed:
            return
        found = False
        i = (mask & -mask).bit_length() - 1
        rest = mask & ~(1 << i)
        j_bits = rest
        while j_bits:
            j = (j_bits & -j_bits).bit_length() - 1
            j_bits &= j_bits - 1
            cost = 1 if rematch[i][j] else 0
            if cost <= left:
                for sub in search(rest & ~(1 << j), left - cost):
                    found = True
                    yield [(i, j), *sub]
        if not found:
            failed.add((mask, left))

    for found in search((1 << n) - 1, budget):
        yield [(order[i], order[j]) for i, j in found]


class _Budget:
    """Nodes left for the look-ahead search; exhausted means "unknown", never "impossible"."""

    def __init__(self, nodes: int) -> None:
        self.nodes = nodes

    def spend(self) -> bool:
        self.nodes -= 1
        return self.nodes >= 0


def _completable(
    cands: list[Hashable], played: set[frozenset], had_bye: set[Hashable], rounds: int, budget: _Budget
) -> bool | None:
    """Can ``rounds`` more rounds be paired with no rematch and no second bye? None if the budget ran out."""
    if rounds == 0:
        return True
    odd = len(cands) % 2 == 1
    options = [c for c in cands if c not in had_bye] if odd else [None]
    unknown = False
    for bye in options:
        rest = [c for c in cands if c != bye]
        for pairs in _pairings(rest, played, 0):
            if not budget.spend():
                return None
            new_played = played | {frozenset(p) for p in pairs}
            sub = _completable(cands, new_played, had_bye | ({bye} if odd else set()), rounds - 1, budget)
            if sub:
                return True
            unknown = unknown or sub is None
    return None if unknown else False


def swiss_pairings(
    candidates: Sequence[Hashable],
    points: Mapping[Hashable, float],
    history: Iterable[frozenset],
    *,
    round_no: int,
    seed: int,
    byes: Iterable[Hashable] = (),
    rounds_left: int = 0,
) -> tuple[list[Pair], Hashable | None]:
    """One Swiss round: ``(pairs, bye)``, each pair ordered (higher-ranked, lower-ranked); bye None for even n.

    ``points``: current points (missing = 0). ``history``: the pairs already played, as frozensets. ``byes``:
    the candidates that already had a bye, once per bye (the app derives it from earlier rounds).
    ``round_no`` (≥ 1) and ``seed`` (≥ 0) seed the lot, so equal inputs give equal pairings. ``rounds_left``:
    rounds still to play after this one (``max(1, n − 1) − round_no`` in a full tournament), for the look-ahead.
    """
    cands = _check_candidates(candidates, "swiss_pairings")
    if round_no < 1 or seed < 0:
        raise ValueError(f"swiss_pairings: round_no must be ≥ 1 and seed ≥ 0, got round_no={round_no}, seed={seed}.")
    if not cands:
        return [], None
    played = {frozenset(p) for p in history}
    lot = _lot(cands, [seed, round_no])
    order = sorted(cands, key=lambda c: (-float(points.get(c, 0.0)), lot[c]))
    had = Counter(byes)
    if len(order) % 2 == 0:
        options: list[int | None] = [None]
    else:
        options = sorted(range(len(order)), key=lambda i: (had[order[i]], -i))
    fewest = min((had[order[i]] for i in options if i is not None), default=0)
    look = _Budget(LOOKAHEAD_NODES)
    for budget in range(len(order) // 2 + 1):
        first: tuple[list[Pair], Hashable | None] | None = None
        for i in options:
            rest = order if i is None else order[:i] + order[i + 1 :]
            bye = None if i is None else order[i]
            for pairs in _pairings(rest, played, budget):
                if first is None:
                    first = (pairs, bye)
                # Look ahead only while a rematch-free round with a first-time-fewest bye is on the table.
                if budget > 0 or rounds_left == 0 or (bye is not None and had[bye] > fewest) or look.nodes <= 0:
                    break
                look.spend()
                after = played | {frozenset(p) for p in pairs}
                had_bye = set(had) | ({bye} if bye is not None else set())
                if _completable(cands, after, had_bye, rounds_left, look) is not False:
                    return pairs, bye
            if first is not None and (budget > 0 or rounds_left == 0 or look.nodes <= 0):
                return first
        if first is not None:
            return first
    raise AssertionError("unreachable: a pairing with n // 2 rematches always exists")


def swiss_standings(
    candidates: Sequence[Hashable],
    results: Iterable[tuple[Hashable, Hashable, float, float]],
    *,
    seed: int,
    byes: Iterable[Hashable] = (),
    bye_points: float = 0.0,
) -> dict[str, Any]:
    """Standings and champion from recorded results ``(a, b, votes_a, votes_b)`` and byes (module doc).

    Returns ``standings`` (rank order: candidate, rank, points, matches, byes, head_to_head, buchholz, lot),
    ``champion`` and ``tie_break`` (the group tied on points with the champion and the rule that decided).
    """
    cands = _check_candidates(candidates, "swiss_standings")
    pts = {c: 0.0 for c in cands}
    opponents: dict[Hashable, list[Hashable]] = {c: [] for c in cands}
    earned: list[tuple[Hashable, Hashable, float]] = []  # (candidate, opponent, points earned in that match)
    n_byes: Counter = Counter()
    for a, b, va, vb in results:
        if a not in pts or b not in pts:
            raise ValueError(f"swiss_standings: result ({a!r}, {b!r}) names a candidate not in {cands}.")
        pts[a] += va / 2.0
        pts[b] += vb / 2.0
        opponents[a].append(b)
        opponents[b].append(a)
        earned += [(a, b, va / 2.0), (b, a, vb / 2.0)]
    for c in byes:
        pts[c] += bye_points
        n_byes[c] += 1
    lot = _lot(cands, [seed, 0])
    buchholz = {c: sum(pts[o] for o in opponents[c]) for c in cands}
    groups: dict[float, list[Hashable]] = {}
    for c in cands:
        groups.setdefault(pts[c], []).append(c)
    h2h: dict[Hashable, float] = {}
    for members in groups.values():
        inside = set(members)
        for c in members:
            h2h[c] = sum(p for x, o, p in earned if x == c and o in inside)
    order = sorted(cands, key=lambda c: (-pts[c], -h2h[c], -buchholz[c], lot[c]))
    standings = [
        {
            "candidate": c,
            "rank": r,
            "points": pts[c],
            "matches": len(opponents[c]),
            "byes": n_byes[c],
            "head_to_head": h2h[c],
            "buchholz": buchholz[c],
            "lot": lot[c],
        }
        for r, c in enumerate(order, start=1)
    ]
    champion = order[0] if order else None
    tied = groups.get(pts[champion], []) if order else []
    decided_by = "points"
    if len(tied) > 1:
        best = [c for c in tied if h2h[c] == h2h[champion]]
        decided_by = "head_to_head"
        if len(best) > 1:
            best = [c for c in best if buchholz[c] == buchholz[champion]]
            decided_by = "buchholz" if len(best) == 1 else "lot"
    return {
        "standings": standings,
        "champion": champion,
        "tie_break": {"tied_on_points": sorted(tied, key=lambda c: order.index(c)), "decided_by": decided_by},
    }


def swiss_tournament(
    candidates: Sequence[Hashable],
    judge_match: Callable[[Hashable, Hashable], tuple[float, float]],
    *,
    seed: int,
    bye_points: float = 0.0,
) -> dict[str, Any]:
    """Run a whole Swiss tournament: ``max(1, n − 1)`` rounds of :func:`swiss_pairings`, then the standings.

    ``judge_match(a, b) -> (votes_a, votes_b)`` judges one match (in the app: both orders, non-proposer judges);
    points = votes / 2. Returns ``rounds`` (round, pairs, bye, results, rematches), ``standings``, ``champion``,
    ``tie_break``, ``rounds_played`` and the rule parameters. The app runs the same steps round by round.
    """
    cands = _check_candidates(candidates, "swiss_tournament")
    if not cands:
        raise ValueError("swiss_tournament: no candidates; a slot needs at least one hypothesis.")
    points: dict[Hashable, float] = {c: 0.0 for c in cands}
    history: set[frozenset] = set()
    byes: list[Hashable] = []
    results: list[tuple[Hashable, Hashable, float, float]] = []
    rounds = []
    for round_no in range(1, max(1, len(cands) - 1) + 1):
        n_rounds = max(1, len(cands) - 1)
        pairs, bye = swiss_pairings(
            cands, points, history, round_no=round_no, seed=seed, byes=byes, rounds_left=n_rounds - round_no
        )
        rematches = sum(frozenset(p) in history for p in pairs)
        round_results = []
        for a, b in pairs:
            va, vb = judge_match(a, b)
            points[a] += va / 2.0
            points[b] += vb / 2.0
            history.add(frozenset((a, b)))
            results.append((a, b, va, vb))
            round_results.append({"a": a, "b": b, "votes_a": va, "votes_b": vb, "points_a": va / 2.0, "points_b": vb / 2.0})
        if bye is not None:
            byes.append(bye)
            points[bye] += bye_points
        rounds.append({"round": round_no, "pairs": pairs, "bye": bye, "results": round_results, "rematches": rematches})
    table = swiss_standings(cands, results, seed=seed, byes=byes, bye_points=bye_points)
    return {
        "rounds": rounds,
        "rounds_played": len(rounds),
        "seed": seed,
        "bye_points": bye_points,
        **table,
    }
