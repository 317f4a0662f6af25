"""HypoArena's arena verdicts for the judge-reliability panel (``jobs.reliability``): each ordered verdict of a match
as a two-sided comparison. A is the match's ``first`` submission (shown first in the original order, second in the
reverse); the 5-level verdict counts by its direction (A≫B and A>B a win of the side labelled A, A≈B a tie). Lengths
are the words of each submission's hypothesis–evidence pairs."""

from __future__ import annotations

import numpy as np

from arena.models import JudgeRun, Participant
from jobs.reliability import Sides, lengths, word_count

from .models import ArenaVerdict, Submission

LABEL_A_WINS = ("A>>B", "A>B")
TIE = "A=B"


def judged_sides(run: JudgeRun) -> Sides:
    """One query for the verdicts, one for the texts of their submissions, one for the participants' names."""
    rows = list(
        ArenaVerdict.objects.filter(run=run)
        .order_by("id")
        .values_list(
            "match_id",
            "order",
            "verdict",
            "status",
            "match__first__participant_id",
            "match__second__participant_id",
            "match__first_id",
            "match__second_id",
        )
    )
    cols = list(zip(*rows, strict=True)) if rows else [()] * 8
    item, order, verdict, status, side_a, side_b, first, second = (np.array(c, dtype=object) for c in cols)
    original = order == "original"
    label_a_won = np.isin(verdict, LABEL_A_WINS)
    outcome = np.where(
        status != "accepted", np.nan, np.where(verdict == TIE, 0.5, (label_a_won == original).astype(float))
    ).astype(float)
    first, second = first.astype(np.int64), second.astype(np.int64)
    words = {
        sid: word_count(texts)
        for sid, texts in Submission.objects.filter(id__in=set(first.tolist()) | set(second.tolist())).values_list("id", "pairs")
    }
    return Sides(
        item=item.astype(np.int64),
        side_a=side_a.astype(np.int64),
        side_b=side_b.astype(np.int64),
        a_first=original.astype(np.int64),
        order=(~original).astype(np.int64),
        outcome=outcome,
        words_a=lengths(first, words),
        words_b=lengths(second, words),
        names=dict(Participant.objects.filter(benchmark_id=run.benchmark_id).values_list("id", "name")),
    )
