from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("jobs", "0004_run_kind_any_protocol"),
    ]

    # The judge tasks and generation runs of the canonical pairs moved to the lit2test app (lit2test 0001), which keeps
    # their tables (``jobs_judgetask``, ``jobs_generationrun``, ``jobs_generationtask``): no row, column or index changes.
    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.RemoveField(
                    model_name="generationrun",
                    name="benchmark",
                ),
                migrations.RemoveField(
                    model_name="generationrun",
                    name="launched_by",
                ),
                migrations.RemoveIndex(
                    model_name="generationtask",
                    name="jobs_genera_run_id_95a22a_idx",
                ),
                migrations.RemoveConstraint(
                    model_name="generationtask",
                    name="generation_task_unique",
                ),
                migrations.RemoveIndex(
                    model_name="judgetask",
                    name="jobs_judget_run_id_aa5484_idx",
                ),
                migrations.RemoveConstraint(
                    model_name="judgetask",
                    name="judge_task_unique",
                ),
                migrations.AlterField(
                    model_name="rundriver",
                    name="kind",
                    field=models.CharField(
                        help_text="the engine's run kind: judge, or one a protocol registered (jobs.kinds)", max_length=40
                    ),
                ),
                migrations.AlterField(
                    model_name="runevent",
                    name="kind",
                    field=models.CharField(
                        help_text="the engine's run kind: judge, or one a protocol registered (jobs.kinds)", max_length=40
                    ),
                ),
                migrations.RemoveField(
                    model_name="generationtask",
                    name="context",
                ),
                migrations.RemoveField(
                    model_name="generationtask",
                    name="participant",
                ),
                migrations.RemoveField(
                    model_name="generationtask",
                    name="run",
                ),
                migrations.RemoveField(
                    model_name="judgetask",
                    name="pair",
                ),
                migrations.RemoveField(
                    model_name="judgetask",
                    name="run",
                ),
                migrations.DeleteModel(
                    name="GenerationRun",
                ),
                migrations.DeleteModel(
                    name="GenerationTask",
                ),
                migrations.DeleteModel(
                    name="JudgeTask",
                ),
            ],
        ),
    ]
