"""generate_controls' model path (subtle, sham): generation and validation rounds against the scripted endpoint
(tests/fake_llm, canned ``replies``), every attempt recorded, reserves after 4 failed rounds, blind prompts."""

from __future__ import annotations

import json
import re
from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from arena.models import Proposal
from controls.models import ControlAttempt, ControlVariant
from controls.prompts import SHAM_TASK_V1, SUBTLE_TASK_V1
from controls.selectors import control_case_key
from tests.fake_llm import FakeLLM

from .helpers import SIX, TARGET_FIELD

pytestmark = pytest.mark.django_db

GEN, VAL = "writer-model", "checker-model"
KEY_ENV = "CONTROLS_TEST_API_KEY"
TASK = {"subtle": SUBTLE_TASK_V1, "sham": SHAM_TASK_V1}
ACCEPT_SUBTLE = {"only_target_changed": True, "degraded": True, "reason": "The field is now flawed."}
ACCEPT_SHAM = {"only_target_changed": True, "degraded": False, "reason": "Same substance."}


def new_text(kind: str, field: str, n: int = 1) -> str:
    return f"A {kind} rewrite number {n} of the {field} field, written for this test."


def gen_rule(kind: str, field: str, answers: list[Any]) -> dict[str, Any]:
    """Canned answers of the generation calls for one kind and field (the prompts name the field on their own line)."""
    return {"contains": [TASK[kind], f"FIELD TO REWRITE: {field}"], "answers": answers}


def val_rule(edited: str, answers: list[Any]) -> dict[str, Any]:
    """Canned answers of the validation calls that show ``edited`` as the edited field."""
    return {"contains": ["FIELD THAT WAS EDITED:", edited], "answers": answers}


def accepting(kinds: tuple[str, ...]) -> list[dict[str, Any]]:
    """Rules that make every kind and field succeed in round 1 (put specific rules before these)."""
    rules = []
    for kind in kinds:
        for field in TARGET_FIELD.values():
            text = new_text(kind, field)
            rules += [
                gen_rule(kind, field, [{"field": field, "text": text}]),
                val_rule(text, [ACCEPT_SUBTLE if kind == "subtle" else ACCEPT_SHAM]),
            ]
    return rules


def generate(llm: FakeLLM, kinds: str, *extra: str, contexts: int = 1, seed: int = 0) -> str:
    out = StringIO()
    call_command(
        "generate_controls",
        "lit2test",
        "--kinds",
        kinds,
        "--contexts",
        str(contexts),
        "--seed",
        str(seed),
        "--model",
        GEN,
        "--validator-model",
        VAL,
        "--base-url",
        llm.base_url,
        "--api-key-env",
        KEY_ENV,
        *extra,
        stdout=out,
    )
    return out.getvalue()


def attempts(variant_or_id: ControlVariant | str) -> list[tuple[int, str, str]]:
    control_id = variant_or_id if isinstance(variant_or_id, str) else variant_or_id.control_id
    return [(a.round, a.step, a.outcome) for a in ControlAttempt.objects.filter(control_id=control_id).order_by("round", "id")]


def expected_id(source: Proposal, kind: str, target: str) -> str:
    return f"{source.context.external_id}__{source.participant.name.replace(' ', '_')}__{kind}__{target}"


def case_source(contexts: int = 1, seed: int = 0) -> Proposal:
    """The source the seeded draw picks, learnt from the template path (the same draw for every kind), which then
    leaves no variant behind."""
    call_command(
        "generate_controls",
        "lit2test",
        "--kinds",
        "falsifier_off",
        "--contexts",
        str(contexts),
        "--seed",
        str(seed),
        stdout=StringIO(),
    )
    variant = ControlVariant.objects.get()
    variant.delete()
    return variant.source


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(KEY_ENV, "sk-test-secret")
    return "sk-test-secret"


