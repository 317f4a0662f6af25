"""import_controls: atomic, line-numbered errors naming the field, valid values named, duplicates refused, idempotent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from controls.import_export import ControlImportError, controls_import
from controls.models import ControlVariant

from . import helpers as h

pytestmark = pytest.mark.django_db


def run(benchmark, path: Path) -> str:  # noqa: ANN001
    from io import StringIO

    out = StringIO()
    call_command("import_controls", f"{benchmark.name}@{benchmark.version}", str(path), stdout=out)
    return out.getvalue()


def failure(benchmark, path: Path) -> str:  # noqa: ANN001
    with pytest.raises(CommandError) as caught:
        run(benchmark, path)
    assert ControlVariant.objects.count() == 0, "a failed import wrote something"
    return str(caught.value)


def test_it_imports_every_kind_and_stores_each_field(imported, tmp_path: Path) -> None:  # noqa: ANN001
    rows = h.all_kinds(imported)
    out = run(imported, h.write(tmp_path / "controls.jsonl", rows))
    assert "created 24 control(s)" in out
    assert ControlVariant.objects.count() == 24
    for row in rows:
        v = ControlVariant.objects.select_related("context", "source__participant").get(control_id=row["control_id"])
        assert (v.kind, v.target, v.context.external_id, v.source.participant.name) == (
            row["kind"],
            row["target"],
            row["context_id"],
            row["source_model"],
        )
        assert v.content == row.get("proposal") and v.prose == row.get("prose", "")
        assert v.origin == "imported" and v.status == "approved"
        assert v.provenance == {"file": "controls.jsonl", "line": rows.index(row) + 1}


def test_reimporting_the_same_file_changes_nothing_not_even_a_review(imported, tmp_path: Path) -> None:  # noqa: ANN001
    path = h.write(tmp_path / "controls.jsonl", h.all_kinds(imported))
    run(imported, path)
    ControlVariant.objects.filter(kind="naive").update(status="rejected")
    before = list(ControlVariant.objects.order_by("pk").values())
    out = run(imported, path)
    assert out.strip() == f"nothing new: the 24 control(s) of controls.jsonl are already in {imported}"
    assert list(ControlVariant.objects.order_by("pk").values()) == before


def test_a_stored_control_id_with_other_content_is_refused_and_nothing_is_written(imported, tmp_path: Path) -> None:  # noqa: ANN001
    source = h.sources(imported, 1)[0]
    run(imported, h.write(tmp_path / "a.jsonl", [h.line(source, "clear", "grounding", control_id="c1")]))
    other = h.line(source, "clear", "grounding", control_id="c1")
    other["proposal"]["literature_gap"] = "Another defect."
    new = h.line(source, "rendering", control_id="c2")
    with pytest.raises(ControlImportError) as caught:
        controls_import(benchmark=imported, path=h.write(tmp_path / "b.jsonl", [new, other]))
    assert str(caught.value.problems[0]).startswith('b.jsonl, line 2: proposal: control "c1" is already in')
    assert not ControlVariant.objects.filter(control_id="c2").exists()


def test_a_duplicate_control_id_in_the_file_is_refused_with_both_lines(imported, tmp_path: Path) -> None:  # noqa: ANN001
    source = h.sources(imported, 1)[0]
    row = h.line(source, "falsifier_off", control_id="dup")
    message = failure(imported, h.write(tmp_path / "c.jsonl", [row, h.line(source, "rendering"), row]))
    assert 'c.jsonl, line 3: control_id: "dup" repeats line 1; each control appears once' in message


def test_unknown_kind_target_context_and_model_name_the_valid_values(imported, tmp_path: Path) -> None:  # noqa: ANN001
    source = h.sources(imported, 1)[0]
    rows = [
        h.line(source, "clear", "grounding") | {"kind": "blurry"},
        h.line(source, "clear", "grounding") | {"target": "hypothesis"},
        h.line(source, "rendering", context_id="ctx_nowhere"),
        h.line(source, "rendering", source_model="GPT 9", control_id="other"),
    ]
    message = failure(imported, h.write(tmp_path / "c.jsonl", rows))
    assert (
        'c.jsonl, line 1: kind: unknown kind "blurry"; the kinds are "clear", "subtle", "sham", "rendering", "falsifier_off", "naive"'
        in message
    )
    assert (
        'line 2: target: unknown target "hypothesis"; the targets are "grounding", "decisive_metric", "falsifiability" (or null)'
        in message
    )
    assert (
        'line 3: context_id: unknown context "ctx_nowhere" in lit2test v1; its contexts with text include "smallari_fifth40_001'
        in message
    )
    assert (
        'line 4: source_model: unknown model "GPT 9"; the models of lit2test v1 are "Claude-Sonnet-4.6", "DeepSeek-V3.2", "GLM-5", "GPT 5.2"'
        in message
    )


def test_a_model_without_a_proposal_on_that_context_is_named(imported, tmp_path: Path) -> None:  # noqa: ANN001
    from arena.models import Proposal

    source = h.sources(imported, 1)[0]
    Proposal.objects.filter(context=source.context, participant__name="GLM-5").exclude(pk=source.pk).delete()
    if source.participant.name == "GLM-5":
        pytest.skip("the chosen source is GLM-5's")
    message = failure(imported, h.write(tmp_path / "c.jsonl", [h.line(source, "rendering", source_model="GLM-5")]))
    assert (
        f'line 1: source_model: "GLM-5" has no proposal for context "{source.context.external_id}"; the models with one are'
        in message
    )


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda r: r.update(target=None), 'target: a clear variant needs a target: one of "grounding"'),
        (lambda r: r.pop("proposal"), "proposal: missing"),
        (lambda r: r["proposal"].pop("hypothesis"), "proposal.hypothesis: missing"),
        (lambda r: r["proposal"].update(hypothesis=3), "proposal.hypothesis: must be text, got number"),
        (lambda r: r["proposal"].update(hypothesis="  "), "proposal.hypothesis: empty"),
        (lambda r: r["proposal"].update(novelty="x"), "proposal.novelty: is not one of the six fields"),
        (lambda r: r.update(prose="text"), "prose: only a rendering variant has prose"),
        (lambda r: r.update(propsal={}), "propsal: is not a field of a control line"),
        (lambda r: r.update(status="maybe"), 'status: must be one of "draft", "approved", "rejected"; got "maybe"'),
        # Against the clean source: a clear corruption changes its target field and nothing else.
        (
            lambda r: r["proposal"].update(hypothesis="Edited."),
            "proposal.hypothesis: differs from the source proposal; a clear variant changes only literature_gap",
        ),
        (lambda r: r["proposal"].update(literature_gap=None), "proposal.literature_gap: missing"),
    ],
)
def test_each_problem_names_its_line_and_field(imported, tmp_path: Path, change, expected: str) -> None:  # noqa: ANN001
    source = h.sources(imported, 1)[0]
    row = h.line(source, "clear", "grounding")
    change(row)
    message = failure(imported, h.write(tmp_path / "c.jsonl", [h.line(source, "falsifier_off"), row]))
    assert f"c.jsonl, line 2: {expected}" in message


def test_the_target_field_must_change_and_falsifier_off_must_be_empty(imported, tmp_path: Path) -> None:  # noqa: ANN001
    source = h.sources(imported, 1)[0]
    unchanged = h.line(source, "sham", "decisive_metric")
    unchanged["proposal"]["decisive_metric"] = source.content["decisive_metric"]
    filled = h.line(source, "falsifier_off")
    filled["proposal"]["falsifying_result"] = "still here"
    touched = h.line(source, "falsifier_off")
    touched["proposal"]["minimal_test"] = "edited"
    rendering_with_fields = h.line(source, "rendering", proposal=source.content)
    untargeted = h.line(source, "naive", target="grounding")
    message = failure(imported, h.write(tmp_path / "c.jsonl", [unchanged, filled, touched, rendering_with_fields, untargeted]))
    assert (
        "line 1: proposal.decisive_metric: is the source proposal's text unchanged; a sham variant must change its target field"
        in message
    )
    assert 'line 2: proposal.falsifying_result: must be empty ("") in a falsifier_off variant' in message
    assert (
        "line 3: proposal.minimal_test: differs from the source proposal; a falsifier_off variant changes only falsifying_result"
        in message
    )
    assert 'line 4: proposal: a rendering variant has "prose" instead of "proposal"' in message
    assert "line 5: target: must be null for a naive variant (only clear, subtle, sham have a target)" in message


def test_bad_json_and_unstorable_text_are_line_numbered(imported, tmp_path: Path) -> None:  # noqa: ANN001
    source = h.sources(imported, 1)[0]
    nul = h.line(source, "rendering")
    nul["prose"] = "bad \x00 byte"
    message = failure(
        imported, h.write(tmp_path / "c.jsonl", [h.line(source, "falsifier_off"), '{"control_id": ', "[1, 2]", nul])
    )
    assert "c.jsonl, line 2: invalid JSON" in message
    assert "c.jsonl, line 3: expected a JSON object, got array" in message
    assert "c.jsonl, line 4: prose: contains a NUL character" in message


def test_an_empty_file_and_a_missing_file_are_clear_errors(imported, tmp_path: Path) -> None:  # noqa: ANN001
    assert "no control lines" in failure(imported, h.write(tmp_path / "empty.jsonl", []))
    assert "no such file" in failure(imported, tmp_path / "absent.jsonl")
    with pytest.raises(CommandError, match="no benchmark 'nothing'"):
        call_command("import_controls", "nothing", str(tmp_path / "empty.jsonl"))


def test_the_file_format_is_the_one_the_issue_names(imported, tmp_path: Path) -> None:  # noqa: ANN001
    # Written out by hand, exactly the documented keys, to pin the format against the helpers above.
    source = h.sources(imported, 1)[0]
    proposal = dict(source.content) | {"falsifying_result": ""}
    text = json.dumps(
        {
            "control_id": "hand-1",
            "kind": "falsifier_off",
            "context_id": source.context.external_id,
            "source_model": source.participant.name,
            "target": None,
            "proposal": proposal,
        }
    )
    text += "\n" + json.dumps(
        {
            "control_id": "hand-2",
            "kind": "rendering",
            "context_id": source.context.external_id,
            "source_model": source.participant.name,
            "target": None,
            "prose": "Some prose.",
        }
    )
    (tmp_path / "hand.jsonl").write_text(text + "\n", encoding="utf-8")
    run(imported, tmp_path / "hand.jsonl")
    assert sorted(ControlVariant.objects.values_list("control_id", "kind")) == [
        ("hand-1", "falsifier_off"),
        ("hand-2", "rendering"),
    ]
