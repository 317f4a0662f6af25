"""``manage.py judge_reliability BENCHMARK --run N [--reference-run M ...] [--replicates R] [--seed S] [--json]``: the
judge-reliability panel of one judge run (``jobs.reliability``), as readable text or as the JSON document the API and
the run pages show."""

from __future__ import annotations

import json
from typing import Any

from django.core.exceptions import ObjectDoesNotExist
from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena.models import JudgeRun
from arena.selectors import benchmark_resolve


def _share(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _effect(effect: dict[str, Any], key: str) -> str:
    if not effect["estimable"]:
        return f"not estimable: {effect['why']}"
    ci = effect["ci"]
    interval = f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else ""
    return f"{effect[key]:.3f}{interval} (log-odds; {effect['replicates']} item-bootstrap replicates)"


def text_lines(doc: dict[str, Any]) -> list[str]:
    """The document as the command prints it."""
    run = doc["run"]
    head = f"Judge reliability of run {run['id']} ({run['judge_model']}, {run['label']}) on {run['benchmark']}: {run['subjects_label']}"
    if not doc["available"]:
        return [head, f"  no panel: {doc['unavailable_reason']}"]
    v, c, f, s = doc["verdicts"], doc["position_consistency"], doc["first_shown"], doc["self_preference"]
    b = doc["baselines"]
    lines = [
        head,
        f"  verdicts: {v['total']} ({v['valid']} valid, {v['invalid']} invalid, {v['ties']} ties)",
        f"  position consistency: {_share(c['share'])} ({c['consistent']} of {c['items']} items keep their verdict when the "
        f"order is swapped; {c['flipped']} flip, {c['with_tie']} tie in an order)",
        f"  first shown wins: {_share(f['share'])} of {f['decisive']} decisive verdicts with a known order; preference "
        f"fairness {_share(f['fairness'])} ({f['primacy']} items to the first shown, {f['recency']} to the second, of {f['items']})",
        f"  order effect γ: {_effect(doc['order_effect'], 'gamma')}",
        f"  self-preference δ (judge family {s['judge_family'] or 'unknown'}, {s['judge_family_source']}): {_effect(s, 'delta')}",
    ]
    for name, label in (
        ("longer_wins", "longer wins"),
        ("shorter_wins", "shorter wins"),
        ("first_shown_wins", "first shown wins"),
    ):
        lines.append(
            f"  baseline '{label}' agrees with the judge: {_share(b[name]['share'])} ({b[name]['agree']} of {b[name]['n']})"
        )
    for ex in doc["invalid_examples"]:
        lines.append(f"  invalid verdict {ex['id']} ({ex['order']}): {'; '.join(ex['errors']) or 'no error recorded'}")
    return lines


class Command(BaseCommand):
    help = (
        "The judge-reliability panel of a judge run: position consistency, first-shown share and fairness, the order "
        "effect and self-preference fitted inside Bradley–Terry with item-bootstrap intervals, content-blind baselines "
        "and invalid answers."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("benchmark", help="benchmark id, name or name@version")
        parser.add_argument("--run", type=int, required=True, help="the judge run's id (the runs page lists them)")
        parser.add_argument(
            "--reference-run",
            type=int,
            action="append",
            default=[],
            help="a run of the same items by a judge of another family (repeatable): makes self-preference estimable",
        )
        parser.add_argument("--replicates", type=int, default=None, help="item-bootstrap replicates (default 400)")
        parser.add_argument("--seed", type=int, default=None, help="bootstrap seed (default 0)")
        parser.add_argument("--json", dest="as_json", action="store_true", help="print the document as JSON (the API's)")

    def handle(
        self,
        *args: object,
        benchmark: str,
        run: int,
        reference_run: list[int],
        replicates: int | None,
        seed: int | None,
        as_json: bool,
        **options: object,
    ) -> None:
        from jobs.reliability import run_reliability

        try:
            chosen = benchmark_resolve(reference=benchmark)
        except ObjectDoesNotExist as exc:
            raise CommandError(str(exc)) from None
        runs = {
            r.pk: r for r in JudgeRun.objects.filter(benchmark=chosen, pk__in=[run, *reference_run]).select_related("benchmark")
        }
        missing = [n for n in [run, *reference_run] if n not in runs]
        if missing:
            raise CommandError(
                f"{chosen} has no judge run {', '.join(map(str, missing))}; its runs are listed by the runs page "
                f"(or name the run's own benchmark)"
            )
        for option, value in (("--replicates", replicates), ("--seed", seed)):
            if value is not None and value < 0:
                raise CommandError(f"{option} must be 0 or more, got {value}")
        try:
            doc = run_reliability(runs[run], references=[runs[n] for n in reference_run], replicates=replicates, seed=seed)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        if as_json:
            self.stdout.write(json.dumps(doc, ensure_ascii=False, indent=2, allow_nan=False))
            return
        self.stdout.write("\n".join(text_lines(doc)))
