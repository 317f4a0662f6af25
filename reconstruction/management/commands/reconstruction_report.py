"""``python manage.py reconstruction_report BENCHMARK [--replicates N] [--seed S] [--json]``: the Reconstruction report."""

from __future__ import annotations

import json
from typing import Any

from django.core.exceptions import ObjectDoesNotExist
from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena.models import Benchmark
from arena.selectors import benchmark_resolve
from reconstruction.reports import REPORT_REPLICATES, REPORT_SEED, ReportError, benchmark_reconstruction_report


def _share(value: Any, ci: list[Any] | None = None) -> str:  # noqa: ANN401
    """``0.200 [0.000, 0.400]``; a missing value is ``—``; "inf" stays as written."""
    def one(v: Any) -> str:  # noqa: ANN401
        return "—" if v is None else (v if isinstance(v, str) else f"{v:.3f}")

    if ci is None:
        return one(value)
    return f"{one(value)} [{one(ci[0])}, {one(ci[1])}]"


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]


class Command(BaseCommand):
    help = (
        "The Reconstruction report of a benchmark: Match rate and success@5 per system and domain (and pooled) with "
        "paper-bootstrap intervals, paired rate ratios with intervals, exact sign tests over papers, and the slot and "
        "top-5 oracle controls."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("benchmark", help="benchmark id, name or name@version")
        parser.add_argument("--replicates", type=int, default=REPORT_REPLICATES, help=f"paper-bootstrap replicates (default {REPORT_REPLICATES})")
        parser.add_argument("--seed", type=int, default=REPORT_SEED, help=f"bootstrap seed (default {REPORT_SEED})")
        parser.add_argument("--json", dest="as_json", action="store_true", help="print the whole document as one JSON object (the API returns the same)")

    def handle(self, *args: object, benchmark: str, replicates: int, seed: int, as_json: bool, **options: object) -> None:
        try:
            chosen = benchmark_resolve(reference=benchmark)
        except ObjectDoesNotExist as exc:
            raise CommandError(str(exc)) from None
        if chosen.protocol != Benchmark.Protocol.RECONSTRUCTION:
            raise CommandError(
                f"{chosen} is a {chosen.get_protocol_display()} benchmark, not a Reconstruction one; "
                "name a benchmark imported with import_reconstruction"
            )
        if replicates < 1 or seed < 0:
            raise CommandError(f"--replicates must be 1 or more (got {replicates}) and --seed 0 or more (got {seed})")
        try:
            document = benchmark_reconstruction_report(benchmark=chosen, replicates=replicates, seed=seed)
        except ReportError as exc:
            raise CommandError(str(exc)) from None
        if as_json:
            self.stdout.write(json.dumps(document, ensure_ascii=False, indent=2, allow_nan=False))
            return
        self._tables(document)

    def _tables(self, doc: dict[str, Any]) -> None:
        b, read, method = doc["benchmark"], doc["labels"], doc["method"]
        self.stdout.write(
            f"{b['name']} v{b['version']}: {read['papers']} papers, {read['hypotheses']} hypotheses, {read['judgments']} judgments "
            f"({read['recused']} recused, missing), {read['ties']} ties (not a Match), {read['unlabelled']} unlabelled"
        )
        self.stdout.write(
            f"{method['level']:.0%} paper-bootstrap percentile intervals, {method['replicates']} replicates, seed {method['seed']}"
        )
        rows = [["system", "domain", "match rate [CI]", "matches/hyp.", "success@5 [CI]", "papers w/ match", "ties", "unlabelled"]]
        for r in doc["rates"]:
            rows.append([
                r["system"] + (" (control)" if r["kind"] == "control" else ""), str(r["domain"]),
                _share(r["match_rate"], r["match_rate_ci"]), f"{r['n_matches']}/{r['n_hypotheses']}",
                _share(r["success_at_5"], r["success_at_5_ci"]), f"{r['n_papers_with_match']}/{r['n_papers']}",
                "—" if r["ties"] is None else str(r["ties"]), "—" if r["excluded_unlabelled"] is None else str(r["excluded_unlabelled"]),
            ])
        self.stdout.write("")
        self.stdout.write("\n".join(_table(rows)))
        rows = [["a", "b", "domain", "ratio a/b [CI]", "sign test a>b", "a<b", "ties", "p"]]
        for p in doc["pairs"]:
            s = p["sign_test"]
            rows.append([
                p["a"], p["b"], str(p["domain"]), _share(p["ratio"], p["ratio_ci"]), str(s["a_more"]), str(s["b_more"]), str(s["ties"]),
                "—" if s["p_value"] is None else f"{s['p_value']:.4g}",
            ])
        self.stdout.write("")
        self.stdout.write("\n".join(_table(rows)))
