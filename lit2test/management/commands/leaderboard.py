from __future__ import annotations

import json
import math

from django.core.exceptions import ObjectDoesNotExist
from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena import formatting as f
from arena.apis import MAX_PSEUDO_COUNT, MAX_SEED
from arena.extensions import human_figures_for
from arena.formatting import table
from arena.models import PAIRS, JudgeRun
from arena.selectors import (
    LEADERBOARD_PSEUDO_COUNT,
    LEADERBOARD_REPLICATES,
    LEADERBOARD_SEED,
    STYLE_REPLICATES,
    benchmark_resolve,
    run_default,
    run_leaderboard,
)
from lit2test.honest_text import honest_intervals_text, style_control_text
from lit2test.readers import (
    DEFAULT_SCALE,
    SCALES,
    figures_spec,
    leaderboard_for_readers,
    rank_interval_text,
    strength_ci_text,
    strength_text,
    style_choice,
)
from lit2test.style_inputs import run_side_features


class Command(BaseCommand):
    help = "Print a benchmark's leaderboard (the canonical run unless --run is given)."
    requires_system_checks: list = []  # a read-only report; `manage.py check` is where checks run

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("benchmark", help="benchmark id, name (newest version) or name@version")
        parser.add_argument("--run", type=int, default=None, help="judge run id (default: the canonical run)")
        parser.add_argument("--replicates", type=int, default=LEADERBOARD_REPLICATES)
        parser.add_argument("--seed", type=int, default=LEADERBOARD_SEED)
        parser.add_argument("--pseudo-count", type=float, default=LEADERBOARD_PSEUDO_COUNT)
        parser.add_argument(
            "--scale",
            choices=list(SCALES),
            default=DEFAULT_SCALE,
            help="the strengths' scale: log-ability (the BT strength, as the paper prints it) or elo "
            "(1500 + 400·θ/ln 10, as HypoArena's ratings); the JSON's 'scale' says which",
        )
        parser.add_argument(
            "--style-control",
            nargs="?",
            const="length,citations,structure",
            default=None,
            metavar="FEATURES",
            help="add the style-controlled ranking (Bradley–Terry with style covariates of the judged proposals) beside "
            "the plain one, with a rank Δ column: comma-separated features among length, citations, structure, words, "
            "headers, lists, bold (default when given alone: length,citations,structure); the JSON's 'style_control'",
        )
        parser.add_argument(
            "--style-replicates",
            type=int,
            default=STYLE_REPLICATES,
            help="context-bootstrap replicates of the style-controlled fit (its CIs)",
        )
        parser.add_argument("--json", action="store_true", help="print exactly one JSON object")

    def handle(self, *args: object, **options: object) -> None:
        _numbers_check(options)
        try:
            benchmark = benchmark_resolve(reference=str(options["benchmark"]))
        except ObjectDoesNotExist as exc:
            raise CommandError(str(exc)) from None
        if options["run"] is not None:
            run = JudgeRun.objects.filter(benchmark=benchmark, pk=options["run"]).first()
            if run is None:
                raise CommandError(f"{benchmark} has no run {options['run']}")
            if run.subjects != PAIRS:
                raise CommandError(
                    f"run {run.pk} judged diagnostic controls, which never enter a leaderboard; see controls_report"
                )
        else:
            run = run_default(benchmark=benchmark)
            if run is None:
                raise CommandError(f"{benchmark} has no judge run yet")
        try:
            style = style_choice(options["style_control"])
        except ValueError as exc:
            raise CommandError(f"--style-control: {exc}") from None
        document = run_leaderboard(
            run=run,
            human=human_figures_for(benchmark),  # human figures are supplied by the app that has them
            replicates=int(options["replicates"]),  # type: ignore[call-overload]
            seed=int(options["seed"]),  # type: ignore[call-overload]
            pseudo_count=float(options["pseudo_count"]),  # type: ignore[arg-type]
            style=style,
            style_replicates=int(options["style_replicates"]),  # type: ignore[call-overload]
            side_features=run_side_features,
        )
        document = leaderboard_for_readers(run=run, document=document, scale=str(options["scale"]))
        if options["json"]:
            self.stdout.write(json.dumps(document, ensure_ascii=False))
            return
        self.stdout.write(render_text(document))


