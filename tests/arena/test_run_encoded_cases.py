"""``run_encoded_cases`` (issue 25, item 1): the cold leaderboard reads a run's cases folded by the database into
integers, not a frame of names. The cases must be the ones the release file states (read here with ``json``), equal
array for array to ``encode_cases(run_cases_frame(...))``, and give the leaderboard document bit for bit; the cases
the release cannot show (a missing or invalid order, TIEs, the side shown as A, a pair with only invalid verdicts, a
subset of pairs, a winner outside its pair) are set by hand."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from arena.models import Benchmark, JudgeRun, OrderedJudgment
from arena.selectors import run_cases_frame, run_encoded_cases, run_leaderboard
from arena.stats import encode_cases, leaderboard_document
from arena.stats.folding import HI, LO, MISSING, TIE_CODE, EncodedCases

pytestmark = pytest.mark.django_db

ARRAYS = ("context", "batch", "lo", "hi", "original", "reverse", "shown_a")
REPLICATES = 200  # the document's equality does not depend on the number of replicates; fewer keep the test quick


@pytest.fixture(scope="module")
def sample(sample_once: Benchmark) -> Benchmark:
    return sample_once


def assert_same_cases(new: EncodedCases, old: EncodedCases, where: str) -> None:
    assert new.models == old.models, f"{where}: models {new.models} != {old.models}"
    for name in ARRAYS:
        got, expected = getattr(new, name), getattr(old, name)
        assert got.dtype == expected.dtype, f"{where}: {name} is {got.dtype}, the frame's encoding gives {expected.dtype}"
        assert np.array_equal(got, expected), f"{where}: {name} differs from encode_cases(run_cases_frame(...))"


def test_the_release_sample_is_read_as_its_file_states(sample, release_dir: Path) -> None:  # noqa: ANN001
    expected = {}
    for line in (release_dir / "corrected_folded_pairs.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            r = json.loads(line)
            expected[(r["context_id"], *sorted(r["model_pair"]))] = (
                r["batch"],
                r["gemini_original_winner"],
                r["gemini_reverse_winner"],
            )
    enc = run_encoded_cases(run=JudgeRun.objects.get(benchmark=sample))
    names = {LO: 0, HI: 1}

    def winner(code: int, pair: tuple[str, str]) -> str | None:
        return "TIE" if code == TIE_CODE else None if code == MISSING else pair[names[code]]

    got = {}
    for i in range(len(enc.lo)):
        pair = (enc.models[enc.lo[i]], enc.models[enc.hi[i]])
        got[(enc.context[i], *pair)] = (enc.batch[i], winner(enc.original[i], pair), winner(enc.reverse[i], pair))
    assert len(enc.lo) == len(expected) == 1200
    assert got == expected
    assert (enc.shown_a == MISSING).all()  # the release does not record sides


def test_the_release_sample_encodes_as_its_frame_and_gives_the_same_document(sample) -> None:  # noqa: ANN001
    from django.core.cache import cache

    run = JudgeRun.objects.get(benchmark=sample)
    new, old = run_encoded_cases(run=run), encode_cases(run_cases_frame(run=run))
    assert_same_cases(new, old, "the release sample")
    frame_document = leaderboard_document(run_cases_frame(run=run), replicates=REPLICATES)
    assert leaderboard_document(new, replicates=REPLICATES) == frame_document
    cache.clear()
    served = run_leaderboard(run=run, replicates=REPLICATES)  # cold: computed from run_encoded_cases
    assert {k: served[k] for k in frame_document} == frame_document


def test_missing_orders_ties_sides_and_a_subset_of_pairs_encode_as_the_frame_does(imported) -> None:  # noqa: ANN001
    run = JudgeRun.objects.get(benchmark=imported)
    judgments = OrderedJudgment.objects.filter(run=run).select_related("pair")
    firsts = list(judgments.filter(order="original").order_by("pair_id")[:6])
    one, two, three, four, five, six = (j.pair for j in firsts)
    accepted, invalid = OrderedJudgment.Status.ACCEPTED, OrderedJudgment.Status.INVALID
    # 1. The reverse order never accepted; the original a TIE shown with b as A.
    judgments.filter(pair=one, order="reverse").update(status=invalid, winner=None)
    judgments.filter(pair=one, order="original").update(is_tie=True, winner=None, shown_a=one.participant_b)
    # 2. Only the reverse records a side (a as A there, so b was A in the original); both orders won by b.
    judgments.filter(pair=two, order="reverse").update(shown_a=two.participant_a, winner=two.participant_b)
    judgments.filter(pair=two, order="original").update(winner=two.participant_b)
    # 3. Both orders record sides (the original's wins) and both are TIEs.
    judgments.filter(pair=three).update(is_tie=True, winner=None)
    judgments.filter(pair=three, order="original").update(shown_a=three.participant_a)
    judgments.filter(pair=three, order="reverse").update(shown_a=three.participant_a)
    # 4. Both orders invalid: no case at all.  5. Only the reverse accepted, won by a.
    judgments.filter(pair=four).update(status=invalid, winner=None, is_tie=False)
    judgments.filter(pair=five, order="original").update(status=invalid, winner=None, is_tie=False)
    judgments.filter(pair=five, order="reverse").update(status=accepted, winner=five.participant_a, is_tie=False)
    # 6. The original won by a, the reverse by b (order-sensitive); the reverse records b as A, so a was A first.
    judgments.filter(pair=six, order="original").update(winner=six.participant_a, shown_a=None)
    judgments.filter(pair=six, order="reverse").update(winner=six.participant_b, shown_a=six.participant_b)

    enc = run_encoded_cases(run=run)
    assert_same_cases(enc, encode_cases(run_cases_frame(run=run)), "the hand-set run")
    rows = {int(c): i for i, c in enumerate(enc.case)}
    assert four.pk not in rows and len(enc.lo) == 1199

    def code(pair, participant) -> int:  # noqa: ANN001
        """LO or HI: which canonical side of ``pair`` the ``participant`` is, read from the names."""
        i = rows[pair.pk]
        return LO if enc.models[enc.lo[i]] == participant.name else HI

    def row(pair) -> tuple[int, int, int]:  # noqa: ANN001
        i = rows[pair.pk]
        return int(enc.original[i]), int(enc.reverse[i]), int(enc.shown_a[i])

    assert row(one) == (TIE_CODE, MISSING, code(one, one.participant_b))
    assert row(two) == (code(two, two.participant_b), code(two, two.participant_b), code(two, two.participant_b))
    assert row(three) == (TIE_CODE, TIE_CODE, code(three, three.participant_a))
    assert row(five) == (MISSING, code(five, five.participant_a), MISSING)
    assert row(six) == (code(six, six.participant_a), code(six, six.participant_b), code(six, six.participant_a))
    assert leaderboard_document(enc, replicates=REPLICATES) == leaderboard_document(
        run_cases_frame(run=run), replicates=REPLICATES
    )

    subset = [one.pk, three.pk, four.pk, six.pk]
    assert_same_cases(
        run_encoded_cases(run=run, pair_ids=subset), encode_cases(run_cases_frame(run=run, pair_ids=subset)), "a subset of pairs"
    )
    nothing = run_encoded_cases(run=run, pair_ids=[])
    assert nothing.models == () and len(nothing.lo) == 0


def test_a_winner_outside_its_pair_is_refused_naming_the_pair(imported) -> None:  # noqa: ANN001
    run = JudgeRun.objects.get(benchmark=imported)
    judgment = OrderedJudgment.objects.filter(run=run, order="reverse").select_related("pair").order_by("pair_id").first()
    pair = judgment.pair
    outsider = imported.participants.exclude(pk__in=[pair.participant_a_id, pair.participant_b_id]).first()
    OrderedJudgment.objects.filter(pk=judgment.pk).update(winner=outsider, is_tie=False)
    with pytest.raises(ValueError, match=rf"pair {pair.pk}: its reverse names neither .* correct or delete that judgment"):
        run_encoded_cases(run=run)
