"""``manage.py demo_controls`` (``make demo``): the demo heuristic's controls runs and a replay through the engine,
with no network and no model, labelled as not a language model, and nothing added by a second start."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from arena.models import JudgeRun, OrderedJudgment
from controls.demo import DEMO_JUDGE, HOLISTIC_LABEL, REPLAY_LABEL, STRUCTURED_LABEL
from controls.judging import clean_shown
from controls.models import ControlJudgeTask, ControlJudgment, ControlVariant
from controls.reports import controls_report

pytestmark = pytest.mark.django_db(
    transaction=True
)  # the replay's driver works from its own threads (Celery runs eagerly: conftest.py)


def demo_controls() -> str:
    out = StringIO()
    call_command("demo_controls", "lit2test", stdout=out)
    return out.getvalue()


def words(value: str) -> int:
    return len(value.split())


def test_a_second_run_adds_nothing_and_the_verdicts_follow_the_heuristic(imported) -> None:  # noqa: ANN001
    call_command(
        "generate_controls",
        "lit2test",
        "--kinds",
        "clear,rendering,falsifier_off,naive",
        "--contexts",
        "2",
        "--seed",
        "0",
        stdout=StringIO(),
    )
    variants = ControlVariant.objects.filter(benchmark=imported, status="approved").count()
    assert variants == 12
    first = demo_controls()
    assert "created run" in first and DEMO_JUDGE in first
    runs = {r.label: r for r in JudgeRun.objects.filter(benchmark=imported, subjects="controls")}
    assert set(runs) == {HOLISTIC_LABEL, STRUCTURED_LABEL, REPLAY_LABEL}
    assert all(r.judge_model == DEMO_JUDGE and r.provider == "recorded" for r in runs.values())
    assert runs[HOLISTIC_LABEL].is_imported and runs[STRUCTURED_LABEL].is_imported and runs[REPLAY_LABEL].is_replay
    assert (runs[HOLISTIC_LABEL].run_type, runs[STRUCTURED_LABEL].run_type, runs[REPLAY_LABEL].run_type) == (
        "holistic",
        "structured",
        "holistic",
    )
    # The replay went through the engine: a task per variant and order, all done, and the stored verdicts back.
    replay = runs[REPLAY_LABEL]
    assert replay.status == "completed" and replay.parameters["replay_of"] == runs[HOLISTIC_LABEL].pk
    assert ControlJudgeTask.objects.filter(run=replay, status="done").count() == 2 * variants

    def verdicts(run: JudgeRun) -> dict[tuple[int, str], tuple[str, str]]:
        return {
            (j.variant_id, j.order): (j.verdict, j.winner) for j in ControlJudgment.objects.filter(run=run, status="accepted")
        }

    assert len(verdicts(runs[HOLISTIC_LABEL])) == 2 * variants and verdicts(replay) == verdicts(runs[HOLISTIC_LABEL])
    assert OrderedJudgment.objects.filter(run__in=runs.values()).count() == 0  # nothing in the leaderboard's table

    counts = (JudgeRun.objects.count(), ControlJudgment.objects.count(), ControlJudgeTask.objects.count())
    second = demo_controls()
    assert "created nothing" in second
    assert (JudgeRun.objects.count(), ControlJudgment.objects.count(), ControlJudgeTask.objects.count()) == counts

    # One clear variant by hand: the longer text wins (ties within 2%), each dimension scores min(4, words // 8) of its field.
    variant = ControlVariant.objects.filter(benchmark=imported, kind="clear", target="grounding").order_by("control_id").first()
    source = variant.source.content
    clean_words = sum(words(source[f]) for f in source)
    variant_words = sum(words(variant.content[f]) for f in variant.content)
    assert abs(clean_words - variant_words) > 0.02 * max(clean_words, variant_words)  # not a tie: the test can see a side
    winner = "clean" if clean_words > variant_words else "variant"
    for order in ("original", "reverse"):
        shown = clean_shown(imported, variant, order)
        held = ControlJudgment.objects.get(run=runs[HOLISTIC_LABEL], variant=variant, order=order)
        assert (held.winner, held.clean_shown) == (winner, shown)
        assert held.verdict == (shown if winner == "clean" else "AB".replace(shown, ""))
        scored = ControlJudgment.objects.get(run=runs[STRUCTURED_LABEL], variant=variant, order=order)
        other = "AB".replace(shown, "")
        assert scored.metadata["scores"][shown]["grounding"] == min(4, words(source["literature_gap"]) // 8)
        assert scored.metadata["scores"][other]["grounding"] == min(4, words(variant.content["literature_gap"]) // 8)
        assert scored.metadata["scores"][other]["hypothesis_specificity"] == min(4, words(source["hypothesis"]) // 8)
    # ... and what the report makes of the grounding corruptions, through the replay.
    doc = controls_report(benchmark=imported, run=replay, structured_run=runs[STRUCTURED_LABEL], replicates=200)
    grounding = ControlVariant.objects.filter(benchmark=imported, kind="clear", target="grounding")
    drops = [
        min(4, words(v.source.content["literature_gap"]) // 8) - min(4, words(v.content["literature_gap"]) // 8)
        for v in grounding
    ]
    assert doc["clear"]["grounding"]["target_drop"]["mean"] == pytest.approx(sum(drops) / len(drops))
    assert doc["runs"]["run"]["judge_model"] == DEMO_JUDGE


def test_without_approved_variants_it_says_what_to_run_first(imported) -> None:  # noqa: ANN001
    with pytest.raises(
        CommandError, match="no approved control variants; make them first, e.g. manage.py generate_controls lit2test"
    ):
        demo_controls()
    assert not JudgeRun.objects.filter(subjects="controls").exists()
