"""HypoArena's inter-judge agreement printed as the paper's Table 12 prints it (PROTOCOL.md §2; issue 23).

The paper does not publish its two judges' ratings, so two judges are built here by hand in the paper's shape (16
models × 6 domains, the paper's domains) with the figures the paper publishes: pooled Spearman ρ 0.920 and mean rank
shift 1.17 (PROTOCOL.md, "Published figures"), and the top-5 overlap as a count, 5 or 4 per domain and 4.5 pooled (the
paper's Table 12 as issue 23 quotes it). The expected figures are typed from those texts and from the construction
worked by hand below, never taken from the code under test; the test then prints the table as the command does.
"""

from __future__ import annotations

from typing import Any

import pytest
from scipy.stats import rankdata, spearmanr

from arena.stats.hypoarena import inter_judge_agreement
from hypoarena.management.commands.hypoarena_agreement import agreement_rows, table_lines

#: The paper's figures, as printed (PROTOCOL.md's "Published figures": pooled ρ 0.920, mean rank shift 1.17 on 16
#: models; issue 23 quoting Table 12: the top-5 overlap is printed as a count, 5 or 4 in a domain, 4.5 pooled).
PAPER_POOLED = {"spearman": "0.920", "rank_shift": "1.17", "top_5_overlap": "4.5"}

DOMAINS = (
    "biomedical",
    "machine_learning",
    "social_science",
    "financial_analysis",
    "it_operations",
    "safety_investigation",
)
MODELS = [f"M{i:02d}" for i in range(1, 17)]  # judge A's order in every domain: M01 best
#: Judge B's order per domain, as judge A's places (the model judge A ranks r sits at position i of the list): a few
#: swaps of neighbours or near-neighbours. The first three domains swap only inside the top five or below it, so both
#: judges name the same five (overlap 5); the last three move one model across the fifth place (overlap 4):
#: financial_analysis swaps places 5 and 6; it_operations puts 5 and 6 at places 3-4 and 3 and 4 at places 5-6
#: (the top five of B are 1, 2, 5, 6, 3: four in common); safety_investigation swaps places 5 and 7.
ORDER_B = {
    "biomedical": [2, 1, 4, 3, 5, 7, 6, 10, 9, 8, 12, 11, 15, 16, 13, 14],
    "machine_learning": [3, 2, 1, 5, 4, 7, 6, 9, 8, 11, 10, 14, 13, 12, 16, 15],
    "social_science": [2, 1, 5, 4, 3, 7, 6, 9, 8, 12, 11, 10, 14, 13, 16, 15],
    "financial_analysis": [2, 1, 4, 3, 6, 5, 9, 8, 7, 11, 10, 13, 12, 16, 15, 14],
    "it_operations": [2, 1, 5, 6, 3, 4, 8, 7, 11, 10, 9, 13, 12, 15, 14, 16],
    "safety_investigation": [2, 1, 4, 3, 7, 6, 5, 9, 8, 11, 10, 13, 12, 16, 15, 14],
}
#: Hand counts per domain: Σ|rank A − rank B| (an adjacent swap adds 2, a swap two places apart 4) and the overlap.
SHIFT_SUMS = {
    "biomedical": 20,  # (1,2) (3,4) (6,7): 2 each; (8,10) (13,15) (14,16): 4 each; (11,12): 2
    "machine_learning": 18,  # (1,3) (12,14): 4 each; (4,5) (6,7) (8,9) (10,11) (15,16): 2 each
    "social_science": 18,  # (3,5) (10,12): 4 each; (1,2) (6,7) (8,9) (13,14) (15,16): 2 each
    "financial_analysis": 18,  # (7,9) (14,16): 4 each; (1,2) (3,4) (5,6) (10,11) (12,13): 2 each
    "it_operations": 20,  # (3,5) (4,6) (9,11): 4 each; (1,2) (7,8) (12,13) (14,15): 2 each
    "safety_investigation": 18,  # (5,7) (14,16): 4 each; (1,2) (3,4) (8,9) (10,11) (12,13): 2 each
}
OVERLAP = {
    "biomedical": 5,
    "machine_learning": 5,
    "social_science": 5,
    "financial_analysis": 4,
    "it_operations": 4,
    "safety_investigation": 4,
}
#: Rating scales (Elo points between neighbouring places): judge A spreads every domain alike, judge B some domains
#: more and some less, so that pooling the 96 cells across domains costs ρ what the paper's judges lost (0.920). The
#: domain's index is added to every rating so that no two cells of one judge tie across domains.
SCALE_A = 40
SCALE_B = {
    "biomedical": 20,
    "machine_learning": 20,
    "social_science": 30,
    "financial_analysis": 50,
    "it_operations": 60,
    "safety_investigation": 20,
}