def _numbers_check(options: dict[str, object]) -> None:
    """Refuse, naming the option, the numbers the leaderboard API refuses too (its ``seed`` and ``pseudo_count``
    ranges), before anything is read: a negative seed is no seed of numpy's generator, and a pseudo-count that is
    negative, NaN or infinite is no prior (the bootstrap replicates have no API cap here: the command is offline)."""
    if int(options["replicates"]) < 1 or int(options["style_replicates"]) < 1:  # type: ignore[call-overload]
        raise CommandError("--replicates and --style-replicates must be at least 1")
    seed = int(options["seed"])  # type: ignore[call-overload]
    if not 0 <= seed <= MAX_SEED:
        raise CommandError(f"--seed must be a whole number from 0 to {MAX_SEED}; got {seed}")
    pseudo_count = float(options["pseudo_count"])  # type: ignore[arg-type]
    if not (math.isfinite(pseudo_count) and 0 <= pseudo_count <= MAX_PSEUDO_COUNT):
        raise CommandError(
            f"--pseudo-count must be a finite number from 0 to {MAX_PSEUDO_COUNT:g} (0.5 is the protocol's, 0 none); "
            f"got {pseudo_count}"
        )


FITS = (("ordered", "ordered"), ("folded", "folded"), ("stable", "stable-only"))


def _pairs(rows: list[dict], third: str) -> dict[tuple[str, str], tuple]:
    out: dict[tuple[str, str], tuple] = {}
    for h in rows:
        out[(h["a"], h["b"])] = (h["a_wins"], h["b_wins"], h[third])
        out[(h["b"], h["a"])] = (h["b_wins"], h["a_wins"], h[third])
    return out


def _matrix(models: list[str], pairs: dict[tuple[str, str], tuple]) -> list[str]:
    rows = [[m, *(f.NONE if o == m or (m, o) not in pairs else f.wlt(*pairs[(m, o)]) for o in models)] for m in models]
    return table(["model", *(f"vs {m}" for m in models)], rows)


def _majority(h: dict) -> str:
    return h["a"] if h["a_wins"] > h["b_wins"] else h["b"] if h["b_wins"] > h["a_wins"] else "level"


def render_text(doc: dict) -> str:
    """The leaderboard document as readable text: every section, tables for every table."""
    lines = _header(doc)
    if doc["diagnostic"].get("insufficient_data"):
        lines += ["", "Not enough judged cases to fit yet (at least two models and one complete case are needed)."]
        return "\n".join(lines)
    for section in (
        _diagnostic_warnings,
        _table_one,
        _rank_ranges,
        _honest_intervals,
        _style_control,
        _three_fits,
        _head_to_head,
        _rank_recovery,
        _cluster_bootstrap,
        _condorcet,
        _tie_sensitivity,
        _batches,
        _position_bias,
        _diagnostics,
    ):
        lines += section(doc)
    return "\n".join(lines)


def _figures(doc: dict) -> str:
    """How strengths are written: the document's scale, two decimals of log-ability (whole rating points)."""
    return figures_spec((doc.get("scale") or {}).get("name", DEFAULT_SCALE), 2)


def _strength(doc: dict, value: float | None, ci: list | None = None) -> str:
    text = strength_text(value, _figures(doc))
    return text if ci is None else f"{text} {strength_ci_text(ci, _figures(doc))}"


def _header(doc: dict) -> list[str]:
    """The benchmark, the run, the cases counted, the fit's settings, the scale and when the newest verdict was stored."""
    run, cases = doc["run"], doc["cases"]
    boot, bt = doc["bootstrap"], doc["bt"]
    updated = doc.get("last_updated") or {}
    return [
        f"{doc['benchmark']['name']} v{doc['benchmark']['version']} — judge {run['judge_model']} ({run['label']}"
        + (", replay of stored judgments" if run["replay"] else "")
        + f", {run['status']})",
        f"Cases: {f.count(cases['total'])} ({f.count(cases['stable'])} order-stable, {f.count(cases['sensitive'])} order-sensitive"
        + (f", {f.count(cases['incomplete'])} incomplete, excluded" if cases.get("incomplete") else "")
        + ")",
        f"Bradley–Terry pseudo-count {bt['pseudo_count']}; case bootstrap {f.count(boot['replicates'])} replicates (seed {boot['seed']})"
        + (f", {f.percent(bt['level'], 0)} percentile intervals" if bt.get("level") else ""),
        f"Scale: {(doc.get('scale') or {}).get('description', bt.get('scale', ''))}",
        f"Last updated: newest verdict stored {updated.get('judgment_stored_at') or 'never'} (run #{run['id']})",
    ]


