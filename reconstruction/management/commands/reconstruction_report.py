"""``python manage.py reconstruction_report BENCHMARK [--replicates N] [--seed S] [--json]``: the Reconstruction report."""

from __future__ import annotations

from typing import Any

from arena.models import Benchmark
from arena.protocol_reports import ProtocolReportCommand
from arena.protocol_reports import share_text as _share
from arena.protocol_reports import text_table as _table
from reconstruction.models import PROTOCOL
from reconstruction.reports import REPORT_REPLICATES, REPORT_SEED, ReportError, benchmark_reconstruction_report


class Command(ProtocolReportCommand):
    help = (
        "The Reconstruction report of a benchmark: Match rate and success@5 per system and domain (and pooled) with "
        "paper-bootstrap intervals, paired rate ratios with intervals, exact sign tests over papers, and the slot and "
        "top-5 oracle controls."
    )

    protocol = PROTOCOL
    import_command = "import_reconstruction"
    replicates_default, seed_default, error = REPORT_REPLICATES, REPORT_SEED, ReportError

    def report(self, benchmark: Benchmark, replicates: int, seed: int) -> dict[str, Any]:
        return benchmark_reconstruction_report(benchmark=benchmark, replicates=replicates, seed=seed)

    def tables(self, doc: dict[str, Any]) -> None:
        b, read, method = doc["benchmark"], doc["labels"], doc["method"]
        self.stdout.write(
            f"{b['name']} v{b['version']}: {read['papers']} papers, {read['hypotheses']} hypotheses, {read['judgments']} judgments "
            f"({read['recused']} recused, missing), {read['ties']} ties (not a Match), {read['unlabelled']} unlabelled"
        )
        self.stdout.write(
            f"{method['level']:.0%} paper-bootstrap percentile intervals, {method['replicates']} replicates, seed {method['seed']}"
        )
        rows = [
            ["system", "domain", "match rate [CI]", "matches/hyp.", "success@5 [CI]", "papers w/ match", "ties", "unlabelled"]
        ]
        for r in doc["rates"]:
            rows.append(
                [
                    r["system"] + (" (control)" if r["kind"] == "control" else ""),
                    str(r["domain"]),
                    _share(r["match_rate"], r["match_rate_ci"]),
                    f"{r['n_matches']}/{r['n_hypotheses']}",
                    _share(r["success_at_5"], r["success_at_5_ci"]),
                    f"{r['n_papers_with_match']}/{r['n_papers']}",
                    "—" if r["ties"] is None else str(r["ties"]),
                    "—" if r["excluded_unlabelled"] is None else str(r["excluded_unlabelled"]),
                ]
            )
        for sel in doc.get("selections", []):
            if sel["drawn_by_lot"]:
                lots = ", ".join(f"seed {lot['seed']} slot {lot['slot']}" for lot in sel["drawn_by_lot"])
                self.stdout.write(
                    f"{sel['system']}: {len(sel['drawn_by_lot'])} of {sel['champions']} champions drawn by lot, not judged ({lots})"
                )
        self.stdout.write("")
        self.stdout.write("\n".join(_table(rows)))
        rows = [["a", "b", "domain", "ratio a/b [CI]", "sign test a>b", "a<b", "ties", "p"]]
        for p in doc["pairs"]:
            s = p["sign_test"]
            rows.append(
                [
                    p["a"],
                    p["b"],
                    str(p["domain"]),
                    _share(p["ratio"], p["ratio_ci"]),
                    str(s["a_more"]),
                    str(s["b_more"]),
                    str(s["ties"]),
                    "—" if s["p_value"] is None else f"{s['p_value']:.4g}",
                ]
            )
        self.stdout.write("")
        self.stdout.write("\n".join(_table(rows)))
