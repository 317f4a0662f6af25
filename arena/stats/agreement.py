"""Agreement between two judges (two runs) on the same canonical pairs (PROTOCOL.md section 1, last bullet).

The protocol compares a second judge with the *primary* one: which of the two runs is primary is the
caller's decision (the canonical judge of the benchmark); this module only takes the primary's cases first.
Two measures, each with its counts and a case-bootstrap confidence interval:

* ordered agreement on the primary judge's stable cases (:data:`ORDERED_AGREEMENT`): over the cases the
  primary judge folds as order-stable, the fraction of the secondary judge's (present) ordered verdicts
  that name the primary judge's stable winner. Both ordered verdicts of a case travel together in the
  bootstrap (the statistical unit is the canonical pair). The cases where a secondary verdict names
  another winner (or TIE) are listed;
* case-folded agreement (:data:`CASE_FOLDED_AGREEMENT`): over the cases complete for both judges, the
  fraction whose folded outcomes are equal (the same stable winner, or both order-sensitive).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .folding import HI, LO, MISSING, TIE, TIE_CODE, case_counts, encode_cases

#: The one name of the ordered agreement, used by every page and document that shows it.
ORDERED_AGREEMENT = "Ordered agreement on the primary judge’s stable cases"
CASE_FOLDED_AGREEMENT = "Case-folded agreement"
AGREEMENT_REPLICATES = 2000


def ratio_bootstrap_ci(
    numerators: np.ndarray,
    denominators: np.ndarray,
    *,
    replicates: int = AGREEMENT_REPLICATES,
    seed: int | np.random.Generator | None = 0,
    level: float = 0.95,
) -> list[float] | None:
    """Percentile CI of ``sum(numerators) / sum(denominators)`` under a case bootstrap.

    Each case ``i`` contributes ``numerators[i]`` of ``denominators[i]``; a replicate resamples the cases with
    replacement (both numbers of a case travel together). Cases with equal (numerator, denominator) are
    interchangeable, so the replicate's counts of each distinct kind are drawn from a multinomial: the same
    distribution as resampling rows, without materialising them. Replicates whose denominator is 0 are left
    out. Returns ``[lo, hi]``, or None when there is no case or no denominator at all.
    """
    num = np.asarray(numerators, dtype=np.float64)
    den = np.asarray(denominators, dtype=np.float64)
    n = len(num)
    if n == 0 or den.sum() == 0:
        return None
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    kinds, counts = np.unique(np.stack([num, den], axis=1), axis=0, return_counts=True)
    draws = rng.multinomial(n, counts / n, size=replicates)  # (R, kinds)
    top, bottom = draws @ kinds[:, 0], draws @ kinds[:, 1]
    ratios = top[bottom > 0] / bottom[bottom > 0]
    lo, hi = np.percentile(ratios, [100 * (1 - level) / 2, 100 * (1 + level) / 2])
    return [float(lo), float(hi)]


def _verdict_name(code: int, lo: str, hi: str) -> str | None:
    return {LO: lo, HI: hi, TIE_CODE: TIE}.get(int(code))


def judge_agreement(
    primary: pd.DataFrame,
    secondary: pd.DataFrame,
    *,
    replicates: int = AGREEMENT_REPLICATES,
    seed: int = 0,
    level: float = 0.95,
) -> dict[str, Any]:
    """Compare the primary judge's ``cases`` frame with a secondary judge's, joined on ``case``.

    Preconditions:
        both frames satisfy the ``cases`` contract (:func:`arena.stats.folding.encode_cases`); a case present
        in both names the same two models; ``replicates >= 1``.
    Returns:
        ``{"joined", "only_primary", "only_secondary",
        "primary": {"stable", "sensitive", "incomplete"}, "secondary": {...}   (over the joined cases),
        "ordered_agreement": {"name", "cases", "verdicts", "agree", "fraction", "ci", "disagreements"},
        "case_folded": {"name", "cases", "agree", "fraction", "ci", "same_stable_winner", "both_sensitive",
                        "opposite_stable_winner", "stable_vs_sensitive"},
        "bootstrap": {"unit", "replicates", "seed", "level"}}``.
        A fraction (and its CI) is None when its denominator is 0. ``disagreements`` lists, in case order,
        each primary-stable case where a present secondary verdict does not name the primary's winner:
        ``{"case", "context", "model_1", "model_2", "primary_winner", "secondary_original",
        "secondary_reverse", "agree", "verdicts"}`` (verdicts are model names, ``"TIE"`` or None if missing).
    Raises:
        ValueError: when a joined case names different models in the two frames.
    """
    ids_1 = set(primary["case"].astype(str))
    ids_2 = set(secondary["case"].astype(str))
    common = sorted(ids_1 & ids_2)
    c1 = primary.assign(case=primary["case"].astype(str)).set_index("case").loc[common].reset_index()
    c2 = secondary.assign(case=secondary["case"].astype(str)).set_index("case").loc[common].reset_index()
    models = sorted(
        set(c1["model_1"].astype(str))
        | set(c1["model_2"].astype(str))
        | set(c2["model_1"].astype(str))
        | set(c2["model_2"].astype(str))
    )
    e1 = encode_cases(c1, models=models)
    e2 = encode_cases(c2, models=models)
    bad = (e1.lo != e2.lo) | (e1.hi != e2.hi)
    if bad.any():
        raise ValueError(f"cases {e1.case[bad][:5].tolist()} name different model pairs in the two runs")
    # The two bootstraps draw from independent streams of one seed.
    ordered_rng, folded_rng = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))

    # Ordered agreement on the primary judge's stable cases: per case, how many of the secondary's present
    # ordered verdicts name the primary's winner.
    st1 = e1.stable
    winner1 = e1.original[st1]
    v2 = np.stack([e2.original[st1], e2.reverse[st1]])
    present = v2 != MISSING
    agree_per_case = ((v2 == winner1[None, :]) & present).sum(axis=0)
    verdicts_per_case = present.sum(axis=0)
    agree_ordered, n_verdicts = int(agree_per_case.sum()), int(verdicts_per_case.sum())
    disagreements = []
    for k in np.flatnonzero(agree_per_case < verdicts_per_case):
        i = np.flatnonzero(st1)[k]
        lo, hi = models[e1.lo[i]], models[e1.hi[i]]
        disagreements.append(
            {
                "case": str(e1.case[i]),
                "context": str(e1.context[i]),
                "model_1": str(c1["model_1"].iloc[i]),
                "model_2": str(c1["model_2"].iloc[i]),
                "primary_winner": _verdict_name(e1.original[i], lo, hi),
                "secondary_original": _verdict_name(e2.original[i], lo, hi),
                "secondary_reverse": _verdict_name(e2.reverse[i], lo, hi),
                "agree": int(agree_per_case[k]),
                "verdicts": int(verdicts_per_case[k]),
            }
        )

    # Case-folded agreement on cases complete for both judges.
    both = e1.complete & e2.complete
    f1, f2 = e1.folded[both], e2.folded[both]
    same_stable = int(((f1 == f2) & (f1 != TIE_CODE)).sum())
    both_sensitive = int(((f1 == TIE_CODE) & (f2 == TIE_CODE)).sum())
    opposite = int(((f1 != f2) & (f1 != TIE_CODE) & (f2 != TIE_CODE)).sum())
    mixed = int(((f1 == TIE_CODE) != (f2 == TIE_CODE)).sum())
    n_both = int(both.sum())
    agree_folded = same_stable + both_sensitive

    def counts(e: Any) -> dict[str, int]:
        c = case_counts(e)
        return {"stable": c["stable"], "sensitive": c["sensitive"], "incomplete": c["incomplete"]}

    boot = {"replicates": replicates, "level": level}
    return {
        "joined": len(common),
        "only_primary": len(ids_1 - ids_2),
        "only_secondary": len(ids_2 - ids_1),
        "primary": counts(e1),
        "secondary": counts(e2),
        "ordered_agreement": {
            "name": ORDERED_AGREEMENT,
            "cases": int(st1.sum()),
            "verdicts": n_verdicts,
            "agree": agree_ordered,
            "fraction": agree_ordered / n_verdicts if n_verdicts else None,
            "ci": ratio_bootstrap_ci(agree_per_case, verdicts_per_case, seed=ordered_rng, **boot),
            "disagreements": disagreements,
        },
        "case_folded": {
            "name": CASE_FOLDED_AGREEMENT,
            "cases": n_both,
            "agree": agree_folded,
            "fraction": agree_folded / n_both if n_both else None,
            "ci": ratio_bootstrap_ci((f1 == f2).astype(int), np.ones(n_both), seed=folded_rng, **boot),
            "same_stable_winner": same_stable,
            "both_sensitive": both_sensitive,
            "opposite_stable_winner": opposite,
            "stable_vs_sensitive": mixed,
        },
        "bootstrap": {"unit": "canonical pairs resampled with both their orders", "seed": seed, **boot},
    }


def agreement_by_order(cases_1: pd.DataFrame, cases_2: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """Per presentation order, how often two runs' ordered verdicts on the same (case, order) are equal.

    Used for the structured (dimension-decomposed) pick against the canonical holistic verdict.
    Only (case, order) cells with a verdict in both runs count; TIE equals TIE.
    Returns ``{"original": {"verdicts", "agree", "fraction"}, "reverse": {...}}``.
    """
    joined = cases_1.merge(cases_2, on="case", suffixes=("_1", "_2"))
    out: dict[str, dict[str, Any]] = {}
    for order in ("original", "reverse"):
        a, b = joined[f"{order}_1"], joined[f"{order}_2"]
        present = a.notna() & b.notna()
        agree = int((a[present] == b[present]).sum())
        n = int(present.sum())
        out[order] = {"verdicts": n, "agree": agree, "fraction": agree / n if n else None}
    return out
