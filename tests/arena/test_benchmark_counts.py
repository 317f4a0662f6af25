"""The benchmark list's counts are kept by the database (issue 25, item 5): every writer keeps them exact.

Reference: the rows counted afresh with ``COUNT`` after each write (imports, a new version, the ORM's creates,
updates and cascade deletes, raw SQL, a rolled-back transaction), never the kept numbers themselves.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.db import connection, transaction

from arena.counts import COUNT_FIELDS
from arena.models import Benchmark, CanonicalPair, Context, JudgeRun, Participant
from arena.selectors import benchmark_list
from lit2test.release import release_import
from lit2test.versions import benchmark_new_version

pytestmark = pytest.mark.django_db


def fresh(benchmark_id: int) -> dict[str, int]:
    """The five counts, counted now."""
    contexts = Context.objects.filter(benchmark_id=benchmark_id)
    return {
        "n_contexts": contexts.count(),
        "n_text_contexts": contexts.filter(has_text=True).count(),
        "n_participants": Participant.objects.filter(benchmark_id=benchmark_id).count(),
        "n_pairs": CanonicalPair.objects.filter(benchmark_id=benchmark_id).count(),
        "n_runs": JudgeRun.objects.filter(benchmark_id=benchmark_id).count(),
    }


def assert_exact(step: str) -> None:
    """Every benchmark's listed counts equal its rows counted afresh."""
    rows = list(benchmark_list())
    assert rows, f"after {step}: the benchmark list is empty"
    for row in rows:
        listed = {name: getattr(row, name) for name in COUNT_FIELDS}
        counted = fresh(row.pk)
        assert listed == counted, (
            f"after {step}: benchmark {row.pk} ({row.name} v{row.version}) lists {listed} but has {counted}; the "
            "count triggers of migration arena 0011 missed a write"
        )


def test_counts_stay_exact_through_imports_versions_and_deletes(release_dir: Path) -> None:
    first = release_import(directory=release_dir).benchmark
    assert_exact("the release import")
    assert fresh(first.pk)["n_pairs"] > 0, "the release sample imported no pairs: nothing was checked"

    copy = benchmark_new_version(benchmark=first, version="2")
    assert_exact("a new version")

    Context.objects.filter(benchmark=copy, has_text=True).order_by("pk")[:1].get().delete()  # cascades to its pairs
    assert_exact("deleting a context with text (its pairs cascade)")
    Context.objects.filter(pk__in=Context.objects.filter(benchmark=copy, has_text=False).values("pk")[:3]).update(has_text=True)
    assert_exact("marking contexts as having text")
    Participant.objects.filter(benchmark=copy).order_by("pk").first().delete()  # cascades to pairs
    assert_exact("deleting a participant")
    JudgeRun.objects.filter(benchmark=copy).delete()
    assert_exact("deleting the runs")

    bench = Benchmark.objects.create(name="counted", version="1")
    Context.objects.bulk_create([Context(benchmark=bench, external_id=f"c{i}", has_text=i % 2 == 0) for i in range(5)])
    Participant.objects.bulk_create([Participant(benchmark=bench, name=n) for n in ("a", "b", "c")])
    JudgeRun.objects.create(benchmark=bench, label="r", judge_model="j", provider=JudgeRun.Provider.RECORDED)
    a, b, _ = Participant.objects.filter(benchmark=bench).order_by("name")
    ctx = Context.objects.filter(benchmark=bench).order_by("pk")
    CanonicalPair.objects.bulk_create(
        [CanonicalPair(benchmark=bench, context=c, participant_a=a, participant_b=b, internal_key=f"k{c.pk}") for c in ctx]
    )
    assert_exact("bulk creates")
    with connection.cursor() as cur:
        cur.execute(
            f"DELETE FROM {CanonicalPair._meta.db_table} WHERE benchmark_id = %s AND internal_key = %s",
            [bench.pk, f"k{ctx[0].pk}"],
        )
    assert_exact("a raw SQL delete")
    JudgeRun.objects.filter(benchmark=bench).update(status=JudgeRun.Status.COMPLETED)
    assert_exact("a run's status changed (nothing moves)")
    JudgeRun.objects.filter(benchmark=bench).update(benchmark=copy)
    assert_exact("a run moved to another benchmark")

    with pytest.raises(RuntimeError), transaction.atomic():
        Context.objects.create(benchmark=bench, external_id="rolled-back", has_text=True)
        CanonicalPair.objects.filter(benchmark=bench).delete()
        raise RuntimeError("roll back")
    assert_exact("a rolled-back transaction")

    first.delete()
    assert fresh(first.pk) == dict.fromkeys(COUNT_FIELDS, 0)
    assert_exact("deleting a benchmark")
    assert Benchmark.objects.filter(pk=first.pk).count() == 0
