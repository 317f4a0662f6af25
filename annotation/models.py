"""Blind human calibration studies.

Identity rules (blindness is a security property):
- an annotator reaches an item only through ``Assignment.token``, random per (annotator, item); it is
  never a pair's ``public_id`` (shared across annotators) nor anything derived from the pair;
- which proposal is shown as "A" is ``Assignment.a_is_first``, drawn per annotator, independent of the
  pair's judge orientation and of the other annotators;
- ``Item`` rows (generation order, pair, control flag) stay on the researcher side.

"first"/"second" below are the item's canonical sides: for a real item, the pair's ``participant_a`` and
``participant_b``; for a hidden control, the real proposal and the naive one.
"""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from arena.models import Benchmark, CanonicalPair, Context, JudgeRun, Proposal


def new_assignment_token() -> str:
    # Random, never derived from the item or the pair: annotators cannot compare notes by id,
    # and an id cannot be recomputed from model names.
    return secrets.token_urlsafe(12)


# The default flag threshold for implausibly fast answers (seconds from Start to Submit), used where a study sets
# no minimum of its own (Study.min_answer_seconds = 0): every answer's time is stored (Label.elapsed_seconds).
FAST_ANSWER_SECONDS = 30


class Study(models.Model):
    class Round(models.TextChoices):
        PRACTICE = "practice", _("practice")
        FORMAL = "formal", _("formal")

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="studies")
    name = models.CharField(max_length=200)
    round = models.CharField(max_length=10, choices=Round.choices, default=Round.FORMAL)
    judge_run = models.ForeignKey(
        JudgeRun,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        help_text="The run whose folded cases stratified the sample and are compared with the humans.",
    )
    cap_minutes = models.PositiveSmallIntegerField(default=10)
    min_answer_seconds = models.PositiveIntegerField(
        default=0,
        help_text="An answer submitted sooner after Start asks the annotator to confirm it and is flagged; 0 = no minimum.",
    )
    annotators_per_item = models.PositiveSmallIntegerField(default=3)
    n_contexts = models.PositiveSmallIntegerField()
    n_naive_controls = models.PositiveSmallIntegerField(default=2)
    seed = models.BigIntegerField()
    annotators = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="annotation_studies")
    stratification = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    # The study form's key, drawn when the form is shown: posted twice (at once, or from a stale page) it makes one
    # study, not two sets of assignments for the same annotators. Empty for studies made by a command.
    launch_key = models.CharField(max_length=64, blank=True, default="")

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "studies"
        constraints = [
            models.UniqueConstraint(fields=["launch_key"], condition=~models.Q(launch_key=""), name="study_launch_key_unique")
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def cap(self) -> timedelta:
        return timedelta(minutes=self.cap_minutes)

    @property
    def fast_answer_seconds(self) -> int:
        """Below this many seconds after Start an answer is flagged on the study page: the study's minimum if it
        sets one, otherwise FAST_ANSWER_SECONDS (nobody reads four papers and two proposals that quickly)."""
        return self.min_answer_seconds or FAST_ANSWER_SECONDS

    @property
    def is_practice(self) -> bool:
        return self.round == self.Round.PRACTICE


class NaiveProposal(models.Model):
    """A proposal written by :mod:`arena.naive` for a context. Never a participant: it must not reach a leaderboard."""

    context = models.ForeignKey(Context, on_delete=models.CASCADE, related_name="naive_proposals")
    generator_version = models.CharField(max_length=100)
    content = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["context", "generator_version"], name="naive_context_version_unique")]

    def __str__(self) -> str:
        return f"naive {self.generator_version} on {self.context}"


