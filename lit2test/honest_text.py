"""The leaderboard command's text for issue 26's sections: honest intervals and style control.

Figures are written as the page writes them (:mod:`lit2test.readers`): strengths and SEs on the document's scale,
rank ranges as ``1–2`` and simultaneous rank sets as ``{1, 2}``, shares as percentages, counts with separators.
"""

from __future__ import annotations

from arena import formatting as f
from arena.formatting import table
from lit2test.readers import rank_delta_text, rank_interval_text, rank_set_text, se_text, strength_ci_text, strength_text


def _honest_rows(doc: dict, figures: str) -> list[list[str]]:
    honest = doc["honest_intervals"]
    sandwich = honest.get("sandwich") or {}
    sets = (honest.get("rank_sets") or {}).get("sets", {})
    coverage = honest.get("coverage") or {}
    ranges = doc["bootstrap"].get("rank_intervals", {})
    rows = []
    for rank, m in enumerate(doc["models"], start=1):
        fit = doc["bt"]["ordered"].get(m) or {}
        rows.append(
            [
                str(rank),
                m,
                f"{strength_text(fit.get('strength'), figures)} {strength_ci_text(fit.get('ci'), figures)}",
                se_text((sandwich.get("se") or {}).get(m), figures),
                strength_ci_text((sandwich.get("ci") or {}).get(m), figures),
                rank_interval_text(ranges.get(m)),
                rank_set_text(sets.get(m)),
                f.percent((coverage.get("bootstrap") or {}).get(m), 0),
                f.percent((coverage.get("sandwich") or {}).get(m), 0),
            ]
        )
    return rows


def drop_k_sentence(drop: dict) -> str:
    """The drop-k line: how many contexts the leader survives losing, and whether the k found is exact."""
    top, holds = drop["top"], drop["holds_up_to"]
    held = f"The top rank ({top}) holds when any {f.count(holds)} context{'s are' if holds != 1 else ' is'} removed (proven)"
    if drop["k"] is None:
        if drop["exact"]:
            return f"{held}; no removal of contexts changes it (every removal tried)."
        return f"{held}; an influence-guided search found no removal that changes it (a search, not a proof)."
    how = (
        "exactly the smallest such k"
        if drop["exact"]
        else "an upper bound on the smallest k (influence-guided search, verified by refitting)"
    )
    return f"{held}; removing {f.count(drop['k'])} contexts changes it ({drop['new_top']} leads): {how}."


def coverage_sentence(coverage: dict) -> str:
    """How often the 95% CIs covered the truth in the parametric bootstrap, with its settings and Monte Carlo error."""
    level = f.percent(coverage["level"], 0)
    wald = coverage.get("sandwich_overall")
    return (
        f"Coverage of the {level} CIs, simulated: {f.count(coverage['simulations'])} data sets drawn from the fitted strengths, "
        f"{f.count(coverage['replicates'])} case-bootstrap replicates each: Table 1's CIs {f.percent(coverage['bootstrap_overall'])}"
        + (f", Wald CIs {f.percent(wald)}" if wald is not None else "")
        + f" of models and data sets (Monte Carlo SE ±{f.number(100 * coverage['mc_se'], 1)} points per model)."
    )


def prior_sentence(prior: dict | None) -> str:
    """The prior-influence line: a warning when the pseudo-count moves any strength by more than its SE."""
    if prior is None:
        return "Pseudo-count prior against the SEs: no prior, or fewer than two contexts."
    if not prior["mle_exists"]:
        return (
            "WARNING: without the pseudo-count no finite fit exists (the win graph is not strongly connected): "
            "the prior decides the strengths' magnitudes."
        )
    ratios = [r for r in (prior.get("ratio") or {}).values() if r is not None]
    largest = f.number(max(ratios), 2) if ratios else f.NONE
    if prior["warning"]:
        moved = ", ".join(f"{m} ({f.number(prior['ratio'][m], 2)} SE)" for m in prior["flagged"])
        return f"WARNING: the pseudo-count prior ({f.number(prior['pseudo_count'], 1)}) moves strengths by more than their SE: {moved}."
    return f"Pseudo-count prior ({f.number(prior['pseudo_count'], 1)}): moves no strength by more than its SE (largest {largest} SE)."


