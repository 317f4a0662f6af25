"""A judge run's leaderboard is kept in the database as well as the cache (issue 25, item 1): a judge run that ends has
it stored by a worker, and a read after the cache lost it reads the stored row instead of refitting the bootstraps."""

from __future__ import annotations

import json
import logging
import pickle
from datetime import timedelta
from io import StringIO

import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from arena.caching import statistics_version, stored_document, stored_read, stored_write
from arena.models import Benchmark, JudgeRun, OrderedJudgment, StoredDocument
from arena.selectors import run_data_version, run_leaderboard
from jobs.services import JudgeRunRequest, judge_run_create, judge_run_execute


def stored_row(run: JudgeRun) -> StoredDocument:
    """The row of the run's default leaderboard: 10,000 replicates, seed 0, pseudo-count 0.5 (what pages and the API
    ask for by default)."""
    return StoredDocument.objects.get(slot=f"leaderboard:v4:{run.pk}:all:10000:0:0.5")


def api(client, benchmark: Benchmark, run: JudgeRun, **params: object) -> dict:  # noqa: ANN001
    response = client.get(reverse("lit2test:api-leaderboard", args=[benchmark.pk]), {"run": run.pk, **params})
    assert response.status_code == 200, response.content
    return response.json()


def mark(row: StoredDocument, change) -> None:  # noqa: ANN001
    """Store the row's document again, changed by ``change`` (signed as the product signs it)."""
    document = stored_read(slot=row.slot, key=row.key)
    change(document)
    stored_write(slot=row.slot, key=row.key, benchmark_id=row.benchmark_id, document=document)


@pytest.mark.django_db
def test_a_document_is_served_from_its_row_only_under_its_key_signed_and_fresh(imported) -> None:  # noqa: ANN001
    made = []

    def make() -> dict:
        made.append(1)
        return {"n": len(made)}

    def read(key: str = "k1", durable: bool = True) -> dict:
        return stored_document(slot="toy:slot", key=key, benchmark_id=imported.pk, make=make, durable=durable)

    assert read() == {"n": 1}
    row = StoredDocument.objects.get(slot="toy:slot")
    assert row.key == f"k1:{statistics_version()}" and row.benchmark_id == imported.pk
    cache.clear()
    assert read() == {"n": 1} and len(made) == 1  # the row, not a computation
    # A row not signed with this SECRET_KEY (written around stored_write) is never unpickled: computed again.
    StoredDocument.objects.filter(pk=row.pk).update(document=pickle.dumps({"n": -1}))
    cache.clear()
    assert read() == {"n": 2}
    # Older than the cache keeps a document: computed again.
    StoredDocument.objects.filter(pk=row.pk).update(stored_at=timezone.now() - timedelta(days=8))
    cache.clear()
    assert read() == {"n": 3}
    # Another key (the data or the code moved): computed, and the slot's one row replaced.
    assert read("k2") == {"n": 4}
    assert list(StoredDocument.objects.values_list("key", flat=True)) == [f"k2:{statistics_version()}"]
    # Not durable: cache only.
    assert read("k3", durable=False) == {"n": 5}
    assert StoredDocument.objects.get().key == f"k2:{statistics_version()}"
    # A slow computation that began before the row was stored never replaces it (e.g. the worker's, as the run ended).
    stored_write(
        slot="toy:slot", key="k0", benchmark_id=imported.pk, document={"n": 0}, started=timezone.now() - timedelta(hours=1)
    )
    assert StoredDocument.objects.get().key == f"k2:{statistics_version()}"
    stored_write(slot="toy:slot", key="k9", benchmark_id=imported.pk, document={"n": 9}, started=timezone.now())
    assert stored_read(slot="toy:slot", key="k9") == {"n": 9}
    call_command("forget_reports", stdout=StringIO())
    assert not StoredDocument.objects.exists()
    read("k2")
    imported.delete()
    assert not StoredDocument.objects.exists()