def test_an_edit_accepted_in_round_one_changes_only_its_field_and_records_both_steps(imported, fake_llm, key) -> None:  # noqa: ANN001
    source = case_source()
    # The decisive_metric answer gives all six fields (the other five as shown): read as the same edit.
    six = {name: source.content[name] for name in SIX} | {"decisive_metric": new_text("subtle", "decisive_metric")}
    fake_llm.script(replies=[gen_rule("subtle", "decisive_metric", [six]), *accepting(("subtle",))])

    out = generate(fake_llm, "subtle")

    made = {v.target: v for v in ControlVariant.objects.filter(kind="subtle")}
    assert set(made) == set(TARGET_FIELD)
    for target, v in made.items():
        field = TARGET_FIELD[target]
        assert v.source_id == source.pk and v.control_id == expected_id(source, "subtle", target)
        assert (v.origin, v.status, v.generator, v.generator_version) == ("model", "draft", GEN, "control-subtle-v1")
        assert v.provenance["rounds"] == 1 and v.provenance["validator"] == VAL
        assert v.content[field] == new_text("subtle", field) != source.content[field]
        assert {n: v.content[n] for n in SIX if n != field} == {n: source.content[n] for n in SIX if n != field}
        assert attempts(v) == [(1, "generate", "accepted"), (1, "validate", "accepted")]
        rows = list(ControlAttempt.objects.filter(control_id=v.control_id).order_by("round", "id"))
        assert [(a.model, a.prompt_version) for a in rows] == [(GEN, "control-subtle-v1"), (VAL, "control-validate-v1")]
        assert all(a.variant_id == v.pk and a.source_id == source.pk for a in rows)
    log = fake_llm.log()
    assert sorted(e["model"] for e in log) == sorted([GEN] * 3 + [VAL] * 3)
    assert all(e["messages"][0]["role"] == "system" for e in log)
    assert "subtle grounding: 1 made by model, 0 made by reserve, 0 already there; 1 round(s) used; attempts: 2 accepted" in out
    assert "created 3 control(s) (3 subtle)" in out
    assert key not in json.dumps(log)  # the key travels in a header only, never in a prompt


def test_a_refusal_then_a_success_records_two_rounds(imported, fake_llm, key) -> None:  # noqa: ANN001
    gap = new_text("sham", "literature_gap", 2)
    fake_llm.script(
        replies=[
            gen_rule(
                "sham", "literature_gap", ["I'm sorry, but I can't help with that.", {"field": "literature_gap", "text": gap}]
            ),
            val_rule(gap, [ACCEPT_SHAM]),
            *accepting(("sham",)),
        ]
    )
    out = generate(fake_llm, "sham")
    v = ControlVariant.objects.get(kind="sham", target="grounding")
    assert v.origin == "model" and v.content["literature_gap"] == gap and v.provenance["rounds"] == 2
    assert attempts(v) == [(1, "generate", "refused"), (2, "generate", "accepted"), (2, "validate", "accepted")]
    refused = ControlAttempt.objects.get(control_id=v.control_id, round=1)
    assert refused.raw_text == "I'm sorry, but I can't help with that." and "refused" in refused.reason
    second = [e for e in fake_llm.log() if "FIELD TO REWRITE: literature_gap" in e["messages"][1]["content"]][1]
    assert "A previous attempt was not usable: the model refused" in second["messages"][1]["content"]
    assert (
        "sham grounding: 1 made by model, 0 made by reserve, 0 already there; 2 round(s) used; attempts: 2 accepted, 1 refused"
        in out
    )


def test_off_target_answers_are_refused_until_an_edit_keeps_to_its_field(imported, fake_llm, key) -> None:  # noqa: ANN001
    source = case_source()
    texts = [new_text("sham", "decisive_metric", n) for n in (1, 2, 3, 4)]
    six_other = {name: source.content[name] for name in SIX} | {
        "decisive_metric": texts[0],
        "hypothesis": "A different hypothesis.",
    }
    fake_llm.script(
        replies=[
            gen_rule(
                "sham",
                "decisive_metric",
                [
                    six_other,
                    {"field": "hypothesis", "text": texts[1]},
                    {"field": "decisive_metric", "text": texts[2]},
                    {"field": "decisive_metric", "text": texts[3]},
                ],
            ),
            val_rule(texts[2], [{"only_target_changed": False, "degraded": False, "reason": "It also changes the test."}]),
            val_rule(texts[3], [ACCEPT_SHAM]),
            *accepting(("sham",)),
        ]
    )
    generate(fake_llm, "sham")
    v = ControlVariant.objects.get(kind="sham", target="decisive_metric")
    assert v.origin == "model" and v.content["decisive_metric"] == texts[3] and v.provenance["rounds"] == 4
    assert v.content["hypothesis"] == source.content["hypothesis"]
    assert attempts(v) == [
        (1, "generate", "off_target"),
        (2, "generate", "off_target"),
        (3, "generate", "accepted"),
        (3, "validate", "off_target"),
        (4, "generate", "accepted"),
        (4, "validate", "accepted"),
    ]
    reasons = list(
        ControlAttempt.objects.filter(control_id=v.control_id, outcome="off_target")
        .order_by("round", "id")
        .values_list("reason", flat=True)
    )
    assert "hypothesis" in reasons[0] and "'hypothesis'" in reasons[1] and "It also changes the test." in reasons[2]


