"""The HypoArena data model (PROTOCOL.md §2; issue 12).

A HypoArena benchmark is an :class:`arena.models.Benchmark` with ``protocol = "hypoarena"``. Its **domains** are
multi-pair or singleton; each **case** of a domain has a conclusion-free ``context`` (what the models and the judge
see) and optionally a held-out ``reference_conclusion`` (never shown to either). Each participant submits, per
case, K ≥ 1 hypothesis–evidence pairs (K = 1 in a singleton domain). Two submissions of one case form a **match**,
with a seeded orientation: in the ``original`` order ``first`` is shown as A, in the ``reverse`` order ``second``
is. A judge run gives a 5-level **verdict** per (match, order), always read from the A/B labels of that order;
a rubric run gives each submission its 1–5 **rubric scores**.

The source-derived Reference is a participant like any other (to the judge and to the statistics); only
``Submission.is_reference`` marks it, for researcher pages.
"""

from __future__ import annotations

import secrets
from typing import Any

from django.db import models
from django.db.models import Q
from django.db.models.functions import Greatest, Least
from django.utils.translation import gettext

from arena.models import Benchmark, JudgeRun, JudgmentRecord, Participant
from jobs.models import ClaimableTask, EngineRun

PROTOCOL = "hypoarena"  # Benchmark.protocol of a HypoArena benchmark
ARENA_KIND = "hypoarena"  # the judging task kind of arena runs
RUBRIC_KIND = "hypoarena_rubric"  # the judging task kind of rubric runs

#: The 5-level verdict, from the A/B labels of the order it was given in, and the win share it gives A
#: (the statistics' ``FIVE_LEVEL_SHARES`` says the same; kept here so the data model needs no statistics import).
VERDICTS: tuple[str, ...] = ("A>>B", "A>B", "A=B", "B>A", "B>>A")
ORDERS: tuple[str, ...] = ("original", "reverse")
#: Rubric scores are whole numbers on this scale.
RUBRIC_MIN, RUBRIC_MAX = 1, 5
# Lengths of the text columns an import writes (read from the columns by ``hypoarena.import_lines``, as every importer
# does; the database does not enforce a TextField's max_length). Generous for real data: the paper's contexts are a
# few thousand characters, and a judge's reasons a few sentences; a line beyond these is a mistake, not a case.
CONTEXT_CHARS = 100_000
REASONS_CHARS = 50_000


def new_public_id() -> str:
    # Random, as arena.models.new_public_id: a match is named outside the researcher side by this alone.
    return secrets.token_hex(8)


class Domain(models.Model):
    """A domain of cases (biomedicine, IT operations, ...). A singleton domain admits one pair per submission."""

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="hypoarena_domains")
    name = models.CharField(max_length=100)
    singleton = models.BooleanField(default=False, help_text="Submissions hold exactly one hypothesis–evidence pair.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["benchmark", "name"], name="hypoarena_domain_name_unique")]
        ordering = ["benchmark_id", "name"]

    def __str__(self) -> str:
        return self.name


class Case(models.Model):
    """One case: the context every model and the judge read. ``reference_conclusion`` is held out: it never goes
    into a prompt (it is what the hypotheses are about, and knowing it would make the task retrospective)."""

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="hypoarena_cases")
    domain = models.ForeignKey(Domain, on_delete=models.CASCADE, related_name="cases")
    external_id = models.CharField(max_length=300, help_text="The case_id of the files; unique within the benchmark.")
    context = models.TextField(max_length=CONTEXT_CHARS)
    reference_conclusion = models.TextField(max_length=CONTEXT_CHARS, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["benchmark", "external_id"], name="hypoarena_case_id_unique")]
        ordering = ["domain_id", "external_id"]

    def __str__(self) -> str:
        return self.external_id


