"""Read queries over HypoArena benchmarks: what a page shows, and the frames the statistics read.

:func:`verdict_frame` is the statistics' input (``arena.stats.hypoarena``, ``VERDICT_COLUMNS``): one row per
accepted ordered verdict, with the match's canonical ``first`` and ``second`` model names and the verdict as the
judge gave it in that order's labels (A is ``first`` in the original order and ``second`` in the reverse order).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.db import models
from django.db.models import Count, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.http import Http404

from arena.models import Benchmark, JudgeRun
from arena.protocols import protocol_phrase

from .models import ARENA_KIND, PROTOCOL, RUBRIC_KIND, ArenaVerdict, Case, Domain, RubricScore, Submission

if TYPE_CHECKING:
    import pandas as pd

VERDICT_COLUMNS = ["domain", "case", "first", "second", "order", "verdict"]


def hypoarena_benchmark_get(*, benchmark_id: int) -> Benchmark:
    """The HypoArena benchmark of that id; 404 naming the protocol when it is a benchmark of another one."""
    benchmark = Benchmark.objects.filter(pk=benchmark_id).first()
    if benchmark is None:
        raise Http404(f"no benchmark {benchmark_id}")
    if benchmark.protocol != PROTOCOL:
        raise Http404(f"{benchmark} is {protocol_phrase(benchmark.protocol)} benchmark, not a HypoArena one")
    return benchmark


def singleton_domains(*, benchmark: Benchmark) -> tuple[str, ...]:
    return tuple(Domain.objects.filter(benchmark=benchmark, singleton=True).order_by("name").values_list("name", flat=True))


def verdict_frame(*, run: JudgeRun) -> pd.DataFrame:
    """One row per accepted ordered verdict of an arena run (columns :data:`VERDICT_COLUMNS`), in match and order
    order. Invalid answers are left out: they are not verdicts. Two flat queries joined in pandas (names by id), as
    ``arena.selectors.run_cases_frame`` does for Lit2Test."""
    import pandas as pd

    rows = list(
        ArenaVerdict.objects.filter(run=run, status=ArenaVerdict.Status.ACCEPTED)
        .order_by("match_id", "order", "id")
        .values_list(
            "match__case__domain__name", "match__case__external_id", "match__first_id", "match__second_id", "order", "verdict"
        )
    )
    names = dict(Submission.objects.filter(case__benchmark_id=run.benchmark_id).values_list("pk", "participant__name"))
    frame = pd.DataFrame(rows, columns=["domain", "case", "first", "second", "order", "verdict"])
    frame["first"] = frame["first"].map(names)
    frame["second"] = frame["second"].map(names)
    return frame[VERDICT_COLUMNS]


def rubric_rows(*, run: JudgeRun) -> list[dict[str, Any]]:
    """The rubric run's scores, one dict per scored submission: domain, singleton, case, model, K, the per-pair lists
    g, l, j and the set scores b, d (None when K = 1), u."""
    scores = RubricScore.objects.filter(run=run).select_related("submission__case__domain", "submission__participant")
    return [
        {
            "domain": r.submission.case.domain.name,
            "singleton": r.submission.case.domain.singleton,
            "case": r.submission.case.external_id,
            "model": r.submission.participant.name,
            "k": len(r.grounding),
            "g": r.grounding,
            "l": r.insight,
            "j": r.justification,
            "b": r.breadth,
            "d": r.distinctness,
            "u": r.utility,
        }
        for r in scores.order_by("submission__case__external_id", "submission__participant__name")
    ]


def _count_of(model: type[models.Model], **filters: Any) -> Coalesce:
    """The number of ``model`` rows of the outer run, as a correlated subquery (0 when there are none)."""
    rows = model.objects.filter(run=OuterRef("pk"), **filters).order_by().values("run")
    return Coalesce(Subquery(rows.annotate(n=Count("pk")).values("n"), output_field=models.IntegerField()), 0)


def benchmark_overview(*, benchmark: Benchmark) -> dict[str, Any]:
    """What the benchmark's page shows: its domains with counts, its models (the Reference marked: this is a
    researcher page), and its runs with their verdict or score counts. A fixed number of queries."""
    domains = list(
        Domain.objects.filter(benchmark=benchmark).annotate(
            n_cases=Count("cases", distinct=True), n_submissions=Count("cases__submissions", distinct=True)
        )
    )
    models = list(
        Submission.objects.filter(case__benchmark=benchmark)
        .values("participant__name", "is_reference")
        .annotate(n=Count("pk"))
        .order_by("participant__name")
    )
    # One subquery per count: joining verdicts and scores at once would multiply their rows before counting.
    runs = list(
        benchmark.runs.filter(subjects__in=[ARENA_KIND, RUBRIC_KIND])
        .annotate(
            n_accepted=_count_of(ArenaVerdict, status=ArenaVerdict.Status.ACCEPTED),
            n_invalid=_count_of(ArenaVerdict, status=ArenaVerdict.Status.INVALID),
            n_scores=_count_of(RubricScore),
        )
        .order_by("created_at", "id")
    )
    return {
        "domains": domains,
        "models": [{"name": m["participant__name"], "reference": m["is_reference"], "submissions": m["n"]} for m in models],
        "runs": runs,
        "n_cases": Case.objects.filter(benchmark=benchmark).count(),
    }