def test_a_degraded_sham_and_an_unparseable_answer_are_retried(imported, fake_llm, key) -> None:  # noqa: ANN001
    first, second = new_text("sham", "falsifying_result", 1), new_text("sham", "falsifying_result", 2)
    fake_llm.script(
        replies=[
            gen_rule(
                "sham",
                "falsifying_result",
                [
                    "Here is the rewrite: falsifying_result = ...",
                    {"field": "falsifying_result", "text": first},
                    {"field": "falsifying_result", "text": second},
                ],
            ),
            val_rule(first, [{"only_target_changed": True, "degraded": True, "reason": "Looser threshold."}]),
            val_rule(second, ["maybe", ACCEPT_SHAM]),
            *accepting(("sham",)),
        ]
    )
    generate(fake_llm, "sham")
    v = ControlVariant.objects.get(kind="sham", target="falsifiability")
    # Round 3's validation answer is unparseable; round 4 regenerates the same text, which the validator then accepts.
    assert attempts(v) == [
        (1, "generate", "malformed"),
        (2, "generate", "accepted"),
        (2, "validate", "degraded"),
        (3, "generate", "accepted"),
        (3, "validate", "malformed"),
        (4, "generate", "accepted"),
        (4, "validate", "accepted"),
    ]
    assert v.origin == "model" and v.content["falsifying_result"] == second


def test_four_failed_rounds_fall_back_to_the_reserve_template(imported, fake_llm, key) -> None:  # noqa: ANN001
    source = case_source()
    subtle_gap, sham_gap = new_text("subtle", "literature_gap"), new_text("sham", "literature_gap")
    fake_llm.script(
        replies=[
            val_rule(subtle_gap, [{"only_target_changed": True, "degraded": False, "reason": "Still fine."}]),  # never degraded
            val_rule(sham_gap, [{"only_target_changed": True, "degraded": True, "reason": "Worse."}]),  # always degraded
            *accepting(("subtle", "sham")),
        ]
    )
    out = generate(fake_llm, "subtle,sham")
    subtle = ControlVariant.objects.get(kind="subtle", target="grounding")
    sham = ControlVariant.objects.get(kind="sham", target="grounding")
    for v, failed in ((subtle, "rejected"), (sham, "degraded")):
        assert attempts(v) == [
            (r, s, "accepted" if s == "generate" else failed) for r in (1, 2, 3, 4) for s in ("generate", "validate")
        ] + [(5, "reserve", "accepted")]
        assert (v.origin, v.status) == ("template", "draft")
        assert v.provenance["reserve"] is True and v.provenance["failed_rounds"] == 4
        assert "after 4 failed model rounds" in v.provenance["note"]
        assert ControlAttempt.objects.filter(variant=v).count() == 9
        assert {n: v.content[n] for n in SIX if n != "literature_gap"} == {
            n: source.content[n] for n in SIX if n != "literature_gap"
        }
    original = source.content["literature_gap"]
    assert subtle.generator == "reserve-subtle-grounding"
    # Milder than clear: the original gap stays, one sentence misstating it follows.
    assert subtle.content["literature_gap"].startswith(original.rstrip() + " ")
    assert "already settle this question" in subtle.content["literature_gap"][len(original) :]
    assert sham.generator == "reserve-sham" and sham.content["literature_gap"] == "Stated precisely: " + original
    # The subtle and the sham variant of one source and target are one case of the statistics.
    assert control_case_key(subtle) == control_case_key(sham) == f"{source.pk}:grounding"
    assert sham.control_id == expected_id(source, "sham", "grounding")
    assert (
        "subtle grounding: 0 made by model, 1 made by reserve, 0 already there; 4 round(s) used; attempts: 5 accepted, 4 rejected"
        in out
    )
    assert (
        "sham grounding: 0 made by model, 1 made by reserve, 0 already there; 4 round(s) used; attempts: 5 accepted, 4 degraded"
        in out
    )
    assert "subtle falsifiability: 1 made by model" in out and "created 6 control(s) (3 sham, 3 subtle)" in out


