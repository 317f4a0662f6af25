"""Safeguards found in review: secrets, name spellings, internal errors."""

from __future__ import annotations

import pytest

from arena.models import JudgeRun, Proposal
from jobs import services
from jobs.services import JudgeRunRequest, RunError, judge_run_create, judge_run_execute, judge_run_resume
from lit2test.models import JudgeTask

from .helpers import accepted, create_running

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("variable", ["SECRET_KEY", "DATABASE_URL", "HOME"])
def test_a_run_cannot_send_the_servers_own_secrets_as_its_key(imported, fake_llm, variable: str) -> None:  # noqa: ANN001
    with pytest.raises(RunError, match="is not an API-key variable"):
        judge_run_create(
            request=JudgeRunRequest(benchmark=imported, judge_model="J", base_url=fake_llm.base_url, api_key_env=variable)
        )
    assert not JudgeRun.objects.filter(judge_model="J").exists()


@pytest.mark.parametrize("spelling", ["GPT-5.2", "gpt_5.2", "gpt 5.2", "Claude Sonnet 4.6"])
def test_a_participant_under_another_spelling_cannot_judge(imported, fake_llm, spelling: str) -> None:  # noqa: ANN001
    with pytest.raises(RunError, match="is a participant"):
        judge_run_create(request=JudgeRunRequest(benchmark=imported, judge_model=spelling, base_url=fake_llm.base_url))


def test_a_name_spelled_differently_is_redacted_before_the_judge_sees_it(imported, fake_llm) -> None:  # noqa: ANN001
    # Changed in place after import: the stored blind text no longer fits, so the proposal is redacted as it is read.
    run, _ = create_running(imported, fake_llm, select="sample:1", orders=("original",))
    pair = JudgeTask.objects.get(run=run).pair
    proposal = Proposal.objects.get(context=pair.context, participant=pair.participant_a)
    proposal.content = proposal.content | {"hypothesis": "As GPT-5.2 would put it, the effect doubles."}
    proposal.save()
    assert judge_run_execute(run_id=run.pk) == "completed"
    (prompt,) = [e for e in fake_llm.log() if e.get("task")]
    sent = "\n".join(m["content"] for m in prompt["messages"])
    assert "As [redacted] would put it, the effect doubles." in sent and "gpt" not in sent.lower()


def test_an_internal_error_fails_the_task_instead_of_stranding_the_run(imported, fake_llm, monkeypatch) -> None:  # noqa: ANN001
    real = services.parse_judge_answer
    calls = {"n": 0}

    def flaky(text: str, **kwargs: object):  # noqa: ANN202
        calls["n"] += 1
        if calls["n"] == 1:
            raise KeyError("a bug")
        return real(text, **kwargs)

    monkeypatch.setattr(services, "parse_judge_answer", flaky)
    run, _ = create_running(imported, fake_llm, select="sample:3", concurrency=1)
    assert judge_run_execute(run_id=run.pk) == "failed"
    task = JudgeTask.objects.get(run=run, status="failed")
    assert "internal error: KeyError" in task.last_error
    monkeypatch.setattr(services, "parse_judge_answer", real)
    run.refresh_from_db()
    assert judge_run_resume(run=run) == 1  # only the failed task is left; resume enqueues it (eager in tests)
    run.refresh_from_db()
    assert run.status == "completed" and len(accepted(run)) == 6 == len(set(accepted(run)))
