"""Template variants, field by field: only the target field changes; the prose holds every field's text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from controls import variants

SIX = ("literature_gap", "hypothesis", "minimal_test", "decisive_metric", "supporting_result", "falsifying_result")


def real_proposals(release_dir: Path) -> list[dict[str, str]]:
    rows = [
        json.loads(line) for line in (release_dir / "proposals.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    return [{f: r[f] for f in SIX} for r in rows if all(isinstance(r.get(f), str) and r[f].strip() for f in SIX)]


HAND = {f: f"The {f.replace('_', ' ')} text, with a comma, and 3.5% — and unicode 测试.  " for f in SIX}


def test_the_field_names_are_the_six_field_contract() -> None:
    assert variants.SIX == SIX
    assert variants.TARGET_FIELD == {
        "grounding": "literature_gap",
        "decisive_metric": "decisive_metric",
        "falsifiability": "falsifying_result",
    }


@pytest.mark.parametrize("target", ["grounding", "decisive_metric", "falsifiability"])
def test_a_clear_corruption_changes_its_target_field_and_nothing_else(target: str, release_dir: Path) -> None:
    changed = {"grounding": "literature_gap", "decisive_metric": "decisive_metric", "falsifiability": "falsifying_result"}[target]
    for proposal in [HAND, *real_proposals(release_dir)]:
        variant = variants.clear_corruption(proposal, target)
        assert set(variant) == set(SIX)
        for name in SIX:
            if name == changed:
                assert variant[name] != proposal[name]
                assert variant[name] == variants.CLEAR_DEFECT[target]
            else:
                assert variant[name] == proposal[name], name


def test_the_clear_defects_are_obvious_in_the_way_each_dimension_needs() -> None:
    # Read by a person: the grounding defect cites nothing and denies prior work; the metric is a yes/no run flag;
    # the falsifier asks for an impossible observation. Pinned words, so a wording change must bump the version.
    assert "no prior work" in variants.CLEAR_DEFECT["grounding"]
    assert "yes/no" in variants.CLEAR_DEFECT["decisive_metric"]
    assert "simultaneously higher and lower" in variants.CLEAR_DEFECT["falsifiability"]
    assert {g.version for g in variants.CLEAR.values()} == {"v1"}


def test_falsifier_off_empties_only_the_falsifying_result(release_dir: Path) -> None:
    for proposal in [HAND, *real_proposals(release_dir)]:
        variant = variants.falsifier_off(proposal)
        assert variant["falsifying_result"] == ""
        assert {k: v for k, v in variant.items() if k != "falsifying_result"} == {
            k: v for k, v in proposal.items() if k != "falsifying_result"
        }


def test_the_prose_rendering_holds_every_fields_text_verbatim_in_contract_order(release_dir: Path) -> None:
    for proposal in [HAND, *real_proposals(release_dir)]:
        prose = variants.render_prose(proposal)
        positions = [prose.index(proposal[name]) for name in SIX]  # raises if a field is missing
        assert positions == sorted(positions)
        skeleton = prose
        for name in SIX:
            skeleton = skeleton.replace(proposal[name], "", 1)
        # Besides the fields' text, only the fixed connecting phrases: no field names, nothing dropped or added.
        assert skeleton == "\n\n".join(lead for _, lead in variants.PROSE_LEADS)
        assert "_" not in skeleton


def test_the_prose_rendering_is_deterministic_and_exact_on_a_hand_case() -> None:
    proposal = {f: f"<{i}>" for i, f in enumerate(SIX)}
    assert variants.render_prose(proposal) == (
        "<0>\n\n"
        "We therefore hypothesise the following. <1>\n\n"
        "The smallest experiment that can tell us whether this holds is as follows. <2>\n\n"
        "What decides the question is this measurement. <3>\n\n"
        "If the hypothesis is right, we expect to see the following. <4>\n\n"
        "If it is wrong, we expect this instead. <5>"
    )


def test_generators_refuse_what_is_not_a_six_field_proposal() -> None:
    with pytest.raises(ValueError, match="falsifying_result"):
        variants.render_prose({f: "x" for f in SIX[:5]})
    with pytest.raises(ValueError, match="unknown target"):
        variants.clear_corruption(HAND, "hypothesis")


def test_the_choice_of_cases_is_seeded_and_independent_of_input_order() -> None:
    candidates = {f"c{i:02d}": ["M1", "M2", "M3", "M4"] for i in range(13)} | {"empty": []}
    first = variants.choose_cases(candidates, contexts=5, seed=7)
    shuffled = {k: list(reversed(v)) for k, v in reversed(list(candidates.items()))}
    assert variants.choose_cases(shuffled, contexts=5, seed=7) == first
    assert len(first) == 5 and len({c for c, _ in first}) == 5
    assert all(c != "empty" for c, _ in first)
    assert [c for c, _ in first] == sorted(c for c, _ in first)
    draws = {tuple(variants.choose_cases(candidates, contexts=5, seed=s)) for s in range(20)}
    assert len(draws) > 15  # the seed matters
    assert len(variants.choose_cases(candidates, contexts=50, seed=0)) == 13


def test_generated_control_ids_are_stable() -> None:
    assert variants.control_id("ctx_001__v1", "GPT 5.2", "clear", "grounding") == "ctx_001__v1__GPT_5.2__clear__grounding"
    assert variants.control_id("ctx_001__v1", "GPT 5.2", "rendering") == "ctx_001__v1__GPT_5.2__rendering"
