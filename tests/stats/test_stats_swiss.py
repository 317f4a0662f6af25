"""Swiss selection: pairing invariants on random inputs, brute-force optimality of a round, champions, determinism.

References are exhaustive enumerations written here (every bye and every perfect matching of small rounds), an
independent standings computation, and properties; never values from the code under test.
"""

from __future__ import annotations

import random
from collections import Counter
from itertools import combinations

import numpy as np
import pytest

from arena.stats.swiss import swiss_pairings, swiss_standings, swiss_tournament


def all_matchings(items: list) -> list[list[tuple]]:
    """Every perfect matching of ``items`` (each pair in list order), by brute force."""
    if not items:
        return [[]]
    first, rest = items[0], items[1:]
    out = []
    for k, other in enumerate(rest):
        for sub in all_matchings(rest[:k] + rest[k + 1 :]):
            out.append([(first, other), *sub])
    return out


def rematch_free_round_exists(cands: list, played: set, bye_options: list) -> bool:
    """Brute force: is there a bye (among ``bye_options``, odd n) and a perfect matching with no played pair?"""
    options = bye_options if len(cands) % 2 else [None]
    for bye in options:
        rest = [c for c in cands if c != bye]
        if any(all(frozenset(p) not in played for p in m) for m in all_matchings(rest)):
            return True
    return False


def random_judge(seed: int):
    rnd = random.Random(seed)

    def judge(a, b):
        k = rnd.randint(0, 4)
        return k, 4 - k

    return judge


@pytest.mark.parametrize("n", range(1, 21))
def test_invariants_on_random_tournaments(n):
    cands = [f"h{i}" for i in range(n)]
    for seed in range(2):
        out = swiss_tournament(cands, random_judge(1000 * n + seed), seed=seed)
        assert out["rounds_played"] == len(out["rounds"]) == max(1, n - 1)
        played: set = set()
        byes: Counter = Counter()
        for rnd in out["rounds"]:
            seen = [c for p in rnd["pairs"] for c in p] + ([rnd["bye"]] if rnd["bye"] is not None else [])
            assert sorted(seen) == sorted(cands)  # everyone plays or has the bye, exactly once
            assert (rnd["bye"] is not None) == (n % 2 == 1)  # at most one bye per round, only for odd n
            rematches = [p for p in rnd["pairs"] if frozenset(p) in played]
            if rematches and n <= 10:
                # a rematch only where unavoidable: no bye and matching without a played pair existed
                assert not rematch_free_round_exists(cands, played, cands)
            assert not rematches  # with the look-ahead none happens on these inputs (n = 1…20)
            if rnd["bye"] is not None:
                assert byes[rnd["bye"]] == 0  # never a second bye (n − 1 rounds leave one candidate without)
                byes[rnd["bye"]] += 1
            played |= {frozenset(p) for p in rnd["pairs"]}
            assert [(r["a"], r["b"]) for r in rnd["results"]] == rnd["pairs"]
        if n % 2 == 0 and n > 1:
            # n − 1 rematch-free rounds of n/2 matches: a complete round robin
            assert played == {frozenset(p) for p in combinations(cands, 2)}


def preferred_round_by_brute_force(cands, points, played, had, round_no, seed):
    """The documented preference, by enumerating every (bye, matching): fewest rematches, then fewest previous
    byes of the bye candidate, then the lowest-ranked bye, then the lexicographically first matching in rank
    order (pairs as rank positions)."""
    base = sorted(cands, key=str)
    perm = np.random.default_rng([seed, round_no]).permutation(len(base))
    lot = {base[int(i)]: pos for pos, i in enumerate(perm)}
    order = sorted(cands, key=lambda c: (-points.get(c, 0.0), lot[c]))
    rank = {c: i for i, c in enumerate(order)}
    best = None
    for bye in order if len(order) % 2 else [None]:
        rest = [c for c in order if c != bye]
        for m in all_matchings(rest):
            key = (
                sum(frozenset(p) in played for p in m),
                had[bye] if bye is not None else 0,
                -rank[bye] if bye is not None else 0,
                [(rank[a], rank[b]) for a, b in m],
            )
            if best is None or key < best[0]:
                best = (key, m, bye)
    return best[1], best[2]


