import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("arena", "0009_protocols_from_the_registry"),
        ("jobs", "0005_lit2test_models_to_their_app"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    # The models existed in the jobs app (jobs 0001-0004 made their tables, jobs 0005 let them go): state only.
    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.CreateModel(
                    name="GenerationRun",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("provider", models.CharField(default="openai_compatible", max_length=50)),
                        ("parameters", models.JSONField(blank=True, default=dict)),
                        (
                            "status",
                            models.CharField(
                                choices=[
                                    ("pending", "pending"),
                                    ("running", "running"),
                                    ("paused", "paused"),
                                    ("completed", "completed"),
                                    ("failed", "failed"),
                                    ("cancelled", "cancelled"),
                                ],
                                default="pending",
                                max_length=20,
                            ),
                        ),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("finished_at", models.DateTimeField(blank=True, null=True)),
                        ("prompt_version", models.CharField(max_length=50)),
                        (
                            "benchmark",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE, related_name="generation_runs", to="arena.benchmark"
                            ),
                        ),
                        (
                            "launched_by",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="+",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                    ],
                    options={
                        "db_table": "jobs_generationrun",
                        "ordering": ["-created_at", "-id"],
                        "abstract": False,
                    },
                ),
                migrations.CreateModel(
                    name="GenerationTask",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        (
                            "calls",
                            models.PositiveIntegerField(default=0, help_text="HTTP calls started for this task, all attempts"),
                        ),
                        (
                            "failed_calls",
                            models.PositiveIntegerField(default=0, help_text="calls that ended in an HTTP error or timeout"),
                        ),
                        ("last_call_error", models.TextField(blank=True, help_text="the error of the latest failed call")),
                        ("discarded", models.PositiveIntegerField(default=0, help_text="answers received but not stored")),
                        ("discarded_prompt_tokens", models.PositiveBigIntegerField(default=0)),
                        ("discarded_completion_tokens", models.PositiveBigIntegerField(default=0)),
                        (
                            "status",
                            models.CharField(
                                choices=[
                                    ("pending", "pending"),
                                    ("claimed", "claimed"),
                                    ("done", "done"),
                                    ("failed", "failed"),
                                    ("skipped", "skipped"),
                                ],
                                default="pending",
                                max_length=10,
                            ),
                        ),
                        ("claimed_by", models.CharField(blank=True, max_length=64)),
                        ("lease_until", models.DateTimeField(blank=True, null=True)),
                        ("last_error", models.TextField(blank=True)),
                        ("updated_at", models.DateTimeField(auto_now=True)),
                        (
                            "attempts",
                            models.JSONField(
                                blank=True, default=list, help_text="raw answers and schema problems of each attempt"
                            ),
                        ),
                        ("prompt_tokens", models.PositiveIntegerField(default=0)),
                        ("completion_tokens", models.PositiveIntegerField(default=0)),
                        (
                            "context",
                            models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="+", to="arena.context"),
                        ),
                        (
                            "participant",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE, related_name="+", to="arena.participant"
                            ),
                        ),
                        (
                            "run",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE, related_name="tasks", to="lit2test.generationrun"
                            ),
                        ),
                    ],
                    options={
                        "db_table": "jobs_generationtask",
                        "indexes": [models.Index(fields=["run", "status"], name="jobs_genera_run_id_95a22a_idx")],
                        "constraints": [
                            models.UniqueConstraint(fields=("run", "context", "participant"), name="generation_task_unique")
                        ],
                    },
                ),
                migrations.CreateModel(
                    name="JudgeTask",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        (
                            "calls",
                            models.PositiveIntegerField(default=0, help_text="HTTP calls started for this task, all attempts"),
                        ),
                        (
                            "failed_calls",
                            models.PositiveIntegerField(default=0, help_text="calls that ended in an HTTP error or timeout"),
                        ),
                        ("last_call_error", models.TextField(blank=True, help_text="the error of the latest failed call")),
                        ("discarded", models.PositiveIntegerField(default=0, help_text="answers received but not stored")),
                        ("discarded_prompt_tokens", models.PositiveBigIntegerField(default=0)),
                        ("discarded_completion_tokens", models.PositiveBigIntegerField(default=0)),
                        (
                            "status",
                            models.CharField(
                                choices=[
                                    ("pending", "pending"),
                                    ("claimed", "claimed"),
                                    ("done", "done"),
                                    ("failed", "failed"),
                                    ("skipped", "skipped"),
                                ],
                                default="pending",
                                max_length=10,
                            ),
                        ),
                        ("claimed_by", models.CharField(blank=True, max_length=64)),
                        ("lease_until", models.DateTimeField(blank=True, null=True)),
                        ("last_error", models.TextField(blank=True)),
                        ("updated_at", models.DateTimeField(auto_now=True)),
                        ("order", models.CharField(max_length=10)),
                        (
                            "pair",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE, related_name="+", to="arena.canonicalpair"
                            ),
                        ),
                        (
                            "run",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE, related_name="tasks", to="arena.judgerun"
                            ),
                        ),
                    ],
                    options={
                        "db_table": "jobs_judgetask",
                        "indexes": [models.Index(fields=["run", "status"], name="jobs_judget_run_id_aa5484_idx")],
                        "constraints": [models.UniqueConstraint(fields=("run", "pair", "order"), name="judge_task_unique")],
                    },
                ),
            ],
        ),
    ]
