"""``run_cases_frame``: the verdicts of a run as the statistics read them, checked against the release file
read here with ``json`` (not through the importer), and the cases the file cannot show (a missing order, a
tie, who was shown as A) against hand-set rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.models import JudgeRun, OrderedJudgment
from arena.selectors import run_cases_frame

pytestmark = pytest.mark.django_db


def test_every_release_pair_has_its_two_winners_model_pair_context_and_batch(imported, release_dir: Path) -> None:  # noqa: ANN001
    expected = {}
    for line in (release_dir / "corrected_folded_pairs.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            r = json.loads(line)
            expected[r["pair_id"]] = (
                r["context_id"],
                r["batch"],
                *sorted(r["model_pair"]),
                r["gemini_original_winner"],
                r["gemini_reverse_winner"],
            )
    frame = run_cases_frame(run=JudgeRun.objects.get(benchmark=imported))
    assert len(frame) == len(expected) == 1200
    got = {
        row.case: (row.context, row.batch, *sorted((row.model_1, row.model_2)), row.original, row.reverse)
        for row in frame.itertuples()
    }
    assert got == expected
    assert frame["shown_a_original"].isna().all()  # the release does not record sides


def test_a_missing_order_a_tie_and_the_side_shown_as_a(imported) -> None:  # noqa: ANN001
    run = JudgeRun.objects.get(benchmark=imported)
    first, second, third = (
        OrderedJudgment.objects.filter(run=run, order="original").select_related("pair").order_by("pair_id")[:3]
    )
    # 1. The reverse order of the first pair was never accepted; its original is a TIE shown with model b as A.
    OrderedJudgment.objects.filter(run=run, pair=first.pair, order="reverse").update(status=OrderedJudgment.Status.INVALID)
    OrderedJudgment.objects.filter(pk=first.pk).update(is_tie=True, winner=None, shown_a=first.pair.participant_b)
    # 2. Only the reverse order of the second pair records a side: A there was model a, so A in the original was b.
    OrderedJudgment.objects.filter(run=run, pair=second.pair, order="reverse").update(shown_a=second.pair.participant_a)
    # 3. Both orders of the third record sides: the original's record wins.
    OrderedJudgment.objects.filter(pk=third.pk).update(shown_a=third.pair.participant_a)
    OrderedJudgment.objects.filter(run=run, pair=third.pair, order="reverse").update(shown_a=third.pair.participant_a)

    frame = run_cases_frame(run=run, pair_ids=[first.pair_id, second.pair_id, third.pair_id]).set_index("case")
    assert len(frame) == 3
    one, two, three = (frame.loc[p.pair.internal_key] for p in (first, second, third))
    assert (one.original, one.reverse, one.shown_a_original) == ("TIE", None, first.pair.participant_b.name)
    assert two.shown_a_original == second.pair.participant_b.name
    assert three.shown_a_original == third.pair.participant_a.name
