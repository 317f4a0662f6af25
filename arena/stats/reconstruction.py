"""Reconstruction statistics (PROTOCOL.md §3): recused Match labels, Match rate and success@5 with a paper-level
bootstrap, paired ratios, exact sign tests over paper-level rates and the candidate-count (oracle) controls. Pure
numpy/pandas/scipy.

Data contract (the app builds these frames from its tables):

* judgments, :data:`LABEL_COLUMNS`: one row per (hypothesis, judge). A hypothesis is identified by
  ``(domain, paper, system, slot)``; ``label`` is ``"match"`` or ``"no_match"``; ``system_families`` lists the
  model families a judge recuses on for that hypothesis: a proposer's own family; for a selection pipeline's champion,
  the family of the proposer hypothesis it was selected from (its origin), as the paper does (App. E). More than one
  family is accepted (a judge of any of them recuses).
* hypothesis labels (:func:`hypothesis_labels`, input of :func:`reconstruction_report`): one row per hypothesis.

Recusal and majority. A judgment whose ``judge_family`` is one of the hypothesis's ``system_families`` is dropped:
it is *missing*, never a No-match. The label is the majority of the remaining judges. A tie (as many Match as
No-match among an even number of judges) is recorded (``tie`` True) and counts as **not a Match** (label
``"no_match"``): a Match needs a strict majority of non-recused judges. A hypothesis with no remaining judge is
``unlabelled`` (label missing): excluded from every rate and counted in ``excluded_unlabelled``.

Scores (``label_rule``, :data:`LABEL_RULES`). Every rate is made of per-hypothesis scores:

* ``"majority"`` (default): 1 for a Match label, 0 otherwise (a tie scores 0);
* ``"fraction"`` (the paper's rule): the fraction of the non-recused judges saying Match, ``n_match / n_judges`` (a
  1–1 split scores ½). Needs the ``n_match`` and ``n_judges`` columns of :func:`hypothesis_labels`.

Per paper and system: the **paper score** (sum of the scores of its labelled hypotheses), the **labelled count**, the
**paper rate** (score / labelled) and the **best score** (its best hypothesis's score). Rates (per system, per domain
and pooled over domains, ``"all"``):

* ``match_rate`` (``rate``, :data:`RATE_RULES`): ``"pooled"`` (default) = paper scores summed / labelled hypotheses
  summed (a ratio of sums: a paper weighs by its labelled hypotheses); ``"paper-mean"`` (the paper's rule) = the mean of
  the paper rates over the papers where the system has a labelled hypothesis (every paper weighs the same);
* ``success_at_5`` = the mean of the best scores over the papers where the system has a labelled hypothesis: with
  majority labels, papers with at least one Match / papers with at least one labelled hypothesis of the system.

``n_matches`` is the sum of the scores (a whole number under majority labels) and ``n_papers_with_match`` the sum of
the best scores (papers with a Match under majority labels).

Paper-level bootstrap. A scope (one domain, or ``"all"``) holds P papers, ordered by ``(domain, str(paper))``.
Each replicate draws P paper indices uniformly with replacement (``rng.integers(0, P, size=(R, P))``; drawn in
chunks of replicates, which consumes the stream exactly as one draw would) and a drawn paper brings all its
judged hypotheses of every system. The same draw serves every system and control, so ratios and differences are
paired. The pooled scope resamples the pooled papers (not stratified by domain). Each scope has its own stream:
``numpy.random.default_rng(SeedSequence(seed).spawn(D + 1)[i])`` with i the scope's index in sorted domains
followed by ``"all"`` (so a domain's values do not depend on the systems or on the other domains' data). Per-paper
counts are (P × systems) matrices; every replicate's totals are one matrix product ``counts @ matrix``. Intervals are
percentile intervals (numpy's ``"linear"`` quantiles) at ``level``. A replicate whose denominator is zero (possible
when a system judged few papers) is undefined: it is left out of the interval and counted (``n_undefined``).

Ratios (``match_rate[a] / match_rate[b]``) are bootstrapped on the same draws; a replicate with b's rate 0 and
a's > 0 is +inf (kept), 0/0 is undefined (left out, counted). Sign test over papers: among the scope's papers
where both a and b have at least one labelled hypothesis, the papers where a's **paper rate** is higher, where b's
is, and ties (equal rates within :data:`RATE_TOLERANCE`; dropped). Rates, not Match counts: a system with 2 Matches
of 4 labelled hypotheses is above one with 2 of 5, whose fifth label is there (a missing label is missing, not a
No-match). The two-sided exact p of ``scipy.stats.binomtest(n_a_more, n_a_more + n_b_more, 0.5)`` (computed in
closed form, :func:`_sign_test_p_values`); p is None when no paper is untied.

Proposers and pipelines. ``proposers`` names the single models (default: every system in the labels); every other
system is a selection **pipeline** (its hypotheses are chosen among the proposers'). The controls are built per
paper over the proposers' hypotheses only, as the paper (App. E) defines them (a pipeline's champions are copies of
proposer hypotheses: counting them again would double them in the top-5 oracle and let a champion's independent
judgment into the slot oracle), then treated exactly like a system (same draws, same rates, usable in ``pairs``):

* ``slot_oracle``: one unit per (paper, slot) where at least one proposer hypothesis is labelled, scoring the best
  proposer score in that slot (under majority labels: a Match if any proposer's hypothesis in that slot is one). With
  five slots it is a "five picks, one per slot, chosen with hindsight" system, directly comparable with a pipeline's
  five slot champions.
* ``top5_oracle``: per paper, the best five of all proposers' labelled hypotheses: units min(5, labelled), scores the
  five best (under majority labels min(5, Matches)). It picks five without the slot constraint, so top5 ≥ slot oracle
  per paper.
* ``best_single``: per paper, the proposer with the highest paper rate there (chosen with hindsight; equal rates go to
  the one with more labelled hypotheses, then to the first by name): its score, labelled count and best score. The
  paper tests its pipeline against it with the sign test.

The two oracles' ``success_at_5`` is the same (a paper's best proposer score); their ``match_rate`` differs. A
pipeline that beats single proposers but not the slot oracle gains by choosing from more candidates, not by better
selection.

Pairs (default): each pair of systems once, ``(a, b)`` with a before b in the order pipelines then proposers, each
by name (so a pipeline is ``a`` against a proposer: its ratio reads "× the proposer"); then each pipeline against
``best_single``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import binom

LABEL_COLUMNS = ["domain", "paper", "system", "slot", "judge", "judge_family", "system_families", "label"]
HYPOTHESIS_KEY = ["domain", "paper", "system", "slot"]
LABELS = ("match", "no_match")
POOLED = "all"
#: How a hypothesis scores (module doc): the app's default first, then the paper's.
LABEL_RULES = ("majority", "fraction")
#: How a scope's Match rate is made of its papers (module doc): the app's default first, then the paper's.
RATE_RULES = ("pooled", "paper-mean")
CONTROLS = ("slot_oracle", "top5_oracle", "best_single")
#: Number of hypotheses a proposer returns per paper (and so picks of the top-k oracle).
TOP_K = 5
#: Two paper rates closer than this are equal (a sign-test tie; a tie for ``best_single``). A paper rate is a sum of at
#: most five scores over at most five hypotheses, so two different rates differ by far more; floating sums of scores
#: such as thirds (three judges) may not be exact, so equality is not tested exactly.
RATE_TOLERANCE = 1e-9
#: Elements (replicates × papers) of one chunk of drawn paper indices; bounds memory, never changes a value.
_DRAW_ELEMENTS = 4_000_000

#: The rules in force, as the report's ``method`` names them.
LABEL_RULE_TEXT = {
    "majority": "a hypothesis scores 1 when a strict majority of its non-recused judges say Match, else 0 (a tie is not a Match)",
    "fraction": "a hypothesis scores the fraction of its non-recused judges saying Match (the paper's rule; a 1-1 split scores 0.5)",
}
RATE_TEXT = {
    "pooled": "match rate = scores summed / labelled hypotheses summed over the scope's papers (a paper weighs by its labelled hypotheses)",
    "paper-mean": "match rate = mean over the scope's papers of each paper's rate, scores / labelled hypotheses (the paper's rule; every paper weighs the same)",
}
CONTROL_TEXT = {
    "slot_oracle": "per paper and slot, the best proposer score in that slot (five picks, one per slot, chosen with hindsight)",
    "top5_oracle": "per paper, the best five of all proposers' labelled hypotheses (no slot constraint)",
    "best_single": "per paper, the proposer with the highest paper rate there (hindsight; equal rates: more labelled hypotheses, then name)",
}


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


def _fill(tables: dict[str, np.ndarray], index: pd.MultiIndex, grouped: pd.DataFrame, column: int) -> None:
    """Write per-paper ``sum`` / ``size`` / ``max`` of scores (``grouped``, indexed by (domain, paper)) in one column."""
    if len(grouped):
        rows = index.get_indexer(grouped.index)
        tables["matches"][rows, column] = grouped["sum"].to_numpy()
        tables["units"][rows, column] = grouped["size"].to_numpy()
        tables["best"][rows, column] = grouped["max"].to_numpy()


def _oracles(tables: dict[str, np.ndarray], index: pd.MultiIndex, proposed: pd.DataFrame, first: int) -> None:
    """The slot and top-5 oracles (columns ``first`` and ``first + 1``) from the proposers' labelled hypotheses."""
    if proposed.empty:
        return
    paper = ["domain", "paper"]
    slot = proposed.groupby([*paper, "slot"], sort=False)["score"].max().reset_index()
    _fill(tables, index, slot.groupby(paper, sort=False)["score"].agg(["sum", "size", "max"]), first)
    ranked = proposed.sort_values("score", ascending=False, kind="stable")
    top = ranked[ranked.groupby(paper, sort=False).cumcount() < TOP_K]
    _fill(tables, index, top.groupby(paper, sort=False)["score"].agg(["sum", "size", "max"]), first + 1)


