"""Controls travel with an export, and never touch the leaderboard's data, counts or fits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import call_command

from arena.models import Benchmark, CanonicalPair, OrderedJudgment, Participant, Proposal
from arena.selectors import benchmark_list, run_default, run_leaderboard
from controls.import_export import controls_import
from controls.models import ControlVariant
from controls.services import controls_generate
from lit2test.release import release_import

from . import helpers as h

pytestmark = pytest.mark.django_db


def controls_state() -> list[tuple]:
    return sorted(
        (
            v.control_id,
            v.kind,
            v.target,
            v.context.external_id,
            v.source.participant.name,
            json.dumps(v.content, sort_keys=True),
            v.prose,
            v.status,
            v.generator,
            v.generator_version,
        )
        for v in ControlVariant.objects.select_related("context", "source__participant")
    )


def test_export_writes_controls_jsonl_that_imports_back_to_the_same_controls(imported, tmp_path: Path) -> None:  # noqa: ANN001
    controls_generate(benchmark=imported, kinds=["clear", "rendering", "falsifier_off"], contexts=2, seed=5)
    controls_import(benchmark=imported, path=h.write(tmp_path / "mine.jsonl", h.all_kinds(imported)))
    ControlVariant.objects.filter(kind="naive").update(status="rejected")
    before = controls_state()
    assert len(before) == 2 * 5 + 24

    out = tmp_path / "export"
    call_command("export_lit2test", str(out))
    lines = [json.loads(x) for x in (out / "controls.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(lines) == len(before)
    rendering = next(x for x in lines if x["kind"] == "rendering")
    assert set(rendering) == {"control_id", "kind", "context_id", "source_model", "target", "prose", "status", "provenance"}
    clear = next(x for x in lines if x["kind"] == "clear")
    assert set(clear) == {"control_id", "kind", "context_id", "source_model", "target", "proposal", "status", "provenance"}

    Benchmark.objects.all().delete()
    # The release import reads the export's controls.jsonl too, in the same transaction (an import review of
    # 2026-12-06: it was left out without a word, and the form called it "not a release file").
    imported_again = release_import(directory=out)
    assert f"controls.jsonl: created {len(before)} control(s) in " in imported_again.line()
    assert controls_state() == before
    assert set(ControlVariant.objects.values_list("origin", flat=True)) == {"imported"}
    summary = controls_import(benchmark=imported_again.benchmark, path=out / "controls.jsonl")  # the command's way
    assert (sum(summary.created.values()), summary.unchanged) == (0, len(before))
    assert "controls.jsonl: nothing new: the" in release_import(directory=out).line()


def test_a_benchmark_without_controls_exports_no_controls_file(imported, tmp_path: Path) -> None:  # noqa: ANN001
    call_command("export_lit2test", str(tmp_path / "export"))
    assert not (tmp_path / "export" / "controls.jsonl").exists()


def test_controls_change_no_leaderboard_figure_and_no_benchmark_count(imported, tmp_path: Path) -> None:  # noqa: ANN001
    run = run_default(benchmark=imported)

    def figures() -> tuple:
        from django.core.cache import cache

        cache.clear()  # computed afresh each time, not read back from the cache
        row = benchmark_list().get(pk=imported.pk)
        counts = (row.n_contexts, row.n_text_contexts, row.n_participants, row.n_pairs, row.n_runs)
        tables = (
            Participant.objects.count(),
            Proposal.objects.count(),
            CanonicalPair.objects.count(),
            OrderedJudgment.objects.count(),
        )
        board = run_leaderboard(run=run, replicates=200, seed=1)
        return counts, tables, json.dumps({k: v for k, v in board.items() if k != "run"}, sort_keys=True, default=str)

    before = figures()
    controls_generate(benchmark=imported, kinds=["clear", "rendering", "falsifier_off", "naive"], contexts=13, seed=0)
    controls_import(benchmark=imported, path=h.write(tmp_path / "c.jsonl", h.all_kinds(imported)))
    assert ControlVariant.objects.count() == 13 * 6 + 24
    assert figures() == before
    assert before[0][2] == 4  # the four release models, no control among the participants


def test_a_bad_controls_file_in_a_release_folder_rolls_the_whole_import_back(imported, tmp_path: Path) -> None:  # noqa: ANN001
    from arena.jsonl import ReleaseImportError

    controls_generate(benchmark=imported, kinds=["clear"], contexts=1, seed=5)
    out = tmp_path / "export"
    call_command("export_lit2test", str(out))
    lines = (out / "controls.jsonl").read_text(encoding="utf-8").splitlines()
    broken = dict(json.loads(lines[0]), kind="sparkling")
    (out / "controls.jsonl").write_text("\n".join([*lines, json.dumps(broken | {"control_id": "x-1"})]) + "\n")
    Benchmark.objects.all().delete()
    with pytest.raises(ReleaseImportError, match=rf"controls.jsonl, line {len(lines) + 1}: kind"):
        release_import(directory=out)
    assert Benchmark.objects.count() == 0 and ControlVariant.objects.count() == 0
