"""Imported rubric runs kept their scores (``RubricScore``) but no answer record (``RubricJudgment``), so their
progress and run page counted nothing ("Done 0", issue 24). The import now writes both; this gives the runs imported
before it their records, one accepted answer per stored score. Runs judged here have theirs already."""

from __future__ import annotations

from django.db import migrations

BATCH = 1000


def rubric_judgments_backfill(apps, schema_editor) -> None:  # noqa: ANN001
    RubricScore = apps.get_model("hypoarena", "RubricScore")
    RubricJudgment = apps.get_model("hypoarena", "RubricJudgment")
    recorded = set(RubricJudgment.objects.filter(status="accepted").values_list("run_id", "submission_id"))
    missing = []
    for score in RubricScore.objects.order_by("pk").iterator(chunk_size=BATCH):
        if (score.run_id, score.submission_id) in recorded:
            continue
        pairs = [
            {"g": g, "l": ell, "j": j} for g, ell, j in zip(score.grounding, score.insight, score.justification, strict=True)
        ]
        missing.append(
            RubricJudgment(
                run_id=score.run_id,
                submission_id=score.submission_id,
                order="",
                status="accepted",
                scores={"pairs": pairs, "b": score.breadth, "d": score.distinctness, "u": score.utility},
                raw_response=score.raw_response,
                metadata=score.metadata,
            )
        )
    RubricJudgment.objects.bulk_create(missing, batch_size=BATCH)


class Migration(migrations.Migration):
    dependencies = [
        ("hypoarena", "0003_import_text_limits"),
    ]

    operations = [
        migrations.RunPython(rubric_judgments_backfill, migrations.RunPython.noop),
    ]
