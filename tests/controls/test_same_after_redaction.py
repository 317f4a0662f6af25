"""A control variant that reads the same as its source once model names are redacted cannot be judged blind (both
orders would show one prompt): a controls run skips it, counts it and names it in its log, and judges the rest; a
run of such variants only is refused (jobs.gates.orientation_sort, issue 22 item 8)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from arena.models import JudgeRun
from controls.import_export import controls_import
from controls.models import ControlJudgeTask, ControlVariant
from jobs.models import RunEvent
from jobs.services import JudgeRunRequest, RunError, judge_run_create

from . import helpers as h

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_variant_that_reads_as_its_source_is_skipped_and_a_run_of_them_only_refused(
    imported: Any,
    fake_llm: Any,
    tmp_path: Path,  # noqa: ANN401
) -> None:
    source = h.sources(imported, 1)[0]
    rows = [h.line(source, "sham", "grounding"), h.line(source, "clear", "grounding")]
    controls_import(benchmark=imported, path=h.write(tmp_path / "controls.jsonl", rows))
    ControlVariant.objects.update(status="approved")
    # A sham whose rewrite changed nothing (a generator can return one; an import refuses it): once redacted, the judge
    # would read the source's text on both sides.
    ControlVariant.objects.filter(kind="sham").update(content=source.content)
    same = ControlVariant.objects.get(kind="sham")
    request = {"benchmark": imported, "judge_model": "Judge-Local", "base_url": fake_llm.base_url}
    before = JudgeRun.objects.count()

    with pytest.raises(RunError) as refused:
        judge_run_create(request=JudgeRunRequest(select="controls:sham", **request))
    assert "none of the approved control variants chosen can be judged blind" in str(refused.value)
    assert f"control variant {same.pk}" in str(refused.value) and "nothing was launched" in str(refused.value)
    assert JudgeRun.objects.count() == before

    run, skipped = judge_run_create(request=JudgeRunRequest(select="controls", **request))
    assert skipped == 1 == run.parameters["skipped"]
    assert set(ControlJudgeTask.objects.filter(run=run).values_list("variant__kind", flat=True)) == {"clear"}
    [event] = RunEvent.objects.filter(run_id=run.pk, code="skipped")
    assert f"control variant {same.pk}" in event.message
