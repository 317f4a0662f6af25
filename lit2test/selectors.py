"""Read queries over Lit2Test's judge runs: the run page's ordered judgments with their order-stability, and the
progress of generation runs."""

from __future__ import annotations

from django.db.models import Count, F, Max, Q, QuerySet, Subquery

from arena.models import Benchmark, JudgeRun, OrderedJudgment
from jobs.selectors import Progress

from .models import GenerationRun, JudgeTask


def generation_progress(*, run: GenerationRun) -> Progress:
    """A generation run's counts (``jobs.elicitation``): every done task stored a proposal, valid or not."""
    from jobs.elicitation import elicit_progress

    from .generation import KIND

    return elicit_progress(kind=KIND, run=run)


def canonical_judges(benchmark_ids: list[int]) -> dict[int, str]:
    """The canonical judge of each of these benchmarks (the dashboard's column), "" when it has none yet."""
    return dict(Benchmark.objects.filter(pk__in=benchmark_ids).values_list("pk", "canonical_judge"))


STABILITY_CHOICES = ("stable", "sensitive", "incomplete")


def _pair_outcomes(run: JudgeRun) -> QuerySet:
    """Per pair of the run, one GROUP BY row: accepted verdicts in each order and each order's winner (the database
    keeps at most one accepted verdict per pair and order)."""
    accepted = OrderedJudgment.objects.filter(run_id=run.pk, status=OrderedJudgment.Status.ACCEPTED)
    return (
        accepted.values("pair_id")
        .annotate(
            original_n=Count("id", filter=Q(order="original")),
            reverse_n=Count("id", filter=Q(order="reverse")),
            original_w=Max("winner_id", filter=Q(order="original")),
            reverse_w=Max("winner_id", filter=Q(order="reverse")),
        )
        .order_by()
    )


def _stable(outcomes: QuerySet) -> QuerySet:
    return outcomes.filter(original_n__gt=0, reverse_n__gt=0, original_w__isnull=False, original_w=F("reverse_w"))


def _complete(outcomes: QuerySet) -> QuerySet:
    return outcomes.filter(original_n__gt=0, reverse_n__gt=0)


def judgments_stability(*, run: JudgeRun, pair_ids: set[int]) -> dict[int, str]:
    """The ``stability`` of these pairs in this run (see :func:`run_judgments`), in one grouped query."""
    out = dict.fromkeys(pair_ids, "incomplete")
    for row in _pair_outcomes(run).filter(pair_id__in=pair_ids):
        if row["original_n"] and row["reverse_n"]:
            same = row["original_w"] is not None and row["original_w"] == row["reverse_w"]
            out[row["pair_id"]] = "stable" if same else "sensitive"
    return out


def run_judgments(
    *, run: JudgeRun, winner: str = "", order: str = "", stability: str = "", status: str = ""
) -> QuerySet[OrderedJudgment]:
    """The run's ordered judgments, newest first, filtered; :func:`judgments_stability` gives a page's stability.

    ``winner``: a participant id, or ``"tie"``; ``order``: original | reverse; ``stability``: stable (both orders
    accepted and naming the same model), sensitive (both accepted, the winner flips or either says TIE) or
    incomplete (an order has no accepted verdict yet, or only an invalid one); ``status``: accepted | invalid.
    Empty values do not filter.

    The stability filter is one uncorrelated, grouped subquery over the run's accepted verdicts (linear in the run):
    per-row correlated subqueries were planned as nested sequential scans on a table that had not been analysed yet
    (right after a release import), and a 2,400-verdict run page took minutes.
    """
    judgments = OrderedJudgment.objects.filter(run=run)
    outcomes = _pair_outcomes(run)
    if stability == "stable":
        judgments = judgments.filter(pair_id__in=Subquery(_stable(outcomes).values("pair_id")))
    elif stability == "sensitive":
        judgments = judgments.filter(pair_id__in=Subquery(_complete(outcomes).values("pair_id"))).exclude(
            pair_id__in=Subquery(_stable(outcomes).values("pair_id"))
        )
    elif stability == "incomplete":
        judgments = judgments.exclude(pair_id__in=Subquery(_complete(outcomes).values("pair_id")))
    if winner == "tie":
        judgments = judgments.filter(status=OrderedJudgment.Status.ACCEPTED, is_tie=True)
    elif winner:
        judgments = judgments.filter(winner_id=int(winner))
    if order:
        judgments = judgments.filter(order=order)
    if status:
        judgments = judgments.filter(status=status)
    return judgments.order_by("-id")


def run_tasks_by_key(*, run: JudgeRun, pair_ids: set[int]) -> dict[tuple[int, str], JudgeTask]:
    """The run's tasks of these pairs by (pair id, order): calls and failed calls of each judgment."""
    return {(t.pair_id, t.order): t for t in JudgeTask.objects.filter(run=run, pair_id__in=pair_ids)}
