from __future__ import annotations

import json
from typing import Any

from django.core.exceptions import ObjectDoesNotExist
from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena.commands import seed_argument
from arena.protocols import protocol_phrase
from arena.selectors import LEADERBOARD_REPLICATES, LEADERBOARD_SEED, benchmark_resolve
from hypoarena.models import PROTOCOL
from hypoarena.reports import ReportError, agreement_runs_pick, hypoarena_agreement_report, top_k_overlap_text


def _number(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def agreement_rows(agreement: dict[str, Any], pairwise: dict[str, Any] | None = None) -> list[list[str]]:
    """The printed table of an agreement document's ``agreement`` (and ``pairwise``, when given) blocks: a header, a row
    per domain and a pooled row. The top-k overlap is the count of models in both top-k lists, as the paper's Table 12
    prints it ("5", "4"; pooled "4.5"), not a share."""
    k = agreement["top_k"]
    rows = [["", "Spearman ρ", "Kendall τ", "mean |Δrank|", f"top-{k} overlap", "pairwise agreement"]]
    for name, block in [*agreement["domains"].items(), ("pooled", agreement["pooled"])]:
        p = None if pairwise is None else pairwise["pooled"] if name == "pooled" else pairwise["domains"].get(name)
        share = f"{_number(p['agreement'])} ({p['agree']}/{p['shared']})" if p and p["shared"] else "—"
        rows.append(
            [
                str(name),
                _number(block["spearman"]),
                _number(block["kendall"]),
                _number(block["rank_shift"], 2),
                top_k_overlap_text(block["top_k_overlap"]),
                share,
            ]
        )
    return rows


def table_lines(rows: list[list[str]]) -> list[str]:
    """Rows as left-aligned columns, trailing spaces cut."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]


class Command(BaseCommand):
    help = (
        "Inter-judge agreement of two arena runs of a HypoArena benchmark: per domain and pooled Spearman ρ, Kendall τ, "
        "mean |Δrank| and top-5 overlap (the count of models in both top fives, as the paper prints it) of their "
        "Bradley–Terry–Davidson ratings, pairwise agreement of their forward verdicts on shared matches, and a "
        "case-bootstrap interval for the pooled ρ."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("benchmark", help="benchmark id, name or name@version")
        parser.add_argument("--run-a", type=int, help="judge A's arena run id (default: the benchmark's first arena run)")
        parser.add_argument("--run-b", type=int, help="judge B's arena run id (default: the first other arena run)")
        parser.add_argument(
            "--replicates",
            type=int,
            default=LEADERBOARD_REPLICATES,
            help=f"bootstrap replicates (default {LEADERBOARD_REPLICATES})",
        )
        parser.add_argument(
            "--seed", type=seed_argument, default=LEADERBOARD_SEED, help=f"bootstrap seed (default {LEADERBOARD_SEED})"
        )
        parser.add_argument(
            "--json", dest="as_json", action="store_true", help="print the whole document as JSON (the API returns the same)"
        )

    def handle(
        self,
        *args: object,
        benchmark: str,
        run_a: int | None,
        run_b: int | None,
        replicates: int,
        seed: int,
        as_json: bool,
        **options: object,
    ) -> None:
        try:
            chosen = benchmark_resolve(reference=benchmark)
        except ObjectDoesNotExist as exc:
            raise CommandError(str(exc)) from None
        if chosen.protocol != PROTOCOL:
            raise CommandError(
                f"{chosen} is {protocol_phrase(chosen.protocol)} benchmark; two of its runs are compared on their run page "
                "(/dashboard/runs/<id>/compare/<other>/)"
            )
        if replicates < 1 or seed < 0:
            raise CommandError("--replicates must be 1 or more and --seed 0 or more")
        try:
            first, second = agreement_runs_pick(benchmark=chosen, run_a=run_a, run_b=run_b)
            document = hypoarena_agreement_report(benchmark=chosen, run_a=first, run_b=second, replicates=replicates, seed=seed)
        except ReportError as exc:
            raise CommandError(str(exc)) from None
        if as_json:
            self.stdout.write(json.dumps(document, ensure_ascii=False, indent=2, allow_nan=False))
            return
        self._table(document)

    def _table(self, doc: dict[str, Any]) -> None:
        a, b = doc["run_a"], doc["run_b"]
        self.stdout.write(
            f"{doc['benchmark']['name']} v{doc['benchmark']['version']}: run A {a['id']} ({a['judge']}, {a['label']}) "
            f"vs run B {b['id']} ({b['judge']}, {b['label']})"
        )
        for line in table_lines(agreement_rows(doc["agreement"], doc["pairwise"])):
            self.stdout.write(line)
        boot = doc["pooled_spearman"]
        low, high = boot["ci"]
        self.stdout.write(
            f"pooled ρ {_number(boot['spearman'])}, {boot['level']:.0%} case-bootstrap interval [{_number(low)}, {_number(high)}] "
            f"({boot['replicates']} replicates, seed {boot['seed']}, {boot['cells']} model × domain cells)"
        )
