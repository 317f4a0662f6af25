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


def _metric_cells(m: dict[str, Any], hit_ks: list[int]) -> list[str]:
    """Hit@k (%), MRR and beats (%) cells of a row's metrics."""
    return [*(_value(m[f"hit_at_{k}"], True) for k in hit_ks), _value(m["mrr"], False), _value(m["beats"], True)]


METRIC_HEADERS = ["Hit@1 %", "Hit@2 %", "Hit@3 %", "Hit@5 %", "MRR", "beats %"]


class Command(ProtocolReportCommand):
    help = (
        "The Intrinsic-scoring report of a benchmark: Hit@1/2/3/5, MRR and the (strict) gold-beats-distractor rate per "
        "scorer and pooled across models per criterion (All models), pooled and per discipline, with paper-bootstrap "
        "intervals, paired differences of scorers, cross-model agreement per criterion and the gold-rank distributions."
    )

    protocol = PROTOCOL
    import_command = "import_intrinsic"
    replicates_default, seed_default, error = REPORT_REPLICATES, REPORT_SEED, ReportError

    def report(self, benchmark: Benchmark, replicates: int, seed: int) -> dict[str, Any]:
        return benchmark_intrinsic_report(benchmark=benchmark, replicates=replicates, seed=seed)

    def tables(self, doc: dict[str, Any]) -> None:
        self._header(doc)
        self._main_table(doc)
        self._all_models_by_discipline(doc)
        self._agreement(doc)
        self._pairs(doc)

    def _header(self, doc: dict[str, Any]) -> None:
        b, read, method = doc["benchmark"], doc["read"], doc["method"]
        counts = read["candidate_counts"]
        per_paper = (
            f"{counts[0]['candidates']} candidates"
            if len(counts) == 1
            else "mixed candidate counts (" + ", ".join(f"{c['papers']} with {c['candidates']}" for c in counts) + ")"
        )
        self.stdout.write(
            f"{b['name']} v{b['version']}: {read['papers']} papers × {per_paper}, {read['scores']} scores, "
            f"{read['rankings']} listwise rankings ({read['invalid_rankings']} invalid)"
        )
        self.stdout.write(
            f"{method['level']:.0%} paper-bootstrap percentile intervals, {method['replicates']} replicates, seed {method['seed']}; "
            f"tie rule: {method['tie_rule']}"
        )
        self.stdout.write("rules in force: " + "; ".join(f"{k}: {v}" for k, v in method["rules"].items()))
        for gone in read["scorers_left_out"]:
            self.stdout.write(f"left out: {gone['name']} ({gone['model']}, {gone['criterion']}): {gone['reason']}")

    def _main_table(self, doc: dict[str, Any]) -> None:
        """A row per scorer, then the All-models rows (pooled over every paper)."""
        hit_ks = doc["method"]["hit_ks"]
        pooled = {r["scorer"]: r for r in doc["results"] if r["discipline"] == "all"}
        rows = [["scorer", "model", "criterion", *METRIC_HEADERS, "ranked", "excluded", "ties"]]
        for s in doc["scorers"]:
            r = pooled[s["name"]]
            rows.append(
                [
                    s["name"],
                    s["model"],
                    s["criterion"],
                    *_metric_cells(r["metrics"], hit_ks),
                    str(r["n_ranked"]),
                    str(r["n_excluded"]),
                    "—" if r["papers_with_ties"] is None else f"{r['papers_with_ties']} papers",
                ]
            )
        for g in doc["all_models"]:
            if g["discipline"] == "all":
                rows.append(
                    [
                        g["label"],
                        f"{len(g['models'])} model{'s' if len(g['models']) != 1 else ''}",
                        g["criterion"] or "every",
                        *_metric_cells(g["metrics"], hit_ks),
                        f"{g['n_ranked']} pairs",
                        str(g["n_excluded"]),
                        "—",
                    ]
                )
        self.stdout.write("")
        self.stdout.write("\n".join(_table(rows)))
        self.stdout.write("All models: every model of a criterion pooled over (model, paper) pairs, each ranked pair weighing 1.")
        for s in doc["scorers"]:
            for metric, why in pooled[s["name"]]["not_reported"].items():
                if metric in ("mrr", "beats"):
                    self.stdout.write(f"{s['name']}: {metric} {why}")

    def _all_models_by_discipline(self, doc: dict[str, Any]) -> None:
        """The All-models figures per discipline (the paper's per-discipline figures pooled across models)."""
        if not doc["all_models"]:
            return
        rows = [["discipline", "all models", *METRIC_HEADERS, "ranked pairs"]]
        for g in doc["all_models"]:
            rows.append(
                [
                    g["discipline"],
                    g["criterion"] or "every",
                    *_metric_cells(g["metrics"], doc["method"]["hit_ks"]),
                    str(g["n_ranked"]),
                ]
            )
        self.stdout.write("")
        self.stdout.write("All models per discipline:")
        self.stdout.write("\n".join(_table(rows)))

    def _agreement(self, doc: dict[str, Any]) -> None:
        if not doc["agreement"]:
            return
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

    def _pairs(self, doc: dict[str, Any]) -> None:
        if not doc["pairs"]:
            return
        rows = [["a", "b", "papers", "ΔHit@1 %", "ΔHit@5 %", "ΔMRR", "Δbeats %"]]
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
                    _value(d["beats"], True),
                ]
            )
        self.stdout.write("")
        self.stdout.write("pooled paired differences a − b (same paper draws):")
        self.stdout.write("\n".join(_table(rows)))