def test_missing_options_and_an_unset_key_are_named_and_nothing_is_written(imported, fake_llm, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.delenv(KEY_ENV, raising=False)
    base = ("generate_controls", "lit2test", "--kinds", "clear,subtle", "--contexts", "1")
    with pytest.raises(CommandError, match=r"missing: --base-url\. ") as caught:
        call_command(*base, "--model", GEN, stdout=StringIO())
    assert "subtle variants are written by a language model" in str(caught.value)
    with pytest.raises(CommandError, match="missing: --model and --base-url"):
        call_command(*base, stdout=StringIO())
    with pytest.raises(CommandError, match=f"--api-key-env: the environment variable {KEY_ENV} named for the API key is not set"):
        call_command(*base, "--model", GEN, "--base-url", fake_llm.base_url, "--api-key-env", KEY_ENV, stdout=StringIO())
    with pytest.raises(CommandError, match="'SECRET_KEY' is not an API-key variable"):
        call_command(*base, "--model", GEN, "--base-url", fake_llm.base_url, "--api-key-env", "SECRET_KEY", stdout=StringIO())
    with pytest.raises(CommandError, match="--concurrency"):
        call_command(*base, "--model", GEN, "--base-url", fake_llm.base_url, "--concurrency", "0", stdout=StringIO())
    assert not ControlVariant.objects.exists() and not ControlAttempt.objects.exists()
    assert fake_llm.log() == []


def test_a_second_run_with_the_same_seed_adds_nothing_and_calls_nobody(imported, fake_llm, key) -> None:  # noqa: ANN001
    fake_llm.script(replies=accepting(("subtle", "sham")))
    generate(fake_llm, "subtle,sham", contexts=2, seed=5)
    ids = set(ControlVariant.objects.values_list("control_id", flat=True))
    assert len(ids) == 12 and ControlAttempt.objects.count() == 24
    fake_llm.script(replies=accepting(("subtle", "sham")))
    out = generate(fake_llm, "subtle,sham", contexts=2, seed=5)
    assert "created 0 control(s) (none), 12 already there" in out
    assert "sham decisive_metric: 0 made by model, 0 made by reserve, 2 already there; 0 round(s) used; attempts: none" in out
    assert fake_llm.log() == []
    assert set(ControlVariant.objects.values_list("control_id", flat=True)) == ids and ControlAttempt.objects.count() == 24


def test_a_failing_endpoint_makes_no_reserves_and_a_later_run_retries(imported, fake_llm, key) -> None:  # noqa: ANN001
    fake_llm.script(failures=[{"status": 404}])  # e.g. a wrong model name: permanent, not retried
    out = generate(fake_llm, "subtle", "--concurrency", "1", contexts=2)  # batches of 4: the 2 others are not tried
    assert not ControlVariant.objects.exists()
    assert len(fake_llm.log()) == 4
    assert sorted(ControlAttempt.objects.values_list("round", "step", "outcome")) == [(1, "generate", "error")] * 4
    assert "HTTP 404" in ControlAttempt.objects.first().reason
    assert "not made:" in out and "not tried: every call of the previous batch failed" in out
    fake_llm.script(replies=accepting(("subtle",)))
    generate(fake_llm, "subtle", "--concurrency", "1", contexts=2)
    assert ControlVariant.objects.filter(origin="model").count() == 6
    # The failed run's attempts were replaced by this run's: two per variant, all linked.
    assert ControlAttempt.objects.count() == 12 and not ControlAttempt.objects.filter(variant__isnull=True).exists()


def test_prompts_are_blind_even_when_proposals_name_their_models(imported, fake_llm, key) -> None:  # noqa: ANN001
    names = list(imported.participants.values_list("name", flat=True))
    # Every proposal names its own model in two fields (one a target, one not); their blind content is now stale,
    # so it is redacted when read.
    for p in Proposal.objects.filter(context__benchmark=imported).select_related("participant"):
        content = dict(p.content)
        if isinstance(content.get("hypothesis"), str) and isinstance(content.get("literature_gap"), str):
            content["hypothesis"] += f" As {p.participant.name}, we expect this."
            content["literature_gap"] += f" ({p.participant.name} notes this gap.)"
            Proposal.objects.filter(pk=p.pk).update(content=content)
    fake_llm.script(replies=accepting(("subtle", "sham")))
    generate(fake_llm, "subtle,sham", contexts=3, seed=2)
    log = fake_llm.log()
    assert len(log) == 36  # 3 cases x 2 kinds x 3 targets x (generate + validate)
    control_ids = list(ControlVariant.objects.values_list("control_id", flat=True))

    def squash(text: str) -> str:
        return re.sub(r"[^0-9a-z]+", "", text.lower())

    for entry in log:
        text = "\n".join(m["content"] for m in entry["messages"])
        assert "[redacted] notes this gap." in text and "As [redacted], we expect this." in text
        for forbidden in names + control_ids:
            assert squash(forbidden) not in squash(text), forbidden
    # The variants keep the stored text of the untouched fields (a judge sees them redacted on read).
    for v in ControlVariant.objects.select_related("source__participant"):
        assert v.content["hypothesis"].endswith(f"As {v.source.participant.name}, we expect this.")


def test_a_prompt_that_would_name_a_participant_is_never_sent(imported, fake_llm, key) -> None:  # noqa: ANN001
    source = case_source()
    context = source.context
    context.open_problem += " Unlike GPT 5.2, ..."  # a context that names a participant (redaction covers proposals only)
    context.save(update_fields=["open_problem"])
    fake_llm.script(replies=accepting(("sham",)))
    out = generate(fake_llm, "sham")
    assert fake_llm.log() == [] and not ControlVariant.objects.exists()
    assert sorted(ControlAttempt.objects.values_list("round", "step", "outcome")) == [(1, "generate", "error")] * 3
    assert all(
        r.startswith("blindness gate: the prompt contains a participant's name")
        for r in ControlAttempt.objects.values_list("reason", flat=True)
    )
    assert out.count("not made:") == 3 and "0 made by reserve" in out