class Item(models.Model):
    """One comparison of a study: a real pair, or a hidden control (real proposal vs naive proposal)."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="items")
    position = models.PositiveIntegerField(help_text="Generation order; never shown to annotators.")
    context = models.ForeignKey(Context, on_delete=models.CASCADE, related_name="+")
    pair = models.ForeignKey(CanonicalPair, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    first_proposal = models.ForeignKey(Proposal, on_delete=models.CASCADE, related_name="+")
    second_proposal = models.ForeignKey(Proposal, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    naive = models.ForeignKey(NaiveProposal, on_delete=models.PROTECT, null=True, blank=True, related_name="+")
    is_control = models.BooleanField(default=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["study", "position"], name="item_position_unique"),
            models.CheckConstraint(
                condition=(Q(is_control=True, naive__isnull=False, second_proposal__isnull=True, pair__isnull=True))
                | Q(is_control=False, naive__isnull=True, second_proposal__isnull=False, pair__isnull=False),
                name="item_real_or_control",
            ),
        ]
        ordering = ["study_id", "position"]

    def __str__(self) -> str:
        return f"study {self.study_id} item {self.position}"

    def first_content(self) -> dict:
        """What the annotator sees of the first proposal: aliases redacted (arena/blindness.py)."""
        from arena.blindness import proposal_blind_content

        return proposal_blind_content(self.first_proposal)

    def second_content(self, *, benchmark_id: int | None = None) -> dict:
        """The naive control's text (written from the context's words) or the real proposal, redacted: the control
        with the benchmark's aliases of now, as the real proposals beside it (a context citing a model would show the
        name in the control alone and give it away: review)."""
        from arena.aliases import redact_content
        from arena.blindness import benchmark_matcher, proposal_blind_content

        if not self.is_control:
            return proposal_blind_content(self.second_proposal)
        if benchmark_id is None:  # the screen passes its study's (no query)
            benchmark_id = Study.objects.filter(pk=self.study_id).values_list("benchmark_id", flat=True).get()
        return redact_content(self.naive.content, benchmark_matcher(benchmark_id=benchmark_id)).content


class Assignment(models.Model):
    """One item as one annotator sees it: its own token, position and A/B sides, draft and timer."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="assignments")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="annotation_assignments")
    token = models.CharField(max_length=32, unique=True, default=new_assignment_token, editable=False)
    position = models.PositiveIntegerField(help_text="1-based place in this annotator's own random order.")
    a_is_first = models.BooleanField(help_text="The item's first side is shown as A to this annotator.")
    opened_at = models.DateTimeField(null=True, blank=True, help_text="Server time of the first opening; starts the cap.")
    draft = models.JSONField(default=dict, blank=True)
    draft_saved_at = models.DateTimeField(null=True, blank=True)
    # Which page wrote the stored draft (a random id each item page carries, ``draft_page``): a page whose save got
    # through but whose answer was lost is not stale against its own save (annotation.services._write_draft).
    draft_page = models.CharField(max_length=64, blank=True, default="")
    # A skip is not an answer: no Label is written, so every figure reads the item as missing for this annotator.
    # It is kept after a later answer (the researcher sees that the item was skipped first, and why).
    skipped_at = models.DateTimeField(null=True, blank=True, help_text="Server time the annotator skipped the item.")
    skip_reason = models.CharField(max_length=500, blank=True, default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["item", "annotator"], name="assignment_item_annotator_unique"),
            models.UniqueConstraint(fields=["study", "annotator", "position"], name="assignment_position_unique"),
        ]
        ordering = ["study_id", "annotator_id", "position"]

    def __str__(self) -> str:
        return f"{self.annotator} #{self.position} of study {self.study_id}"

    def deadline(self) -> datetime | None:
        return None if self.opened_at is None else self.opened_at + self.study.cap


class Label(models.Model):
    """An accepted submission. Sides are stored as shown (A/B) and as canonical (first/second)."""

    class Side(models.TextChoices):
        FIRST = "first", "first"
        SECOND = "second", "second"

    assignment = models.OneToOneField(Assignment, on_delete=models.CASCADE, related_name="label")
    screening = models.CharField(max_length=20)
    choice = models.CharField(max_length=10, help_text="A, B, TIE or INVALID, as the annotator saw the sides.")
    winner_side = models.CharField(
        max_length=10, choices=Side.choices, blank=True, help_text="Canonical side chosen; blank for TIE/INVALID."
    )
    reason = models.CharField(max_length=40, blank=True)
    confidence = models.CharField(max_length=10)
    rationale = models.TextField()
    scores_a = models.JSONField()
    scores_b = models.JSONField()
    scores_first = models.JSONField()
    scores_second = models.JSONField()
    over_time = models.BooleanField(default=False, help_text="Arrived after the cap: kept, excluded from statistics by default.")
    elapsed_seconds = models.FloatField()
    submitted_at = models.DateTimeField()

    class Meta:
        ordering = ["submitted_at", "id"]
        indexes = [models.Index(fields=["over_time"])]

    def __str__(self) -> str:
        return f"label of {self.assignment}"


FLAG_COMMENT_MAX = 1000


class Flag(models.Model):
    """An annotator's report of a problem with an item ("the proposal text is cut off"), with a required comment.

    A flag is a note to the researcher, not an answer: the annotator answers the item as well (or skips it), and the
    figures never read flags. One comment is stored once per item and annotator (``comment_digest``): a form sent
    twice, or again from a stale page, adds no second copy.
    """

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="flags")
    comment = models.TextField()
    comment_digest = models.CharField(max_length=64, help_text="SHA-256 of the comment: the same comment is stored once.")
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [models.UniqueConstraint(fields=["assignment", "comment_digest"], name="flag_assignment_comment_unique")]

    def __str__(self) -> str:
        return f"flag on {self.assignment}"