class Submission(models.Model):
    """A participant's K hypothesis–evidence pairs for a case: ``pairs`` is ``[{"hypothesis", "evidence"}, ...]``."""

    case = models.ForeignKey(Case, on_delete=models.CASCADE, related_name="submissions")
    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="hypoarena_submissions")
    is_reference = models.BooleanField(
        default=False, help_text="The source-derived Reference: judged and rated like any other, marked on researcher pages only."
    )
    pairs = models.JSONField(help_text='[{"hypothesis": ..., "evidence": ...}, ...]; K = len(pairs) ≥ 1.')
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["case", "participant"], name="hypoarena_submission_unique")]
        ordering = ["case_id", "participant__name"]

    def __str__(self) -> str:
        # A run page's label of what a rubric answer scored: in the page's language (English in commands and logs).
        return gettext("%(participant)s on %(case)s") % {"participant": self.participant, "case": self.case}

    @property
    def k(self) -> int:
        return len(self.pairs)


class Match(models.Model):
    """Two submissions of one case. ``first`` is shown as A in the original order, ``second`` in the reverse order;
    the orientation is seeded (``arena.orientation.orientation_flipped``) unless an imported verdict fixed it."""

    case = models.ForeignKey(Case, on_delete=models.CASCADE, related_name="matches")
    first = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="+")
    second = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="+")
    public_id = models.CharField(max_length=32, unique=True, default=new_public_id, editable=False)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=~Q(first=models.F("second")), name="hypoarena_match_distinct"),
            # One match per unordered pair of submissions, whichever is first.
            models.UniqueConstraint(Least("first", "second"), Greatest("first", "second"), name="hypoarena_match_unique"),
        ]
        ordering = ["case_id", "id"]

    def __str__(self) -> str:
        return self.public_id


class ArenaVerdict(JudgmentRecord):
    """One judge verdict on one presentation order of a match, in that order's labels (A is ``match.first`` in the
    original order, ``match.second`` in the reverse). At most one accepted verdict per (run, match, order), enforced
    by the database, as for ``arena.OrderedJudgment`` and ``controls.ControlJudgment``; invalid answers are kept."""

    class Order(models.TextChoices):
        ORIGINAL = "original", "original"
        REVERSE = "reverse", "reverse"

    class Verdict(models.TextChoices):
        A_MUCH = "A>>B", "A ≫ B"
        A = "A>B", "A > B"
        TIE = "A=B", "A ≈ B"
        B = "B>A", "B > A"
        B_MUCH = "B>>A", "B ≫ A"

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="arena_verdicts")
    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="verdicts")
    order = models.CharField(max_length=10, choices=Order.choices)
    verdict = models.CharField(max_length=4, choices=Verdict.choices, null=True, blank=True)
    reasons = models.TextField(max_length=REASONS_CHARS, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["run", "match", "order"], condition=Q(status="accepted"), name="one_accepted_arena_verdict"
            ),
            models.CheckConstraint(condition=Q(order__in=list(ORDERS)), name="arena_verdict_order_known"),
            models.CheckConstraint(
                condition=Q(status="accepted", verdict__in=list(VERDICTS)) | Q(status="invalid", verdict__isnull=True),
                name="arena_verdict_level_iff_accepted",
            ),
        ]
        indexes = [models.Index(fields=["run", "status"])]
        ordering = ["match_id", "order", "id"]

    def __str__(self) -> str:
        return f"{self.match.public_id}/{self.order}: {self.verdict or self.status}"


class RubricScore(models.Model):
    """A rubric run's 1–5 scores of one submission: per pair contextual grounding g, inferential insight ℓ and
    evidential justification j (lists of K), per set hypothesis-space breadth b, directional distinctness d (null
    when K = 1: not applicable) and analytical utility u."""

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="rubric_scores")
    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="rubric_scores")
    grounding = models.JSONField(help_text="g of each pair, 1–5")
    insight = models.JSONField(help_text="ℓ of each pair, 1–5")
    justification = models.JSONField(help_text="j of each pair, 1–5")
    breadth = models.PositiveSmallIntegerField()
    distinctness = models.PositiveSmallIntegerField(null=True, blank=True)
    utility = models.PositiveSmallIntegerField()
    raw_response = models.TextField(blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "submission"], name="one_rubric_score_per_submission"),
            models.CheckConstraint(
                condition=Q(breadth__gte=RUBRIC_MIN, breadth__lte=RUBRIC_MAX, utility__gte=RUBRIC_MIN, utility__lte=RUBRIC_MAX)
                & (Q(distinctness__isnull=True) | Q(distinctness__gte=RUBRIC_MIN, distinctness__lte=RUBRIC_MAX)),
                name="rubric_set_scores_in_range",
            ),
        ]
        ordering = ["submission_id", "run_id"]

    def __str__(self) -> str:
        return f"rubric of {self.submission_id} in run {self.run_id}"


