"""study_create: stratified sampling, real pairs and hidden controls, per-annotator order and sides."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from annotation.models import Assignment, Item, NaiveProposal, Study
from annotation.services import StudyCreateError, eligible_contexts, stratified_sample, study_create
from arena import naive
from arena.models import Proposal

from .helpers import make_study

pytestmark = pytest.mark.django_db

SENSITIVE_HEAVY = {"001", "004", "007", "010"}  # contexts with two or more order-sensitive pairs of six


def test_only_the_13_text_contexts_are_eligible_and_stratified_by_batch_and_stability(imported) -> None:  # noqa: ANN001
    eligible, meta = eligible_contexts(benchmark=imported)
    assert len(eligible) == 13
    assert meta["sensitive_share_threshold"] == pytest.approx(250 / 1200)
    strata = {e.context.external_id.split("_")[2]: e.stratum for e in eligible}
    assert {n for n, s in strata.items() if s == "fifth40/sensitive"} == SENSITIVE_HEAVY
    assert Counter(strata.values()) == {"fifth40/stable": 9, "fifth40/sensitive": 4}


def test_stratified_sample_allocates_by_largest_remainder() -> None:
    strata = {"b1/stable": list("abcdefghi"), "b1/sensitive": list("wxyz")}
    chosen = stratified_sample(strata, 3, random.Random(0))
    # Quotas 3·9/13 = 2.08 and 3·4/13 = 0.92: floors 2 and 0, the larger remainder gets the last seat.
    assert {s: len(m) for s, m in chosen.items()} == {"b1/stable": 2, "b1/sensitive": 1}
    assert stratified_sample(strata, 13, random.Random(0)) == {s: sorted(m) for s, m in strata.items()}
    with pytest.raises(ValueError):
        stratified_sample(strata, 14, random.Random(0))


def test_a_study_has_all_real_pairs_of_its_contexts_plus_hidden_controls(imported, annotator, annotator2) -> None:  # noqa: ANN001
    study = make_study(imported, [annotator, annotator2], n_contexts=3, n_naive_controls=2)
    items = list(study.items.all())
    real = [it for it in items if not it.is_control]
    controls = [it for it in items if it.is_control]
    assert len(real) == 18 and len(controls) == 2
    assert len({it.context_id for it in real}) == 3
    for it in real:
        assert it.first_proposal.participant_id == it.pair.participant_a_id
        assert it.second_proposal.participant_id == it.pair.participant_b_id
    for it in controls:
        assert it.context_id in {r.context_id for r in real}
        assert it.first_proposal.context_id == it.context_id and it.naive is not None
        assert set(it.naive.content) == {
            "literature_gap",
            "hypothesis",
            "minimal_test",
            "decisive_metric",
            "supporting_result",
            "falsifying_result",
        }
    assert len({it.context_id for it in controls}) == 2
    # The naive proposal never becomes a participant or a proposal of the benchmark.
    assert Proposal.objects.filter(context__benchmark=imported).count() == 52
    assert study.stratification["strata"]["fifth40/sensitive"]["chosen"]  # 3·4/13 rounds up to one


def test_each_annotator_has_their_own_order_and_sides(imported, annotator, annotator2) -> None:  # noqa: ANN001
    study = make_study(imported, [annotator, annotator2], n_contexts=4, n_naive_controls=2)
    mine = list(Assignment.objects.filter(study=study, annotator=annotator).order_by("position"))
    theirs = {a.item_id: a for a in Assignment.objects.filter(study=study, annotator=annotator2)}
    assert [a.position for a in mine] == list(range(1, 27))
    order = [a.item.position for a in mine]
    assert order != sorted(order)  # not the generation order
    assert order != [theirs[a.item_id].item.position for a in sorted(theirs.values(), key=lambda a: a.position)]
    sides = [a.a_is_first for a in mine]
    assert 0 < sum(sides) < len(sides)
    assert sides != [theirs[a.item_id].a_is_first for a in mine]
    assert len({a.token for a in Assignment.objects.filter(study=study)}) == 52


def test_the_same_seed_gives_the_same_study(imported, annotator, annotator2) -> None:  # noqa: ANN001
    def shape(study: Study) -> list[tuple]:
        return sorted(
            (a.annotator_id, a.position, a.item.context_id, a.item.pair_id, a.item.is_control, a.a_is_first)
            for a in study.assignments.select_related("item")
        )

    first = make_study(imported, [annotator, annotator2], seed=11)
    second = make_study(imported, [annotator, annotator2], seed=11)
    assert shape(first) == shape(second)
    assert NaiveProposal.objects.count() == 1  # the control's naive proposal is written once and reused


def test_fewer_annotators_per_item_balances_the_load(imported, annotator, annotator2, db) -> None:  # noqa: ANN001
    from tests.conftest import _user

    carl = _user("carl", annotator=True)
    study = make_study(imported, [annotator, annotator2, carl], n_contexts=2, n_naive_controls=0, annotators_per_item=2)
    per_item = Counter(Assignment.objects.filter(study=study).values_list("item_id", flat=True))
    assert set(per_item.values()) == {2}
    load = Counter(Assignment.objects.filter(study=study).values_list("annotator_id", flat=True))
    assert sorted(load.values()) == [8, 8, 8]


def test_practice_contexts_are_held_out_of_the_formal_round(imported, annotator) -> None:  # noqa: ANN001
    practice = make_study(imported, [annotator], round=Study.Round.PRACTICE, n_contexts=2, n_naive_controls=0)
    with pytest.raises(StudyCreateError, match="11 contexts"):
        make_study(imported, [annotator], n_contexts=13)
    formal = make_study(imported, [annotator], n_contexts=11)
    held_out = set(practice.items.values_list("context_id", flat=True))
    assert not held_out & set(formal.items.values_list("context_id", flat=True))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_contexts": 14}, "13 contexts"),
        ({"n_contexts": 0}, "number of contexts must be at least 1"),
        ({"n_contexts": 2, "n_naive_controls": 3}, "naive controls"),
        ({"annotators_per_item": 3}, "annotators per item"),
        ({"cap_minutes": 0}, "cap"),
        ({"round": "final"}, "round"),
    ],
)
def test_impossible_studies_are_refused_and_nothing_is_written(imported, annotator, annotator2, kwargs, message) -> None:  # noqa: ANN001
    with pytest.raises(StudyCreateError, match=message):
        make_study(imported, [annotator, annotator2], **kwargs)
    assert not Study.objects.exists() and not Item.objects.exists()


def test_annotators_must_be_in_the_annotators_group(imported, annotator, outsider) -> None:  # noqa: ANN001
    with pytest.raises(StudyCreateError, match="olga"):
        study_create(benchmark=imported, n_contexts=1, annotators=[annotator, outsider])


# --------------------------------------------------------------------------- hidden controls are not found by counting


def appearances(study: Study, context_id: int) -> tuple[int, Counter, int]:
    """(items shown, appearances of each real proposal, appearances of the naive proposal) in one context."""
    items = list(study.items.filter(context_id=context_id))
    real: Counter = Counter()
    naive_count = 0
    for it in items:
        real[it.first_proposal_id] += 1
        if it.is_control:
            naive_count += 1
        else:
            real[it.second_proposal_id] += 1
    return len(items), real, naive_count


@pytest.mark.parametrize("k", [4, 5])  # the release showed 90 of 120 real pairs: 4.5 of a context's 6
def test_with_pairs_per_context_a_controls_proposal_appears_as_often_as_some_real_one(imported, annotator, k) -> None:  # noqa: ANN001
    """Property: in every context, every context shows exactly K items, and the naive proposal's number of
    appearances lies within [fewest, most] appearances of the real proposals shown in that context."""
    study = make_study(imported, [annotator], n_contexts=13, n_naive_controls=13, pairs_per_context=k, seed=4)
    assert study.items.count() == 13 * k and study.items.filter(is_control=True).count() == 13
    for context_id in set(study.items.values_list("context_id", flat=True)):
        n_items, real, naive_count = appearances(study, context_id)
        assert n_items == k
        assert naive_count == 1
        assert min(real.values()) <= naive_count <= max(real.values()), (context_id, sorted(real.values()))
    assert study.stratification["pairs_per_context"] == k


def test_without_pairs_per_context_the_control_is_the_odd_one_out(imported, annotator) -> None:  # noqa: ANN001
    """What the option fixes: all six pairs plus the control, the naive proposal once, every real one 3-4 times."""
    study = make_study(imported, [annotator], n_contexts=2, n_naive_controls=1)
    control = study.items.get(is_control=True)
    n_items, real, naive_count = appearances(study, control.context_id)
    assert n_items == 7 and naive_count == 1 and sorted(real.values()) == [3, 3, 3, 4]


def test_contexts_without_a_control_show_k_real_pairs(imported, annotator) -> None:  # noqa: ANN001
    study = make_study(imported, [annotator], n_contexts=13, n_naive_controls=2, pairs_per_context=5, seed=8)
    assert study.items.count() == 65 and study.items.filter(is_control=False).count() == 63
    for context_id in set(study.items.values_list("context_id", flat=True)):
        n_items, real, _naive = appearances(study, context_id)
        assert n_items == 5
    # Every kept pair is one of the context's canonical pairs, each at most once.
    pairs = list(study.items.filter(is_control=False).values_list("pair_id", flat=True))
    assert len(pairs) == len(set(pairs))


def test_pairs_per_context_is_reproducible_from_the_seed(imported, annotator) -> None:  # noqa: ANN001
    def shape(study: Study) -> list[tuple]:
        return sorted((it.context_id, it.pair_id or 0, it.first_proposal_id, it.is_control) for it in study.items.all())

    first = make_study(imported, [annotator], n_contexts=4, n_naive_controls=2, pairs_per_context=4, seed=21)
    second = make_study(imported, [annotator], n_contexts=4, n_naive_controls=2, pairs_per_context=4, seed=21)
    assert shape(first) == shape(second)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"pairs_per_context": 0}, "pairs per context must be between 1 and 6"),
        ({"pairs_per_context": 7}, "pairs per context must be between 1 and 6"),
        ({"pairs_per_context": 6, "n_naive_controls": 1}, "with hidden naive controls, pairs per context must be at most 5"),
    ],
)
def test_impossible_pairs_per_context_is_refused_with_the_allowed_range(imported, annotator, kwargs, message) -> None:  # noqa: ANN001
    with pytest.raises(StudyCreateError, match=message):
        make_study(imported, [annotator], **kwargs)
    assert not Study.objects.exists() and not Item.objects.exists()


def test_six_pairs_per_context_without_controls_is_every_pair(imported, annotator) -> None:  # noqa: ANN001
    study = make_study(imported, [annotator], n_contexts=2, n_naive_controls=0, pairs_per_context=6)
    assert study.items.count() == 12


def test_the_plan_hides_the_control_for_every_k_up_to_five_of_four_models() -> None:
    models = ["claude", "deepseek", "glm", "gpt"]
    pairs = [(a, b) for i, a in enumerate(models) for b in models[i + 1 :]]
    for k in range(1, 6):
        for seed in range(50):
            plan = naive.plan_context(pairs, k=k, control=True, rng=random.Random(seed))
            assert plan is not None and len(plan.pairs) == k - 1 and len(set(plan.pairs)) == k - 1
            counts = Counter(x for pair in plan.pairs for x in pair)
            counts[plan.control_partner] += 1
            assert min(counts.values()) == 1  # some real proposal appears once, as the naive one does
    assert naive.plan_context(pairs, k=6, control=True, rng=random.Random(0)) is None
    # Four models: 5 (one real pair holding x, and the three pairs without x); three models: all 3 pairs.
    assert naive.max_hiding_k(pairs) == 5
    assert naive.max_hiding_k([("a", "b"), ("a", "c"), ("b", "c")]) == 3