def _diagnostic_warnings(doc: dict) -> list[str]:
    """When the strengths are diagnostic only: why (separations, a graph not strongly connected, diverged fits)."""
    diag = doc["diagnostic"]
    if not diag.get("strengths_diagnostic_only"):
        return []
    lines = ["", "WARNING: strengths are diagnostic only; read the ranks, Condorcet relations and bootstrap rank recovery."]
    for p in doc["separation"]:
        lines.append(
            f"  complete separation: {p['a']} won all {f.count(p['a_wins'])} decided stable cases against {p['b']} "
            f"({f.wlt(p['a_wins'], p['b_wins'])})"
        )
    if not diag.get("stable_graph_strongly_connected", True):
        groups = " | ".join(", ".join(c) for c in diag.get("stable_graph_components", []))
        lines.append(f"  the graph of stable wins is not strongly connected: {groups}")
    for kind, fit in diag.get("fits", {}).items():
        if fit.get("diverged"):
            lines.append(f"  the {kind} fit diverged")
    return lines


def _table_one_row(doc: dict, rank: int, model: str, human: dict) -> list[str]:
    fit, wlt = doc["bt"]["ordered"].get(model) or {}, doc["stable_wlt"][model]
    row = [
        str(rank),
        model,
        _strength(doc, fit.get("strength"), fit.get("ci") or [None, None]),
        f.wlt(wlt["w"], wlt["l"], wlt["t"]),
        f.count(wlt["t"]),
    ]
    if human:
        h = human["models"].get(model)
        row.append(f"{f.number(h['rate'], 3)} {f.interval(h['ci'], 3)} ({f.count(h['n'])})" if h else f.NONE)
    return row


def _table_one(doc: dict) -> list[str]:
    """Table 1 as the paper prints it (ordered fit), with the human win rates when a formal study gives them."""
    human = doc.get("human_win_rate_detail") or {}
    lines = ["", "Table 1 (ordered fit, as the paper's Table 1 prints it)"]
    on_elo = (doc.get("scale") or {}).get("name") == "elo"
    headers = [
        "rank",
        "model",
        "rating [95% CI]" if on_elo else "BT [95% CI]",
        "stable W–L–T",
        "order-sensitive",
    ]
    if human:
        headers.append("human WR [95% CI] (n)")
    rows = [_table_one_row(doc, rank, model, human) for rank, model in enumerate(doc["models"], start=1)]
    lines += table(headers, rows, align="rl" + "r" * (len(headers) - 2))
    if human:
        study = human["study"]
        lines.append(
            f"Human WR: formal study {study['name']!r} (#{study['id']}); ties 0.5, INVALID left out; n = labels; "
            f"CI: {human['method']}, {f.count(human['replicates'])} replicates."
        )
    return lines


def _rank_ranges(doc: dict) -> list[str]:
    """Beside Table 1, as the page prints them in it: each model's rank range and its comparisons."""
    ranges, counts = doc["bootstrap"].get("rank_intervals", {}), doc.get("comparisons", {})
    level = f.percent(doc["bt"].get("level", 0.95), 0)
    lines = [
        "",
        f"Rank ranges ({level} of the case-bootstrap replicates) and comparisons ({counts.get('unit', 'ordered judgment')}s)",
    ]
    rows = [
        [str(rank), m, rank_interval_text(ranges.get(m)), f.count(counts.get("models", {}).get(m))]
        for rank, m in enumerate(doc["models"], start=1)
    ]
    lines += table(["rank", "model", "rank range", "judgments"], rows, align="rlrr")
    return lines


def _honest_intervals(doc: dict) -> list[str]:
    """Issue 26's honest intervals: SEs, simultaneous rank sets, drop-k, coverage, the prior's influence."""
    return honest_intervals_text(doc, _figures(doc))


def _style_control(doc: dict) -> list[str]:
    """The style-controlled ranking beside the plain one, when ``--style-control`` asked for it."""
    return style_control_text(doc, _figures(doc))