# --------------------------------------------------------------------------- runs on the shared engine (hypoarena.judging)


class ArenaJudgeTask(ClaimableTask):
    """One ordered comparison of an arena judge run (``JudgeRun.subjects == "hypoarena"``): a match in one presentation
    order. The run engine (``jobs``) claims, leases and retries these as it does Lit2Test's pair tasks; what is asked
    and where the verdict goes is ``hypoarena.judging``'s (an :class:`ArenaVerdict`)."""

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="arena_tasks")
    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="+")
    order = models.CharField(max_length=10)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "match", "order"], name="arena_task_unique")]
        indexes = [models.Index(fields=["run", "status"])]


#: The ``order`` of rubric tasks and answers: a submission is scored alone, so there is no presentation order. The
#: engine keys a task's answer by (subject, order); this constant fills the slot.
RUBRIC_ORDER = ""


def rubric_answer(g: list[int], ell: list[int], j: list[int], b: int, d: int | None, u: int) -> dict[str, Any]:
    """A rubric score's values in the shape of a parsed answer (:attr:`RubricJudgment.scores`)."""
    return {"pairs": [{"g": x, "l": y, "j": z} for x, y, z in zip(g, ell, j, strict=True)], "b": b, "d": d, "u": u}


class RubricJudgeTask(ClaimableTask):
    """One submission to score in a rubric run (``JudgeRun.subjects == "hypoarena_rubric"``)."""

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="rubric_tasks")
    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="+")
    order = models.CharField(max_length=10, blank=True, default=RUBRIC_ORDER)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "submission"], name="rubric_task_unique")]
        indexes = [models.Index(fields=["run", "status"])]


class RubricJudgment(JudgmentRecord):
    """Every answer a rubric run's judge gave, accepted or not (the run's record, as :class:`ArenaVerdict` is for an
    arena run). An accepted answer's scores are also a :class:`RubricScore` row, written in the same transaction:
    that table is what the statistics, the export and the pages read, so it holds accepted scores only."""

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="rubric_judgments")
    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="rubric_judgments")
    order = models.CharField(max_length=10, blank=True, default=RUBRIC_ORDER)
    scores = models.JSONField(
        null=True, blank=True, help_text='the parsed answer: {"pairs": [{"g", "l", "j"}, ...], "b", "d", "u"}'
    )
    reasons = models.TextField(blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["run", "submission"], condition=Q(status="accepted"), name="one_accepted_rubric_judgment"
            ),
            models.CheckConstraint(
                condition=Q(status="accepted", scores__isnull=False) | Q(status="invalid", scores__isnull=True),
                name="rubric_judgment_scores_iff_accepted",
            ),
        ]
        indexes = [models.Index(fields=["run", "status"])]
        ordering = ["submission_id", "id"]

    def __str__(self) -> str:
        return f"rubric answer on {self.submission_id} in run {self.run_id}: {self.status}"


class GenerationRun(EngineRun):
    """Elicits K-pair submissions from participants under one common prompt (``hypoarena.generation``), on the shared
    engine as run kind ``hypoarena_generation``. Its fields are those of ``jobs.GenerationRun`` (the engine's provider,
    limiter and lease helpers read them); its tasks are per (case, participant), not per Lit2Test context."""

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="hypoarena_generation_runs")
    prompt_version = models.CharField(max_length=50)

    class Meta(EngineRun.Meta):
        pass

    def __str__(self) -> str:
        return f"HypoArena generation run {self.pk} ({self.prompt_version})"


class GenerationTask(ClaimableTask):
    """One participant's submission for one case. ``attempts`` keeps every raw answer with its schema problems."""

    run = models.ForeignKey(GenerationRun, on_delete=models.CASCADE, related_name="tasks")
    case = models.ForeignKey(Case, on_delete=models.CASCADE, related_name="+")
    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="+")
    attempts = models.JSONField(default=list, blank=True, help_text="raw answers and schema problems of each attempt")
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "case", "participant"], name="hypoarena_generation_task_unique")]
        indexes = [models.Index(fields=["run", "status"])]
