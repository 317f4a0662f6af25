"""``python manage.py reconstruction_report BENCHMARK [--replicates N] [--seed S] [--label-rule majority|fraction]
[--rate pooled|paper-mean] [--json]``: the Reconstruction report."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from arena.models import Benchmark
from arena.protocol_reports import ProtocolReportCommand
from arena.protocol_reports import share_text as _share
from arena.protocol_reports import text_table as _table
from reconstruction.models import PROTOCOL
from reconstruction.reports import (
    LABEL_RULES,
    RATE_RULES,
    REPORT_REPLICATES,
    REPORT_SEED,
    ReportError,
    benchmark_reconstruction_report,
    count_text,
)


class Command(ProtocolReportCommand):
    help = (
        "The Reconstruction report of a benchmark: Match rate and success@5 per system and domain (and pooled) with "
        "paper-bootstrap intervals, paired rate ratios with intervals, exact sign tests over paper rates (each pair "
        "once; each selection pipeline against the best single model per paper), and the slot oracle, top-5 oracle and "
        "best-single controls over the proposers."
    )

    protocol = PROTOCOL
    import_command = "import_reconstruction"
    replicates_default, seed_default, error = REPORT_REPLICATES, REPORT_SEED, ReportError

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument(
            "--label-rule",
            choices=LABEL_RULES,
            default=LABEL_RULES[0],
            help="how a hypothesis scores: majority (default: a strict majority of the non-recused judges says Match; a "
            "tie is not a Match) or fraction (the paper's: the fraction of them saying Match, a 1-1 split scores 0.5)",
        )
        parser.add_argument(
            "--rate",
            choices=RATE_RULES,
            default=RATE_RULES[0],
            help="how a scope's Match rate is made: pooled (default: scores / labelled hypotheses over all its papers) "
            "or paper-mean (the paper's: the mean of the papers' rates)",
        )

    def handle(self, *args: object, **options: Any) -> None:  # noqa: ANN401
        self.rules = {"label_rule": options.pop("label_rule"), "rate": options.pop("rate")}
        super().handle(*args, **options)

    def report(self, benchmark: Benchmark, replicates: int, seed: int) -> dict[str, Any]:
        return benchmark_reconstruction_report(benchmark=benchmark, replicates=replicates, seed=seed, **self.rules)

    def tables(self, doc: dict[str, Any]) -> None:
        b, read, method = doc["benchmark"], doc["labels"], doc["method"]
        tie = "not a Match" if method["label_rule"] == "majority" else "scored 0.5"
        self.stdout.write(
            f"{b['name']} v{b['version']}: {read['papers']} papers, {read['hypotheses']} hypotheses, {read['judgments']} judgments "
            f"({read['recused']} recused, missing), {read['ties']} ties ({tie}), {read['unlabelled']} unlabelled"
        )
        self.stdout.write(
            f"{method['level']:.0%} paper-bootstrap percentile intervals, {method['replicates']} replicates, seed {method['seed']}"
        )
        self.stdout.write(f"label rule {method['label_rule']}: {method['label_rule_text']}")
        self.stdout.write(f"rate {method['rate']}: {method['rate_text']}")
        self.stdout.write(
            f"controls over the proposers {', '.join(method['proposers']) or '(none)'}"
            + (f"; pipelines {', '.join(method['pipelines'])}" if method["pipelines"] else "")
        )
        if read.get("excluded_cases"):
            cases = ", ".join(f"{system} {n}" for system, n in read["excluded_cases"].items())
            self.stdout.write(f"excluded (fewer than five valid hypotheses): {cases}")
        rows = [
            ["system", "domain", "match rate [CI]", "matches/hyp.", "success@5 [CI]", "papers w/ match", "ties", "unlabelled"]
        ]
        for r in doc["rates"]:
            rows.append(
                [
                    r["system"] + (" (control)" if r["kind"] == "control" else ""),
                    str(r["domain"]),
                    _share(r["match_rate"], r["match_rate_ci"]),
                    f"{count_text(r['n_matches'])}/{r['n_hypotheses']}",
                    _share(r["success_at_5"], r["success_at_5_ci"]),
                    f"{count_text(r['n_papers_with_match'])}/{r['n_papers']}",
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
        rows = [["a", "b", "domain", "ratio a/b [CI]", "sign test: a's rate higher", "b's higher", "ties", "p"]]
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
