"""Agreement statistics of a human calibration study (pure: numpy/pandas and ``arena.stats``; no Django).

Input is long-format, one row per submitted label (``labels``) and one row per item (``items``):

``labels`` columns
    ``item`` (any hashable id), ``annotator`` (str), ``control`` (bool), ``model_1``/``model_2`` (the item's
    canonical first and second side: model names; for a control, ``model_1`` is the real model and
    ``model_2`` is :data:`NAIVE`), ``winner`` (``model_1``, ``model_2``, :data:`TIE` or :data:`INVALID`),
    ``screening`` (str), ``s1_<dimension>``/``s2_<dimension>`` (scores 1–3 of the first/second side),
    ``over_time`` (bool).
``items`` columns
    ``item``, ``control``, ``model_1``, ``model_2``, ``judge_winner`` (the canonical judge's winner when its
    case is decisive and order-stable, else None).

Choices made where the protocol is silent (each is visible in the returned document):
- Practice studies never reach this module (the selector refuses them); over-time labels are dropped
  unless ``include_over_time``.
- Reliability (alpha) is computed on real items only; hidden controls are reported by detection rate.
- Winner alpha is nominal over the item's canonical sides ``first``/``second`` plus ``TIE`` and
  ``INVALID`` as categories of their own: calling an item invalid is a judgment other coders can
  disagree with. Screening alpha is nominal with unit = item (each label screens its item's
  neighborhood). Dimension alpha is ordinal on 1–3 with unit = (item, side, dimension) pooled, and
  unit = (item, side) per dimension.
- Majority label: a strict majority (> half) of an item's counted labels, else ``no majority``.
- Human Bradley–Terry and human win rate are per label: a label gives its chosen model one win over the
  other, TIE half a win to each, INVALID nothing. BT uses a pseudo-count of 0.5 like the judge's fits; the
  bootstrap resamples items (all labels of an item travel together).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from arena.stats import fit_bt, fit_bt_batch, krippendorff_alpha, percentile_ci, ranking_from_theta, replicate_rankings

TIE = "TIE"
INVALID = "INVALID"
NAIVE = "naive baseline"
NO_MAJORITY = "no majority"
FIRST, SECOND = "first", "second"
DIMENSIONS = ("grounding", "hypothesis_specificity", "minimality_feasibility", "decisive_metric", "falsifiability")
WINNER_DOMAIN = (FIRST, SECOND, TIE, INVALID)
SCREENING_DOMAIN = ("coherent", "partly", "incoherent")
BOOTSTRAP_REPLICATES = 2000
PSEUDO_COUNT = 0.5
LABEL_COLUMNS = ["item", "annotator", "control", "model_1", "model_2", "winner", "screening", "over_time"] + [
    f"s{side}_{d}" for d in DIMENSIONS for side in (1, 2)
]
ITEM_COLUMNS = ["item", "control", "model_1", "model_2", "judge_winner"]


def empty_labels() -> pd.DataFrame:
    return pd.DataFrame(columns=LABEL_COLUMNS)


def counted(labels: pd.DataFrame, *, include_over_time: bool = False) -> pd.DataFrame:
    """The labels statistics use: all of them, or (default) all but those that arrived after the cap."""
    if include_over_time or labels.empty:
        return labels
    return labels[~labels["over_time"].astype(bool)]


def _real(labels: pd.DataFrame) -> pd.DataFrame:
    return labels[~labels["control"].astype(bool)] if not labels.empty else labels


def side_code(row: pd.Series | dict) -> str:
    """A label's winner relative to its item's canonical sides: first, second, TIE or INVALID."""
    if row["winner"] == row["model_1"]:
        return FIRST
    if row["winner"] == row["model_2"]:
        return SECOND
    return row["winner"]


def long_alpha(frame: pd.DataFrame, *, unit: Sequence[str] | str, value: str, level: str, domain: Sequence[Any]) -> float | None:
    """Krippendorff's alpha of long-format values (one row per annotator × unit, coder column ``annotator``).

    ``unit`` names the column(s) that identify a unit; ``domain`` lists the possible values (in order, for
    ordinal data). Returns None when alpha is undefined (no unit with two coders, or a single value).
    """
    if frame.empty:
        return None
    units = frame[list(unit)].astype(str).agg("|".join, axis=1) if not isinstance(unit, str) else frame[unit]
    long = pd.DataFrame({"unit": units.values, "coder": frame["annotator"].values, "value": frame[value].values})
    # Only units with at least two coders are pairable; alpha ignores the rest anyway.
    sizes = long.groupby("unit")["coder"].transform("size")
    long = long[sizes >= 2]
    if long.empty or long["value"].nunique() < 2:
        return None
    coders = sorted(long["coder"].unique().tolist(), key=str)
    unit_ids = sorted(long["unit"].unique().tolist(), key=str)
    lookup = {(c, u): v for c, u, v in long[["coder", "unit", "value"]].itertuples(index=False)}
    table = [[lookup.get((c, u)) for u in unit_ids] for c in coders]
    try:
        result = krippendorff_alpha(table, level, value_domain=list(domain))
    except ValueError:
        return None
    return None if np.isnan(result) else float(result)


def winner_alpha(labels: pd.DataFrame) -> float | None:
    """Nominal alpha on winner selection over real items (categories first/second/TIE/INVALID)."""
    real = _real(labels)
    if real.empty:
        return None
    frame = real.assign(code=real.apply(side_code, axis=1))
    return long_alpha(frame, unit="item", value="code", level="nominal", domain=WINNER_DOMAIN)


def screening_alpha(labels: pd.DataFrame) -> float | None:
    """Nominal alpha on neighborhood screening over real items (unit = item)."""
    return long_alpha(_real(labels), unit="item", value="screening", level="nominal", domain=SCREENING_DOMAIN)


def dimension_alpha(labels: pd.DataFrame) -> dict[str, Any]:
    """Ordinal alpha on the 1–3 dimension scores: ``pooled`` over dimensions and ``per_dimension``."""
    real = _real(labels)
    rows = []
    for dim in DIMENSIONS:
        for side in (1, 2):
            if real.empty:
                continue
            part = pd.DataFrame(
                {
                    "item": real["item"].values,
                    "annotator": real["annotator"].values,
                    "side": side,
                    "dimension": dim,
                    "score": real[f"s{side}_{dim}"].astype(int).values,
                }
            )
            rows.append(part)
    long = (
        pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=["item", "annotator", "side", "dimension", "score"])
    )
    pooled = long_alpha(long, unit=["item", "side", "dimension"], value="score", level="ordinal", domain=(1, 2, 3))
    per = {
        dim: long_alpha(long[long["dimension"] == dim], unit=["item", "side"], value="score", level="ordinal", domain=(1, 2, 3))
        for dim in DIMENSIONS
    }
    return {"pooled": pooled, "per_dimension": per, "level": "ordinal"}


def majority_labels(labels: pd.DataFrame) -> dict[Any, str]:
    """Per item: the label (model name, NAIVE, TIE or INVALID) that more than half of its labels chose, else ``no majority``."""
    out: dict[Any, str] = {}
    if labels.empty:
        return out
    for item, group in labels.groupby("item", sort=True):
        counts = group["winner"].value_counts()
        top, n = counts.index[0], int(counts.iloc[0])
        out[item] = top if 2 * n > len(group) else NO_MAJORITY
    return out


def naive_detection(labels: pd.DataFrame) -> dict[str, Any]:
    """Labels on hidden controls that prefer the real proposal, over all labels on controls (TIE/INVALID count as misses)."""
    controls = labels[labels["control"].astype(bool)] if not labels.empty else labels
    total = len(controls)
    detected = int((controls["winner"] == controls["model_1"]).sum()) if total else 0
    return {"detected": detected, "total": total, "rate": detected / total if total else None}


def judge_agreement(
    labels: pd.DataFrame, items: pd.DataFrame, *, replicates: int = BOOTSTRAP_REPLICATES, seed: int = 0, level: float = 0.95
) -> dict[str, Any]:
    """Agreement of the human majority with the judge on decisive order-stable cases.

    Counted items: real items whose judge case is decisive and order-stable (``judge_winner`` set) and whose
    human majority names one of the two models. ``agree`` of those ``decisive`` items have the majority pick
    the judge's stable winner. The CI is a case bootstrap: resample the counted items with replacement.
    """
    majority = majority_labels(_real(labels))
    judged = items[(~items["control"].astype(bool)) & items["judge_winner"].notna()] if not items.empty else items
    hits: list[int] = []
    for row in judged.itertuples(index=False):
        m = majority.get(row.item)
        if m is not None and m in (row.model_1, row.model_2):
            hits.append(int(m == row.judge_winner))
    decisive = len(hits)
    agree = int(sum(hits))
    ci: list[float] | None = None
    if decisive:
        rng = np.random.default_rng(seed)
        draws = rng.integers(0, decisive, size=(replicates, decisive))
        rates = np.asarray(hits, dtype=float)[draws].mean(axis=1)
        lo, hi = np.percentile(rates, [100 * (1 - level) / 2, 100 * (1 + level) / 2])
        ci = [float(lo), float(hi)]
    return {
        "agree": agree,
        "decisive": decisive,
        "rate": agree / decisive if decisive else None,
        "ci": ci,
        "level": level,
        "replicates": replicates,
        "seed": seed,
    }


def human_win_rate(labels: pd.DataFrame) -> dict[str, float]:
    """Per model over real items: chosen 1, other 0, TIE 0.5 each, INVALID excluded; mean over its appearances."""
    real = _real(labels)
    if real.empty:
        return {}
    real = real[real["winner"] != INVALID]
    score: dict[str, float] = {}
    seen: dict[str, int] = {}
    for row in real.itertuples(index=False):
        for model in (row.model_1, row.model_2):
            seen[model] = seen.get(model, 0) + 1
            score[model] = score.get(model, 0.0) + (0.5 if row.winner == TIE else float(row.winner == model))
    return {m: score[m] / seen[m] for m in sorted(seen, key=lambda m: (-score[m] / seen[m], m))}


def _item_win_matrices(real: pd.DataFrame, models: Sequence[str]) -> tuple[list[Any], np.ndarray]:
    """One (K, K) per-label win matrix per real item (TIE: half a win each; INVALID: nothing)."""
    index = {m: i for i, m in enumerate(models)}
    item_ids = sorted(real["item"].unique().tolist(), key=str)
    pos = {it: n for n, it in enumerate(item_ids)}
    mats = np.zeros((len(item_ids), len(models), len(models)))
    for row in real.itertuples(index=False):
        if row.winner == INVALID or row.model_1 not in index or row.model_2 not in index:
            continue
        a, b = index[row.model_1], index[row.model_2]
        n = pos[row.item]
        if row.winner == TIE:
            mats[n, a, b] += 0.5
            mats[n, b, a] += 0.5
        elif row.winner == row.model_1:
            mats[n, a, b] += 1
        elif row.winner == row.model_2:
            mats[n, b, a] += 1
    return item_ids, mats


def kendall_distance(ranking: Sequence[int], reference: Sequence[int]) -> int:
    """Number of discordant pairs (adjacent swaps needed) between two full rankings of the same items."""
    where = {m: i for i, m in enumerate(reference)}
    seq = [where[m] for m in ranking]
    return sum(1 for i in range(len(seq)) for j in range(i + 1, len(seq)) if seq[i] > seq[j])


def human_bt(
    labels: pd.DataFrame,
    *,
    judge_order: Sequence[str],
    replicates: int = BOOTSTRAP_REPLICATES,
    seed: int = 0,
    pseudo_count: float = PSEUDO_COUNT,
    level: float = 0.95,
) -> dict[str, Any] | None:
    """A human Bradley–Terry fit (per label, pseudo-count 0.5) with an item bootstrap.

    ``within_one_inversion`` is the share of bootstrap rankings at Kendall distance ≤ 1 from the judge's
    ordering (restricted to the models the study covers). None when fewer than two models have labels.
    """
    real = _real(labels)
    if real.empty:
        return None
    real = real[real["winner"] != INVALID]
    present = set(real["model_1"]) | set(real["model_2"])
    models = [m for m in judge_order if m in present] + sorted(present - set(judge_order))
    if len(models) < 2:
        return None
    _ids, mats = _item_win_matrices(real, models)
    fit = fit_bt(mats.sum(axis=0), pseudo_count=pseudo_count)
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(len(mats), np.full(len(mats), 1 / len(mats)), size=replicates)
    boot = fit_bt_batch(np.einsum("ri,ijk->rjk", counts, mats), pseudo_count=pseudo_count)
    ci = percentile_ci(boot.theta, level)
    reference = list(range(len(models)))  # models are listed in the judge's order
    ranks = replicate_rankings(boot.theta)  # tied strengths in random order: not the judge's order for free
    distances = np.array([kendall_distance(r.tolist(), reference) for r in ranks])
    point_rank = ranking_from_theta(fit.theta).tolist()
    return {
        "models": [models[i] for i in point_rank],
        "strengths": {models[i]: float(fit.theta[i]) for i in point_rank},
        "ci": {models[i]: [float(ci[i, 0]), float(ci[i, 1])] for i in point_rank},
        "judge_order": models,
        "kendall_distance_to_judge": kendall_distance(point_rank, reference),
        "within_one_inversion": float((distances <= 1).mean()),
        "same_as_judge": float((distances == 0).mean()),
        "pseudo_count": pseudo_count,
        "replicates": replicates,
        "seed": seed,
        "unit": "item",
        "diverged": fit.diverged,
    }


def leave_one_out(
    labels: pd.DataFrame, items: pd.DataFrame, *, replicates: int = BOOTSTRAP_REPLICATES, seed: int = 0
) -> dict[str, dict[str, Any]]:
    """Alpha on winner, judge agreement and human win rate recomputed without each annotator in turn."""
    out: dict[str, dict[str, Any]] = {}
    if labels.empty:
        return out
    for annotator in sorted(labels["annotator"].unique().tolist(), key=str):
        rest = labels[labels["annotator"] != annotator]
        out[str(annotator)] = {
            "winner_alpha": winner_alpha(rest),
            "judge_agreement": judge_agreement(rest, items, replicates=replicates, seed=seed),
            "human_win_rate": human_win_rate(rest),
            "labels": int(len(rest)),
        }
    return out


def agreement_document(
    labels: pd.DataFrame,
    items: pd.DataFrame,
    *,
    judge_order: Sequence[str],
    include_over_time: bool = False,
    replicates: int = BOOTSTRAP_REPLICATES,
    seed: int = 0,
) -> dict[str, Any]:
    """Every agreement figure of a study as one JSON-serialisable dict (keys listed in the module docstring)."""
    all_labels = labels
    labels = counted(labels, include_over_time=include_over_time)
    majority = majority_labels(labels)
    hbt = human_bt(labels, judge_order=judge_order, replicates=replicates, seed=seed)
    majority_counts: dict[str, int] = {}
    item_rows = items.set_index("item") if not items.empty else None
    for item, label in majority.items():
        if label in (TIE, INVALID, NO_MAJORITY, NAIVE):
            key = label
        elif item_rows is not None and label == item_rows.loc[item, "model_1"]:
            key = FIRST
        else:
            key = SECOND
        majority_counts[key] = majority_counts.get(key, 0) + 1
    return {
        "krippendorff_alpha": {
            "winner": winner_alpha(labels),
            "screening": screening_alpha(labels),
            "dimensions": dimension_alpha(labels),
            "winner_categories": list(WINNER_DOMAIN),
            "units": "real items",
        },
        "naive_detection": naive_detection(labels),
        "judge_agreement": judge_agreement(labels, items, replicates=replicates, seed=seed),
        "human_bt": hbt,
        "within_one_inversion": None if hbt is None else hbt["within_one_inversion"],
        "human_win_rate": human_win_rate(labels),
        "leave_one_out": leave_one_out(labels, items, replicates=replicates, seed=seed),
        "majority": {"labels": {str(k): v for k, v in majority.items()}, "counts": majority_counts},
        "counts": {
            "labels": int(len(all_labels)),
            "counted": int(len(labels)),
            "over_time": int(all_labels["over_time"].astype(bool).sum()) if not all_labels.empty else 0,
            "invalid": int((labels["winner"] == INVALID).sum()) if not labels.empty else 0,
            "items": int(len(items)),
            "annotators": int(labels["annotator"].nunique()) if not labels.empty else 0,
        },
        "include_over_time": include_over_time,
        "judge_order": list(judge_order),
    }
