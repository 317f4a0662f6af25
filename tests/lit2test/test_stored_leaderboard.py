"""A judge run's leaderboard is kept in the database as well as the cache (issue 25, item 1): a judge run that ends has
it stored by a worker, and a read after the cache lost it reads the stored row instead of refitting the bootstraps."""

from __future__ import annotations

import json
import pickle

import pytest
from django.core.cache import cache
from django.urls import reverse

from arena.models import Benchmark, JudgeRun, OrderedJudgment, StoredDocument
from arena.selectors import run_data_version, run_leaderboard
from jobs.services import JudgeRunRequest, judge_run_create, judge_run_execute


def stored_row(run: JudgeRun) -> StoredDocument:
    """The row of the run's default leaderboard: 10,000 replicates, seed 0, pseudo-count 0.5 (what pages and the API
    ask for by default)."""
    return StoredDocument.objects.get(slot=f"leaderboard:v4:{run.pk}:all:10000:0:0.5")


def api(client, benchmark: Benchmark, run: JudgeRun) -> dict:  # noqa: ANN001
    response = client.get(reverse("lit2test:api-leaderboard", args=[benchmark.pk]), {"run": run.pk, "replicates": 200})
    assert response.status_code == 200, response.content
    return response.json()


@pytest.mark.django_db
def test_a_cold_read_serves_the_stored_document_of_the_same_data_and_never_a_stale_one(imported, rita_client) -> None:  # noqa: ANN001
    run = JudgeRun.objects.get(benchmark=imported)
    first = api(rita_client, imported, run)
    row = StoredDocument.objects.get(slot=f"leaderboard:v4:{run.pk}:all:200:0:0.5")
    assert row.key == f"{row.slot}:{run_data_version(run=run)}" and row.benchmark_id == imported.pk
    # The cache lost it; the stored row is what a cold read gets: marked, the mark shows.
    cache.clear()
    document = pickle.loads(bytes(row.document))
    assert document["cases"]["total"] == first["cases"]["total"] == 1200
    document["cases"]["total"] = -1
    StoredDocument.objects.filter(pk=row.pk).update(document=pickle.dumps(document))
    assert api(rita_client, imported, run)["cases"]["total"] == -1
    # A verdict changes: the run's counter moves, the stored row is stale, never served, and replaced (one row per slot).
    cache.clear()
    OrderedJudgment.objects.filter(run=run, status="accepted").first().delete()
    after = api(rita_client, imported, run)
    assert after["cases"]["total"] == 1200 and after["cases"]["incomplete"] == 1
    assert StoredDocument.objects.filter(slot=row.slot).count() == 1
    assert StoredDocument.objects.get(slot=row.slot).key == f"{row.slot}:{run_data_version(run=run)}" != row.key


@pytest.mark.django_db
def test_an_unreadable_stored_document_is_computed_again_and_rows_go_with_their_benchmark(imported, rita_client) -> None:  # noqa: ANN001
    run = JudgeRun.objects.get(benchmark=imported)
    first = api(rita_client, imported, run)
    cache.clear()
    StoredDocument.objects.filter(benchmark=imported).update(document=b"not a pickle")
    assert api(rita_client, imported, run) == first
    row = StoredDocument.objects.get(benchmark=imported, slot__startswith="leaderboard:")
    assert pickle.loads(bytes(row.document))["cases"]["total"] == 1200
    imported.delete()
    assert not StoredDocument.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_judge_run_that_ends_has_its_leaderboard_stored(imported, fake_llm, settings, celery_in_process) -> None:  # noqa: ANN001
    settings.LIT2TEST_STORE_LEADERBOARD_ON_CLOSE = True
    fake_llm.script(judge={"policy": "prefer_field", "field": "hypothesis"})
    request = JudgeRunRequest(benchmark=imported, judge_model="Judge-Local", base_url=fake_llm.base_url, concurrency=8)
    run, _ = judge_run_create(request=request)
    JudgeRun.objects.filter(pk=run.pk).update(status="running")
    assert not StoredDocument.objects.exists()
    assert judge_run_execute(run_id=run.pk) == "completed"
    row = stored_row(run)
    assert row.key == f"{row.slot}:{run_data_version(run=run)}"
    cache.clear()
    # What the worker stored is what the pages read: the same document a computation from the verdicts gives.
    stored = pickle.loads(bytes(row.document))
    assert stored["cases"]["total"] == 78
    StoredDocument.objects.all().delete()
    recomputed = run_leaderboard(run=run)
    assert StoredDocument.objects.count() == 1  # stored again by the computation
    assert json.dumps({k: recomputed[k] for k in stored}, sort_keys=True, default=str) == json.dumps(
        stored, sort_keys=True, default=str
    )
    # Off: nothing stored (the imported canonical run never ended in this process either).
    settings.LIT2TEST_STORE_LEADERBOARD_ON_CLOSE = False
    StoredDocument.objects.all().delete()
    cache.clear()
    again, _ = judge_run_create(request=request)
    JudgeRun.objects.filter(pk=again.pk).update(status="running")
    assert judge_run_execute(run_id=again.pk) == "completed"
    assert not StoredDocument.objects.exists()


@pytest.mark.django_db
def test_the_human_win_rate_is_stored_too_and_a_new_label_replaces_it(imported, annotator, annotator2, rita_client) -> None:  # noqa: ANN001
    from tests.annotation.helpers import make_study
    from tests.annotation.test_study_pages import label_everything

    study = make_study(imported, [annotator, annotator2], n_contexts=2, n_naive_controls=1)
    label_everything(study, lambda a: "TIE")
    run = JudgeRun.objects.get(benchmark=imported)
    first = api(rita_client, imported, run)
    assert first["human_win_rate"] == {m: 0.5 for m in first["models"]}
    row = StoredDocument.objects.get(slot=f"human-win-rate:v1:{imported.pk}")
    # A cold read takes the stored report (marked here: the mark shows) ...
    found = pickle.loads(bytes(row.document))
    model = first["models"][0]
    found["report"]["models"][model]["rate"] = 0.125
    StoredDocument.objects.filter(pk=row.pk).update(document=pickle.dumps(found))
    cache.clear()
    assert api(rita_client, imported, run)["human_win_rate"][model] == 0.125
    # ... until the labels change: a study's label removed with its assignment changes the fingerprint.
    study.assignments.filter(label__isnull=False).first().label.delete()
    assert api(rita_client, imported, run)["human_win_rate"] == {m: 0.5 for m in first["models"]}
    assert StoredDocument.objects.filter(slot=row.slot).count() == 1
