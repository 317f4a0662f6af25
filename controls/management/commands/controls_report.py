"""``manage.py controls_report BENCHMARK``: the diagnostic controls report of a controls judge run (issue 11).

The same document as ``GET /api/benchmarks/<id>/controls/`` (``controls.reports.controls_report``); ``--json``
prints it as one JSON object, otherwise every section is printed as readable text.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.exceptions import ObjectDoesNotExist
from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena import formatting as f
from arena.commands import seed_argument
from arena.formatting import table
from arena.models import Benchmark, JudgeRun
from arena.schemas import JUDGE_DIMENSIONS as DIMENSIONS
from arena.selectors import benchmark_resolve
from arena.stats.controls import TARGETS
from controls.reports import DEFAULT_REPLICATES, ControlReportError, controls_report, controls_run_default, controls_run_missing


class Command(BaseCommand):
    help = (
        "Print the diagnostic controls report of a controls judge run (default: the benchmark's newest completed holistic "
        "one): clear and subtle corruption with the sham gate, rendering, falsifier ablation, naive controls, dimension audit."
    )
    requires_system_checks: list = []  # a read-only report; `manage.py check` is where checks run

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("benchmark", help="benchmark id, name (newest version) or name@version")
        parser.add_argument("--run", type=int, default=None, help="a controls run (default: the newest completed holistic one)")
        parser.add_argument(
            "--structured-run",
            type=int,
            default=None,
            help="a structured controls run on the same variants: target drops, non-target drifts and the dimension audit",
        )
        parser.add_argument("--replicates", type=int, default=DEFAULT_REPLICATES, help="case bootstrap replicates")
        parser.add_argument(
            "--seed", type=seed_argument, default=0, help="bootstrap seed (the same seed gives the same intervals)"
        )
        parser.add_argument(
            "--sham-tolerance",
            type=float,
            default=0.0,
            help="share of clean-vs-sham judgments that may be decisive for the sham gate to pass (default 0: all ties)",
        )
        parser.add_argument("--json", action="store_true", help="print exactly one JSON object")

    def handle(self, *args: object, **options: Any) -> None:  # noqa: ANN401
        try:
            benchmark = benchmark_resolve(reference=str(options["benchmark"]))
        except ObjectDoesNotExist as exc:
            raise CommandError(str(exc)) from None
        if options["run"] is not None:
            run = _run(benchmark, options["run"], "--run")
        else:
            run = controls_run_default(benchmark=benchmark)
            if run is None:
                raise CommandError(controls_run_missing(benchmark))
        structured = (
            _run(benchmark, options["structured_run"], "--structured-run") if options["structured_run"] is not None else None
        )
        try:
            document = controls_report(
                benchmark=benchmark,
                run=run,
                structured_run=structured,
                replicates=int(options["replicates"]),
                seed=int(options["seed"]),
                sham_tolerance=float(options["sham_tolerance"]),
            )
        except ControlReportError as exc:
            raise CommandError(str(exc)) from None
        if options["json"]:
            self.stdout.write(json.dumps(document, ensure_ascii=False))
            return
        if options["run"] is None:
            self.stdout.write(
                f"run {run.pk}: the newest completed holistic controls run of {benchmark} (name another with --run)"
            )
        self.stdout.write(render_text(document))


def _run(benchmark: Benchmark, run_id: int, option: str) -> JudgeRun:
    run = JudgeRun.objects.filter(pk=run_id).first()
    if run is None or run.benchmark_id != benchmark.pk:
        other = f" (it is a run of benchmark {run.benchmark_id})" if run is not None else ""
        raise CommandError(f"{option} {run_id}: {benchmark} has no run {run_id}{other}")
    return run


def _ci(value: float | None, ci: list[float] | None, digits: int = 2) -> str:
    return f.NONE if value is None else f"{f.number(value, digits)} {f.interval(ci, digits)}"


def _effect(effect: dict[str, Any] | None) -> str:
    return f.NONE if effect is None else _ci(effect["mean"], effect["ci"])


def _run_line(run: dict[str, Any]) -> str:
    return (
        f"run {run['id']}: judge {run['judge_model']} ({run['label']}, {run['run_type']}, {run['status']}"
        + (", replay of stored judgments" if run.get("replay") else "")
        + ")"
    )


def render_text(doc: dict[str, Any]) -> str:
    """The controls document as readable text: every section, a table where there is one."""
    bench, runs, method = doc["benchmark"], doc["runs"], doc["method"]
    lines = [f"{bench['name']} v{bench['version']} — diagnostic controls", "Verdicts: " + _run_line(runs["run"])]
    if runs["structured_run"] is not None:
        lines.append("Scores: " + _run_line(runs["structured_run"]))
    else:
        lines.append("Scores: none (target drops, non-target drifts and mean scores need a structured run: --structured-run)")
    lines.append(
        f"Case bootstrap: {f.count(method['replicates'])} replicates (seed {method['seed']}), {f.percent(method['level'], 0)} "
        "percentile intervals; a tie is not a clean win (it counts in P(clean wins)'s denominator only)."
    )

    lines += ["", "Clear single-field corruption (the clean proposal should win every ordered comparison)"]
    rows = [
        [
            t,
            f"{c['clean_wins']}/{c['ordered']}",
            f.count(c["variant_wins"]),
            f.count(c["ties"]),
            f.count(c["cases"]),
            _effect(c["target_drop"]),
            _effect(c["nontarget_drift"]),
        ]
        for t, c in ((t, doc["clear"][t]) for t in TARGETS)
    ]
    lines += table(
        ["dimension", "clean wins/ordered", "variant wins", "ties", "cases", "target drop [95% CI]", "non-target drift [95% CI]"],
        rows,
    )

    tolerance = method["sham_tolerance"]
    lines += [
        "",
        f"Subtle corruption with a sham (the sham gate first: clean–tie–sham over clean-vs-sham judgments, tolerance {tolerance:g})",
    ]
    rows = []
    for t in TARGETS:
        s = doc["subtle"][t]
        gate = s["sham_gate"]
        verdict = "PASS" if gate["passed"] else "FAIL"
        rows.append(
            [
                t,
                f"{verdict} {f.wlt(gate['clean_wins'], gate['ties'], gate['sham_wins'])}",
                f.number(s["p_clean_subtle"], 3),
                f.number(s["p_clean_sham"], 3),
                _ci(s["adjusted"]["value"], s["adjusted"]["ci"], 3),
                _effect(s["target_drop"]),
                _effect(s["nontarget_drift"]),
            ]
        )
    lines += table(
        [
            "dimension",
            "sham gate",
            "P(clean | subtle)",
            "P(clean | sham)",
            "adjusted [95% CI]",
            "target drop [95% CI]",
            "non-target drift [95% CI]",
        ],
        rows,
    )
    failed = [t for t in TARGETS if not doc["subtle"][t]["sham_gate"]["passed"]]
    if failed:
        lines.append(
            f"  the sham gate fails on {', '.join(failed)}: read the adjusted preference there with care (or not at all)"
        )

    r = doc["rendering"]
    lines += [
        "",
        "Rendering (schema vs prose of the same content: the verdict should not move)",
        f"  {f.count(r['pairs'])} pairs with both orders: {f.count(r['same_verdict'])} same verdict ({f.count(r['ties'])} all ties), "
        f"{f.count(r['flips'])} flips; schema preferred {f.count(r['schema_preferred'])}, prose preferred {f.count(r['prose_preferred'])}"
        + (f"; {f.count(r['incomplete'])} with one order only, left out" if r.get("incomplete") else ""),
    ]

    fa = doc["falsifier"]
    lines += [
        "",
        "Falsifier on/off (the filled proposal against the same one without its falsifying result)",
        f"  {f.count(fa['pairs'])} pairs, {f.count(fa['ordered'])} ordered: filled wins {f.count(fa['filled_wins'])}, "
        f"empty wins {f.count(fa['empty_wins'])}, ties {f.count(fa['ties'])}; preference (filled − empty) / ordered "
        f"{_ci(fa['preference']['value'], fa['preference']['ci'], 3)}",
    ]

    n = doc["naive"]
    lines += [
        "",
        "Hidden naive controls (the real proposal should win)",
        f"  {f.count(n['pairs'])} pairs: real wins {f.count(n['real_wins'])}/{f.count(n['ordered'])} ordered, naive wins "
        f"{f.count(n['naive_wins'])}, ties {f.count(n['ties'])}; real won both orders in {f.count(n['stable_real_wins'])}",
    ]

    audit = doc["dimension_audit"]
    lines += ["", "Dimension audit"]
    counts = audit.get("agreement_counts")
    if counts:
        lines.append(
            f"  structured overall verdict agrees with the holistic one in {f.count(counts['agree'])} of {f.count(counts['compared'])} "
            f"ordered judgments ({f.percent(audit['structured_vs_holistic_agreement'])})"
        )
    else:
        lines.append("  structured vs holistic agreement: — (needs a holistic --run and a structured --structured-run)")
    if audit.get("mean_scores"):
        by_role = audit.get("mean_scores_by_role") or {}
        rows = [
            [
                d,
                f.number(audit["mean_scores"].get(d)),
                f.number(by_role.get("clean", {}).get(d)),
                f.number(by_role.get("variant", {}).get(d)),
            ]
            for d in DIMENSIONS
        ]
        lines += ["  mean structured score (0–4)"] + ["  " + x for x in table(["dimension", "all", "clean", "variant"], rows)]
    return "\n".join(lines)
