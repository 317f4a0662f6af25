"""Diagnostic control variants (PROTOCOL.md §1, "Diagnostic controls"; issue 11).

A control variant is a copy of a real proposal (its *source*, the clean one) with a known change: one field
corrupted (``clear``, ``subtle``), the same field rewritten without harm (``sham``), the falsifying result
removed (``falsifier_off``), the six fields rendered as prose (``rendering``), or a naive baseline written for
the source's context (``naive``). It is judged against its clean source; the verdicts are the control's
result.

A control is never a :class:`arena.models.Participant` and has no :class:`arena.models.CanonicalPair`: it
lives in its own table, so no leaderboard count, fit or bootstrap can see it.

``control_id`` is internal (like a pair's ``internal_key``, a generated one names the source model): it may
go to researchers and exports, never to a judge or an annotator.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from arena.models import Benchmark, Context, JudgeRun, JudgmentRecord, Proposal
from jobs.models import ClaimableTask

from .variants import TARGET_FIELD  # the field each target dimension corrupts

__all__ = ["TARGET_FIELD", "ControlAttempt", "ControlJudgeTask", "ControlJudgment", "ControlVariant"]


CONTROLS = "controls"  # the judging task kind of the diagnostic controls
LIT2TEST = "lit2test"  # the protocol whose benchmarks the controls extend


class ControlVariant(models.Model):
    class Kind(models.TextChoices):
        CLEAR = "clear", _("clear single-field corruption")
        SUBTLE = "subtle", _("subtle single-field corruption")
        SHAM = "sham", _("sham (style-matched, harmless) rewrite")
        RENDERING = "rendering", _("prose rendering")
        FALSIFIER_OFF = "falsifier_off", _("falsifying result removed")
        NAIVE = "naive", _("naive baseline")

    class Target(models.TextChoices):
        GROUNDING = "grounding", "grounding (literature_gap)"
        DECISIVE_METRIC = "decisive_metric", "decisive metric (decisive_metric)"
        FALSIFIABILITY = "falsifiability", "falsifiability (falsifying_result)"

    class Status(models.TextChoices):
        DRAFT = "draft", _("draft (awaiting review)")
        APPROVED = "approved", _("approved")
        REJECTED = "rejected", _("rejected")

    class Origin(models.TextChoices):
        TEMPLATE = "template", "deterministic template"
        MODEL = "model", "language model"
        IMPORTED = "imported", "imported from a file"

    #: Kinds that change one field and so name a target dimension; the others have none.
    TARGETED_KINDS = (Kind.CLEAR, Kind.SUBTLE, Kind.SHAM)

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="control_variants")
    context = models.ForeignKey(Context, on_delete=models.CASCADE, related_name="control_variants")
    source = models.ForeignKey(
        Proposal, on_delete=models.CASCADE, related_name="control_variants", help_text="The clean proposal it is judged against."
    )
    control_id = models.CharField(max_length=300, help_text="Unique within the benchmark; internal (may name the source model).")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    target = models.CharField(max_length=20, choices=Target.choices, null=True, blank=True)
    content = models.JSONField(null=True, blank=True, help_text="The six fields (every kind but rendering).")
    prose = models.TextField(blank=True, help_text="The prose text (rendering only).")
    origin = models.CharField(max_length=10, choices=Origin.choices)
    generator = models.CharField(max_length=200, blank=True, help_text="Template name, or the model that wrote it.")
    generator_version = models.CharField(max_length=100, blank=True, help_text="Template version, or the prompt version.")
    provenance = models.JSONField(
        default=dict, blank=True, help_text="Anything else about how it was made (e.g. the file's own provenance)."
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    reviewed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["benchmark", "control_id"], name="control_id_unique"),
            models.CheckConstraint(
                condition=Q(kind__in=["clear", "subtle", "sham"], target__isnull=False)
                | (~Q(kind__in=["clear", "subtle", "sham"]) & Q(target__isnull=True)),
                name="control_target_iff_targeted_kind",
            ),
            models.CheckConstraint(
                condition=(Q(kind="rendering") & Q(content__isnull=True) & ~Q(prose=""))
                | (~Q(kind="rendering") & Q(content__isnull=False) & Q(prose="")),
                name="control_prose_iff_rendering",
            ),
        ]
        indexes = [models.Index(fields=["benchmark", "kind", "status"])]
        ordering = ["benchmark_id", "control_id"]

    def __str__(self) -> str:
        return self.control_id

    @property
    def target_field(self) -> str | None:
        return TARGET_FIELD.get(self.target or "")


class ControlAttempt(models.Model):
    """One try at making or validating a variant (the LLM path: generation, then a validation call that checks the
    edit touches only the target field and, for a sham, does not degrade it; up to 4 rounds, then a reserve
    template). Every attempt is kept, failed ones included, so a reader can see why a reserve was needed.

    ``variant`` is null for attempts that produced nothing usable (a refusal, an off-target edit) until one
    succeeds; ``control_id`` names the variant the attempt was for in every case.
    """

    class Step(models.TextChoices):
        GENERATE = "generate", "generate"
        VALIDATE = "validate", "validate"
        RESERVE = "reserve", "reserve template"

    class Outcome(models.TextChoices):
        ACCEPTED = "accepted", "accepted"
        REJECTED = "rejected", "rejected by validation"
        OFF_TARGET = "off_target", "edited another field"
        DEGRADED = "degraded", "sham degraded the field"
        REFUSED = "refused", "model refused"
        MALFORMED = "malformed", "unparseable answer"
        ERROR = "error", "call failed"

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="control_attempts")
    control_id = models.CharField(max_length=300)
    variant = models.ForeignKey(ControlVariant, on_delete=models.SET_NULL, null=True, blank=True, related_name="attempts")
    source = models.ForeignKey(Proposal, on_delete=models.CASCADE, related_name="control_attempts")
    kind = models.CharField(max_length=20, choices=ControlVariant.Kind.choices)
    target = models.CharField(max_length=20, choices=ControlVariant.Target.choices, null=True, blank=True)
    round = models.PositiveSmallIntegerField(help_text="1 to 4 for model rounds; the reserve template comes after.")
    step = models.CharField(max_length=10, choices=Step.choices)
    model = models.CharField(max_length=200, blank=True)
    prompt_version = models.CharField(max_length=100, blank=True)
    outcome = models.CharField(max_length=12, choices=Outcome.choices)
    reason = models.TextField(blank=True)
    raw_text = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["benchmark", "control_id", "round", "step"], name="control_attempt_unique"),
        ]
        ordering = ["benchmark_id", "control_id", "round", "created_at", "id"]

    def __str__(self) -> str:
        return f"{self.control_id} round {self.round} {self.step}: {self.outcome}"


class ControlJudgeTask(ClaimableTask):
    """One ordered comparison of a controls judge run (``JudgeRun.subjects == "controls"``): a variant against its
    clean source, in one presentation order. The run engine (``jobs``) claims, leases and retries these exactly as
    it does canonical-pair tasks; only what is asked and where the verdict goes differ (``controls.judging``)."""

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="control_tasks")
    variant = models.ForeignKey(ControlVariant, on_delete=models.CASCADE, related_name="+")
    order = models.CharField(max_length=10)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "variant", "order"], name="control_task_unique")]
        indexes = [models.Index(fields=["run", "status"])]


class ControlJudgment(JudgmentRecord):
    """A judge's verdict on one ordered control comparison, translated to which proposal won.

    ``clean_shown`` says which label the clean source had in the prompt ("A" or "B"); ``verdict`` is the judge's
    own answer (A, B or TIE) and ``winner`` what it means (clean, variant, tie). A structured run's 0-4 scores are
    kept per label in ``metadata["scores"]``. At most one accepted verdict per (run, variant, order), enforced by
    the database.
    """

    class Winner(models.TextChoices):
        CLEAN = "clean", "clean source"
        VARIANT = "variant", "variant"
        TIE = "tie", "tie"

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="control_judgments")
    variant = models.ForeignKey(ControlVariant, on_delete=models.CASCADE, related_name="judgments")
    clean_shown = models.CharField(max_length=1, help_text="the label the clean source had: A or B")
    verdict = models.CharField(max_length=5, null=True, blank=True)
    winner = models.CharField(max_length=10, choices=Winner.choices, blank=True)
    confidence = models.CharField(max_length=10, blank=True)
    main_reason = models.TextField(blank=True)
    weakness_a = models.TextField(blank=True)
    weakness_b = models.TextField(blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["run", "variant", "order"], condition=Q(status="accepted"), name="one_accepted_control_judgment"
            ),
            models.CheckConstraint(
                condition=Q(status="invalid") | Q(winner__in=["clean", "variant", "tie"]), name="accepted_control_has_winner"
            ),
        ]
        indexes = [models.Index(fields=["run", "status"])]
        ordering = ["variant_id", "order"]

    def __str__(self) -> str:
        return f"control {self.variant_id}/{self.order}: {self.winner or self.status}"
