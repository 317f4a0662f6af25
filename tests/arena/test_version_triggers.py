"""A run's change counter (arena.JudgeRunVersion), on which its cached and stored leaderboards are keyed, keeps moving
through what removes or bypasses its triggers: a migration that remakes the judgments' table on SQLite (the triggers
go with the old table) and, on PostgreSQL, a TRUNCATE of the judgments (no row trigger fires)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management.sql import emit_post_migrate_signal
from django.db import connection

from arena.models import JudgeRun, OrderedJudgment
from arena.selectors import run_data_version
from lit2test.release import release_import

from . import builders as b


def small_run(tmp_path: Path, name: str | None = None) -> JudgeRun:
    benchmark = release_import(directory=b.write(tmp_path, b.small_release()), benchmark_name=name).benchmark
    return JudgeRun.objects.get(benchmark=benchmark)


def moves(run: JudgeRun, write, what: str, *, texts: bool = False) -> None:  # noqa: ANN001
    before = run_data_version(run=run, texts=texts)
    write()
    assert run_data_version(run=run, texts=texts) != before, (
        f"the run's change counter did not move after {what}: its triggers are gone"
    )


@pytest.mark.django_db(transaction=True)
def test_a_migration_remaking_the_judgments_table_keeps_the_counter_moving(tmp_path: Path) -> None:
    # Transactional: SQLite's schema editor refuses to run inside a transaction with foreign key checks on.
    run = small_run(tmp_path)
    old = OrderedJudgment._meta.get_field("main_reason")
    new = old.clone()
    new.null = True
    new.set_attributes_from_name("main_reason")
    new.model = OrderedJudgment
    with connection.schema_editor() as editor:  # as a migration's AlterField would (SQLite remakes the table), and back
        editor.alter_field(OrderedJudgment, old, new)
        editor.alter_field(OrderedJudgment, new, old)
    emit_post_migrate_signal(verbosity=0, interactive=False, db=connection.alias)  # as `manage.py migrate` ends
    one = OrderedJudgment.objects.filter(run=run).order_by("pk")
    moves(run, lambda: one.filter(pk=one.first().pk).update(main_reason="edited"), "an update")
    moves(run, lambda: one.first().delete(), "a delete")


@pytest.mark.django_db
def test_truncating_the_judgments_moves_every_run_s_counter(tmp_path: Path) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("TRUNCATE is PostgreSQL's (SQLite deletes row by row, through the row triggers)")
    run = small_run(tmp_path)

    def truncate() -> None:
        connection.check_constraints()  # runs the deferred foreign key checks, which TRUNCATE refuses pending
        with connection.cursor() as cursor:
            cursor.execute(f"TRUNCATE {OrderedJudgment._meta.db_table} CASCADE")

    moves(run, truncate, "TRUNCATE arena_orderedjudgment")
    assert not OrderedJudgment.objects.filter(run=run).exists()


@pytest.mark.django_db
def test_what_a_leaderboard_shows_besides_its_verdicts_moves_its_key_and_only_its_benchmark_s(tmp_path: Path) -> None:
    from arena.models import Batch, Context, Paper, Participant, Proposal

    run = small_run(tmp_path / "one")
    other = small_run(tmp_path / "two", name="other")
    assert other.benchmark_id != run.benchmark_id
    benchmark = run.benchmark
    context = Context.objects.filter(benchmark=benchmark).order_by("pk").first()
    moves(run, lambda: Participant.objects.filter(benchmark=benchmark, name="Beta-2").update(name="Beta-2b"), "a rename")
    batch = Batch.objects.create(benchmark=benchmark, name="late-batch")
    moves(run, lambda: Context.objects.filter(pk=context.pk).update(batch=batch), "a context given its batch")
    # The shown texts and papers move the style section's key (texts=True), not the leaderboard's: a generation run
    # writing proposals does not make every leaderboard of the benchmark compute again.
    proposal = Proposal.objects.filter(context=context).first()
    plain = run_data_version(run=run)
    moves(
        run,
        lambda: Proposal.objects.filter(pk=proposal.pk).update(blind_content={"hypothesis": "x"}),
        "a re-redaction",
        texts=True,
    )
    moves(run, lambda: Paper.objects.create(context=context, position=99, title="A late paper"), "a paper", texts=True)
    assert run_data_version(run=run) == plain
    # Another benchmark's rename is not this one's business (a direct table: no shared counter on any database).
    before = run_data_version(run=run)
    Participant.objects.filter(benchmark=other.benchmark, name="Gamma-3").update(name="Gamma-3b")
    assert run_data_version(run=run) == before


@pytest.mark.django_db
def test_a_cached_leaderboard_shows_a_renamed_participant_at_once(tmp_path: Path, rita_client) -> None:  # noqa: ANN001
    from django.urls import reverse

    from arena.models import Participant

    run = small_run(tmp_path)
    url = reverse("lit2test:api-leaderboard", args=[run.benchmark_id])
    assert "Beta-2" in rita_client.get(url, {"replicates": 50}).json()["models"]
    Participant.objects.filter(benchmark=run.benchmark, name="Beta-2").update(name="Beta-2b")
    assert "Beta-2b" in rita_client.get(url, {"replicates": 50}).json()["models"]


@pytest.mark.django_db
def test_a_trigger_dropped_on_postgresql_is_installed_again_after_migrate(tmp_path: Path) -> None:
    """PostgreSQL keeps its triggers through table changes, so migrate reads the catalog and installs only what is
    missing (taking no lock otherwise); a trigger dropped by hand (a restore without triggers) comes back."""
    if connection.vendor != "postgresql":
        pytest.skip("SQLite's case is the remake test above")
    from arena.triggers import triggers_install

    run = small_run(tmp_path)
    assert triggers_install() is False  # everything in place: nothing written
    with connection.cursor() as cursor:
        cursor.execute("DROP TRIGGER arena_judgment_version_update ON arena_orderedjudgment")
    one = OrderedJudgment.objects.filter(run=run).order_by("pk")
    before = run_data_version(run=run)
    one.filter(pk=one.first().pk).update(main_reason="unseen")
    assert run_data_version(run=run) == before  # the drop took: nothing counts the update
    emit_post_migrate_signal(verbosity=0, interactive=False, db=connection.alias)
    moves(run, lambda: one.filter(pk=one.first().pk).update(main_reason="seen"), "an update")
