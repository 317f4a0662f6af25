"""``python manage.py intrinsic_report BENCHMARK [--replicates N] [--seed S] [--json]``: the Intrinsic-scoring report."""

from __future__ import annotations

from typing import Any

from arena.models import Benchmark
from arena.protocol_reports import ProtocolReportCommand
from arena.protocol_reports import text_table as _table
from intrinsic.models import PROTOCOL
from intrinsic.reports import REPORT_REPLICATES, REPORT_SEED, ReportError, benchmark_intrinsic_report


def _value(metric: dict[str, Any] | None, percent: bool) -> str:
    """``33.0 [30.2, 35.8]`` (percent) or ``0.412 [0.390, 0.431]``; ``—`` when not reported."""
    if metric is None or metric["value"] is None:
        return "—"

    def one(v: float | None) -> str:
        return "—" if v is None else (f"{100 * v:.1f}" if percent else f"{v:.3f}")

    lo, hi = metric["ci"]
    return f"{one(metric['value'])} [{one(lo)}, {one(hi)}]"


class Command(ProtocolReportCommand):
    help = (
        "The Intrinsic-scoring report of a benchmark: Hit@1/2/3/5, MRR and the gold-beats-distractor rate per scorer "
        "(pooled; per discipline in --json) with paper-bootstrap intervals, paired differences of scorers, cross-model "
        "agreement per criterion and the gold-rank distributions."
    )

    protocol = PROTOCOL
    import_command = "import_intrinsic"
    replicates_default, seed_default, error = REPORT_REPLICATES, REPORT_SEED, ReportError

    def report(self, benchmark: Benchmark, replicates: int, seed: int) -> dict[str, Any]:
        return benchmark_intrinsic_report(benchmark=benchmark, replicates=replicates, seed=seed)

    def tables(self, doc: dict[str, Any]) -> None:
        b, read, method = doc["benchmark"], doc["read"], doc["method"]
        self.stdout.write(
            f"{b['name']} v{b['version']}: {read['papers']} papers × {read['candidates_per_paper']} candidates, {read['scores']} scores, "
            f"{read['rankings']} listwise rankings ({read['invalid_rankings']} invalid)"
        )
        self.stdout.write(
            f"{method['level']:.0%} paper-bootstrap percentile intervals, {method['replicates']} replicates, seed {method['seed']}; "
            f"tie rule: {method['tie_rule']}"
        )
        for gone in read["scorers_left_out"]:
            self.stdout.write(f"left out: {gone['name']} ({gone['model']}, {gone['criterion']}): {gone['reason']}")
        pooled = {r["scorer"]: r for r in doc["results"] if r["discipline"] == "all"}
        rows = [
            [
                "scorer",
                "model",
                "criterion",
                "Hit@1 %",
                "Hit@2 %",
                "Hit@3 %",
                "Hit@5 %",
                "MRR",
                "beats %",
                "ranked",
                "excluded",
                "ties",
            ]
        ]
        for s in doc["scorers"]:
            r = pooled[s["name"]]
            m = r["metrics"]
            rows.append(
                [
                    s["name"],
                    s["model"],
                    s["criterion"],
                    *(_value(m[f"hit_at_{k}"], True) for k in method["hit_ks"]),
                    _value(m["mrr"], False),
                    _value(m["beats"], True),
                    str(r["n_ranked"]),
                    str(r["n_excluded"]),
                    "—" if r["papers_with_ties"] is None else f"{r['papers_with_ties']} papers",
                ]
            )
        self.stdout.write("")
        self.stdout.write("\n".join(_table(rows)))
        for s in doc["scorers"]:
            for metric, why in pooled[s["name"]]["not_reported"].items():
                if metric in ("mrr", "beats"):
                    self.stdout.write(f"{s['name']}: {metric} {why}")
        if doc["agreement"]:
            rows = [["criterion", "scope", "models", "papers", "all rank gold first", "share [CI]"]]
            for a in doc["agreement"]:
                rows.append(
                    [
                        a["criterion"],
                        a["discipline"],
                        ", ".join(a["models"]),
                        str(a["n_papers"]),
                        str(a["n_all_first"]),
                        _value({"value": a["share"], "ci": a["ci"]}, True),
                    ]
                )
            self.stdout.write("")
            self.stdout.write("\n".join(_table(rows)))
        if doc["pairs"]:
            rows = [["a", "b", "papers", "ΔHit@1 %", "ΔHit@5 %", "ΔMRR"]]
            for p in doc["pairs"]:
                d = p["differences"]
                rows.append(
                    [
                        p["a"],
                        p["b"],
                        str(p["n_papers"]),
                        _value(d["hit_at_1"], True),
                        _value(d["hit_at_5"], True),
                        _value(d["mrr"], False),
                    ]
                )
            self.stdout.write("")
            self.stdout.write("pooled paired differences a − b (same paper draws):")
            self.stdout.write("\n".join(_table(rows)))