def test_a_round_is_the_brute_force_preferred_pairing_on_random_small_inputs():
    rng = random.Random(7)
    for trial in range(150):
        n = rng.randint(1, 8)
        cands = [f"c{i}" for i in range(n)]
        points = {c: rng.choice([0.0, 0.5, 1.0, 2.0]) for c in cands if rng.random() < 0.8}
        played = {frozenset(p) for p in combinations(cands, 2) if rng.random() < 0.45}
        byes = [c for c in cands if rng.random() < 0.3]
        seed, round_no = rng.randint(0, 99), rng.randint(1, 9)
        got = swiss_pairings(cands, points, played, round_no=round_no, seed=seed, byes=byes)
        want = preferred_round_by_brute_force(cands, points, played, Counter(byes), round_no, seed)
        assert got == want, (trial, cands, points, played, byes)


def test_a_rematch_is_taken_only_when_no_rematch_free_round_exists():
    cands = ["a", "b", "c", "d"]
    played = {frozenset(p) for p in [("a", "b"), ("a", "c"), ("a", "d")]}  # a has met everyone
    pairs, bye = swiss_pairings(cands, {}, played, round_no=1, seed=0)
    assert bye is None and sum(frozenset(p) in played for p in pairs) == 1
    # odd n: the bye goes to a, the only way to avoid a rematch, even though a already had a bye
    pairs, bye = swiss_pairings([*cands, "e"], {"e": 9.0}, played | {frozenset(("a", "e"))}, round_no=1, seed=0, byes=["a"])
    assert bye == "a" and not any(frozenset(p) in played for p in pairs)


def independent_champion(cands, rounds, seed, bye_points=0.0):
    """Points from the recorded rounds, then the cascade: points, head-to-head in the tied group, Buchholz, lot."""
    pts = {c: 0.0 for c in cands}
    opp = {c: [] for c in cands}
    for rnd in rounds:
        for r in rnd["results"]:
            pts[r["a"]] += r["votes_a"] / 2
            pts[r["b"]] += r["votes_b"] / 2
            opp[r["a"]].append(r["b"])
            opp[r["b"]].append(r["a"])
        if rnd["bye"] is not None:
            pts[rnd["bye"]] += bye_points
    top = max(pts.values())
    group = [c for c in cands if pts[c] == top]

    def h2h(c):
        total = 0.0
        for rnd in rounds:
            for r in rnd["results"]:
                if r["a"] == c and r["b"] in group:
                    total += r["votes_a"] / 2
                if r["b"] == c and r["a"] in group:
                    total += r["votes_b"] / 2
        return total

    best = max(h2h(c) for c in group)
    group = [c for c in group if h2h(c) == best]
    buch = {c: sum(pts[o] for o in opp[c]) for c in group}
    group = [c for c in group if buch[c] == max(buch.values())]
    base = sorted(cands, key=str)
    perm = np.random.default_rng([seed, 0]).permutation(len(base))
    lot = {base[int(i)]: pos for pos, i in enumerate(perm)}
    return min(group, key=lambda c: lot[c])


def test_champions_equal_a_brute_force_check_on_small_cases():
    for n in range(1, 9):
        cands = [f"k{i}" for i in range(n)]
        for seed in range(6):
            table = {frozenset(p): random.Random(f"{n}-{seed}-{p}").randint(0, 6) for p in combinations(cands, 2)}

            def judge(a, b, table=table):  # deterministic: fixed votes per unordered pair, 6 votes per match
                k = table[frozenset((a, b))]
                return (k, 6 - k) if a < b else (6 - k, k)

            out = swiss_tournament(cands, judge, seed=seed)
            assert out["champion"] == independent_champion(cands, out["rounds"], seed)
            assert out["standings"][0]["candidate"] == out["champion"]
            again = swiss_tournament(cands, judge, seed=seed)
            assert again == out  # deterministic under the seed


