"""The toy protocol's report: per judge run, the share of items answered "yes", with a bootstrap interval over the
items (seeded, so the command and the API give the same document)."""

from __future__ import annotations

from typing import Any

from arena.errors import NotFoundError
from arena.models import Benchmark

from .models import ITEMS, Item, ToyAnswer


class ToyReportError(NotFoundError):
    """There is nothing to report yet."""


def toy_report(*, benchmark: Benchmark, replicates: int = 200, seed: int = 0) -> dict[str, Any]:
    import numpy as np

    runs = list(benchmark.runs.filter(subjects=ITEMS).order_by("id"))
    if not runs:
        raise ToyReportError(
            f"{benchmark} has no toy runs yet; launch one with run_judge {benchmark.name} --model M --base-url URL"
        )
    rows = []
    for run in runs:
        answers = list(ToyAnswer.objects.filter(run=run).values_list("status", "answer"))
        yes = sum(1 for status, answer in answers if status == "accepted" and answer == "yes")
        no = sum(1 for status, answer in answers if status == "accepted" and answer == "no")
        share = yes / (yes + no) if yes + no else None
        interval = None
        if yes + no:
            draws = np.random.default_rng(seed).binomial(yes + no, share, size=replicates) / (yes + no)
            interval = [float(np.quantile(draws, 0.025)), float(np.quantile(draws, 0.975))]
        rows.append(
            {
                "run": run.pk,
                "judge": run.judge_model,
                "status": run.status,
                "yes": yes,
                "no": no,
                "invalid": sum(1 for status, _ in answers if status == "invalid"),
                "share_yes": share,
                "ci": interval,
            }
        )
    return {
        "benchmark": {"id": benchmark.pk, "name": benchmark.name, "version": benchmark.version},
        "items": Item.objects.filter(benchmark=benchmark).count(),
        "replicates": replicates,
        "seed": seed,
        "runs": rows,
    }
