from __future__ import annotations

import json

from django.core.exceptions import ObjectDoesNotExist
from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena.models import JudgeRun
from arena.selectors import (
    LEADERBOARD_PSEUDO_COUNT,
    LEADERBOARD_REPLICATES,
    LEADERBOARD_SEED,
    benchmark_resolve,
    run_default,
    run_leaderboard,
)


class Command(BaseCommand):
    help = "Print a benchmark's leaderboard (the canonical run unless --run is given)."
    requires_system_checks: list = []  # a read-only report; `manage.py check` is where checks run

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("benchmark", help="benchmark id, name (newest version) or name@version")
        parser.add_argument("--run", type=int, default=None, help="judge run id (default: the canonical run)")
        parser.add_argument("--replicates", type=int, default=LEADERBOARD_REPLICATES)
        parser.add_argument("--seed", type=int, default=LEADERBOARD_SEED)
        parser.add_argument("--pseudo-count", type=float, default=LEADERBOARD_PSEUDO_COUNT)
        parser.add_argument("--json", action="store_true", help="print exactly one JSON object")

    def handle(self, *args: object, **options: object) -> None:
        try:
            benchmark = benchmark_resolve(reference=str(options["benchmark"]))
        except ObjectDoesNotExist as exc:
            raise CommandError(str(exc)) from None
        if options["run"] is not None:
            run = JudgeRun.objects.filter(benchmark=benchmark, pk=options["run"]).first()
            if run is None:
                raise CommandError(f"{benchmark} has no run {options['run']}")
        else:
            run = run_default(benchmark=benchmark)
            if run is None:
                raise CommandError(f"{benchmark} has no judge run yet")
        if int(options["replicates"]) < 1:  # type: ignore[call-overload]
            raise CommandError("--replicates must be at least 1")
        document = run_leaderboard(
            run=run,
            replicates=int(options["replicates"]),  # type: ignore[call-overload]
            seed=int(options["seed"]),  # type: ignore[call-overload]
            pseudo_count=float(options["pseudo_count"]),  # type: ignore[arg-type]
        )
        if options["json"]:
            self.stdout.write(json.dumps(document, ensure_ascii=False))
            return
        self.stdout.write(render_text(document))


def render_text(doc: dict) -> str:
    run = doc["run"]
    lines = [
        f"{doc['benchmark']['name']} v{doc['benchmark']['version']} — judge {run['judge_model']} ({run['label']}"
        + (", replay of stored judgments" if run["replay"] else "")
        + f", {run['status']})",
        f"cases: {doc['cases']['total']} ({doc['cases']['stable']} stable, {doc['cases']['sensitive']} order-sensitive"
        + (f", {doc['cases']['incomplete']} incomplete" if doc["cases"].get("incomplete") else "")
        + ")",
        "",
        f"{'rank':<5}{'model':<24}{'BT (ordered)':>14}  {'95% CI':<18}{'stable W-L-T':>16}",
    ]
    for rank, model in enumerate(doc["models"], start=1):
        bt = doc["bt"]["ordered"].get(model)
        wlt = doc["stable_wlt"][model]
        strength = f"{bt['strength']:.2f}" if bt else "—"
        ci = f"[{bt['ci'][0]:.2f}, {bt['ci'][1]:.2f}]" if bt and bt["ci"][0] is not None else ""
        lines.append(f"{rank:<5}{model:<24}{strength:>14}  {ci:<18}{wlt['w']:>6}-{wlt['l']}-{wlt['t']}")
    boot = doc["bootstrap"]
    if boot.get("modal_ranking"):
        lines += ["", f"bootstrap ({boot['replicates']} case replicates, seed {boot['seed']}): modal ranking "
                  f"{' > '.join(boot['modal_ranking'])} in {boot['modal_fraction']:.1%}"]
    cond = doc["condorcet"]
    if cond.get("beat_counts"):
        lines.append(
            "Condorcet beat counts: " + ", ".join(f"{m} {n}" for m, n in cond["beat_counts"].items())
            + ("; transitive" if cond["transitive"] else f"; cycles: {cond['cycles']}")
        )
    if doc["separation"]:
        lines.append(f"complete separation: {doc['separation']} — strengths are diagnostic; read the ranks")
    return "\n".join(lines)