def test_with_a_dominant_candidate_it_is_champion_with_full_points():
    strength = {f"s{i}": i for i in range(8)}

    def judge(a, b):
        return (4, 0) if strength[a] > strength[b] else (0, 4)

    for seed in range(5):
        out = swiss_tournament(list(strength), judge, seed=seed)
        assert out["champion"] == "s7"
        assert out["standings"][0]["points"] == 2.0 * 7  # a round robin: 7 wins of 4 votes → 2 points each
        assert [s["candidate"] for s in out["standings"]] == [f"s{i}" for i in range(7, -1, -1)]


def test_the_tie_break_cascade_by_hand():
    # a, b, c tied on 2 points; head-to-head inside the group: a 1.5, b 0.5, c 0 → a by head-to-head
    res = [("a", "b", 3, 1), ("a", "d", 1, 1), ("b", "d", 3, 1), ("c", "d", 4, 0)]
    out = swiss_standings(["a", "b", "c", "d"], res, seed=0)
    assert out["champion"] == "a" and out["tie_break"]["decided_by"] == "head_to_head"
    assert set(out["tie_break"]["tied_on_points"]) == {"a", "b", "c"}
    # a and b tied on points and head-to-head (never met); a's opponents scored more → Buchholz
    res = [("a", "c", 4, 0), ("b", "d", 4, 0), ("c", "e", 2, 2)]
    out = swiss_standings(["a", "b", "c", "d", "e"], res, seed=0)
    assert out["champion"] == "a" and out["tie_break"]["decided_by"] == "buchholz"
    # perfectly symmetric: the seeded lot decides, and it is the lot's first of the two
    res = [("a", "c", 4, 0), ("b", "d", 4, 0)]
    champs = {swiss_standings(["a", "b", "c", "d"], res, seed=s)["champion"] for s in range(20)}
    assert champs == {"a", "b"}
    out = swiss_standings(["a", "b", "c", "d"], res, seed=3)
    assert out["tie_break"]["decided_by"] == "lot"
    # a bye is worth bye_points
    out = swiss_standings(["a", "b", "c"], [("a", "b", 2, 2)], seed=0, byes=["c"], bye_points=1.5)
    assert out["champion"] == "c" and out["standings"][0]["byes"] == 1


def test_degenerate_sizes_and_errors():
    out = swiss_tournament(["only"], lambda a, b: (0, 0), seed=0)
    assert out["rounds_played"] == 1 and out["rounds"][0]["bye"] == "only" and out["champion"] == "only"
    out = swiss_tournament(["x", "y"], lambda a, b: (1, 3), seed=0)
    assert out["rounds_played"] == 1 and out["champion"] == "y"
    with pytest.raises(ValueError, match="no candidates"):
        swiss_tournament([], lambda a, b: (0, 0), seed=0)
    with pytest.raises(ValueError, match="repeated"):
        swiss_pairings(["a", "a"], {}, set(), round_no=1, seed=0)


def test_the_seed_changes_the_lot_and_only_the_lot():
    cands = [f"h{i}" for i in range(6)]
    firsts = {tuple(swiss_pairings(cands, {}, set(), round_no=1, seed=s)[0]) for s in range(10)}
    assert len(firsts) > 1
    pts = {c: float(i) for i, c in enumerate(cands)}  # distinct points: no lot needed
    firsts = {tuple(swiss_pairings(cands, pts, set(), round_no=1, seed=s)[0]) for s in range(10)}
    assert firsts == {(("h5", "h4"), ("h3", "h2"), ("h1", "h0"))}
