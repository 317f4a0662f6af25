"""Reconstruction's Swiss votes for the judge-reliability panel (``jobs.reliability``): each ordered vote of a Swiss
match as a two-sided comparison of the proposers of hypotheses ``a`` (side A, shown first in the original order) and
``b``. Families are the data's own (each hypothesis's ``family``, the run's ``judge_family``): a judge recuses on its
own family's hypotheses, so the panel normally finds no own-family comparison to measure. Lengths are the words of
each hypothesis's title and summary."""

from __future__ import annotations

import numpy as np

from arena.models import JudgeRun, Participant
from jobs.reliability import Sides, lengths, word_count

from .models import Hypothesis, SwissVote


def judged_sides(run: JudgeRun) -> Sides:
    """One query for the votes (byes have none), one for the texts of their hypotheses, one for the participants."""
    rows = list(
        SwissVote.objects.filter(run=run, match__b__isnull=False)
        .order_by("id")
        .values_list(
            "match_id",
            "order",
            "winner",
            "status",
            "match__a__participant_id",
            "match__b__participant_id",
            "match__a_id",
            "match__b_id",
        )
    )
    cols = list(zip(*rows, strict=True)) if rows else [()] * 8
    item, order, winner, status, side_a, side_b, hyp_a, hyp_b = (np.array(c, dtype=object) for c in cols)
    outcome = np.where(status != "accepted", np.nan, np.where(winner == "tie", 0.5, (winner == "a").astype(float))).astype(float)
    hyp_a, hyp_b = hyp_a.astype(np.int64), hyp_b.astype(np.int64)
    words, families = {}, {}
    for hid, pid, family, title, summary in Hypothesis.objects.filter(
        id__in=set(hyp_a.tolist()) | set(hyp_b.tolist())
    ).values_list("id", "participant_id", "family", "title", "summary"):
        words[hid] = word_count(title) + word_count(summary)
        families[pid] = family or None
    options = (run.parameters or {}).get("options") or {}
    original = order == "original"
    return Sides(
        item=item.astype(np.int64),
        side_a=side_a.astype(np.int64),
        side_b=side_b.astype(np.int64),
        a_first=original.astype(np.int64),
        order=(~original).astype(np.int64),
        outcome=outcome,
        words_a=lengths(hyp_a, words),
        words_b=lengths(hyp_b, words),
        names=dict(Participant.objects.filter(benchmark_id=run.benchmark_id).values_list("id", "name")),
        families=families,
        judge_family=str(options.get("judge_family") or "") or None,
    )
