"""Reconstruction statistics (PROTOCOL.md §3): recused Match labels, Match rate and success@5 with a paper-level
bootstrap, paired ratios, exact sign tests and the candidate-count (oracle) controls. Pure numpy/pandas/scipy.

Data contract (the app builds these frames from its tables):

* judgments, :data:`LABEL_COLUMNS`: one row per (hypothesis, judge). A hypothesis is identified by
  ``(domain, paper, system, slot)``; ``label`` is ``"match"`` or ``"no_match"``; ``system_families`` lists the
  model families that produced the hypothesis (a proposer's own family; for a selection pipeline the caller
  lists every family that proposed a candidate of that slot).
* hypothesis labels (:func:`hypothesis_labels`, input of :func:`reconstruction_report`): one row per hypothesis.

Recusal and majority. A judgment whose ``judge_family`` is one of the hypothesis's ``system_families`` is dropped:
it is *missing*, never a No-match. The label is the majority of the remaining judges. A tie (as many Match as
No-match among an even number of judges) is recorded (``tie`` True) and counts as **not a Match** (label
``"no_match"``): a Match needs a strict majority of non-recused judges. A hypothesis with no remaining judge is
``unlabelled`` (label missing): excluded from every rate and counted in ``excluded_unlabelled``.

Rates (per system, per domain and pooled over domains, ``"all"``):

* ``match_rate`` = Matches / labelled hypotheses (a ratio of sums, so a paper weighs by its labelled hypotheses);
* ``success_at_5`` = papers with at least one Match / papers with at least one labelled hypothesis of the system.

Paper-level bootstrap. A scope (one domain, or ``"all"``) holds P papers, ordered by ``(domain, str(paper))``.
Each replicate draws P paper indices uniformly with replacement (``rng.integers(0, P, size=(R, P))``; drawn in
chunks of replicates, which consumes the stream exactly as one draw would) and a drawn paper brings all its
judged hypotheses of every system. The same draw serves every system and control, so ratios and differences are
paired. The pooled scope resamples the pooled papers (not stratified by domain). Each scope has its own stream:
``numpy.random.default_rng(SeedSequence(seed).spawn(D + 1)[i])`` with i the scope's index in sorted domains
followed by ``"all"`` (so a domain's values do not depend on the systems or on the other domains' data). Per-paper counts are (P × systems) matrices; every replicate's totals are one matrix
product ``counts @ matrix``. Intervals are percentile intervals (numpy's ``"linear"`` quantiles) at ``level``. A
replicate whose denominator is zero (possible when a system judged few papers) is undefined: it is left out of
the interval and counted (``n_undefined``).

Ratios (``match_rate[a] / match_rate[b]``) are bootstrapped on the same draws; a replicate with b's rate 0 and
a's > 0 is +inf (kept), 0/0 is undefined (left out, counted). Sign test over papers: among the scope's papers
where both a and b have at least one labelled hypothesis, the papers where a has more Matches, where b has more,
and ties (dropped); the two-sided exact p of ``scipy.stats.binomtest(n_a_more, n_a_more + n_b_more, 0.5)``
(computed in closed form, :func:`_sign_test_p_values`); p is None when no paper is untied.

Oracle controls (candidate-count controls), over the hypotheses of the ``proposers`` (default: every system in
the labels; pass the single proposers when a pipeline is among them), built per paper and then treated exactly
like a system (same draws, same rates, usable in ``pairs``):

* ``slot_oracle``: one unit per (paper, slot) where at least one proposer hypothesis is labelled; the unit is a
  Match if any proposer's labelled hypothesis in that slot is a Match. With five slots it is a "five picks, one
  per slot, chosen with hindsight" system, directly comparable with a pipeline's five slot champions.
* ``top5_oracle``: per paper, the best five of all proposers' labelled hypotheses: units min(5, labelled) and
  Matches min(5, Matches). It picks five without the slot constraint, so top5 ≥ slot oracle per paper.

Their ``success_at_5`` is the same (a paper with any proposer Match); their ``match_rate`` differs. A pipeline that
beats single proposers but not the slot oracle gains by choosing from more candidates, not by better selection.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from itertools import permutations
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import binom

LABEL_COLUMNS = ["domain", "paper", "system", "slot", "judge", "judge_family", "system_families", "label"]
HYPOTHESIS_KEY = ["domain", "paper", "system", "slot"]
LABELS = ("match", "no_match")
POOLED = "all"
CONTROLS = ("slot_oracle", "top5_oracle")
#: Number of hypotheses a proposer returns per paper (and so picks of the top-k oracle).
TOP_K = 5
#: Elements (replicates × papers) of one chunk of drawn paper indices; bounds memory, never changes a value.
_DRAW_ELEMENTS = 4_000_000


# ---------------------------------------------------------------- labels with recusal


def _families(value: Any) -> frozenset[str]:
    """The families of a hypothesis, from a set/tuple/list, a single family name, or missing (no family)."""
    if value is None:
        return frozenset()
    if isinstance(value, str):
        return frozenset([value]) if value else frozenset()
    if isinstance(value, float) and math.isnan(value):
        return frozenset()
    return frozenset(str(v) for v in value)


def _as_frame(rows: pd.DataFrame | Iterable[Mapping[str, Any]], columns: Sequence[str], what: str) -> pd.DataFrame:
    frame = rows.copy() if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows))
    missing = [c for c in columns if c not in frame.columns]
    if missing and len(frame):
        raise ValueError(f"{what}: missing column(s) {missing}; expected at least {list(columns)}.")
    for c in missing:
        frame[c] = pd.Series(dtype=object)
    return frame


def hypothesis_labels(rows: pd.DataFrame | Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per hypothesis (domain, paper, system, slot): the recused majority label.

    ``rows`` holds :data:`LABEL_COLUMNS` (a DataFrame or dicts), one row per (hypothesis, judge). Returns the key
    columns and ``label`` (``"match"``, ``"no_match"`` or None when unlabelled), ``n_judges`` (non-recused
    judgments), ``n_match``, ``n_recused``, ``tie`` and ``unlabelled``. A tie is labelled ``"no_match"`` with
    ``tie`` True (see the module docstring). Raises ValueError naming the first offending row for an unknown
    label or a judge that judged the same hypothesis twice.
    """
    frame = _as_frame(rows, LABEL_COLUMNS, "hypothesis_labels")
    out_cols = [*HYPOTHESIS_KEY, "label", "n_judges", "n_match", "n_recused", "tie", "unlabelled"]
    if frame.empty:
        return pd.DataFrame(columns=out_cols)
    bad = ~frame["label"].isin(LABELS)
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise ValueError(f"hypothesis_labels: row {i} has label {frame['label'].iloc[i]!r}; expected one of {list(LABELS)}.")
    dup = frame.duplicated([*HYPOTHESIS_KEY, "judge"])
    if dup.any():
        i = int(np.flatnonzero(dup.to_numpy())[0])
        key = tuple(frame[c].iloc[i] for c in [*HYPOTHESIS_KEY, "judge"])
        raise ValueError(
            f"hypothesis_labels: row {i} repeats judge {key[-1]!r} on hypothesis {key[:-1]}; keep one judgment "
            "per (hypothesis, judge)."
        )
    recused = np.fromiter(
        (str(f) in _families(s) for f, s in zip(frame["judge_family"], frame["system_families"], strict=True)),
        dtype=bool,
        count=len(frame),
    )
    frame = frame.assign(
        _kept=(~recused).astype(np.int64),
        _match=((frame["label"] == "match").to_numpy() & ~recused).astype(np.int64),
        _recused=recused.astype(np.int64),
    )
    g = frame.groupby(HYPOTHESIS_KEY, sort=True, dropna=False)[["_kept", "_match", "_recused"]].sum().reset_index()
    g = g.rename(columns={"_kept": "n_judges", "_match": "n_match", "_recused": "n_recused"})
    n_no = g["n_judges"] - g["n_match"]
    g["unlabelled"] = g["n_judges"] == 0
    g["tie"] = (~g["unlabelled"]) & (g["n_match"] == n_no)
    label = np.where(g["n_match"] > n_no, "match", "no_match").astype(object)
    label[g["unlabelled"].to_numpy()] = None
    g["label"] = pd.Series(label, index=g.index, dtype=object)
    return g[out_cols]


