"""Statistics of the diagnostic controls (PROTOCOL.md §1, "Diagnostic controls"; issue 11). numpy/pandas only.

A control pair is a clean proposal and a variant of it (``clear``/``subtle`` corruption of one field, a ``sham``
rewrite of that field, a ``rendering`` as prose, ``falsifier_off`` without its falsifying result, or a ``naive``
baseline), judged blind in both presentation orders. Everything here starts from those ordered verdicts, already
translated from A/B to *which proposal* won.

Inputs
------
``verdicts`` (one row per accepted ordered judgment of a control pair; invalid judgments are left out):

    case    the resampling unit: a control *case* (a source proposal and, for the targeted kinds, its target).
            The subtle and the sham variant of one source and target carry the same case, so the bootstrap
            moves them together; other kinds may use any id unique within their kind and target.
    kind    clear | subtle | sham | rendering | falsifier_off | naive
    target  grounding | decisive_metric | falsifiability for clear, subtle and sham; None (or NaN) otherwise
    order   original | reverse
    winner  clean | variant | tie      (for a sham pair "variant" is the sham; for falsifier_off it is the empty
                                         version; for naive it is the naive proposal; for rendering the prose)

    (case, kind, order) identifies a row: a duplicate is an error.

``scores`` (optional; the 0–4 scores of a *structured* run on the same control pairs), one row per ordered
judgment and scored dimension: ``case, kind, target, order, dimension, clean, variant`` (the two proposals'
scores on that dimension in that judgment).

``structured_verdicts`` (optional): the structured run's overall verdicts, shaped like ``verdicts``.

Definitions (every count is of ordered judgments unless it says *cases*)
------------------------------------------------------------------------
Tie. A TIE verdict is a tie; it is never split into half wins. "P(clean wins)" is (clean wins) / (ordered
judgments), so a tie counts in the denominator and not in the numerator: it is a comparison the clean proposal
did not win. With the release's sham figures (0 clean wins, 40 ties, 0 sham wins) this gives P(clean wins | sham)
= 0, and the sham-adjusted preference is then the subtle corruption's clean-win rate above what a harmless
rewrite earns.

clear[dimension]
    ``clean_wins`` of ``ordered`` (release: 40 of 40 on 20 cases per dimension), with ``variant_wins``, ``ties``
    and ``cases``. ``target_drop``: the mean over the structured run's ordered judgments of clean − variant on the
    target dimension (positive: the corruption lowered the target score). ``nontarget_drift``: the mean of
    clean − variant over every (ordered judgment, non-target dimension) cell (near zero when the judge attributes
    the defect to the right dimension). Both are null without scores.

subtle[dimension]
    ``p_clean_subtle`` = P(clean wins | clean vs subtle), ``p_clean_sham`` = P(clean wins | clean vs sham);
    ``adjusted.value`` = p_clean_subtle − p_clean_sham. ``sham_gate`` counts the clean-vs-sham judgments:
    ``clean_wins``, ``ties``, ``sham_wins``, ``ordered``, and ``passed`` when the decisive ones (clean wins plus
    sham wins) are at most ``tolerance`` × ordered, rounded down. The default tolerance is 0: the gate passes only
    when every clean-vs-sham judgment is a tie, i.e. the sham did not move the judge at all. The release meets
    that strictest rule (0 / 40 / 0 on each dimension), so no slack is needed to reproduce it, and any decisive
    sham verdict is evidence that the judge reacts to rewording itself, which is exactly what the adjustment
    would otherwise have to absorb silently. A caller may state a tolerance; it is reported with the gate.
    A gate with no sham judgments does not pass. ``target_drop`` and ``nontarget_drift`` as for clear (extra).

rendering
    Over *cases* with both orders judged (``pairs``); the two renderings carry identical content, and the two
    orders swap which side is prose. The verdict "did not move" when both orders are ties, or when the two
    orders name different renderings (the same presentation position won twice: position, not rendering,
    decided). ``same_verdict`` counts those cases, ``ties`` the all-tie ones among them; ``flips`` counts the
    rest: the verdict moved with the rendering (the same rendering won both orders, or one order is a tie and
    the other is not). ``schema_preferred`` / ``prose_preferred`` split the cases where one rendering won both
    orders; ``incomplete`` counts cases with one order only (left out).

falsifier
    clean = the filled proposal, variant = the one without ``falsifying_result``. ``pairs`` (cases),
    ``ordered``, ``filled_wins``, ``empty_wins``, ``ties``; ``preference.value`` = (filled_wins − empty_wins) /
    ordered, in [−1, 1]: positive when the judge prefers the filled version, 0 when it has no preference.

naive
    ``pairs`` (cases), ``ordered``, ``real_wins`` (the real proposal is the clean side), ``naive_wins``,
    ``ties``, and ``stable_real_wins`` (cases the real proposal won in both orders).

dimension_audit
    ``mean_scores``: per dimension, the mean structured score over every scored proposal (clean and variant
    sides of every judgment); ``mean_scores_by_role`` the same per side. ``structured_vs_holistic_agreement``:
    the share of ordered judgments present in both runs (matched on case, kind, order) whose winners are the
    same (a tie agrees only with a tie), with ``agreement_counts`` {agree, compared}. Null without the inputs.

Confidence intervals
    Case bootstrap: resample the cases of one statistic (one kind and dimension; subtle and sham together) with
    replacement, both orders of a case travelling together, recompute the statistic as a ratio of sums over the
    resampled cases, and take the percentile interval (``level``, default 95%, linear interpolation). Replicates
    whose denominator is zero (possible when some cases lack one kind) are dropped. Each statistic draws from
    its own seeded stream (``seed`` and the statistic's name), so adding a section never changes another's CI.
    A value with no data is null, and so is its CI.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

KINDS = ("clear", "subtle", "sham", "rendering", "falsifier_off", "naive")
TARGETS = ("grounding", "decisive_metric", "falsifiability")
TARGETED = ("clear", "subtle", "sham")
WINNERS = ("clean", "variant", "tie")
ORDERS = ("original", "reverse")
KEY = ["case", "kind", "order"]
SCORE_COLUMNS = ["case", "kind", "target", "order", "dimension", "clean", "variant"]
DEFAULT_REPLICATES = 2000


# --------------------------------------------------------------------------- input checks


def _target_column(frame: pd.DataFrame) -> pd.Series:
    return frame["target"].astype(object).where(frame["target"].notna(), None)


def check_verdicts(verdicts: pd.DataFrame) -> pd.DataFrame:
    """The verdict frame with its target normalised to None where absent; ValueError naming what is wrong."""
    missing = [c for c in (*KEY, "target", "winner") if c not in verdicts.columns]
    if missing:
        raise ValueError(f"verdicts: missing column(s) {', '.join(missing)}")
    frame = verdicts.loc[:, ["case", "kind", "target", "order", "winner"]].copy()
    frame["target"] = _target_column(frame)
    for column, allowed in (("kind", KINDS), ("order", ORDERS), ("winner", WINNERS)):
        bad = sorted(set(frame[column]) - set(allowed), key=str)
        if bad:
            raise ValueError(f"verdicts: {column} {bad!r} not in {allowed}")
    targeted = frame["kind"].isin(TARGETED)
    if (~frame.loc[targeted, "target"].isin(TARGETS)).any():
        raise ValueError(f"verdicts: clear, subtle and sham rows need a target in {TARGETS}")
    if frame.loc[~targeted, "target"].notna().any():
        raise ValueError("verdicts: only clear, subtle and sham rows have a target")
    if frame.duplicated(KEY).any():
        first = frame.loc[frame.duplicated(KEY), KEY].iloc[0].tolist()
        raise ValueError(f"verdicts: (case, kind, order) {first} appears more than once")
    return frame


def check_scores(scores: pd.DataFrame) -> pd.DataFrame:
    missing = [c for c in SCORE_COLUMNS if c not in scores.columns]
    if missing:
        raise ValueError(f"scores: missing column(s) {', '.join(missing)}")
    frame = scores.loc[:, SCORE_COLUMNS].copy()
    frame["target"] = _target_column(frame)
    for side in ("clean", "variant"):
        values = pd.to_numeric(frame[side], errors="coerce")
        if values.isna().any() or ((values < 0) | (values > 4)).any():
            raise ValueError(f"scores: {side} must be numbers from 0 to 4")
        frame[side] = values.astype(float)
    if frame.duplicated([*KEY, "dimension"]).any():
        raise ValueError("scores: (case, kind, order, dimension) appears more than once")
    return frame


# --------------------------------------------------------------------------- bootstrap


def _rng(seed: int, name: str) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32(name.encode())])


def _per_case(frame: pd.DataFrame, cases: pd.Index, columns: dict[str, pd.Series]) -> np.ndarray:
    """(C, k) sums of each column per case, in ``cases`` order (0 for a case without rows)."""
    table = pd.DataFrame({name: values.astype(float) for name, values in columns.items()})
    table["case"] = frame["case"].to_numpy()
    sums = table.groupby("case", sort=False).sum().reindex(cases, fill_value=0.0)
    return sums[list(columns)].to_numpy(dtype=float)


def _resampled_sums(per_case: np.ndarray, replicates: int, rng: np.random.Generator) -> np.ndarray:
    """(R, k): the column sums over ``replicates`` resamples of the cases with replacement."""
    n = per_case.shape[0]
    # How often each case is drawn in n draws with replacement is multinomial(n, 1/n each): the same resample as
    # drawing indices, in O(R·C) memory whatever the number of columns.
    counts = rng.multinomial(n, np.full(n, 1.0 / n), size=replicates).astype(float)
    return counts @ per_case


def _ci(values: np.ndarray, level: float) -> list[float] | None:
    values = values[np.isfinite(values)]
    if values.size == 0:
        return None
    alpha = (1.0 - level) / 2.0
    low, high = np.percentile(values, [100 * alpha, 100 * (1 - alpha)])
    return [float(low), float(high)]


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1.0), np.nan)


def _mean_with_ci(
    frame: pd.DataFrame, values: pd.Series, *, replicates: int, seed: int, name: str, level: float
) -> dict[str, Any] | None:
    """{mean, ci} of ``values`` (one per row of ``frame``) with a case bootstrap; None without rows."""
    if frame.empty:
        return None
    cases = pd.Index(frame["case"].unique())
    per_case = _per_case(frame, cases, {"sum": values, "n": pd.Series(1.0, index=frame.index)})
    sums = _resampled_sums(per_case, replicates, _rng(seed, name))
    return {"mean": float(values.mean()), "ci": _ci(_ratio(sums[:, 0], sums[:, 1]), level)}


# --------------------------------------------------------------------------- sections


def _counts(rows: pd.DataFrame) -> tuple[int, int, int]:
    winners = rows["winner"]
    return int((winners == "clean").sum()), int((winners == "variant").sum()), int((winners == "tie").sum())


def _score_effects(
    scores: pd.DataFrame | None, kind: str, target: str, *, replicates: int, seed: int, level: float
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    if scores is None:
        return None, None
    rows = scores[(scores["kind"] == kind) & (scores["target"] == target)]
    on_target = rows[rows["dimension"] == target]
    off_target = rows[rows["dimension"] != target]
    drop = _mean_with_ci(
        on_target,
        on_target["clean"] - on_target["variant"],
        replicates=replicates,
        seed=seed,
        name=f"{kind}:{target}:drop",
        level=level,
    )
    drift = _mean_with_ci(
        off_target,
        off_target["clean"] - off_target["variant"],
        replicates=replicates,
        seed=seed,
        name=f"{kind}:{target}:drift",
        level=level,
    )
    return drop, drift


def clear_section(
    verdicts: pd.DataFrame,
    scores: pd.DataFrame | None = None,
    *,
    replicates: int = DEFAULT_REPLICATES,
    seed: int = 0,
    level: float = 0.95,
) -> dict[str, dict[str, Any]]:
    """Clear single-field corruption, per target dimension (see the module docstring)."""
    verdicts = check_verdicts(verdicts)
    scores = check_scores(scores) if scores is not None else None
    section = {}
    for target in TARGETS:
        rows = verdicts[(verdicts["kind"] == "clear") & (verdicts["target"] == target)]
        clean, variant, ties = _counts(rows)
        drop, drift = _score_effects(scores, "clear", target, replicates=replicates, seed=seed, level=level)
        section[target] = {
            "clean_wins": clean,
            "ordered": len(rows),
            "variant_wins": variant,
            "ties": ties,
            "cases": int(rows["case"].nunique()),
            "target_drop": drop,
            "nontarget_drift": drift,
        }
    return section


def sham_gate(clean_wins: int, ties: int, sham_wins: int, *, tolerance: float = 0.0) -> dict[str, Any]:
    """The sham-equivalence gate on clean-vs-sham counts (rule in the module docstring)."""
    ordered = clean_wins + ties + sham_wins
    allowed = int(np.floor(tolerance * ordered + 1e-9))
    return {
        "clean_wins": clean_wins,
        "ties": ties,
        "sham_wins": sham_wins,
        "ordered": ordered,
        "tolerance": tolerance,
        "passed": bool(ordered > 0 and clean_wins + sham_wins <= allowed),
    }


def subtle_section(
    verdicts: pd.DataFrame,
    scores: pd.DataFrame | None = None,
    *,
    replicates: int = DEFAULT_REPLICATES,
    seed: int = 0,
    level: float = 0.95,
    sham_tolerance: float = 0.0,
) -> dict[str, dict[str, Any]]:
    """Subtle corruption against its sham, per target dimension (see the module docstring)."""
    verdicts = check_verdicts(verdicts)
    scores = check_scores(scores) if scores is not None else None
    section = {}
    for target in TARGETS:
        rows = verdicts[verdicts["kind"].isin(["subtle", "sham"]) & (verdicts["target"] == target)]
        subtle, sham = rows[rows["kind"] == "subtle"], rows[rows["kind"] == "sham"]
        s_clean, _, _ = _counts(subtle)
        h_clean, h_variant, h_ties = _counts(sham)
        p_subtle = s_clean / len(subtle) if len(subtle) else None
        p_sham = h_clean / len(sham) if len(sham) else None
        adjusted: dict[str, Any] = {"value": None, "ci": None}
        if p_subtle is not None and p_sham is not None:
            cases = pd.Index(rows["case"].unique())
            is_subtle, is_sham = (rows["kind"] == "subtle"), (rows["kind"] == "sham")
            won = rows["winner"] == "clean"
            per_case = _per_case(
                rows, cases, {"s_win": won & is_subtle, "s_n": is_subtle, "h_win": won & is_sham, "h_n": is_sham}
            )
            sums = _resampled_sums(per_case, replicates, _rng(seed, f"subtle:{target}:adjusted"))
            boot = _ratio(sums[:, 0], sums[:, 1]) - _ratio(sums[:, 2], sums[:, 3])
            adjusted = {"value": float(p_subtle - p_sham), "ci": _ci(boot, level)}
        drop, drift = _score_effects(scores, "subtle", target, replicates=replicates, seed=seed, level=level)
        section[target] = {
            "p_clean_subtle": p_subtle,
            "p_clean_sham": p_sham,
            "adjusted": adjusted,
            "sham_gate": sham_gate(h_clean, h_ties, h_variant, tolerance=sham_tolerance),
            "subtle_ordered": len(subtle),
            "cases": int(rows["case"].nunique()),
            "target_drop": drop,
            "nontarget_drift": drift,
        }
    return section


def _both_orders(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per case with both orders: columns original, reverse (winners)."""
    wide = rows.pivot(index="case", columns="order", values="winner").reindex(columns=list(ORDERS))
    return wide.dropna()