def _best_single(tables: dict[str, np.ndarray], proposer_columns: list[int], column: int) -> None:
    """Per paper, copy into ``column`` the proposer column with the highest paper rate (equal rates within
    :data:`RATE_TOLERANCE`: more labelled hypotheses, then the first column, i.e. by name)."""
    m, n = tables["matches"], tables["units"]
    best_rate = np.full(len(m), -1.0)
    best_units = np.zeros(len(m))
    choice = np.full(len(m), -1)
    for j in proposer_columns:
        judged = n[:, j] > 0
        rate = np.where(judged, m[:, j] / np.where(judged, n[:, j], 1.0), -1.0)
        same = np.abs(rate - best_rate) <= RATE_TOLERANCE
        better = judged & ((rate > best_rate + RATE_TOLERANCE) | (same & (n[:, j] > best_units)))
        best_rate = np.where(better, rate, best_rate)
        best_units = np.where(better, n[:, j], best_units)
        choice = np.where(better, j, choice)
    rows = np.flatnonzero(choice >= 0)
    for name in ("matches", "units", "best"):
        tables[name][rows, column] = tables[name][rows, choice[rows]]


def _paper_tables(labels: pd.DataFrame, systems: list[str], proposers: list[str]) -> dict[str, Any]:
    """Per paper (rows ordered by (domain, str(paper))) and per system + controls: paper score (``matches``), labelled
    count (``units``) and best score (``best``); and the unlabelled and tie counts per (domain, system)."""
    lab = labels[~labels["unlabelled"]]
    papers = (
        labels[["domain", "paper"]]
        .drop_duplicates()
        .assign(_d=lambda f: f["domain"].astype(str), _p=lambda f: f["paper"].astype(str))
        .sort_values(["_d", "_p"], kind="stable")
        .reset_index(drop=True)
    )
    index = pd.MultiIndex.from_frame(papers[["domain", "paper"]])
    columns = [*systems, *CONTROLS]
    tables = {name: np.zeros((len(papers), len(columns))) for name in ("matches", "units", "best")}
    per = lab.groupby(["domain", "paper", "system"], sort=False)["score"].agg(["sum", "size", "max"])
    for j, system in enumerate(systems):
        if system in per.index.get_level_values(2):
            _fill(tables, index, per.xs(system, level="system"), j)
    _oracles(tables, index, lab[lab["system"].isin(proposers)], len(systems))
    _best_single(tables, [j for j, s in enumerate(systems) if s in set(proposers)], len(systems) + 2)
    excl = labels.assign(_u=labels["unlabelled"].astype(np.int64), _t=labels["tie"].astype(np.int64))
    excl = excl.groupby(["domain", "system"], sort=False)[["_u", "_t"]].sum()
    return {"papers": papers, "columns": columns, **tables, "excluded": excl}


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


