"""What the engine needs of every run kind's rows, the drivers working on runs, and what happened to them.

A run's tasks are materialised when it is created, so progress, resume and idempotency are questions about rows: a
task (a :class:`ClaimableTask` of the kind's own model) is claimed by a conditional update (one claimer wins), and
each kind's unique constraint on accepted answers makes a second answer for the same task impossible.

A driver (one Celery task executing a run) registers a ``RunDriver`` row and renews it
with its heartbeat; the watchdog in every worker relaunches a running run whose
drivers have all gone quiet. ``RunEvent`` is the run's log for the researcher: why it
failed, when it was relaunched, what an outage cost.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from arena.models import JudgeRun


class TaskStatus(models.TextChoices):
    PENDING = "pending", "pending"
    CLAIMED = "claimed", "claimed"
    DONE = "done", "done"
    FAILED = "failed", "failed"
    SKIPPED = "skipped", "skipped"


class RunKind(models.TextChoices):
    """The engine's own run kind; every other kind is registered by its app (``jobs.kinds``)."""

    JUDGE = "judge", "judge run"


class TaskCost(models.Model):
    """What a task cost at the endpoint, counted whether or not its answer was kept.

    ``calls`` is written ahead: each call is counted (in a group commit shared by the
    driver's concurrent calls) before the request is sent, so calls in flight when a worker
    dies are counted too. An answer that arrives but cannot be stored (the task passed to
    another driver, the run was cancelled) is counted in ``discarded`` with its tokens.
    """

    calls = models.PositiveIntegerField(default=0, help_text="HTTP calls started for this task, all attempts")
    # Calls that got no usable HTTP answer (429, 5xx, timeout, refused, 4xx); they are retried or fail the task.
    # Recorded when they happen, so a judgment that needed retries shows it (its parse attempt stays 1).
    failed_calls = models.PositiveIntegerField(default=0, help_text="calls that ended in an HTTP error or timeout")
    last_call_error = models.TextField(blank=True, help_text="the error of the latest failed call")
    discarded = models.PositiveIntegerField(default=0, help_text="answers received but not stored")
    discarded_prompt_tokens = models.PositiveBigIntegerField(default=0)
    discarded_completion_tokens = models.PositiveBigIntegerField(default=0)

    class Meta:
        abstract = True


class ClaimableTask(TaskCost):
    """What the engine needs of any task model (``jobs.execution``): a ``run`` foreign key (declared by the
    subclass), a status, who claimed it until when, the latest error, and its cost (``TaskCost``)."""

    status = models.CharField(max_length=10, choices=TaskStatus.choices, default=TaskStatus.PENDING)
    claimed_by = models.CharField(max_length=64, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


class EngineRun(models.Model):
    """The fields every non-judge run of the engine has, which its provider, limiter and lease helpers read
    (``jobs.driving.chat_provider``, ``endpoint_limiter``, ``run_lease``): ``parameters`` holds ``base_url``,
    ``api_key_env`` (a variable's name, never a key), ``concurrency``, ``rate_per_second``, ``timeout``,
    ``lease_seconds`` and what the kind itself reads. A protocol's run model extends it with its ``benchmark`` (and
    what else it needs)."""

    provider = models.CharField(max_length=50, default=JudgeRun.Provider.OPENAI_COMPATIBLE)
    parameters = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=20, choices=JudgeRun.Status.choices, default=JudgeRun.Status.PENDING)
    launched_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True
        ordering = ["-created_at", "-id"]


class RunDriver(models.Model):
    """One execution of a run by a worker; alive while its heartbeat is recent and it has not ended."""

    kind = models.CharField(
        max_length=40,
        help_text="the engine's run kind: judge, or one a protocol registered (jobs.kinds)",
    )
    run_id = models.BigIntegerField()
    token = models.CharField(max_length=64, unique=True, help_text="the claimed_by value of this driver's tasks")
    worker = models.CharField(max_length=200, help_text="host and process id of the worker")
    started_at = models.DateTimeField(auto_now_add=True)
    seen_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)
    outcome = models.CharField(max_length=200, blank=True)

    class Meta:
        indexes = [models.Index(fields=["kind", "run_id", "ended_at"])]


class RunEvent(models.Model):
    """A line in a run's log, shown on its page: failures with their reason, relaunches, outages."""

    class Level(models.TextChoices):
        INFO = "info", "info"
        WARNING = "warning", "warning"
        ERROR = "error", "error"

    kind = models.CharField(
        max_length=40,
        help_text="the engine's run kind: judge, or one a protocol registered (jobs.kinds)",
    )
    run_id = models.BigIntegerField()
    level = models.CharField(max_length=10, choices=Level.choices, default=Level.INFO)
    code = models.CharField(max_length=40, help_text="machine-readable: launched, driver_failed, relaunched, ...")
    message = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["kind", "run_id", "-created_at"])]
        ordering = ["-created_at", "-id"]


class RunStep(models.Model):
    """The step that must follow a run once its tasks are done (``jobs.kinds.Step``, carried out by ``jobs.steps``).

    Recorded *pending* in the transaction that finds the run's tasks all done (the run stays ``running``); the
    transaction that carries it out also ends the run (``outcome``), so a run never reads completed before its
    step is done and a step interrupted by a dead worker or a database outage is simply tried again by the next
    driver or watchdog. One row per run: a resumed run that closes again makes it pending again."""

    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        DONE = "done", "done"
        FAILED = "failed", "failed"

    kind = models.CharField(max_length=40, help_text="the engine's run kind (jobs.kinds)")
    run_id = models.BigIntegerField()
    title = models.CharField(max_length=200, help_text="what the step does, as the run's page says it")
    outcome = models.CharField(max_length=20, help_text="the status the run ends with once the step is done")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0, help_text="tries that failed (database outages not counted)")
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    done_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["kind", "run_id"], name="run_step_one_per_run")]
