"""What a judge run asks and what it stores: both orders, blind prompts, folding, structured scores.

Every answer comes from the scripted fake OpenAI-compatible server (a real process); expected values
are computed here from the stored proposal texts, never by the code under test.
"""

from __future__ import annotations

import pytest

from arena.models import CanonicalPair, Context, OrderedJudgment, Proposal
from arena.selectors import run_cases_frame
from arena.stats import case_counts, encode_cases, side_bias
from jobs.services import judge_run_execute
from lit2test.models import JudgeTask
from lit2test.prompts import DIMENSIONS

from .helpers import JUDGE, PARTICIPANTS, accepted, all_text, chat_requests, create_running, user_text

pytestmark = pytest.mark.django_db(transaction=True)


def _hypothesis_length(proposal: Proposal) -> int:
    # The fake judge compares the field as it reads it from the prompt, surrounding blanks removed.
    return len(proposal.content["hypothesis"].strip())


def _make_equal_length(context: Context, target: str, like: str) -> None:
    """Give ``target``'s hypothesis in ``context`` exactly as many characters as ``like``'s."""
    proposals = {p.participant.name: p for p in Proposal.objects.filter(context=context).select_related("participant")}
    proposal = proposals[target]
    proposal.content = proposal.content | {"hypothesis": "x" * _hypothesis_length(proposals[like])}
    proposal.save(update_fields=["content"])


def test_a_longer_hypothesis_wins_in_both_orders_so_only_equal_lengths_are_order_sensitive(imported, fake_llm) -> None:  # noqa: ANN001
    contexts = list(Context.objects.filter(benchmark=imported, has_text=True).order_by("external_id"))
    # Ties in both orders where two hypotheses are equally long: one pair in one context, three in another.
    _make_equal_length(contexts[0], "GLM-5", like="DeepSeek-V3.2")
    _make_equal_length(contexts[1], "GPT 5.2", like="Claude-Sonnet-4.6")
    _make_equal_length(contexts[1], "GLM-5", like="Claude-Sonnet-4.6")
    fake_llm.script(judge={"policy": "prefer_field", "field": "hypothesis"})
    run, _ = create_running(imported, fake_llm, concurrency=8)

    assert judge_run_execute(run_id=run.pk) == "completed"

    expected: dict[str, str | None] = {}  # internal key -> the longer proposal's model, None when equal
    for pair in CanonicalPair.objects.filter(benchmark=imported, context__has_text=True).select_related(
        "participant_a", "participant_b"
    ):
        a = _hypothesis_length(Proposal.objects.get(context_id=pair.context_id, participant=pair.participant_a))
        b = _hypothesis_length(Proposal.objects.get(context_id=pair.context_id, participant=pair.participant_b))
        expected[pair.internal_key] = pair.participant_a.name if a > b else pair.participant_b.name if b > a else None
    stable = sum(1 for winner in expected.values() if winner is not None)
    assert len(expected) == 78 and stable == 74

    frame = run_cases_frame(run=run)
    assert case_counts(encode_cases(frame)) == {"total": 78, "stable": stable, "sensitive": 78 - stable, "incomplete": 0}
    for row in frame.itertuples():
        winner = expected[row.case]
        assert (row.original, row.reverse) == ((winner, winner) if winner else ("TIE", "TIE")), row.case


def test_a_judge_that_always_picks_a_makes_every_case_order_sensitive_and_shows_side_bias(imported, fake_llm) -> None:  # noqa: ANN001
    fake_llm.script(judge={"policy": "always_a"})
    run, _ = create_running(imported, fake_llm, select="sample:12")

    assert judge_run_execute(run_id=run.pk) == "completed"

    enc = encode_cases(run_cases_frame(run=run))
    assert case_counts(enc) == {"total": 12, "stable": 0, "sensitive": 12, "incomplete": 0}
    bias = side_bias(enc)
    assert bias is not None
    assert (bias["rows"], bias["a_wins"], bias["b_wins"], bias["ties"]) == (24, 24, 0, 0)
    assert bias["p_value"] < 0.001
    # The A side is a different model in each order, so each model won once per pair.
    for j in OrderedJudgment.objects.filter(run=run).select_related("pair"):
        shown_a = j.pair.participant_a_id if j.order == "original" else j.pair.participant_b_id
        assert (j.verdict, j.winner_id, j.shown_a_id) == ("A", shown_a, shown_a)


