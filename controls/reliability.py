"""The diagnostic controls' verdicts for the judge-reliability panel (``jobs.reliability``): each ordered control
judgment as a two-sided comparison of the clean source (side A, the source's participant) against its variant (side B,
one side per control kind: a control is never a participant). ``clean_shown`` says which was shown first. Lengths are
the words of the source's six fields and of the variant's fields (or its prose)."""

from __future__ import annotations

import numpy as np

from arena.models import JudgeRun, Participant
from jobs.reliability import Sides, lengths, word_count

from .models import ControlJudgment, ControlVariant

KINDS = list(ControlVariant.Kind.values)


def judged_sides(run: JudgeRun) -> Sides:
    """One query for the verdicts, one for the texts of their variants and sources, one for the participants' names."""
    rows = list(
        ControlJudgment.objects.filter(run=run)
        .order_by("id")
        .values_list("variant_id", "order", "clean_shown", "winner", "status", "variant__kind", "variant__source__participant_id")
    )
    cols = list(zip(*rows, strict=True)) if rows else [()] * 7
    item, order, clean_shown, winner, status, kind, source = (np.array(c, dtype=object) for c in cols)
    item = item.astype(np.int64)
    # A variant's side: a negative key per kind, so that it never meets a participant's id.
    variant_side = -1 - np.array([KINDS.index(k) for k in kind.tolist()], dtype=np.int64)
    outcome = np.where(
        status != "accepted", np.nan, np.where(winner == "tie", 0.5, np.where(winner == "clean", 1.0, 0.0))
    ).astype(float)
    texts = ControlVariant.objects.filter(id__in=set(item.tolist())).values_list("id", "content", "prose", "source__content")
    clean_words, variant_words = {}, {}
    for vid, content, prose, source_content in texts:
        clean_words[vid] = word_count(source_content)
        variant_words[vid] = word_count(prose) if prose else word_count(content)
    names = dict(Participant.objects.filter(benchmark_id=run.benchmark_id).values_list("id", "name"))
    names |= {-1 - k: f"variant: {label}" for k, label in enumerate(ControlVariant.Kind.labels)}
    return Sides(
        item=item,
        side_a=source.astype(np.int64),
        side_b=variant_side,
        a_first=(clean_shown == "A").astype(np.int64),
        order=(order == "reverse").astype(np.int64),
        outcome=outcome,
        words_a=lengths(item, clean_words),
        words_b=lengths(item, variant_words),
        names=names,
    )