def rendering_section(verdicts: pd.DataFrame) -> dict[str, int]:
    """Schema vs prose of identical content (see the module docstring for what "moved" means)."""
    verdicts = check_verdicts(verdicts)
    rows = verdicts[verdicts["kind"] == "rendering"]
    wide = _both_orders(rows)
    o, r = wide["original"], wide["reverse"]
    ties = (o == "tie") & (r == "tie")
    position = (o != "tie") & (r != "tie") & (o != r)
    same_rendering = (o != "tie") & (o == r)
    return {
        "pairs": len(wide),
        "same_verdict": int((ties | position).sum()),
        "flips": int((~(ties | position)).sum()),
        "ties": int(ties.sum()),
        "schema_preferred": int((same_rendering & (o == "clean")).sum()),
        "prose_preferred": int((same_rendering & (o == "variant")).sum()),
        "incomplete": int(rows["case"].nunique() - len(wide)),
    }


def falsifier_section(
    verdicts: pd.DataFrame, *, replicates: int = DEFAULT_REPLICATES, seed: int = 0, level: float = 0.95
) -> dict[str, Any]:
    """Falsifier on/off ablation (see the module docstring)."""
    verdicts = check_verdicts(verdicts)
    rows = verdicts[verdicts["kind"] == "falsifier_off"]
    filled, empty, ties = _counts(rows)
    preference: dict[str, Any] = {"value": None, "ci": None}
    if len(rows):
        sign = (rows["winner"] == "clean").astype(float) - (rows["winner"] == "variant").astype(float)
        estimate = _mean_with_ci(rows, sign, replicates=replicates, seed=seed, name="falsifier:preference", level=level)
        preference = {"value": estimate["mean"], "ci": estimate["ci"]} if estimate else preference
    return {
        "pairs": int(rows["case"].nunique()),
        "ordered": len(rows),
        "filled_wins": filled,
        "empty_wins": empty,
        "ties": ties,
        "preference": preference,
    }