def _key(frame: pd.DataFrame, i: int) -> tuple[Any, ...]:
    """Row ``i``'s hypothesis key as plain Python values, for a message."""
    return tuple(v.item() if isinstance(v, np.generic) else v for v in (frame[c].iloc[i] for c in HYPOTHESIS_KEY))


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
            f"reconstruction_report: row {i} repeats hypothesis {_key(frame, i)}; "
            "pass one row per hypothesis (the output of hypothesis_labels)."
        )
    clash = sorted(set(frame["system"].astype(str)) & set(CONTROLS))
    if clash:
        raise ValueError(f"reconstruction_report: system name(s) {clash} are reserved for the controls; rename.")
    return frame


def _scores(frame: pd.DataFrame, label_rule: str) -> np.ndarray:
    """Each hypothesis's score under ``label_rule`` (module doc); NaN for an unlabelled one. Raises ValueError naming
    the first offending row when the fraction rule lacks or cannot use the judges' counts."""
    labelled = ~frame["unlabelled"].to_numpy()
    if label_rule == "majority":
        score = (frame["label"] == "match").to_numpy(dtype=float)
    else:
        missing = [c for c in ("n_match", "n_judges") if c not in frame.columns]
        if missing and labelled.any():
            raise ValueError(
                f"reconstruction_report: label_rule 'fraction' needs the column(s) {missing} (each hypothesis's Match "
                "votes and non-recused judges, as hypothesis_labels gives them); pass them or use label_rule 'majority'."
            )
        n_match = pd.to_numeric(frame.get("n_match", pd.Series(np.nan, index=frame.index))).to_numpy(dtype=float)
        n_judges = pd.to_numeric(frame.get("n_judges", pd.Series(np.nan, index=frame.index))).to_numpy(dtype=float)
        bad = labelled & ~((n_judges > 0) & (n_match >= 0) & (n_match <= n_judges))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"reconstruction_report: row {i} (hypothesis {_key(frame, i)}) has "
                f"n_match {n_match[i]} of n_judges {n_judges[i]}; a labelled hypothesis needs 0 <= n_match <= n_judges "
                "and n_judges >= 1 (or mark it unlabelled)."
            )
        score = np.divide(n_match, n_judges, out=np.zeros(len(frame)), where=labelled)
    score[~labelled] = np.nan
    return score


