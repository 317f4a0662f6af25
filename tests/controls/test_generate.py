"""generate_controls: template variants of a seeded choice of cases, checked field by field against their sources."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from arena.schemas import SIX_FIELD
from controls.models import ControlVariant
from controls.services import ControlError, control_variant_review, controls_generate

from .helpers import SIX, TARGET_FIELD

pytestmark = pytest.mark.django_db


def generate(*args: str) -> str:
    out = StringIO()
    call_command("generate_controls", *args, stdout=out)
    return out.getvalue()


def test_it_makes_each_template_kind_with_only_the_target_field_changed(imported) -> None:  # noqa: ANN001
    out = generate("lit2test", "--kinds", "clear,rendering,falsifier_off,naive", "--contexts", "4", "--seed", "3")
    assert "4 case(s)" in out and "created 24 control(s) (12 clear, 4 falsifier_off, 4 naive, 4 rendering)" in out
    variants = list(ControlVariant.objects.select_related("source__participant", "context"))
    assert len({v.context_id for v in variants}) == 4
    for v in variants:
        clean = v.source.content
        assert v.context_id == v.source.context_id
        assert (v.origin, v.status) == ("template", "approved")
        assert v.generator and v.generator_version
        if v.kind == "rendering":
            assert v.content is None and v.target is None
            for name in SIX:
                assert clean[name] in v.prose, name
            continue
        assert set(v.content) == set(SIX)
        if v.kind == "clear":
            changed = TARGET_FIELD[v.target]
            assert v.content[changed] != clean[changed]
        elif v.kind == "falsifier_off":
            assert v.target is None and v.content["falsifying_result"] == ""
            changed = "falsifying_result"
        else:
            assert v.kind == "naive" and v.target is None and not SIX_FIELD.validate(v.content)
            continue
        for name in SIX:
            if name != changed:
                assert v.content[name] == clean[name], (v.control_id, name)
    clears = [v for v in variants if v.kind == "clear"]
    assert sorted(v.target for v in clears) == sorted(list(TARGET_FIELD) * 4)


def test_the_same_seed_makes_the_same_cases_and_a_second_run_creates_nothing(imported) -> None:  # noqa: ANN001
    first = controls_generate(benchmark=imported, kinds=["clear"], contexts=3, seed=11)
    ids = set(ControlVariant.objects.values_list("control_id", flat=True))
    second = controls_generate(benchmark=imported, kinds=["clear"], contexts=3, seed=11)
    assert second.cases == first.cases and not second.created and second.unchanged == 9
    assert set(ControlVariant.objects.values_list("control_id", flat=True)) == ids
    other = controls_generate(benchmark=imported, kinds=["clear"], contexts=3, seed=12)
    assert other.cases != first.cases


def test_a_researchers_edit_survives_a_second_generation(imported) -> None:  # noqa: ANN001
    controls_generate(benchmark=imported, kinds=["clear"], contexts=1, seed=0)
    variant = ControlVariant.objects.get(target="grounding")
    edited = dict(variant.content) | {"literature_gap": "A researcher's sharper defect."}
    control_variant_review(variant=variant, status="approved", content=edited)
    summary = controls_generate(benchmark=imported, kinds=["clear"], contexts=1, seed=0)
    assert summary.kept == [variant.control_id]
    assert ControlVariant.objects.get(pk=variant.pk).content["literature_gap"] == "A researcher's sharper defect."


def test_a_review_that_touches_another_field_is_refused(imported) -> None:  # noqa: ANN001
    controls_generate(benchmark=imported, kinds=["clear"], contexts=1, seed=0)
    variant = ControlVariant.objects.get(target="falsifiability")
    with pytest.raises(ControlError, match="proposal.hypothesis: differs from the source proposal"):
        control_variant_review(variant=variant, status="approved", content=dict(variant.content) | {"hypothesis": "x"})
    control_variant_review(variant=variant, status="rejected")
    variant.refresh_from_db()
    assert variant.status == "rejected" and variant.reviewed_at is not None


def test_only_valid_filled_proposals_are_sources(imported) -> None:  # noqa: ANN001
    controls_generate(benchmark=imported, kinds=["falsifier_off"], contexts=50, seed=0)
    sources = ControlVariant.objects.values_list("source__validation_status", flat=True)
    assert set(sources) == {"valid"}
    assert len(sources) == imported.contexts.filter(has_text=True).count()  # one per context with text


def test_model_made_kinds_are_refused_with_what_they_need(imported) -> None:  # noqa: ANN001
    with pytest.raises(CommandError) as caught:
        generate("lit2test", "--kinds", "clear,subtle,sham", "--contexts", "2")
    assert "subtle and sham variants are written by a language model: they need --model" in str(caught.value)
    assert "missing: --model and --base-url" in str(caught.value)  # the model path: tests/controls/test_generate_llm.py
    assert not ControlVariant.objects.exists()


def test_unknown_kinds_and_benchmarks_are_named(imported) -> None:  # noqa: ANN001
    with pytest.raises(CommandError, match="the kinds are clear, subtle, sham, rendering, falsifier_off, naive"):
        generate("lit2test", "--kinds", "clear,fuzzy", "--contexts", "2")
    with pytest.raises(CommandError, match="no benchmark 'nope'"):
        generate("nope", "--kinds", "clear", "--contexts", "2")
    with pytest.raises(CommandError, match="--contexts must be 1 or more"):
        generate("lit2test", "--kinds", "clear", "--contexts", "0")


def test_asking_for_more_contexts_than_there_are_says_how_many_were_used(imported) -> None:  # noqa: ANN001
    # The sample has 13 contexts with text, each with valid six-field proposals.
    line = generate("lit2test", "--kinds", "falsifier_off", "--contexts", "50").strip().splitlines()[-1]
    assert line.startswith("13 case(s) in lit2test")
    assert line.endswith("(asked for 50 contexts; only 13 have a valid six-field proposal, all used)")
    assert ControlVariant.objects.filter(kind="falsifier_off").count() == 13


def test_templates_only_makes_subtle_and_sham_from_the_reserve_templates_without_a_model(imported) -> None:  # noqa: ANN001
    from controls import variants as templates

    out = generate("lit2test", "--kinds", "subtle,sham", "--contexts", "2", "--seed", "1", "--templates-only")
    assert "created 12 control(s) (6 sham, 6 subtle)" in out
    for v in ControlVariant.objects.select_related("source"):
        field = TARGET_FIELD[v.target]
        clean = v.source.content
        assert (v.origin, v.status) == ("template", "approved")
        assert all(v.content[f] == clean[f] for f in SIX if f != field), v.control_id
        if v.kind == "sham":
            assert v.content[field] == templates.RESERVE_SHAM_LEAD_IN + clean[field]
        else:
            assert v.content[field].startswith(clean[field]) and v.content[field] != clean[field]
            assert templates.RESERVE_SUBTLE_DEFECT[v.target] in v.content[field]
    # A subtle and a sham variant of one source and target share a case key (the bootstrap moves them together).
    from controls.selectors import control_case_key

    keys = {}
    for v in ControlVariant.objects.all():
        keys.setdefault(control_case_key(v), set()).add(v.kind)
    assert len(keys) == 6 and all(kinds == {"subtle", "sham"} for kinds in keys.values())
    assert (
        generate("lit2test", "--kinds", "subtle,sham", "--contexts", "2", "--seed", "1", "--templates-only").count("created 0")
        == 1
    )