def honest_intervals_text(doc: dict, figures: str) -> list[str]:
    """The honest-intervals section of ``manage.py leaderboard`` (ordered fit)."""
    honest = doc.get("honest_intervals")
    if not honest:
        return []
    sets = honest.get("rank_sets") or {}
    lines = [
        "",
        f"Honest intervals (ordered fit; {f.count(honest['judgments'])} judgments in {f.count(honest['contexts'])} contexts)",
    ]
    if honest.get("unavailable"):
        return [*lines, f"  Not computed: {honest['unavailable']}.", "  " + prior_sentence(honest.get("prior"))]
    headers = [
        "rank",
        "model",
        "BT [95% CI]",
        "SE (cluster)",
        "Wald 95% CI",
        "rank range",
        "rank set (simultaneous 95%)",
        "CI coverage",
        "Wald coverage",
    ]
    lines += table(headers, _honest_rows(doc, figures), align="rl" + "r" * (len(headers) - 2))
    lines += [
        "  SE (cluster): cluster-robust sandwich standard error, contexts as clusters (CR1); Wald 95% CI: strength ± 1.96 SE.",
        "  rank range: the 95% range of each model's rank over the case-bootstrap replicates, one model at a time;",
        f"  rank set (simultaneous 95%): every model's true rank lies in its set at once (max-t over {f.count(sets.get('replicates'))} "
        f"context-bootstrap replicates, critical value {f.number(sets.get('critical_value'), 2)}).",
        "  " + drop_k_sentence(honest["drop_k"]),
        "  " + coverage_sentence(honest["coverage"]),
        "  " + prior_sentence(honest.get("prior")),
    ]
    return lines


def style_control_text(doc: dict, figures: str) -> list[str]:
    """The style-control section of ``manage.py leaderboard --style-control``."""
    style = doc.get("style_control")
    if not style:
        return []
    used = style["judgments"]
    lines = [
        "",
        f"Style control ({', '.join(style['requested'])}): {f.count(used['used'])} of {f.count(used['total'])} judgments "
        f"({f.count(used['contexts'])} contexts) have the texts of both sides",
    ]
    lines += [f"  {d['feature']} left out: {d['reason']}" for d in style.get("dropped", [])]
    if not style["available"]:
        return [*lines, f"  Not fitted: {style['reason']}."]
    rows = [
        [
            str(m["rank"]),
            m["model"],
            f"{strength_text(m['strength'], figures)} {strength_ci_text(m['ci'], figures)}",
            str(m["plain_rank"]),
            strength_text(m["plain_strength"], figures),
            rank_delta_text(m["rank_delta"]),
        ]
        for m in style["models"]
    ]
    lines += table(["rank", "model", "style-controlled [95% CI]", "plain rank", "plain", "rank Δ"], rows, align="rlrrrr")
    coefficients = [
        [
            name,
            f"{f.number(c['gamma'], 3)} {f.interval(c['ci'], 3)}",
            f"{f.number(c['gamma_raw'], 4)} {f.interval(c['ci_raw'], 4)}",
            c["unit"],
        ]
        for name, c in style["coefficients"].items()
    ]
    lines += table(["feature", "γ per typical difference [95% CI]", "γ per unit [95% CI]", "unit"], coefficients, align="lrrl")
    fit = style["fit"]
    lines.append(
        f"  rank Δ = plain rank − style-controlled rank (+ rises once style is controlled); plain = the same judgments "
        f"without covariates. γ in log-odds; {f.count(style['replicates'])} context-bootstrap replicates; fit "
        f"{'converged' if fit['converged'] else 'NOT converged'} (gradient {fit['grad_norm']:.1e}, tolerance {fit['tol']:.0e}); "
        f"{f.count(fit['unconverged_replicates'])} unconverged replicates."
    )
    return lines