# ---------------------------------------------------------------- per-paper matrices


def _percentile(values: np.ndarray, level: float) -> tuple[float | None, float | None, int]:
    """Percentile interval of one replicate vector (numpy "linear"), NaN left out and counted, +inf kept."""
    v = values[~np.isnan(values)]
    n_undefined = int(len(values) - len(v))
    if len(v) == 0:
        return None, None, n_undefined
    v = np.sort(v)
    alpha = (1.0 - level) / 2.0
    out = []
    for q in (alpha, 1.0 - alpha):
        h = (len(v) - 1) * q
        lo = int(math.floor(h))
        hi = min(lo + 1, len(v) - 1)
        frac = h - lo
        a, b = v[lo], v[hi]
        out.append(float(a) if frac == 0 or a == b else float(a + (b - a) * frac))
    return out[0], out[1], n_undefined


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """Elementwise num/den with x/0 = +inf for x > 0 and 0/0 = NaN, without warnings."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.true_divide(num, den)


def _paper_tables(labels: pd.DataFrame, systems: list[str], proposers: list[str]) -> dict[str, Any]:
    """Per paper (rows ordered by (domain, str(paper))) and per system + controls: matches, units, any, has."""
    lab = labels[~labels["unlabelled"]]
    papers = (
        labels[["domain", "paper"]]
        .drop_duplicates()
        .assign(_d=lambda f: f["domain"].astype(str), _p=lambda f: f["paper"].astype(str))
        .sort_values(["_d", "_p"], kind="stable")
        .reset_index(drop=True)
    )
    index = pd.MultiIndex.from_frame(papers[["domain", "paper"]])
    n_p = len(papers)
    columns = [*systems, *CONTROLS]
    k = len(columns)
    matches = np.zeros((n_p, k))
    units = np.zeros((n_p, k))
    is_match = (lab["label"] == "match").astype(np.int64)
    per = lab.assign(_m=is_match.to_numpy(), _n=1).groupby(["domain", "paper", "system"], sort=False)[["_m", "_n"]].sum()
    if len(per):
        p_idx = index.get_indexer(pd.MultiIndex.from_arrays([per.index.get_level_values(0), per.index.get_level_values(1)]))
        s_idx = pd.Index(columns).get_indexer(per.index.get_level_values(2))
        matches[p_idx, s_idx] = per["_m"].to_numpy()
        units[p_idx, s_idx] = per["_n"].to_numpy()
    prop = lab[lab["system"].isin(proposers)]
    if len(prop):
        pm = prop.assign(_m=(prop["label"] == "match").to_numpy().astype(np.int64))
        slot = pm.groupby(["domain", "paper", "slot"], sort=False)["_m"].max().reset_index()
        slot_g = slot.groupby(["domain", "paper"], sort=False)["_m"].agg(["sum", "size"])
        p_idx = index.get_indexer(slot_g.index)
        matches[p_idx, len(systems)] = slot_g["sum"].to_numpy()
        units[p_idx, len(systems)] = slot_g["size"].to_numpy()
        top = pm.groupby(["domain", "paper"], sort=False)["_m"].agg(["sum", "size"])
        p_idx = index.get_indexer(top.index)
        matches[p_idx, len(systems) + 1] = np.minimum(TOP_K, top["sum"].to_numpy())
        units[p_idx, len(systems) + 1] = np.minimum(TOP_K, top["size"].to_numpy())
    excl = labels.assign(_u=labels["unlabelled"].astype(np.int64), _t=labels["tie"].astype(np.int64))
    excl = excl.groupby(["domain", "system"], sort=False)[["_u", "_t"]].sum()
    return {
        "papers": papers,
        "columns": columns,
        "matches": matches,
        "units": units,
        "excluded": excl,
    }


def _draw_counts(n_papers: int, replicates: int, rng: np.random.Generator) -> np.ndarray:
    """(R, P) draw counts: per replicate, P paper indices with replacement, counted (bincount with offsets)."""
    counts = np.zeros((replicates, n_papers))
    if n_papers == 0 or replicates == 0:
        return counts
    chunk = max(1, _DRAW_ELEMENTS // n_papers)
    for start in range(0, replicates, chunk):
        r = min(chunk, replicates - start)
        idx = rng.integers(0, n_papers, size=(r, n_papers))
        idx += (np.arange(r) * n_papers)[:, None]
        counts[start : start + r] = np.bincount(idx.ravel(), minlength=r * n_papers).reshape(r, n_papers)
    return counts


def _sign_test_p_values(tests: list[dict[str, Any]]) -> None:
    """Fill ``p_value`` of every sign test: two-sided exact binomial test with p = ½, in one vectorised call.

    For p = ½ the binomial is symmetric, so scipy's two-sided ``binomtest`` (sum of the outcomes no more likely
    than the observed one) is min(1, 2·F(min(k, n − k))) with F the Binomial(n, ½) cdf; one ``binom.cdf`` over all
    tests replaces hundreds of ``binomtest`` calls (about 1.6 ms each). tests/stats checks equality with binomtest.
    """
    if not tests:
        return
    k = np.array([t["a_more"] for t in tests])
    n = k + np.array([t["b_more"] for t in tests])
    p = np.minimum(1.0, 2.0 * binom.cdf(np.minimum(k, n - k), n, 0.5))
    for t, nn, pp in zip(tests, n, p, strict=True):
        t["p_value"] = float(pp) if nn > 0 else None


# ---------------------------------------------------------------- report


def _validate_labels(labels: pd.DataFrame | Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    frame = _as_frame(labels, [*HYPOTHESIS_KEY, "label"], "reconstruction_report")
    if "unlabelled" not in frame.columns:
        frame["unlabelled"] = frame["label"].isna()
    if "tie" not in frame.columns:
        frame["tie"] = False
    frame["unlabelled"] = frame["unlabelled"].astype(bool)
    frame["tie"] = frame["tie"].fillna(False).astype(bool)
    bad = ~frame["unlabelled"] & ~frame["label"].isin(LABELS)
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise ValueError(
            f"reconstruction_report: row {i} has label {frame['label'].iloc[i]!r}; expected one of {list(LABELS)} "
            "(or a missing label with unlabelled True)."
        )
    dup = frame.duplicated(HYPOTHESIS_KEY)
    if dup.any():
        i = int(np.flatnonzero(dup.to_numpy())[0])
        raise ValueError(
            f"reconstruction_report: row {i} repeats hypothesis {tuple(frame[c].iloc[i] for c in HYPOTHESIS_KEY)}; "
            "pass one row per hypothesis (the output of hypothesis_labels)."
        )
    clash = sorted(set(frame["system"].astype(str)) & set(CONTROLS))
    if clash:
        raise ValueError(f"reconstruction_report: system name(s) {clash} are reserved for the oracle controls; rename.")
    return frame


def reconstruction_report(
    labels: pd.DataFrame | Iterable[Mapping[str, Any]],
    *,
    replicates: int = 2000,
    seed: int = 0,
    level: float = 0.95,
    pairs: Sequence[tuple[str, str]] | None = None,
    proposers: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Match rates, success@5, paper-bootstrap CIs, paired ratios, sign tests and oracle controls (module doc).

    ``labels``: one row per hypothesis with ``domain, paper, system, slot, label`` and optionally ``unlabelled``
    and ``tie`` (the output of :func:`hypothesis_labels`). ``pairs``: ordered (a, b) pairs for ratios and sign
    tests; names may be systems or the controls ``"slot_oracle"``/``"top5_oracle"``; default every ordered pair
    of systems. ``proposers``: the systems whose hypotheses the oracles pick from (default all systems).

    Returns a JSON-ready dict: ``method`` (parameters and rules), ``systems``, ``domains`` (sorted, then
    ``"all"``), ``rates`` (one row per scope and system or control), ``pairs`` (one row per scope and pair).
    """
    if replicates < 1:
        raise ValueError(f"reconstruction_report: replicates must be ≥ 1, got {replicates}.")
    if not 0.0 < level < 1.0:
        raise ValueError(f"reconstruction_report: level must be in (0, 1), got {level}.")
    frame = _validate_labels(labels)
    systems = sorted(frame["system"].astype(str).unique())
    frame["system"] = frame["system"].astype(str)
    proposer_list = systems if proposers is None else [str(p) for p in proposers]
    unknown = sorted(set(proposer_list) - set(systems))
    if unknown:
        raise ValueError(f"reconstruction_report: proposers {unknown} have no hypothesis in the labels; known: {systems}.")
    columns = [*systems, *CONTROLS]
    if pairs is None:
        pair_list = list(permutations(systems, 2))
    else:
        pair_list = [(str(a), str(b)) for a, b in pairs]
        unknown = sorted({x for p in pair_list for x in p} - set(columns))
        if unknown:
            raise ValueError(f"reconstruction_report: pairs name unknown system(s) {unknown}; known: {columns}.")
    tables = _paper_tables(frame, systems, proposer_list)
    papers = tables["papers"]
    domains = sorted(papers["domain"].unique(), key=str)
    scopes: list[tuple[Any, np.ndarray]] = [(d, np.flatnonzero((papers["domain"] == d).to_numpy())) for d in domains]
    scopes.append((POOLED, np.arange(len(papers))))
    streams = np.random.SeedSequence(seed).spawn(len(scopes))
    col_idx = {c: i for i, c in enumerate(columns)}
    excluded = tables["excluded"]
    rate_rows: list[dict[str, Any]] = []
    pair_rows: list[dict[str, Any]] = []
    for (scope, rows), stream in zip(scopes, streams, strict=True):
        m = tables["matches"][rows]
        n = tables["units"][rows]
        anym = (m > 0).astype(float)
        has = (n > 0).astype(float)
        counts = _draw_counts(len(rows), replicates, np.random.default_rng(stream))
        k = len(columns)
        totals = counts @ np.hstack([m, n, anym, has])  # (R, 4K), one product for every system and control
        rate_b = _ratio(totals[:, :k], totals[:, k : 2 * k])
        succ_b = _ratio(totals[:, 2 * k : 3 * k], totals[:, 3 * k :])
        rate = _ratio(m.sum(0), n.sum(0))
        succ = _ratio(anym.sum(0), has.sum(0))
        for c in columns:
            j = col_idx[c]
            lo, hi, und = _percentile(rate_b[:, j], level)
            slo, shi, sund = _percentile(succ_b[:, j], level)
            if c in CONTROLS:
                ex_u = ex_t = None
            else:
                sel = excluded.xs(c, level="system") if c in excluded.index.get_level_values("system") else None
                if sel is None:
                    ex_u = ex_t = 0
                elif scope == POOLED:
                    ex_u, ex_t = int(sel["_u"].sum()), int(sel["_t"].sum())
                else:
                    ex_u = int(sel["_u"].get(scope, 0))
                    ex_t = int(sel["_t"].get(scope, 0))
            rate_rows.append(
                {
                    "domain": scope,
                    "system": c,
                    "kind": "control" if c in CONTROLS else "system",
                    "match_rate": None if math.isnan(rate[j]) else float(rate[j]),
                    "match_rate_ci": [lo, hi],
                    "success_at_5": None if math.isnan(succ[j]) else float(succ[j]),
                    "success_at_5_ci": [slo, shi],
                    "n_papers": int(has[:, j].sum()),
                    "n_hypotheses": int(n[:, j].sum()),
                    "n_matches": int(m[:, j].sum()),
                    "n_papers_with_match": int(anym[:, j].sum()),
                    "excluded_unlabelled": ex_u,
                    "ties": ex_t,
                    "n_undefined": max(und, sund),
                }
            )
        for a, b in pair_list:
            ia, ib = col_idx[a], col_idx[b]
            point = _ratio(rate[ia], rate[ib])
            lo, hi, und = _percentile(_ratio(rate_b[:, ia], rate_b[:, ib]), level)
            both = (n[:, ia] > 0) & (n[:, ib] > 0)
            diff = m[both, ia] - m[both, ib]
            a_more, b_more = int((diff > 0).sum()), int((diff < 0).sum())
            pair_rows.append(
                {
                    "domain": scope,
                    "a": a,
                    "b": b,
                    "ratio": None if math.isnan(point) else float(point),
                    "ratio_ci": [lo, hi],
                    "n_undefined": und,
                    "sign_test": {
                        "n_papers": int(both.sum()),
                        "a_more": a_more,
                        "b_more": b_more,
                        "ties": int((diff == 0).sum()),
                        "p_value": None,
                    },
                }
            )
    _sign_test_p_values([row["sign_test"] for row in pair_rows])
    return {
        "method": {
            "replicates": replicates,
            "seed": seed,
            "level": level,
            "interval": "percentile (numpy linear), undefined replicates left out",
            "resampling": "papers with replacement within each domain; pooled: all papers; same draw for every system",
            "tie_rule": "a majority tie counts as not a Match",
            "sign_test": "papers where both have a labelled hypothesis; ties dropped; two-sided binomtest p=0.5",
            "proposers": proposer_list,
            "top_k": TOP_K,
        },
        "systems": systems,
        "controls": list(CONTROLS),
        "domains": [*domains, POOLED],
        "rates": rate_rows,
        "pairs": pair_rows,
    }