def _pair_list(
    pairs: Sequence[tuple[str, str]] | None, systems: list[str], proposers: list[str], columns: list[str]
) -> list[tuple[str, str]]:
    """The pairs asked for, checked; by default each pair of systems once (pipelines first, then proposers, each by
    name) and every pipeline against ``best_single`` (module doc)."""
    if pairs is None:
        pipelines = [s for s in systems if s not in set(proposers)]
        order = [*pipelines, *[s for s in systems if s in set(proposers)]]
        return [*combinations(order, 2), *[(p, "best_single") for p in pipelines]]
    pair_list = [(str(a), str(b)) for a, b in pairs]
    unknown = sorted({x for p in pair_list for x in p} - set(columns))
    if unknown:
        raise ValueError(f"reconstruction_report: pairs name unknown system(s) {unknown}; known: {columns}.")
    return pair_list


def _scope_figures(tables: dict[str, Any], rows: np.ndarray, counts: np.ndarray, rate_rule: str) -> dict[str, np.ndarray]:
    """One scope's per-paper matrices, its point rates and success@5, and their bootstrap replicates (one product)."""
    m, n, best = tables["matches"][rows], tables["units"][rows], tables["best"][rows]
    has = (n > 0).astype(float)
    if rate_rule == "pooled":
        num, den = m, n
    else:  # paper-mean: each paper's rate, weighted 1 where the system has a labelled hypothesis
        num, den = np.divide(m, n, out=np.zeros_like(m), where=n > 0), has
    k = m.shape[1]
    totals = counts @ np.hstack([num, den, best, has])  # (R, 4K), one product for every system and control
    return {
        "m": m,
        "n": n,
        "best": best,
        "has": has,
        "rate": _ratio(num.sum(0), den.sum(0)),
        "success": _ratio(best.sum(0), has.sum(0)),
        "rate_b": _ratio(totals[:, :k], totals[:, k : 2 * k]),
        "success_b": _ratio(totals[:, 2 * k : 3 * k], totals[:, 3 * k :]),
    }


def _count(value: float, whole: bool) -> int | float:
    """A sum of scores: a whole number under majority labels; under the fraction rule rounded to 10 places (so a sum
    of three thirds reads 1.0)."""
    return int(round(value)) if whole else round(float(value), 10)


