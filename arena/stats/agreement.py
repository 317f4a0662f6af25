"""Agreement between two judges (two runs) on the same canonical pairs (PROTOCOL.md section 1, last bullet).

Two measures, each with its counts:

* ordered agreement on the first judge's stable subset: over the cases that judge 1 folds as stable,
  the fraction of judge 2's (present) ordered verdicts naming judge 1's stable winner;
* case-folded agreement: over the cases complete for both judges, the fraction whose folded outcomes are
  equal (the same stable winner, or both sensitive).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .folding import MISSING, TIE_CODE, case_counts, encode_cases


def judge_agreement(cases_1: pd.DataFrame, cases_2: pd.DataFrame) -> dict[str, Any]:
    """Compare two ``cases`` frames (see :func:`arena.stats.folding.encode_cases`) joined on ``case``.

    Preconditions:
        both frames satisfy the ``cases`` contract; a case present in both names the same two models.
    Returns:
        ``{"joined", "only_first", "only_second",
        "judge_1": {"stable", "sensitive", "incomplete"}, "judge_2": {...}   (over the joined cases),
        "ordered_on_stable_1": {"cases", "verdicts", "agree", "fraction"},
        "case_folded": {"cases", "agree", "fraction", "same_stable_winner", "both_sensitive",
                        "opposite_stable_winner", "stable_vs_sensitive"}}``.
        A fraction is None when its denominator is 0.
    Raises:
        ValueError: when a joined case names different models in the two frames.
    """
    ids_1 = set(cases_1["case"].astype(str))
    ids_2 = set(cases_2["case"].astype(str))
    common = sorted(ids_1 & ids_2)
    c1 = cases_1.assign(case=cases_1["case"].astype(str)).set_index("case").loc[common].reset_index()
    c2 = cases_2.assign(case=cases_2["case"].astype(str)).set_index("case").loc[common].reset_index()
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

    # Ordered agreement on judge 1's stable cases.
    st1 = e1.stable
    winner1 = e1.original[st1]
    v2 = np.stack([e2.original[st1], e2.reverse[st1]])
    present = v2 != MISSING
    agree_ordered = int(((v2 == winner1[None, :]) & present).sum())
    n_verdicts = int(present.sum())

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

    return {
        "joined": len(common),
        "only_first": len(ids_1 - ids_2),
        "only_second": len(ids_2 - ids_1),
        "judge_1": counts(e1),
        "judge_2": counts(e2),
        "ordered_on_stable_1": {
            "cases": int(st1.sum()),
            "verdicts": n_verdicts,
            "agree": agree_ordered,
            "fraction": agree_ordered / n_verdicts if n_verdicts else None,
        },
        "case_folded": {
            "cases": n_both,
            "agree": agree_folded,
            "fraction": agree_folded / n_both if n_both else None,
            "same_stable_winner": same_stable,
            "both_sensitive": both_sensitive,
            "opposite_stable_winner": opposite,
            "stable_vs_sensitive": mixed,
        },
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