def _three_fits(doc: dict) -> list[str]:
    """The ordered, folded and stable-only fits side by side, whether they order alike and how stably."""
    bt, models = doc["bt"], doc["models"]
    lines = ["", "Three fits (strength [95% CI])"]
    rows = [
        [
            m,
            *(
                _strength(doc, (bt[k].get(m) or {}).get("strength"), (bt[k].get(m) or {}).get("ci") or [None, None])
                for k, _ in FITS
            ),
        ]
        for m in models
    ]
    lines += table(["model", *(label for _, label in FITS)], rows)
    agree = doc["diagnostic"].get("orderings_agree", {})
    fits_boot = doc["bootstrap"].get("fits", {})
    lines.append(
        "  same ordering as the ordered fit: "
        + ", ".join(f"{label} {'yes' if agree.get(k, True) else 'no'}" for k, label in FITS[1:])
    )
    lines.append(
        "  modal ranking share (case bootstrap): "
        + ", ".join(f"{label} {f.number(fits_boot.get(k, {}).get('modal_fraction'), 4)}" for k, label in FITS)
    )
    return lines


def _head_to_head(doc: dict) -> list[str]:
    """The folded and the ordered head-to-head matrices."""
    models = doc["models"]
    lines = ["", "Folded head-to-head (row's stable wins–losses–order-sensitive against the column)"]
    lines += _matrix(models, _pairs(doc["head_to_head"], "sensitive"))
    lines += ["", "Ordered head-to-head (row's wins–losses–TIEs over ordered judgments)"]
    lines += _matrix(models, _pairs(doc["ordered_head_to_head"], "ties"))
    return lines


def _rank_recovery(doc: dict) -> list[str]:
    """The case bootstrap's modal ranking, top-1 shares and rank probabilities."""
    boot, models = doc["bootstrap"], doc["models"]
    lines = [
        "",
        f"Bootstrap rank recovery: modal ranking {f.ranking(boot['modal_ranking'])} in {f.percent(boot['modal_fraction'])} "
        f"of {f.count(boot['replicates'])} case replicates; distinct rankings: {f.count(boot.get('distinct_rankings', 0))}",
    ]
    lines.append("Top-1: " + ", ".join(f"{m} {f.number(boot['top1'].get(m, 0.0), 4)}" for m in models))
    probs = boot.get("rank_probabilities", {})
    lines += table(
        ["model", *(f"rank {k}" for k in range(1, len(models) + 1))],
        [[m, *(f.number(p, 4) for p in probs.get(m, []))] for m in models],
    )
    return lines


def _cluster_bootstrap(doc: dict) -> list[str]:
    """The context-cluster bootstrap beside the case bootstrap's intervals."""
    cluster, ordered = doc["cluster_bootstrap"], doc["bt"]["ordered"]
    lines = [
        "",
        f"Context-cluster bootstrap: {f.count(cluster['replicates'])} replicates over {f.count(cluster.get('contexts'))} contexts; "
        f"modal ranking {f.ranking(cluster.get('modal_ranking', []))} in {f.percent(cluster.get('modal_fraction'))}",
    ]
    rows = [
        [
            m,
            strength_ci_text((ordered.get(m) or {}).get("ci"), _figures(doc)),
            strength_ci_text(cluster["ci"].get(m), _figures(doc)),
            f"×{f.number(cluster['width_ratio'][m])}" if cluster.get("width_ratio", {}).get(m) else f.NONE,
        ]
        for m in doc["models"]
    ]
    lines += table(["model", "case 95% CI", "context 95% CI", "width ratio"], rows)
    return lines


def _condorcet(doc: dict) -> list[str]:
    """Condorcet relations on stable wins: the winner, the cycles or transitivity, the undecided pairs."""
    cond = doc["condorcet"]
    lines = ["", "Condorcet relations (on stable wins)"]
    lines += table(["model", "models it beats"], [[m, f.count(n)] for m, n in cond["beat_counts"].items()])
    lines.append(f"  Condorcet winner: {cond['winner']}" if cond.get("winner") else "  no Condorcet winner")
    if cond["cycles"]:
        lines += [f"  cycle: {' → '.join(c)} → {c[0]}" for c in cond["cycles"]]
        if cond.get("cycles_truncated"):
            lines.append("  (more cycles exist than are listed)")
    else:
        lines.append(
            "  acyclic and transitive"
            if cond["transitive"]
            else "  acyclic, not transitive (a chain of wins passes over an undecided pair)"
        )
    folded = _pairs(doc["head_to_head"], "sensitive")
    for a, b in cond.get("undecided", []):
        w = folded.get((a, b))
        lines.append(f"  undecided: {a} – {b}" + (f" ({f.wlt(w[0], w[1])} stable, {f.count(w[2])} order-sensitive)" if w else ""))
    if not doc["separation"]:
        lines.append("  complete separation: none")
    return lines


