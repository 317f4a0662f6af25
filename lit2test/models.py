"""The work lists of Lit2Test's runs: a judge run's ordered tasks over the canonical pairs, and generation runs that
elicit six-field proposals, with their tasks.

The tables keep the names they had when the engine held them (``jobs_*``): moving the models here changed no row.
"""

from __future__ import annotations

from django.db import models

from arena.models import Benchmark, CanonicalPair, Context, JudgeRun, Participant
from jobs.models import ClaimableTask, EngineRun

PROTOCOL = "lit2test"  # Benchmark.protocol of a Lit2Test benchmark


class JudgeTask(ClaimableTask):
    """One canonical pair in one presentation order, for one judge run."""

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="tasks")
    pair = models.ForeignKey(CanonicalPair, on_delete=models.CASCADE, related_name="+")
    order = models.CharField(max_length=10)

    class Meta:
        db_table = "jobs_judgetask"
        constraints = [models.UniqueConstraint(fields=["run", "pair", "order"], name="judge_task_unique")]
        indexes = [models.Index(fields=["run", "status"])]


class GenerationRun(EngineRun):
    """Elicits proposals from participants under one common prompt."""

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="generation_runs")
    prompt_version = models.CharField(max_length=50)

    class Meta(EngineRun.Meta):
        db_table = "jobs_generationrun"

    def __str__(self) -> str:
        return f"generation run {self.pk} ({self.prompt_version})"


class GenerationTask(ClaimableTask):
    """One participant asked for a proposal on one context."""

    run = models.ForeignKey(GenerationRun, on_delete=models.CASCADE, related_name="tasks")
    context = models.ForeignKey(Context, on_delete=models.CASCADE, related_name="+")
    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="+")
    attempts = models.JSONField(default=list, blank=True, help_text="raw answers and schema problems of each attempt")
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)

    class Meta:
        db_table = "jobs_generationtask"
        constraints = [models.UniqueConstraint(fields=["run", "context", "participant"], name="generation_task_unique")]
        indexes = [models.Index(fields=["run", "status"])]
