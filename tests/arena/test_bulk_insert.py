"""``arena.bulk.rows_insert``: PostgreSQL's COPY and the generic executemany store the same rows, with the
model's defaults for the columns not given, and both count as writes of the run's judgments."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.db import connection

from arena.bulk import rows_insert
from arena.models import JudgeRun, JudgeRunVersion, OrderedJudgment
from lit2test.release import release_import

from . import builders as b

pytestmark = pytest.mark.django_db

METHODS = ["executemany", "copy"]


@pytest.mark.parametrize("method", METHODS)
def test_both_paths_store_the_given_values_and_the_defaults(tmp_path: Path, method: str) -> None:
    if method == "copy" and connection.vendor != "postgresql":
        pytest.skip("COPY is PostgreSQL's (set DATABASE_URL)")
    benchmark = release_import(directory=b.write(tmp_path, b.small_release())).benchmark
    run = JudgeRun.objects.create(benchmark=benchmark, label="bulk", judge_model="Judge-Y", provider="recorded")
    pairs = list(benchmark.pairs.order_by("internal_key"))
    alpha = benchmark.participants.get(name="Alpha 1")
    rows = [
        # run, pair, order, status, winner, is_tie, confidence, errors, metadata
        (run.pk, pairs[0].pk, "original", "accepted", alpha.pk, False, "high", [], {"note": "ünïcode \u2028 'quoted' \\ tab\t"}),
        (run.pk, pairs[0].pk, "reverse", "accepted", None, True, "", ["e1", "e2"], {}),
        (run.pk, pairs[1].pk, "original", "invalid", None, False, "low", [], {"nested": {"list": [1, 2.5, None]}}),
    ]
    fields = ("run_id", "pair_id", "order", "status", "winner_id", "is_tie", "confidence", "errors", "metadata")
    assert rows_insert(model=OrderedJudgment, fields=fields, rows=iter(rows), method=method) == 3
    stored = list(
        OrderedJudgment.objects.filter(run=run)
        .order_by("id")
        .values_list(*fields, "attempt", "main_reason", "verdict", "shown_a_id")
    )
    assert stored == [(*row, 1, "", None, None) for row in rows]  # defaults: attempt 1, blank text, nulls
    assert all(j.created_at is not None for j in OrderedJudgment.objects.filter(run=run))
    assert JudgeRunVersion.objects.get(run_id=run.pk).version >= 1  # the triggers saw the write


def test_copy_writes_inside_the_import_transaction(tmp_path: Path) -> None:
    """A refused import rolls back what COPY (or executemany) already wrote: nothing is left behind."""
    from arena.models import CanonicalPair, Context
    from lit2test.release import ReleaseImportError

    files = b.small_release()
    release_import(directory=b.write(tmp_path / "first", files))
    # New verdict-only contexts (their contexts and pairs are written first), then a line that contradicts
    # a stored verdict (found while writing the judgments).
    changed = [b.folded(f"ctx_1{i:02d}__v1", "Alpha 1", "Beta-2", "Alpha 1", "Beta-2") for i in range(5)]
    changed.append(
        files["corrected_folded_pairs.jsonl"][0]
        | {"gemini_original_winner": "Beta-2", "stability_label": "order-unstable", "folded_winner": "consistency_tie"}
    )
    before = (Context.objects.count(), CanonicalPair.objects.count(), OrderedJudgment.objects.count())
    with pytest.raises(ReleaseImportError, match="already holds a different original verdict"):
        release_import(directory=b.write(tmp_path / "second", {"corrected_folded_pairs.jsonl": changed}))
    assert (Context.objects.count(), CanonicalPair.objects.count(), OrderedJudgment.objects.count()) == before


def test_rows_update_sets_only_the_given_rows_and_columns(tmp_path: Path) -> None:
    from arena.bulk import rows_update
    from arena.models import Proposal

    benchmark = release_import(directory=b.write(tmp_path, b.small_release())).benchmark
    first, second, untouched = Proposal.objects.filter(context__benchmark=benchmark).order_by("pk")[:3]
    before = Proposal.objects.values().get(pk=untouched.pk)
    nested = {"hypothesis": "Übersetzung «x» — 模型 [REDACTED]", "numbers": [1, 2.5, None], "empty": {}}
    written = rows_update(
        model=Proposal,
        fields=["blind_content", "blind_digest", "redactions"],
        rows=[(first.pk, nested, "d" * 64, [{"field": "hypothesis", "start": 3}]), (second.pk, None, "", [])],
    )
    assert written == 2
    one, two = Proposal.objects.get(pk=first.pk), Proposal.objects.get(pk=second.pk)
    assert (one.blind_content, one.blind_digest, one.redactions) == (nested, "d" * 64, [{"field": "hypothesis", "start": 3}])
    assert (two.blind_content, two.blind_digest, two.redactions) == (None, "", [])
    assert one.content == first.content  # a column not given is left alone
    assert Proposal.objects.values().get(pk=untouched.pk) == before