@pytest.mark.django_db
def test_a_cold_read_serves_the_stored_leaderboard_of_the_same_verdicts_and_never_a_stale_one(imported, rita_client) -> None:  # noqa: ANN001
    run = JudgeRun.objects.get(benchmark=imported)
    first = api(rita_client, imported, run)  # the default parameters: stored
    row = stored_row(run)
    assert row.key == f"{row.slot}:{run_data_version(run=run)}:{statistics_version()}"
    # The cache lost it; the stored row is what a cold read gets: marked, the mark shows.
    mark(row, lambda document: document["cases"].update(total=-1))
    cache.clear()
    assert first["cases"]["total"] == 1200 and api(rita_client, imported, run)["cases"]["total"] == -1
    # A verdict changes: the run's counter moves, the stored row is stale, never served, and replaced (one row per slot).
    cache.clear()
    OrderedJudgment.objects.filter(run=run, status="accepted").first().delete()
    after = api(rita_client, imported, run)
    assert after["cases"]["total"] == 1200 and after["cases"]["incomplete"] == 1
    assert StoredDocument.objects.filter(slot=row.slot).count() == 1
    assert stored_row(run).key == f"{row.slot}:{run_data_version(run=run)}:{statistics_version()}" != row.key


@pytest.mark.django_db
def test_a_client_s_own_parameters_are_cached_but_never_stored(imported, rita_client) -> None:  # noqa: ANN001
    run = JudgeRun.objects.get(benchmark=imported)
    for params in ({"replicates": 200}, {"replicates": 200, "seed": 7}, {"replicates": 200, "pseudo_count": 1}):
        api(rita_client, imported, run, **params)
    assert not StoredDocument.objects.filter(slot__startswith="leaderboard").exists()


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
    assert row.key == f"{row.slot}:{run_data_version(run=run)}:{statistics_version()}"
    cache.clear()
    # What the worker stored is what the pages read: the same document a computation from the verdicts gives.
    stored = stored_read(slot=row.slot, key=row.key)
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
    first = api(rita_client, imported, run, replicates=200)
    assert first["human_win_rate"] == {m: 0.5 for m in first["models"]}
    row = StoredDocument.objects.get(slot=f"human-win-rate:v1:{imported.pk}")
    # A cold read takes the stored report (marked here: the mark shows) ...
    model = first["models"][0]
    mark(row, lambda found: found["report"]["models"][model].update(rate=0.125))
    cache.clear()
    assert api(rita_client, imported, run, replicates=200)["human_win_rate"][model] == 0.125
    # ... until the labels change: a study's label removed with its assignment changes the fingerprint.
    label = study.assignments.filter(label__isnull=False).first().label
    label.delete()
    assert api(rita_client, imported, run, replicates=200)["human_win_rate"] == {m: 0.5 for m in first["models"]}
    assert StoredDocument.objects.filter(slot=row.slot).count() == 1
    # A label is a record: the admin shows it and never changes it in place (which the fingerprint would not see).
    other = study.assignments.filter(label__isnull=False).first().label
    url = reverse("admin:annotation_label_change", args=[other.pk])
    assert rita_client.post(url, {"choice": "A", "winner_side": "first"}).status_code == 403
    other.refresh_from_db()
    assert other.choice == "TIE"


def test_a_broker_away_when_a_run_ends_loses_only_the_stored_leaderboard(caplog) -> None:  # noqa: ANN001
    from lit2test.tasks import leaderboard_store_enqueue, leaderboard_store_task

    app = leaderboard_store_task.app
    previous = app.conf.broker_url, app.conf.broker_write_url
    app.conf.broker_url = app.conf.broker_write_url = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    try:
        with caplog.at_level(logging.WARNING, logger="lit2test.tasks"):
            leaderboard_store_enqueue(12345)  # does not raise: the run has ended whatever happens here
    finally:
        app.conf.broker_url, app.conf.broker_write_url = previous
    assert "the leaderboard of judge run 12345 is not stored now" in caplog.text and "its first reader computes it" in caplog.text