def _excluded(excluded: pd.DataFrame, system: str, scope: Any) -> tuple[int, int]:  # noqa: ANN401
    """(unlabelled, ties) of a system in a scope."""
    if system not in excluded.index.get_level_values("system"):
        return 0, 0
    sel = excluded.xs(system, level="system")
    if scope == POOLED:
        return int(sel["_u"].sum()), int(sel["_t"].sum())
    return int(sel["_u"].get(scope, 0)), int(sel["_t"].get(scope, 0))


def _rate_row(
    scope: Any, c: str, j: int, fig: dict[str, np.ndarray], level: float, excluded: pd.DataFrame, whole: bool
) -> dict[str, Any]:  # noqa: ANN401
    lo, hi, und = _percentile(fig["rate_b"][:, j], level)
    slo, shi, sund = _percentile(fig["success_b"][:, j], level)
    ex_u, ex_t = (None, None) if c in CONTROLS else _excluded(excluded, c, scope)
    rate, success = fig["rate"][j], fig["success"][j]
    return {
        "domain": scope,
        "system": c,
        "kind": "control" if c in CONTROLS else "system",
        "match_rate": None if math.isnan(rate) else float(rate),
        "match_rate_ci": [lo, hi],
        "success_at_5": None if math.isnan(success) else float(success),
        "success_at_5_ci": [slo, shi],
        "n_papers": int(fig["has"][:, j].sum()),
        "n_hypotheses": int(fig["n"][:, j].sum()),
        "n_matches": _count(fig["m"][:, j].sum(), whole),
        "n_papers_with_match": _count(fig["best"][:, j].sum(), whole),
        "excluded_unlabelled": ex_u,
        "ties": ex_t,
        "n_undefined": max(und, sund),
    }


def _pair_row(scope: Any, a: str, b: str, ia: int, ib: int, fig: dict[str, np.ndarray], level: float) -> dict[str, Any]:  # noqa: ANN401
    """Ratio of the scope's rates with its interval, and the sign test over the paper rates (module doc)."""
    point = _ratio(fig["rate"][ia], fig["rate"][ib])
    lo, hi, und = _percentile(_ratio(fig["rate_b"][:, ia], fig["rate_b"][:, ib]), level)
    m, n = fig["m"], fig["n"]
    both = (n[:, ia] > 0) & (n[:, ib] > 0)
    diff = m[both, ia] / n[both, ia] - m[both, ib] / n[both, ib]
    tie = np.abs(diff) <= RATE_TOLERANCE
    return {
        "domain": scope,
        "a": a,
        "b": b,
        "ratio": None if math.isnan(point) else float(point),
        "ratio_ci": [lo, hi],
        "n_undefined": und,
        "sign_test": {
            "n_papers": int(both.sum()),
            "a_more": int(((diff > 0) & ~tie).sum()),
            "b_more": int(((diff < 0) & ~tie).sum()),
            "ties": int(tie.sum()),
            "p_value": None,
        },
    }


def _method(
    *, replicates: int, seed: int, level: float, label_rule: str, rate: str, proposers: list[str], systems: list[str]
) -> dict[str, Any]:
    """The parameters and the rules in force, named (module doc)."""
    return {
        "replicates": replicates,
        "seed": seed,
        "level": level,
        "interval": "percentile (numpy linear), undefined replicates left out",
        "resampling": "papers with replacement within each domain; pooled: all papers; same draw for every system",
        "label_rule": label_rule,
        "label_rule_text": LABEL_RULE_TEXT[label_rule],
        "rate": rate,
        "rate_text": RATE_TEXT[rate],
        "success_at_5": "mean over the papers with a labelled hypothesis of the paper's best hypothesis score"
        + (" (papers with a Match / papers)" if label_rule == "majority" else ""),
        "tie_rule": "a majority tie counts as not a Match"
        if label_rule == "majority"
        else "a 1-1 split scores 0.5 (fraction of the non-recused judges)",
        "sign_test": (
            "per paper where both have a labelled hypothesis, the two paper rates (score / labelled hypotheses: a "
            "missing label is missing, not a No-match); equal rates are ties, dropped; two-sided exact binomtest p=0.5"
        ),
        "pairs": "each pair of systems once (pipelines first, then proposers, by name); each pipeline against best_single",
        "proposers": proposers,
        "pipelines": [s for s in systems if s not in set(proposers)],
        "controls": {c: CONTROL_TEXT[c] + ", over the proposers' hypotheses only" for c in CONTROLS},
        "top_k": TOP_K,
    }