def _tie_sensitivity(doc: dict) -> list[str]:
    """Schemes A and B of counting order-sensitive cases, their strengths and scheme B's pairs."""
    ties = doc["tie_sensitivity"]
    a, b = ties["scheme_a"], ties["scheme_b"]
    lines = [
        "",
        "Tie sensitivity",
        f"  scheme A (sensitive = 0.5 each): {f.ranking(a['ranking'])}; modal share {f.number(a.get('modal_fraction'), 4)}",
        f"  scheme B (sensitive to the lower-ranked model): {f.ranking(b['ranking'])}; "
        + (
            "adjacent swaps: " + "; ".join(f"{x} / {y}" for x, y in b["ranking_flips"])
            if b.get("ranking_flips")
            else "the ordering holds"
        ),
    ]
    rows = [
        [m, _strength(doc, a.get("strengths", {}).get(m)), _strength(doc, b.get("strengths", {}).get(m))] for m in doc["models"]
    ]
    lines += ["  " + x for x in table(["model", "scheme A strength", "scheme B strength"], rows)]
    if b.get("head_to_head"):
        lines += ["  " + x for x in _scheme_b_pairs(b)]
    return lines


def _scheme_b_pairs(b: dict) -> list[str]:
    flipped = [(h["a"], h["b"]) for h in b.get("flipped", [])]
    rows = [
        [
            f"{h['a']} vs {h['b']}",
            f.wlt(h["stable_a_wins"], h["stable_b_wins"]),
            f.count(h["sensitive"]),
            f.wlt(h["a_wins"], h["b_wins"]),
            _majority(h) + (" (flips)" if (h["a"], h["b"]) in flipped else ""),
        ]
        for h in b["head_to_head"]
    ]
    return table(["pair", "stable", "sensitive", "scheme B", "majority"], rows, align="lrrrl")


def _batches(doc: dict) -> list[str]:
    """Each batch's ordering and strengths (ordered fit), when the cases come in batches."""
    if not doc["batches"]:
        return []
    lines = ["", "Per-batch orderings (ordered fit)"]
    rows = [
        [
            x["batch"] or "(none)",
            f.count(x["cases"]),
            f.count(x["stable"]),
            f.ranking(x["ranking"]),
            "yes" if x["matches_overall"] else "no",
        ]
        for x in doc["batches"]
    ]
    lines += table(["batch", "cases", "stable", "ordering", "same as overall"], rows, align="lrrll")
    rows = [[x["batch"] or "(none)", *(_strength(doc, x["strengths"].get(m)) for m in doc["models"])] for x in doc["batches"]]
    lines += ["", "Strengths per batch (ordered fit)", *table(["batch", *doc["models"]], rows)]
    return lines


def _position_bias(doc: dict) -> list[str]:
    side = doc.get("side_bias")
    if side:
        return [
            "",
            f"Position bias: side A won {f.count(side['a_wins'])}, side B {f.count(side['b_wins'])} of the decided ordered verdicts "
            f"({f.count(side['ties'])} TIEs); A's share {f.number(side['a_share'], 3)}, binomial p = {f.number(side['p_value'], 4)}",
        ]
    return ["", "Position bias: unknown (the verdicts do not record which model was shown as A)"]


def _diagnostics(doc: dict) -> list[str]:
    """The diagnostics line, and the pseudo-count prior's weight when the document gives it."""
    diag = doc["diagnostic"]
    lines = [
        f"Diagnostics: incomplete cases {f.count(diag.get('incomplete_cases', 0))}; stable-win graph strongly connected "
        f"{'yes' if diag.get('stable_graph_strongly_connected') else 'no'}; strengths diagnostic only "
        f"{'yes' if diag.get('strengths_diagnostic_only') else 'no'}"
        + (
            f"; models without a complete case: {', '.join(diag['models_without_cases'])}"
            if diag.get("models_without_cases")
            else ""
        )
    ]
    if pw := diag.get("prior_weight"):
        lines.append(_prior_weight(pw))
    return lines


def _prior_weight(pw: dict) -> str:
    shift = ""
    if pw.get("median_shift_ratio") is not None:
        shift = (
            f"; it moves the typical strength by {f.number(pw['median_shift_ratio'], 2)} of its 95% CI half-width "
            f"(largest {f.number(pw['max_shift_ratio'], 2)})"
        )
    verdict = "LARGE: the intervals cover the truth less often than 95%" if pw.get("large") else "small against the intervals"
    return f"Pseudo-count prior: {f.number(pw['pseudo_count'], 1)} per cell, {f.percent(pw['prior_share'])} of all counts{shift}; {verdict}"