def paper_shaped_ratings() -> tuple[dict[str, dict[str, float]], dict[str, dict[str, float]]]:
    """Both judges' ratings, domain → model → Elo-like rating (1 = best place gets the highest)."""
    a: dict[str, dict[str, float]] = {}
    b: dict[str, dict[str, float]] = {}
    for index, domain in enumerate(DOMAINS):
        place_b = {rank_a: position for position, rank_a in enumerate(ORDER_B[domain], start=1)}
        a[domain] = {m: 1500 + SCALE_A * (8.5 - r) + index for r, m in enumerate(MODELS, start=1)}
        b[domain] = {m: 1500 + SCALE_B[domain] * (8.5 - place_b[r]) + index for r, m in enumerate(MODELS, start=1)}
    return a, b


def test_the_construction_has_the_papers_figures_by_hand_and_by_scipy() -> None:
    """The hand-built judges are what the docstring says, independently of the code under test."""
    a, b = paper_shaped_ratings()
    assert all(sorted(ORDER_B[d]) == list(range(1, 17)) for d in DOMAINS)
    for d in DOMAINS:
        place_b = {r: i for i, r in enumerate(ORDER_B[d], start=1)}
        assert sum(abs(place_b[r] - r) for r in range(1, 17)) == SHIFT_SUMS[d], d
        assert len(set(ORDER_B[d][:5]) & {1, 2, 3, 4, 5}) == OVERLAP[d], d
    assert f"{sum(SHIFT_SUMS.values()) / 96:.2f}" == PAPER_POOLED["rank_shift"]  # 112 / 96 = 1.1667
    assert f"{sum(OVERLAP.values()) / 6:.1f}" == PAPER_POOLED["top_5_overlap"]  # (5 + 5 + 5 + 4 + 4 + 4) / 6
    x = [a[d][m] for d in DOMAINS for m in MODELS]
    y = [b[d][m] for d in DOMAINS for m in MODELS]
    assert len(set(x)) == len(set(y)) == 96  # no ties: ρ = 1 − 6 Σd² / (n (n² − 1))
    d2 = sum((p - q) ** 2 for p, q in zip(rankdata(x), rankdata(y), strict=True))
    assert d2 == 11_796 and 1 - 6 * 11_796 / (96 * (96**2 - 1)) == pytest.approx(0.9199946, abs=1e-7)
    assert f"{spearmanr(x, y).statistic:.3f}" == PAPER_POOLED["spearman"]


def test_table_12_is_printed_with_the_top_5_overlap_as_a_count_as_the_paper_does() -> None:
    a, b = paper_shaped_ratings()
    agreement = inter_judge_agreement(a, b)  # the paper's top 5
    lines = table_lines(agreement_rows(agreement))
    print("\n".join(lines))  # the table as `manage.py hypoarena_agreement` prints it (pytest -s shows it)
    header, *body = (line.split() for line in lines)
    assert header == ["Spearman", "ρ", "Kendall", "τ", "mean", "|Δrank|", "top-5", "overlap", "pairwise", "agreement"]
    rows: dict[str, list[str]] = {r[0]: r[1:] for r in body}
    assert list(rows) == [*sorted(DOMAINS), "pooled"]  # domains in name order, then the pooled row
    # Columns: ρ, τ, mean |Δrank|, top-5 overlap, pairwise agreement (no verdicts here: "—").
    assert {d: rows[d][3] for d in DOMAINS} == {d: str(n) for d, n in OVERLAP.items()}
    assert {d: rows[d][2] for d in DOMAINS} == {d: f"{n / 16:.2f}" for d, n in SHIFT_SUMS.items()}
    pooled = rows["pooled"]
    assert (pooled[0], pooled[2], pooled[3]) == (PAPER_POOLED["spearman"], PAPER_POOLED["rank_shift"], "4.5")
    assert pooled[3] == PAPER_POOLED["top_5_overlap"] and pooled[4] == "—"


def test_the_document_gives_the_count_and_the_share_beside_it() -> None:
    a, b = paper_shaped_ratings()
    agreement: dict[str, Any] = inter_judge_agreement(a, b)
    for d in DOMAINS:
        block = agreement["domains"][d]
        assert (block["top_k_overlap"], block["k"], block["models"]) == (OVERLAP[d], 5, 16)
        assert block["top_k_overlap_share"] == pytest.approx(OVERLAP[d] / 5)
        assert block["rank_shift"] == pytest.approx(SHIFT_SUMS[d] / 16)
    pooled = agreement["pooled"]
    assert pooled["top_k_overlap"] == 4.5 and pooled["top_k_overlap_share"] == pytest.approx(0.9)
    assert pooled["rank_shift"] == pytest.approx(112 / 96) and (pooled["cells"], pooled["domains"]) == (96, 6)
    assert pooled["spearman"] == pytest.approx(1 - 6 * 11_796 / (96 * (96**2 - 1)))