def test_prompts_are_blind_and_the_reverse_order_shows_the_other_proposal_first(imported, fake_llm) -> None:  # noqa: ANN001
    run, _ = create_running(imported, fake_llm, select="sample:10")

    assert judge_run_execute(run_id=run.pk) == "completed"

    log = chat_requests(fake_llm.log())
    assert len(log) == 20
    internal_keys = list(CanonicalPair.objects.filter(benchmark=imported).values_list("internal_key", flat=True))
    assert len(internal_keys) == 1200
    for entry in log:
        assert entry["model"] == JUDGE
        text = all_text(entry)
        lowered = text.lower()
        for name in PARTICIPANTS:
            assert name.lower() not in lowered, f"{name} reached the judge"
        assert not [key for key in internal_keys if key in text], "a release pair_id reached the judge"
        user = user_text(entry)
        assert user.count("=== PROPOSAL A ===") == 1 and user.count("=== PROPOSAL B ===") == 1
        assert user.index("=== PROPOSAL A ===") < user.index("=== PROPOSAL B ===")

    # Each judged pair was sent twice, once with participant_a's proposal first and once with participant_b's.
    tasks = JudgeTask.objects.filter(run=run).select_related("pair")
    pairs = {t.pair for t in tasks}
    assert len(pairs) == 10
    for pair in pairs:
        first = Proposal.objects.get(context_id=pair.context_id, participant_id=pair.participant_a_id).content["hypothesis"]
        second = Proposal.objects.get(context_id=pair.context_id, participant_id=pair.participant_b_id).content["hypothesis"]
        prompts = [user_text(e) for e in log if first in user_text(e) and second in user_text(e)]
        assert len(prompts) == 2
        a_first = sorted(p.index(first) < p.index(second) for p in prompts)
        assert a_first == [False, True]


def test_a_prompt_that_would_name_a_participant_is_never_sent(imported, fake_llm) -> None:  # noqa: ANN001
    run, _ = create_running(imported, fake_llm, select="sample:6")
    pair = JudgeTask.objects.filter(run=run).select_related("pair").order_by("id").first().pair
    leaking = Proposal.objects.get(context_id=pair.context_id, participant_id=pair.participant_a_id)
    leaking.content = leaking.content | {"hypothesis": leaking.content["hypothesis"] + " (as DeepSeek-V3.2 would put it)"}
    leaking.save(update_fields=["content"])
    # Every pair of the sample that shows this proposal, in both orders.
    showing = {
        (t.pair_id, t.order)
        for t in JudgeTask.objects.filter(run=run).select_related("pair")
        if t.pair.context_id == leaking.context_id
        and leaking.participant_id in (t.pair.participant_a_id, t.pair.participant_b_id)
    }

    # The name is redacted as the proposal is read (arena/blindness.py), so these tasks are judged blind.
    assert judge_run_execute(run_id=run.pk) == "completed"

    assert all("deepseek" not in all_text(e).lower() for e in fake_llm.log())
    assert len(chat_requests(fake_llm.log())) == 12
    redacted = [e for e in chat_requests(fake_llm.log()) if "(as [redacted] would put it)" in all_text(e)]
    assert len(redacted) == len(showing) > 0


def test_a_structured_run_stores_five_scores_per_side_and_the_verdict_the_judge_picked(imported, fake_llm) -> None:  # noqa: ANN001
    fake_llm.script(judge={"policy": "prefer_field", "field": "hypothesis"})
    run, _ = create_running(imported, fake_llm, select="sample:6", run_type="structured")

    assert judge_run_execute(run_id=run.pk) == "completed"

    judgments = list(OrderedJudgment.objects.filter(run=run).select_related("pair"))
    assert len(judgments) == 12 and len(set(accepted(run))) == 12
    for j in judgments:
        shown_b = j.pair.participant_b_id if j.order == "original" else j.pair.participant_a_id
        len_a = len(Proposal.objects.get(context_id=j.pair.context_id, participant_id=j.shown_a_id).content["hypothesis"].strip())
        len_b = len(Proposal.objects.get(context_id=j.pair.context_id, participant_id=shown_b).content["hypothesis"].strip())
        pick = "A" if len_a > len_b else "B"  # no two sampled hypotheses are equally long
        assert len_a != len_b
        assert j.verdict == pick
        assert j.winner_id == (j.shown_a_id if pick == "A" else shown_b)
        scores = j.metadata["scores"]
        assert set(scores) == {"A", "B"}
        for side in ("A", "B"):
            assert set(scores[side]) == set(DIMENSIONS) and len(DIMENSIONS) == 5
            assert all(isinstance(v, int) and 0 <= v <= 4 for v in scores[side].values())
        # The fake judge scores its pick 3 and the other side 1 on every dimension.
        loser = "B" if pick == "A" else "A"
        assert set(scores[pick].values()) == {3} and set(scores[loser].values()) == {1}
