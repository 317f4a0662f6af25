"""Work lists of judge and generation runs.

A run's tasks are materialised when it is created, so progress, resume and
idempotency are questions about rows: a task is claimed by a conditional update
(one claimer wins), and the database's unique constraint on accepted judgments
makes a second verdict for the same (run, pair, order) impossible.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from arena.models import Benchmark, CanonicalPair, Context, JudgeRun, Participant


class TaskStatus(models.TextChoices):
    PENDING = "pending", "pending"
    CLAIMED = "claimed", "claimed"
    DONE = "done", "done"
    FAILED = "failed", "failed"
    SKIPPED = "skipped", "skipped"


class JudgeTask(models.Model):
    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="tasks")
    pair = models.ForeignKey(CanonicalPair, on_delete=models.CASCADE, related_name="+")
    order = models.CharField(max_length=10)
    status = models.CharField(max_length=10, choices=TaskStatus.choices, default=TaskStatus.PENDING)
    claimed_by = models.CharField(max_length=64, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    calls = models.PositiveIntegerField(default=0, help_text="HTTP calls made for this task, all attempts")
    last_error = models.TextField(blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "pair", "order"], name="judge_task_unique")]
        indexes = [models.Index(fields=["run", "status"])]


class GenerationRun(models.Model):
    """Elicits proposals from participants under one common prompt."""

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="generation_runs")
    prompt_version = models.CharField(max_length=50)
    provider = models.CharField(max_length=50, default=JudgeRun.Provider.OPENAI_COMPATIBLE)
    parameters = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=20, choices=JudgeRun.Status.choices, default=JudgeRun.Status.PENDING)
    launched_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"generation run {self.pk} ({self.prompt_version})"


class GenerationTask(models.Model):
    run = models.ForeignKey(GenerationRun, on_delete=models.CASCADE, related_name="tasks")
    context = models.ForeignKey(Context, on_delete=models.CASCADE, related_name="+")
    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="+")
    status = models.CharField(max_length=10, choices=TaskStatus.choices, default=TaskStatus.PENDING)
    claimed_by = models.CharField(max_length=64, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    calls = models.PositiveIntegerField(default=0)
    attempts = models.JSONField(default=list, blank=True, help_text="raw answers and schema problems of each attempt")
    last_error = models.TextField(blank=True)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "context", "participant"], name="generation_task_unique")]
        indexes = [models.Index(fields=["run", "status"])]