def reconstruction_report(
    labels: pd.DataFrame | Iterable[Mapping[str, Any]],
    *,
    replicates: int = 2000,
    seed: int = 0,
    level: float = 0.95,
    pairs: Sequence[tuple[str, str]] | None = None,
    proposers: Sequence[str] | None = None,
    label_rule: str = "majority",
    rate: str = "pooled",
) -> dict[str, Any]:
    """Match rates, success@5, paper-bootstrap CIs, paired ratios, sign tests and the controls (module doc).

    ``labels``: one row per hypothesis with ``domain, paper, system, slot, label`` and optionally ``unlabelled``,
    ``tie`` and (needed by ``label_rule="fraction"``) ``n_match`` and ``n_judges`` (the output of
    :func:`hypothesis_labels`). ``pairs``: (a, b) pairs for ratios and sign tests; names may be systems or controls;
    default each pair of systems once and each pipeline against ``best_single``. ``proposers``: the single models,
    whose hypotheses the controls pick from (default all systems: no pipeline; pass them whenever a pipeline is among
    the systems). ``label_rule`` (:data:`LABEL_RULES`) and ``rate`` (:data:`RATE_RULES`): see the module doc.

    Returns a JSON-ready dict: ``method`` (parameters and the rules in force), ``systems``, ``controls``, ``domains``
    (sorted, then ``"all"``), ``rates`` (one row per scope and system or control), ``pairs`` (one row per scope and
    pair).
    """
    if replicates < 1:
        raise ValueError(f"reconstruction_report: replicates must be ≥ 1, got {replicates}.")
    if not 0.0 < level < 1.0:
        raise ValueError(f"reconstruction_report: level must be in (0, 1), got {level}.")
    if label_rule not in LABEL_RULES or rate not in RATE_RULES:
        raise ValueError(
            f"reconstruction_report: label_rule {label_rule!r} / rate {rate!r}; expected label_rule one of "
            f"{list(LABEL_RULES)} and rate one of {list(RATE_RULES)}."
        )
    frame = _validate_labels(labels)
    frame["system"] = frame["system"].astype(str)
    frame["score"] = _scores(frame, label_rule)
    systems = sorted(frame["system"].unique())
    proposer_list = systems if proposers is None else [str(p) for p in proposers]
    unknown = sorted(set(proposer_list) - set(systems))
    if unknown:
        raise ValueError(f"reconstruction_report: proposers {unknown} have no hypothesis in the labels; known: {systems}.")
    columns = [*systems, *CONTROLS]
    pair_list = _pair_list(pairs, systems, proposer_list, columns)
    tables = _paper_tables(frame, systems, proposer_list)
    papers = tables["papers"]
    domains = sorted(papers["domain"].unique(), key=str)
    scopes: list[tuple[Any, np.ndarray]] = [(d, np.flatnonzero((papers["domain"] == d).to_numpy())) for d in domains]
    scopes.append((POOLED, np.arange(len(papers))))
    streams = np.random.SeedSequence(seed).spawn(len(scopes))
    col_idx = {c: i for i, c in enumerate(columns)}
    rate_rows: list[dict[str, Any]] = []
    pair_rows: list[dict[str, Any]] = []
    for (scope, rows), stream in zip(scopes, streams, strict=True):
        counts = _draw_counts(len(rows), replicates, np.random.default_rng(stream))
        fig = _scope_figures(tables, rows, counts, rate)
        for c in columns:
            rate_rows.append(_rate_row(scope, c, col_idx[c], fig, level, tables["excluded"], label_rule == "majority"))
        for a, b in pair_list:
            pair_rows.append(_pair_row(scope, a, b, col_idx[a], col_idx[b], fig, level))
    _sign_test_p_values([row["sign_test"] for row in pair_rows])
    return {
        "method": _method(
            replicates=replicates,
            seed=seed,
            level=level,
            label_rule=label_rule,
            rate=rate,
            proposers=proposer_list,
            systems=systems,
        ),
        "systems": systems,
        "controls": list(CONTROLS),
        "domains": [*domains, POOLED],
        "rates": rate_rows,
        "pairs": pair_rows,
    }
