from __future__ import annotations

import json
from typing import Any

from django.core.exceptions import ObjectDoesNotExist
from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena.commands import seed_argument
from arena.protocols import protocol_phrase
from arena.selectors import LEADERBOARD_REPLICATES, LEADERBOARD_SEED, benchmark_resolve
from hypoarena.models import PROTOCOL
from hypoarena.reports import ReportError, arena_run_pick, hypoarena_report


def _rating(entry: dict[str, Any] | None, key: str = "rating", ci: str = "ci") -> str:
    if not entry or entry.get(key) is None:
        return "—"
    low, high = entry.get(ci) or [None, None]
    interval = f" [{low:.0f}, {high:.0f}]" if low is not None and high is not None else ""
    return f"{entry[key]:.0f}{interval}"


class Command(BaseCommand):
    help = (
        "The HypoArena leaderboard of a benchmark's arena run: Bradley–Terry–Davidson ratings per domain and pooled "
        "(Elo-like scale) with case-bootstrap intervals, win rate, consistency, the tie parameter, and rubric ranks."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("benchmark", help="benchmark id, name or name@version")
        parser.add_argument("--run", type=int, help="arena run id (default: the benchmark's first arena run)")
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
        self, *args: object, benchmark: str, run: int | None, replicates: int, seed: int, as_json: bool, **options: object
    ) -> None:
        try:
            chosen = benchmark_resolve(reference=benchmark)
        except ObjectDoesNotExist as exc:
            raise CommandError(str(exc)) from None
        if chosen.protocol != PROTOCOL:
            raise CommandError(
                f"{chosen} is {protocol_phrase(chosen.protocol)} benchmark; for its leaderboard run: python manage.py leaderboard {chosen.pk}"
            )
        if replicates < 1 or seed < 0:
            raise CommandError("--replicates must be 1 or more and --seed 0 or more")
        try:
            document = hypoarena_report(
                benchmark=chosen, run=arena_run_pick(benchmark=chosen, run_id=run), replicates=replicates, seed=seed
            )
        except ReportError as exc:
            raise CommandError(str(exc)) from None
        if as_json:
            self.stdout.write(_json_dumps(document))
            return
        self._table(document)

    def _table(self, doc: dict[str, Any]) -> None:
        board = doc["leaderboard"]
        domains = list(board["domains"])
        pooled = board["pooled"]["models"]
        models = sorted(pooled, key=lambda m: pooled[m]["rank"])
        references = set(doc["reference_models"])
        run = doc["run"]
        self.stdout.write(
            f"{doc['benchmark']['name']} v{doc['benchmark']['version']}, run {run['id']} ({run['judge']}, {run['label']})"
        )
        self.stdout.write(
            "ratings 1500 + 400·θ/ln 10 with 95% case-bootstrap intervals; Avg = mean of the domain ratings; WR = mean share"
        )
        header = ["model", *domains, "Avg", "pooled", "WR"]
        rows = [header]
        for m in models:
            name = m + (" *" if m in references else "")
            cells = [_rating(board["domains"][d]["models"].get(m)) for d in domains]
            p = pooled[m]
            wr = f"{p['wr']:.3f}" if p.get("wr") is not None else "—"
            rows.append([name, *cells, _rating(p, "avg_domain_rating", "avg_domain_ci"), _rating(p), wr])
        widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
        for r in rows:
            self.stdout.write("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
        for d in domains:
            block = board["domains"][d]
            self.stdout.write(
                f"{d}: ν = {_number(block['nu'])}, consistency {_number(block['consistency'])}, {block['matches']} matches in {block['cases']} cases"
            )
        self.stdout.write(f"pooled: ν = {_number(board['pooled']['nu'])}, consistency {_number(board['pooled']['consistency'])}")
        if references:
            self.stdout.write("* the source-derived Reference (a competitor like any other)")


def _number(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _json_dumps(document: dict[str, Any]) -> str:
    return json.dumps(document, ensure_ascii=False, indent=2, allow_nan=False)