def naive_section(verdicts: pd.DataFrame) -> dict[str, int]:
    """Hidden naive controls for the judge (see the module docstring)."""
    verdicts = check_verdicts(verdicts)
    rows = verdicts[verdicts["kind"] == "naive"]
    real, naive, ties = _counts(rows)
    wide = _both_orders(rows)
    return {
        "pairs": int(rows["case"].nunique()),
        "ordered": len(rows),
        "real_wins": real,
        "naive_wins": naive,
        "ties": ties,
        "stable_real_wins": int(((wide["original"] == "clean") & (wide["reverse"] == "clean")).sum()),
    }


def dimension_audit(
    scores: pd.DataFrame | None, holistic: pd.DataFrame | None = None, structured: pd.DataFrame | None = None
) -> dict[str, Any]:
    """Structured scores per dimension, and how often the structured overall verdict agrees with the holistic one.

    ``holistic`` and ``structured`` need the columns case, kind, order, winner (any labels: the audit may be run
    on real pairs too, with model names as winners).
    """
    audit: dict[str, Any] = {
        "structured_vs_holistic_agreement": None,
        "agreement_counts": None,
        "mean_scores": None,
        "mean_scores_by_role": None,
    }
    if scores is not None and len(scores):
        scores = check_scores(scores)
        long = pd.concat(
            [scores.assign(role="clean", score=scores["clean"]), scores.assign(role="variant", score=scores["variant"])]
        )
        audit["mean_scores"] = {str(d): float(v) for d, v in long.groupby("dimension", sort=True)["score"].mean().items()}
        audit["mean_scores_by_role"] = {
            role: {str(d): float(v) for d, v in part.groupby("dimension", sort=True)["score"].mean().items()}
            for role, part in long.groupby("role", sort=True)
        }
    if holistic is not None and structured is not None:
        for name, frame in (("holistic", holistic), ("structured", structured)):
            if frame.duplicated(KEY).any():
                raise ValueError(f"{name}: (case, kind, order) appears more than once")
        joined = holistic[[*KEY, "winner"]].merge(structured[[*KEY, "winner"]], on=KEY, suffixes=("_h", "_s"))
        if len(joined):
            agree = int((joined["winner_h"] == joined["winner_s"]).sum())
            audit["structured_vs_holistic_agreement"] = agree / len(joined)
            audit["agreement_counts"] = {"agree": agree, "compared": len(joined)}
    return audit


