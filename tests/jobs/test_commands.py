"""The ``run_judge`` management command: what it prints, what it refuses, and that the API key stays secret.

Celery runs in-process in these tests (see conftest), so the run the command launches is executed
against the fake server before the command returns.
"""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core import serializers
from django.core.management import CommandError, call_command, load_command_class

from arena.models import JudgeRun, OrderedJudgment
from jobs.forms import JudgeRunForm
from jobs.selectors import run_progress
from lit2test.models import JudgeTask
from lit2test.release import RELEASE_JUDGE, release_import
from tests.arena import builders

from .helpers import JUDGE, accepted, chat_requests

pytestmark = pytest.mark.django_db(transaction=True)

SECRET = "sk-secret-123"


def run_judge(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("run_judge", "lit2test", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def _new_runs() -> list[JudgeRun]:
    return list(JudgeRun.objects.exclude(judge_model=RELEASE_JUDGE))


def test_it_prints_the_run_id_first_and_launches_the_run(imported, fake_llm) -> None:  # noqa: ANN001
    out, _ = run_judge("--model", JUDGE, "--base-url", fake_llm.base_url, "--pairs", "sample:3")

    [run] = _new_runs()
    lines = out.splitlines()
    assert lines[0] == f"run: {run.pk}"
    assert lines[1] == "6 ordered tasks"
    assert "skipped" not in out  # a sample is drawn from pairs with text only
    run.refresh_from_db()
    assert (run.status, run.judge_model, run.parameters["pairs"]) == ("completed", JUDGE, "sample:3")
    assert len(set(accepted(run))) == 6 == len(chat_requests(fake_llm.log()))


def test_it_reports_the_pairs_skipped_for_lack_of_text(imported, fake_llm, release_dir: Path) -> None:  # noqa: ANN001
    with_text = {json.loads(line)["context_id"] for line in (release_dir / "contexts.jsonl").open()}
    in_batch = [json.loads(line) for line in (release_dir / "corrected_folded_pairs.jsonl").open()]
    in_batch = [row for row in in_batch if row["batch"] == "fifth40"]
    skipped = sum(1 for row in in_batch if row["context_id"] not in with_text)
    judged = len(in_batch) - skipped

    out, _ = run_judge("--model", JUDGE, "--base-url", fake_llm.base_url, "--pairs", "batch:fifth40", "--orders", "reverse")

    [run] = _new_runs()
    assert out.splitlines()[:2] == [
        f"run: {run.pk}",
        f"{judged} ordered tasks; {skipped} pairs skipped: their proposals have no text, or read the same once model names are redacted",
    ]
    assert set(JudgeTask.objects.filter(run=run).values_list("order", flat=True)) == {"reverse"}


def test_it_waits_for_the_run_and_says_how_it_ended(imported, fake_llm) -> None:  # noqa: ANN001
    out, _ = run_judge("--model", JUDGE, "--base-url", fake_llm.base_url, "--pairs", "sample:2", "--wait")
    [run] = _new_runs()
    assert out.splitlines()[0] == f"run: {run.pk}"
    assert out.splitlines()[-1] == f"run {run.pk} completed: 4 accepted, 0 invalid, 0 failed"

    fake_llm.script(failures=[{"attempts": "all", "status": 400}])
    with pytest.raises(CommandError, match="ended failed"):
        run_judge("--model", "Judge-Other", "--base-url", fake_llm.base_url, "--pairs", "sample:2", "--wait")


def test_it_refuses_a_participant_as_the_judge(imported, fake_llm) -> None:  # noqa: ANN001
    with pytest.raises(CommandError, match=r"'GLM-5' is a participant.*may never judge its own"):
        run_judge("--model", "GLM-5", "--base-url", fake_llm.base_url, "--pairs", "sample:3")
    assert not _new_runs() and not chat_requests(fake_llm.log())


def test_it_refuses_an_api_key_variable_that_is_not_set(imported, fake_llm, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    monkeypatch.delenv("LIT2TEST_UNSET_API_KEY", raising=False)
    with pytest.raises(CommandError, match="LIT2TEST_UNSET_API_KEY"):
        run_judge("--model", JUDGE, "--base-url", fake_llm.base_url, "--api-key-env", "LIT2TEST_UNSET_API_KEY")
    assert not _new_runs() and not chat_requests(fake_llm.log())


def test_the_api_key_is_never_stored_or_printed(imported, fake_llm, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("LIT2TEST_TEST_API_KEY", SECRET)
    # One malformed answer per task, so error texts and rejected attempts are stored too.
    fake_llm.script(failures=[{"attempts": [1], "malformed": "not json"}])

    out, err = run_judge(
        "--model",
        JUDGE,
        "--base-url",
        fake_llm.base_url,
        "--pairs",
        "sample:3",
        "--api-key-env",
        "LIT2TEST_TEST_API_KEY",
        "--wait",
    )

    [run] = _new_runs()
    assert run.status == "completed" and run.parameters["api_key_env"] == "LIT2TEST_TEST_API_KEY"
    assert SECRET not in out and SECRET not in err
    stored = serializers.serialize("json", [run, *JudgeTask.objects.filter(run=run), *OrderedJudgment.objects.filter(run=run)])
    assert "LIT2TEST_TEST_API_KEY" in stored and "not json" in stored  # the search covers what the run stored
    assert SECRET not in stored
    assert all(SECRET not in json.dumps(entry) for entry in fake_llm.log())
    # The fake server's log does not record request headers, so the bearer token itself cannot be checked here.


def test_a_replay_run_repeats_the_recorded_verdicts_without_calling_anyone(imported, fake_llm) -> None:  # noqa: ANN001
    source = JudgeRun.objects.get(judge_model=RELEASE_JUDGE)

    out, _ = run_judge("--model", "Replay-Judge", "--replay-of", str(source.pk), "--pairs", "sample:5", "--wait")

    [run] = _new_runs()
    assert "(replay of stored judgments)" in out.splitlines()[1]
    assert run.status == "completed" and run.provider == "recorded"
    assert not chat_requests(fake_llm.log())
    replayed = {(j.pair_id, j.order): (j.winner_id, j.is_tie) for j in OrderedJudgment.objects.filter(run=run)}
    assert len(replayed) == 10
    recorded = {
        (j.pair_id, j.order): (j.winner_id, j.is_tie)
        for j in OrderedJudgment.objects.filter(run=source, status="accepted", pair_id__in={p for p, _ in replayed})
    }
    assert replayed == recorded


def test_the_wait_progress_line_puts_each_count_before_its_name(imported, fake_llm) -> None:  # noqa: ANN001
    # "8/8 done 8 failed 0" read as "8 failed"; each number now precedes the word it counts.
    out, _ = run_judge("--model", JUDGE, "--base-url", fake_llm.base_url, "--pairs", "sample:2", "--wait")
    assert f"[{'#' * 30}] 4/4 · 4 done, 0 failed, 0 remaining · completed" in out.splitlines()
    assert "done 4" not in out and "failed 0" not in out

    fake_llm.script(failures=[{"attempts": "all", "status": 400}])
    out = StringIO()
    with pytest.raises(CommandError, match="ended failed"):
        call_command(
            "run_judge",
            "lit2test",
            "--model",
            "Judge-Other",
            "--base-url",
            fake_llm.base_url,
            "--pairs",
            "sample:2",
            "--wait",
            stdout=out,
        )
    assert f"[{'#' * 30}] 4/4 · 0 done, 4 failed, 0 remaining · failed" in out.getvalue().splitlines()


def test_run_generation_waits_with_the_same_unambiguous_progress_line(fake_llm, tmp_path: Path) -> None:  # noqa: ANN001
    # Three models have answered ctx_000 and are asked for ctx_001.
    contexts = [builders.context("ctx_000__v1"), builders.context("ctx_001__v1")]
    proposals = [builders.proposal("ctx_000__v1", m) for m in builders.MODELS]
    builders.write(tmp_path / "release", {"contexts.jsonl": contexts, "proposals.jsonl": proposals})
    release_import(directory=tmp_path / "release", benchmark_name="generation-test")
    fake_llm.script(mode="generate")
    out = StringIO()
    call_command("run_generation", "generation-test", "--base-url", fake_llm.base_url, "--wait", stdout=out)
    lines = out.getvalue().splitlines()
    assert f"[{'#' * 30}] 3/3 · 3 done, 0 failed, 0 remaining · completed" in lines
    assert lines[-1].endswith(": 3 stored, 0 failed")


def test_prices_are_stored_and_give_the_run_a_cost(imported, fake_llm) -> None:  # noqa: ANN001
    run_judge(
        "--model",
        JUDGE,
        "--base-url",
        fake_llm.base_url,
        "--pairs",
        "sample:2",
        "--price-per-1k-prompt",
        "0.5",
        "--price-per-1k-completion",
        "2",
    )
    [run] = _new_runs()
    assert (run.parameters["price_per_1k_prompt"], run.parameters["price_per_1k_completion"]) == (0.5, 2.0)
    judged = OrderedJudgment.objects.filter(run=run)
    prompt, completion = sum(j.prompt_tokens for j in judged), sum(j.completion_tokens for j in judged)
    assert prompt and completion
    assert run_progress(run=run).cost == pytest.approx(prompt / 1000 * 0.5 + completion / 1000 * 2)


@pytest.mark.parametrize("price", ["-1", "nan", "inf", "ten"])
@pytest.mark.parametrize("option", ["price_per_1k_prompt", "price_per_1k_completion"])
def test_a_price_the_run_form_refuses_is_refused_by_the_command_in_the_same_words(
    imported, fake_llm, option: str, price: str
) -> None:  # noqa: ANN001
    form = JudgeRunForm(data={option: price})
    [form_message] = form.errors[option]
    with pytest.raises(CommandError) as caught:
        run_judge("--model", JUDGE, "--base-url", fake_llm.base_url, "--" + option.replace("_", "-"), price)
    assert str(caught.value) == f"Error: argument --{option.replace('_', '-')}: {price!r}: {form_message}"
    assert form_message in ("Enter a number.", "Ensure this value is greater than or equal to 0.0.")
    assert not _new_runs() and not chat_requests(fake_llm.log())


@pytest.mark.parametrize("orders", ["sideways", "original,sideways", "original;reverse", ""])
def test_a_wrong_order_names_the_valid_ones(imported, fake_llm, orders: str) -> None:  # noqa: ANN001
    with pytest.raises(CommandError, match=r"argument --orders: .*the orders are 'original' and 'reverse'"):
        run_judge("--model", JUDGE, "--base-url", fake_llm.base_url, "--orders", orders)
    assert not _new_runs()


def test_orders_and_seed_are_explained_in_the_help() -> None:
    parser = load_command_class("jobs", "run_judge").create_parser("manage.py", "run_judge")
    helps = {action.dest: action.help for action in parser._actions}
    assert "original" in helps["orders"] and "reverse" in helps["orders"] and "comma" in helps["orders"]
    assert "sample:N" in helps["seed"]
    assert helps["price_per_1k_prompt"] == JudgeRunForm.base_fields["price_per_1k_prompt"].help_text
