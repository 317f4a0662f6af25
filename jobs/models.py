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


class CallCacheEntry(models.Model):
    """An answer a run kind accepted, keyed by everything that made the request (``jobs.call_cache``): a later task that
    would send the same request takes it instead of calling. Only accepted answers are kept: invalid, refused and failed
    ones never are. ``key`` is unique, so two workers storing the same answer at once keep one entry (the first); a run
    that does not read the cache replaces the entries it answers afresh (``CallCache.record``)."""

    key = models.CharField(max_length=64, unique=True, help_text="sha256 (hex) of the request's identity")
    model = models.CharField(max_length=200, help_text="the endpoint's model the answer came from")
    template_version = models.CharField(max_length=50, blank=True)
    sample = models.PositiveIntegerField(default=0, help_text="which sample of the request this answer is")
    text = models.TextField(help_text="the accepted answer, as the endpoint gave it")
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    latency_seconds = models.FloatField(null=True, blank=True)
    source_kind = models.CharField(max_length=40, help_text="the run kind of the task that asked first (jobs.kinds)")
    source_run_id = models.BigIntegerField()
    source_task_id = models.BigIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "call cache entries"

    def __str__(self) -> str:
        return f"{self.key[:12]} ({self.model}, run {self.source_run_id})"


class CallCacheHit(models.Model):
    """A task answered from the cache instead of by a call: which run and task took it, and where the answer came from
    (kept here, not only as a link to the entry, so that the record outlives a pruned entry)."""

    kind = models.CharField(max_length=40, help_text="the run kind of the task that took the answer (jobs.kinds)")
    run_id = models.BigIntegerField()
    task_id = models.BigIntegerField()
    key = models.CharField(max_length=64)
    source_kind = models.CharField(max_length=40)
    source_run_id = models.BigIntegerField()
    source_task_id = models.BigIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["kind", "run_id", "task_id"], name="call_cache_hit_one_per_task")]


class SentinelSet(models.Model):
    """A benchmark's drift sentinels (``jobs.sentinels``): a few of its judged subjects with the verdicts a reference
    judge configuration gave them, frozen, that later judge configurations are re-checked against. One set per
    benchmark; pinning again replaces it (and its checks: they were against other frozen verdicts). It also holds
    the benchmark's drift settings: the tolerance, whether a drifted configuration is refused, and the schedule."""

    benchmark = models.OneToOneField("arena.Benchmark", on_delete=models.CASCADE, related_name="sentinel_set")
    subjects = models.CharField(max_length=30, help_text="the judging task kind of its subjects (jobs.subjects)")
    reference_run = models.ForeignKey(JudgeRun, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    reference = models.JSONField(default=dict, help_text="the reference judge configuration (jobs.drift.configuration_of)")
    # How the reference run chose its subjects: a check plans with them and keeps only the sentinels.
    plan = models.JSONField(default=dict, help_text="run type, selection, seed, orders and options of the reference run")
    seed = models.IntegerField(default=0, help_text="the seed the sentinel subjects were drawn with")
    tolerance = models.FloatField(default=0.9, help_text="a check agreeing on less than this share has drifted")
    refuse_drifted = models.BooleanField(
        default=False, help_text="refuse new runs from a configuration whose last check drifted, until it is accepted"
    )
    check_every = models.DurationField(null=True, blank=True, help_text="how often beat re-checks; empty: never")
    scheduled = models.JSONField(default=dict, blank=True, help_text="the judge configuration scheduled checks use")
    pinned_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    pinned_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"sentinels of benchmark {self.benchmark_id}"


class SentinelItem(models.Model):
    """One frozen verdict: a sentinel subject in one presentation order, as the reference configuration judged it."""

    sentinel_set = models.ForeignKey(SentinelSet, on_delete=models.CASCADE, related_name="items")
    subject_id = models.BigIntegerField()
    order = models.CharField(max_length=20)
    verdict = models.TextField(help_text="the decision of the answer, as canonical JSON (jobs.drift.verdict_of)")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["sentinel_set", "subject_id", "order"], name="sentinel_item_one_per_order")
        ]


class SentinelCheck(models.Model):
    """A re-judging of the sentinels by one judge configuration: a judge run over just the sentinel subjects, and
    (once the run ends: the engine's durable step) its agreement with the frozen verdicts and with the configuration's
    previous check. A drifted check is accepted by a researcher (who, when) before a benchmark that refuses drifted
    configurations takes runs from it again."""

    sentinel_set = models.ForeignKey(SentinelSet, on_delete=models.CASCADE, related_name="checks")
    run = models.OneToOneField(JudgeRun, on_delete=models.CASCADE, related_name="+")
    config_key = models.CharField(max_length=16, db_index=True, help_text="the judge configuration's short hash")
    configuration = models.JSONField(default=dict)
    scheduled = models.BooleanField(default=False, help_text="launched by the beat schedule")
    run_status = models.CharField(max_length=20, blank=True, help_text="how its run ended, once it has")
    compared = models.PositiveIntegerField(default=0, help_text="frozen verdicts compared")
    agreed = models.PositiveIntegerField(default=0, help_text="of them, equal to the frozen verdict")
    missing = models.PositiveIntegerField(default=0, help_text="of them, without a valid verdict in this check")
    agreement = models.FloatField(null=True, blank=True, help_text="agreed / compared")
    previous = models.ForeignKey("self", on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    previous_agreement = models.FloatField(null=True, blank=True, help_text="share equal to the previous check's")
    drifted = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    done_at = models.DateTimeField(null=True, blank=True)
    accepted_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    accepted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]
