"""Lit2Test's verdicts for the judge-reliability panel (``jobs.reliability``): each ordered judgment of a canonical
pair as a two-sided comparison. A is the pair's ``participant_a`` (its seeded orientation); which side was shown first
is ``shown_a`` (null in the release, which did not record it: the panel then says the order effect is not estimable
and still measures position consistency from the two orders). Lengths are the words of each proposal's six fields."""

from __future__ import annotations

import numpy as np

from arena.models import JudgeRun, OrderedJudgment, Participant, Proposal
from jobs.reliability import Sides, lengths, word_count


def judged_sides(run: JudgeRun) -> Sides:
    """One query for the verdicts, one for the texts of their contexts, one for the participants' names."""
    rows = list(
        OrderedJudgment.objects.filter(run=run)
        .order_by("id")
        .values_list(
            "pair_id",
            "order",
            "shown_a_id",
            "winner_id",
            "is_tie",
            "status",
            "pair__participant_a_id",
            "pair__participant_b_id",
            "pair__context_id",
        )
    )
    cols = list(zip(*rows, strict=True)) if rows else [()] * 9
    item, order, shown_a, winner, tie, status, side_a, side_b, context = (np.array(c, dtype=object) for c in cols)
    side_a, side_b = side_a.astype(np.int64), side_b.astype(np.int64)
    shown_a = np.where(shown_a == None, -1, shown_a).astype(np.int64)  # noqa: E711 (numpy: elementwise)
    winner = np.where(winner == None, -1, winner).astype(np.int64)  # noqa: E711
    a_first = np.where(shown_a == side_a, 1, np.where(shown_a == side_b, 0, -1))
    outcome = np.where(status != "accepted", np.nan, np.where(tie.astype(bool), 0.5, (winner == side_a).astype(float)))
    context = context.astype(np.int64)
    words = {
        (ctx, pid): word_count(content)
        for ctx, pid, content in Proposal.objects.filter(context_id__in=set(context.tolist())).values_list(
            "context_id", "participant_id", "content"
        )
    }
    # A (context, participant) key as one integer, so that the lookup is vectorised.
    scale = int(max([p for _c, p in words] + side_a.tolist() + side_b.tolist() + [0])) + 1
    by_key = {c * scale + p: n for (c, p), n in words.items()}
    names = dict(Participant.objects.filter(benchmark_id=run.benchmark_id).values_list("id", "name"))
    return Sides(
        item=item.astype(np.int64),
        side_a=side_a,
        side_b=side_b,
        a_first=a_first.astype(np.int64),
        order=(order == "reverse").astype(np.int64),
        outcome=outcome.astype(float),
        words_a=lengths(context * scale + side_a, by_key),
        words_b=lengths(context * scale + side_b, by_key),
        names=names,
    )
