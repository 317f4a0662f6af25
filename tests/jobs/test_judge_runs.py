"""Judge runs against the scripted local OpenAI-compatible server (a real process on 127.0.0.1)."""

from __future__ import annotations

import pytest

from arena.models import JudgeRun, OrderedJudgment
from jobs.services import JudgeRunRequest, RunError, judge_run_create, judge_run_execute
from lit2test.models import JudgeTask

pytestmark = pytest.mark.django_db(transaction=True)

PARTICIPANTS = ("GPT 5.2", "Claude-Sonnet-4.6", "GLM-5", "DeepSeek-V3.2")


def start(benchmark, fake, **overrides):  # noqa: ANN001, ANN003, ANN201
    request = JudgeRunRequest(benchmark=benchmark, judge_model="Judge-Local", base_url=fake.base_url, **overrides)
    run, skipped = judge_run_create(request=request)
    JudgeRun.objects.filter(pk=run.pk).update(status="running")
    return run, skipped


def test_every_pair_with_text_is_judged_in_both_orders(imported, fake_llm) -> None:  # noqa: ANN001
    fake_llm.script(judge={"policy": "prefer_field", "field": "hypothesis"})
    run, skipped = start(imported, fake_llm, concurrency=8)
    assert skipped == 1200 - 78
    assert judge_run_execute(run_id=run.pk) == "completed"
    judgments = OrderedJudgment.objects.filter(run=run)
    assert judgments.filter(status="accepted").count() == 156
    assert {o: judgments.filter(order=o).count() for o in ("original", "reverse")} == {"original": 78, "reverse": 78}
    # The reverse order showed the other proposal as A.
    for j in judgments.select_related("pair"):
        expected_a = j.pair.participant_a_id if j.order == "original" else j.pair.participant_b_id
        assert j.shown_a_id == expected_a
    log = fake_llm.log()
    assert len(log) == 156
    for entry in log:
        text = " ".join(m["content"] for m in entry["messages"])
        assert not any(name in text for name in PARTICIPANTS)
        assert "__vs__" not in text


def test_the_judge_cannot_be_a_participant(imported, fake_llm) -> None:  # noqa: ANN001
    with pytest.raises(RunError, match="is a participant"):
        judge_run_create(request=JudgeRunRequest(benchmark=imported, judge_model="GLM-5", base_url=fake_llm.base_url))
    assert JudgeRun.objects.count() == 1 and JudgeTask.objects.count() == 0