def controls_document(
    verdicts: pd.DataFrame,
    *,
    scores: pd.DataFrame | None = None,
    structured_verdicts: pd.DataFrame | None = None,
    replicates: int = DEFAULT_REPLICATES,
    seed: int = 0,
    level: float = 0.95,
    sham_tolerance: float = 0.0,
) -> dict[str, Any]:
    """The whole controls report (JSON-serialisable): clear, subtle, rendering, falsifier, naive, dimension_audit.

    ``verdicts`` are the holistic run's verdicts on control pairs; ``scores`` and ``structured_verdicts`` come
    from a structured run on the same pairs (both optional). Shapes and definitions: the module docstring.
    """
    verdicts = check_verdicts(verdicts)
    scores = check_scores(scores) if scores is not None else None
    options = {"replicates": replicates, "seed": seed, "level": level}
    return {
        "clear": clear_section(verdicts, scores, **options),
        "subtle": subtle_section(verdicts, scores, sham_tolerance=sham_tolerance, **options),
        "rendering": rendering_section(verdicts),
        "falsifier": falsifier_section(verdicts, **options),
        "naive": naive_section(verdicts),
        "dimension_audit": dimension_audit(scores, verdicts, structured_verdicts if structured_verdicts is not None else None),
        "method": {
            "replicates": replicates,
            "seed": seed,
            "level": level,
            "sham_tolerance": sham_tolerance,
            "unit": "control case (both orders, and a case's subtle and sham variants, resampled together)",
            "ties": "a tie is not a clean win: it counts in P(clean wins)'s denominator only",
        },
    }


def verdict_frame(rows: Sequence[tuple[Any, str, str | None, str, str]]) -> pd.DataFrame:
    """A verdict frame from (case, kind, target, order, winner) tuples: a convenience for callers and tests."""
    return pd.DataFrame(list(rows), columns=["case", "kind", "target", "order", "winner"])
