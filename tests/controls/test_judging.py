"""Controls judge runs on the shared engine: every approved variant against its clean source, both orders, blind,
through the same prompts, parser and gates as the leaderboard's pairs, and never into a leaderboard."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from arena.models import JudgeRun, OrderedJudgment
from arena.selectors import run_default
from controls.import_export import controls_import
from controls.judging import clean_shown
from controls.models import ControlJudgeTask, ControlJudgment, ControlVariant
from jobs.services import JudgeRunRequest, RunError, judge_run_create, judge_run_execute

from . import helpers as h

pytestmark = pytest.mark.django_db(transaction=True)

PARTICIPANTS = ("GPT 5.2", "Claude-Sonnet-4.6", "GLM-5", "DeepSeek-V3.2")


def load(benchmark, tmp_path: Path, rows) -> list[ControlVariant]:  # noqa: ANN001
    controls_import(benchmark=benchmark, path=h.write(tmp_path / "controls.jsonl", rows))
    ControlVariant.objects.update(status="approved")
    return list(ControlVariant.objects.order_by("control_id"))


def start(benchmark, fake, **overrides) -> JudgeRun:  # noqa: ANN001, ANN003
    fields = {"benchmark": benchmark, "judge_model": "Judge-Local", "base_url": fake.base_url, "select": "controls"} | overrides
    request = JudgeRunRequest(**fields)
    run, skipped = judge_run_create(request=request)
    assert skipped == 0
    JudgeRun.objects.filter(pk=run.pk).update(status="running")
    return run


def test_each_approved_variant_is_judged_against_its_source_in_both_orders(imported, fake_llm, tmp_path) -> None:  # noqa: ANN001
    sources = h.sources(imported, 2)
    rows = [h.line(s, "clear", t) for s in sources for t in h.TARGET_FIELD] + [h.line(s, "falsifier_off") for s in sources]
    variants = load(imported, tmp_path, rows)
    ControlVariant.objects.filter(pk=variants[0].pk).update(status="rejected")  # a rejected variant is never judged
    # The judge prefers the longer literature_gap: the clean source wins against a grounding corruption (its gap is the
    # real one; the variant's is one short sentence), and every other variant has the source's gap: a tie.
    fake_llm.script(judge={"policy": "prefer_field", "field": "literature_gap"})
    run = start(imported, fake_llm)
    assert run.subjects == "controls" and not run.is_canonical
    assert ControlJudgeTask.objects.filter(run=run).count() == 2 * (len(variants) - 1)
    assert judge_run_execute(run_id=run.pk) == "completed"

    judgments = list(ControlJudgment.objects.filter(run=run).select_related("variant"))
    assert len(judgments) == 2 * (len(variants) - 1) and all(j.status == "accepted" for j in judgments)
    assert variants[0].pk not in {j.variant_id for j in judgments}
    for j in judgments:
        assert j.winner == ("clean" if j.variant.target == "grounding" else "tie"), (j.variant.control_id, j.order, j.verdict)
        # The verdict is the judge's label; the clean side had the other label in the other order.
        assert j.verdict == ("TIE" if j.winner == "tie" else j.clean_shown)
    by_variant: dict[int, set[str]] = {}
    for j in judgments:
        by_variant.setdefault(j.variant_id, set()).add(j.clean_shown)
    assert all(labels == {"A", "B"} for labels in by_variant.values())
    # The orientation is seeded per control: the clean source is shown first in the original order for some, not all.
    firsts = {clean_shown(imported, v, "original") for v in variants}
    assert firsts == {"A", "B"}
    # No canonical-pair verdict was written, and the leaderboard's default run is still the release's.
    assert OrderedJudgment.objects.filter(run=run).count() == 0
    assert run_default(benchmark=imported).subjects == "pairs"


def test_the_judge_never_sees_a_model_name_or_a_control_id(imported, fake_llm, tmp_path) -> None:  # noqa: ANN001
    source = h.sources(imported, 1)[0]
    # The control ids name the source model (as generated ones do).
    variants = load(
        imported, tmp_path, [h.line(source, "clear", "grounding"), h.line(source, "rendering"), h.line(source, "naive")]
    )
    assert all(source.participant.name in v.control_id for v in variants)
    fake_llm.script(judge={"policy": "always_a"})
    run = start(imported, fake_llm)
    assert judge_run_execute(run_id=run.pk) == "completed"
    log = fake_llm.log()
    assert len(log) == 6
    for entry in log:
        text = " ".join(m["content"] for m in entry["messages"])
        assert not any(name in text for name in PARTICIPANTS), text[:200]
        assert not any(v.control_id in text for v in variants)
        assert source.content["hypothesis"][:60] in text  # the clean source is there, as six fields
    prose = [e for e in log if "Prose of " in " ".join(m["content"] for m in e["messages"])]
    assert len(prose) == 2  # the rendering variant is shown as its prose, in both orders
    # always_a: the clean side wins exactly where it was shown as A.
    for j in ControlJudgment.objects.filter(run=run):
        assert j.winner == ("clean" if j.clean_shown == "A" else "variant")


def test_a_replay_of_a_controls_run_gives_its_verdicts_back(imported, fake_llm, tmp_path) -> None:  # noqa: ANN001
    sources = h.sources(imported, 2)
    load(imported, tmp_path, [h.line(s, k) for s in sources for k in ("falsifier_off", "naive")])
    fake_llm.script(judge={"policy": "random", "seed": 7})
    first = start(imported, fake_llm)
    assert judge_run_execute(run_id=first.pk) == "completed"
    calls = len(fake_llm.log())
    replay = start(imported, fake_llm, provider=JudgeRun.Provider.RECORDED, replay_of=first, base_url="", label="replay")
    assert judge_run_execute(run_id=replay.pk) == "completed"
    assert len(fake_llm.log()) == calls  # a replay calls nobody

    def verdicts(run: JudgeRun) -> dict[tuple[int, str], str]:
        return dict(((j.variant_id, j.order), j.winner) for j in ControlJudgment.objects.filter(run=run))

    assert verdicts(replay) == verdicts(first) and len(verdicts(first)) == 8
    assert len(set(verdicts(first).values())) > 1  # the random judge gave more than one answer: the test can tell them apart


def test_a_structured_controls_run_keeps_both_sides_scores(imported, fake_llm, tmp_path) -> None:  # noqa: ANN001
    source = h.sources(imported, 1)[0]
    load(imported, tmp_path, [h.line(source, "clear", "falsifiability")])
    fake_llm.script(judge={"policy": "prefer_field", "field": "falsifying_result"})
    run = start(imported, fake_llm, run_type="structured")
    assert judge_run_execute(run_id=run.pk) == "completed"
    judgments = list(ControlJudgment.objects.filter(run=run))
    assert len(judgments) == 2
    for j in judgments:
        assert j.winner == "clean"
        assert set(j.metadata["scores"]) == {"A", "B"}
        assert set(j.metadata["scores"]["A"]) == {
            "grounding",
            "hypothesis_specificity",
            "minimality_feasibility",
            "decisive_metric",
            "falsifiability",
        }


def test_what_a_controls_run_refuses(imported, fake_llm, tmp_path) -> None:  # noqa: ANN001
    def create(**overrides):  # noqa: ANN003, ANN202
        fields = {
            "benchmark": imported,
            "judge_model": "Judge-Local",
            "base_url": fake_llm.base_url,
            "select": "controls",
        } | overrides
        return judge_run_create(request=JudgeRunRequest(**fields))

    with pytest.raises(RunError, match="no approved control variants"):
        create()
    source = h.sources(imported, 1)[0]
    controls_import(benchmark=imported, path=h.write(tmp_path / "c.jsonl", [h.line(source, "naive")]))
    ControlVariant.objects.update(status="draft")
    with pytest.raises(RunError, match="approve them"):
        create()  # drafts are not judged
    ControlVariant.objects.update(status="approved")
    with pytest.raises(RunError, match="never canonical"):
        create(canonical=True)
    with pytest.raises(RunError, match="unknown control kind"):
        create(select="controls:clear,bogus")
    release_run = JudgeRun.objects.get(benchmark=imported)
    with pytest.raises(RunError, match="same kind"):
        create(provider=JudgeRun.Provider.RECORDED, replay_of=release_run, base_url="")
    controls_run, _ = create()
    with pytest.raises(RunError, match="replay it with --pairs controls"):
        create(select="all", provider=JudgeRun.Provider.RECORDED, replay_of=controls_run, base_url="", label="x")
    assert JudgeRun.objects.filter(subjects="controls").count() == 1


def test_the_leaderboard_never_offers_a_controls_run(imported, fake_llm, tmp_path, client, django_user_model) -> None:  # noqa: ANN001
    source = h.sources(imported, 1)[0]
    load(imported, tmp_path, [h.line(source, "naive")])
    fake_llm.script(judge={"policy": "always_a"})
    run = start(imported, fake_llm)
    assert judge_run_execute(run_id=run.pk) == "completed"
    researcher = django_user_model.objects.create_user("r", password="pw-12345-long", is_staff=True)
    client.force_login(researcher)
    assert client.get(f"/api/benchmarks/{imported.pk}/leaderboard/?run={run.pk}&replicates=10").status_code == 404
    assert client.get(f"/dashboard/benchmarks/{imported.pk}/leaderboard/?run={run.pk}").status_code == 404
    page = client.get(f"/dashboard/benchmarks/{imported.pk}/leaderboard/")
    assert page.status_code == 200
    # The run picker's options (the page has other selects whose values may equal the run's id: "2 (as printed)").
    picker = re.search(r'<select id="run-select" name="run"[^>]*>(.*?)</select>', page.content.decode(), re.S)
    assert picker is not None and re.findall(r'<option value="(\d+)"', picker.group(1))
    assert str(run.pk) not in re.findall(r'<option value="(\d+)"', picker.group(1))


def test_a_controls_run_page_lists_its_verdicts_and_points_to_the_controls_page(
    imported, fake_llm, tmp_path, client, researcher
) -> None:  # noqa: ANN001
    source = h.sources(imported, 1)[0]
    load(imported, tmp_path, [h.line(source, "naive"), h.line(source, "falsifier_off")])
    fake_llm.script(judge={"policy": "always_b"})
    run = start(imported, fake_llm)
    assert judge_run_execute(run_id=run.pk) == "completed"
    client.force_login(researcher)
    page = client.get(f"/dashboard/runs/{run.pk}/")
    html = page.content.decode()
    assert page.status_code == 200
    assert html.count('<tr data-status="accepted">') == 4
    assert f"/dashboard/benchmarks/{imported.pk}/controls/report/?run={run.pk}" in html
    assert "Leaderboard of this run" not in html
    # always_b: the clean side won exactly the orders where it was B.
    winners = sorted(j.winner for j in ControlJudgment.objects.filter(run=run))
    assert winners == sorted("clean" if j.clean_shown == "B" else "variant" for j in ControlJudgment.objects.filter(run=run))
    assert html.count('<td class="winner">clean</td>') == winners.count("clean")


def test_run_judge_pairs_controls_judges_the_controls_and_says_how_many(imported, fake_llm, tmp_path) -> None:  # noqa: ANN001
    from io import StringIO

    from django.core.management import call_command

    source = h.sources(imported, 1)[0]
    load(imported, tmp_path, [h.line(source, "naive"), h.line(source, "falsifier_off"), h.line(source, "clear", "grounding")])
    fake_llm.script(judge={"policy": "always_a"})
    out = StringIO()
    call_command(
        "run_judge", "lit2test", "--model", "Judge-Local", "--base-url", fake_llm.base_url, "--pairs", "controls", stdout=out
    )
    assert "6 ordered tasks" in out.getvalue()
    run = JudgeRun.objects.get(subjects="controls")
    assert run.status == "completed"  # Celery runs eagerly in these tests: the driver ran inside the command
    assert ControlJudgment.objects.filter(run=run, status="accepted").count() == 6
