"""The leaderboard's sections computed from shared counts (issue 25 item 1) equal the per-pair / per-batch / row-sort
computations they replaced.

Each oracle here is written out independently in the test (a mask per pair or per batch, ``np.unique`` over rows),
as the code before the change did it; the cases are random, with incomplete cases, ties, many batches and labels
whose sorted order is not their order of appearance.
"""

from __future__ import annotations

import numpy as np
import pytest

from arena.stats.bootstrap import ranking_summary
from arena.stats.bt import fit_bt, ranking_from_theta, replicate_rankings
from arena.stats.folding import HI, LO, MISSING, TIE_CODE, EncodedCases, folded_head_to_head, ordered_head_to_head
from arena.stats.leaderboard import leaderboard_document
from arena.stats.matrices import win_matrix


def _random_cases(seed: int, n_models: int, n_cases: int, n_batches: int) -> EncodedCases:
    rng = np.random.default_rng(seed)
    lo = rng.integers(0, n_models - 1, n_cases)
    hi = np.minimum(lo + 1 + rng.integers(0, n_models, n_cases), n_models - 1)
    keep = lo < hi
    lo, hi = lo[keep], hi[keep]
    n = len(lo)
    verdicts = np.array([LO, HI, TIE_CODE, MISSING])
    batch_names = np.array([f"b{(7 * i) % n_batches:03d}" for i in range(n_batches)], dtype=object)
    return EncodedCases(
        models=tuple(f"model-{i}" for i in rng.permutation(n_models)),
        case=np.array([f"c{i}" for i in range(n)], dtype=object),
        context=np.array([f"ctx{i % 37}" for i in range(n)], dtype=object),
        batch=batch_names[rng.integers(0, n_batches, n)],
        lo=lo.astype(np.int64),
        hi=hi.astype(np.int64),
        original=rng.choice(verdicts, n, p=[0.45, 0.35, 0.15, 0.05]),
        reverse=rng.choice(verdicts, n, p=[0.45, 0.35, 0.15, 0.05]),
        shown_a=rng.integers(-1, 2, n),
    )


def _pairs_in_order(enc: EncodedCases, order: list[str]) -> list[tuple[int, int]]:
    pos = {m: order.index(m) for m in enc.models}
    c = enc.complete
    seen = sorted(set(zip(enc.lo[c].tolist(), enc.hi[c].tolist(), strict=True)))
    names = enc.models
    pairs = [(i, j) if pos[names[i]] < pos[names[j]] else (j, i) for i, j in seen]
    return sorted(pairs, key=lambda p: (pos[names[p[0]]], pos[names[p[1]]]))


@pytest.mark.parametrize("seed", range(6))
def test_head_to_heads_equal_a_mask_per_pair(seed: int) -> None:
    enc = _random_cases(seed, n_models=2 + seed, n_cases=300, n_batches=3)
    order = [enc.models[i] for i in np.random.default_rng(seed).permutation(enc.n_models)]
    folded, ordered = [], []
    for a, b in _pairs_in_order(enc, order):
        i, j = min(a, b), max(a, b)
        on = enc.complete & (enc.lo == i) & (enc.hi == j)
        wins = {side: int((on & enc.stable & (enc.original == side)).sum()) for side in (LO, HI)}
        a_w, b_w = (wins[LO], wins[HI]) if a == i else (wins[HI], wins[LO])
        sensitive = int((on & enc.sensitive).sum())
        folded.append({"a": enc.models[a], "b": enc.models[b], "a_wins": a_w, "b_wins": b_w, "sensitive": sensitive})
        v = np.concatenate([enc.original[on], enc.reverse[on]])
        lo_w, hi_w = int((v == LO).sum()), int((v == HI).sum())
        a_w, b_w = (lo_w, hi_w) if a == i else (hi_w, lo_w)
        ordered.append({"a": enc.models[a], "b": enc.models[b], "a_wins": a_w, "b_wins": b_w, "ties": int((v == TIE_CODE).sum())})
    assert folded_head_to_head(enc, order) == folded, "folded_head_to_head differs from a mask per pair"
    assert ordered_head_to_head(enc, order) == ordered, "ordered_head_to_head differs from a mask per pair"


def test_batches_equal_a_subset_and_fit_per_batch() -> None:
    """Every batch entry (cases, stable, ranking, strengths bit for bit) as fitting each batch's own subset gives;
    60 batches whose sorted labels are not in order of appearance, some with no complete case."""
    enc = _random_cases(11, n_models=6, n_cases=900, n_batches=60)
    doc = leaderboard_document(enc, replicates=20, seed=3)
    expected = []
    overall = doc["models"]
    for b in sorted(set(enc.batch.tolist())):
        sub = enc.subset(enc.batch == b)
        if not sub.complete.any():
            continue
        fit = fit_bt(win_matrix(sub, "ordered"), pseudo_count=0.5)
        present = sorted(set(sub.lo[sub.complete].tolist()) | set(sub.hi[sub.complete].tolist()))
        rk = [int(i) for i in ranking_from_theta(fit.theta) if i in present]
        ranking = [enc.models[i] for i in rk]
        expected.append(
            {
                "batch": b,
                "cases": int(sub.complete.sum()),
                "stable": int(sub.stable.sum()),
                "ranking": ranking,
                "strengths": {enc.models[i]: float(fit.theta[i]) for i in rk},
                "matches_overall": ranking == [m for m in overall if enc.models.index(m) in present],
            }
        )
    assert len(expected) > 40, "the design should have many batches with complete cases"
    assert doc["batches"] == expected, "the batches section differs from fitting each batch's subset"


@pytest.mark.parametrize(("n_models", "spread"), [(2, 1.0), (5, 0.3), (8, 0.05), (15, 0.02), (16, 0.02)])
def test_ranking_summary_equals_row_unique(n_models: int, spread: float) -> None:
    """The distinct rankings, their order and counts as np.unique over the rows gives (integer codes up to 15
    models, the row sort above), with tied strengths in some replicates."""
    rng = np.random.default_rng(n_models)
    theta = np.linspace(1.0, -1.0, n_models) + rng.normal(0.0, spread, (3000, n_models))
    theta[::5] = np.round(theta[::5])  # ties: in random order (replicate_rankings), the same in the summary
    ranks = replicate_rankings(theta)
    rows, counts = np.unique(ranks, axis=0, return_counts=True)
    order = np.argsort(-counts, kind="stable")
    summary = ranking_summary(theta)
    assert summary.rankings == [tuple(int(x) for x in rows[i]) for i in order], "distinct rankings or their order differ"
    assert summary.counts.tolist() == counts[order].tolist(), "ranking counts differ"
