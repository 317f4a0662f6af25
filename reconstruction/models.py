"""The Reconstruction data model (PROTOCOL.md §3; issue 13).

A Reconstruction benchmark is an :class:`arena.models.Benchmark` with ``protocol = "reconstruction"``. Each **seed
paper** has a date T0 and a title and abstract that are held out (only a match judge reads them). Its
**references** are shown to proposers under anonymous ids (``R<n>``, drawn at random per seed) as title + abstract
only; the original id stays researcher-side. The leakage audit (``reconstruction.leakage``) decides which
references are eligible and what of their text is shown; a **bibliography freeze** stores that shown text and its
hash, and every prompt is built from it. **Hypotheses** are a proposer's five per seed (slots 1–5); **match labels**
are a judge's Match / No-match on one hypothesis, recused (no label) when the judge is of the proposer's family.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext

from arena.models import Benchmark, JudgeRun, JudgmentRecord, Participant
from jobs.models import ClaimableTask, EngineRun

PROTOCOL = "reconstruction"  # Benchmark.protocol of a Reconstruction benchmark
MATCH_KIND = "reconstruction_match"  # the judging task kind of match-judge runs
SWISS_KIND = "reconstruction_swiss"  # the judging task kind of Swiss round runs

SLOTS = (1, 2, 3, 4, 5)

# Lengths of the text columns an import writes (read from the columns by ``reconstruction.import_lines``, as every
# importer does; the database does not enforce a TextField's max_length). Generous for real data: paper titles run to
# a few hundred characters, abstracts to a few thousand, and a proposer is asked for a title of at most 500 characters
# and a summary of at most 5,000 (``reconstruction.runs``); a line beyond these is a mistake, not a paper.
TITLE_CHARS = 1_000
ABSTRACT_CHARS = 100_000
NOTE_CHARS = 50_000  # a hypothesis's summary, an invalid hypothesis's reason, a judge's reason


class SeedPaper(models.Model):
    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="reconstruction_seeds")
    external_id = models.CharField(max_length=300, help_text="The seed_id of the files; unique within the benchmark.")
    domain = models.CharField(max_length=100)
    title = models.TextField(max_length=TITLE_CHARS, help_text="Held out: only match judges read it.")
    abstract = models.TextField(max_length=ABSTRACT_CHARS, help_text="Held out: only match judges read it.")
    t0 = models.DateField(help_text="Publication date: only references published strictly before it are eligible.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["benchmark", "external_id"], name="reconstruction_seed_id_unique")]
        ordering = ["benchmark_id", "domain", "external_id"]

    def __str__(self) -> str:
        return self.external_id


class Reference(models.Model):
    """One reference of a seed. ``title``/``abstract`` are as imported; ``shown_title``/``shown_abstract`` are what the
    audit lets a proposer see (identifying metadata scrubbed). ``original_id`` never leaves the researcher side."""

    class Precision(models.TextChoices):
        DAY = "day", "day"
        MONTH = "month", "month"
        YEAR = "year", "year"

    seed = models.ForeignKey(SeedPaper, on_delete=models.CASCADE, related_name="references")
    anon_id = models.CharField(max_length=12, help_text="R<n>, drawn at random per seed; what proposers cite.")
    original_id = models.CharField(
        max_length=300, help_text="The ref_id of the files (a DOI, an OpenAlex id ...): researcher-side only."
    )
    title = models.TextField(max_length=TITLE_CHARS)
    abstract = models.TextField(max_length=ABSTRACT_CHARS, blank=True)
    published = models.DateField(null=True, blank=True)
    published_precision = models.CharField(max_length=5, choices=Precision.choices, default=Precision.DAY)
    eligible = models.BooleanField(default=False)
    exclusion_reason = models.TextField(blank=True)
    shown_title = models.TextField(blank=True)
    shown_abstract = models.TextField(blank=True)
    flags = models.JSONField(default=list, blank=True, help_text="kinds of identifying metadata scrubbed from the shown text")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["seed", "anon_id"], name="reconstruction_reference_anon_unique"),
            models.UniqueConstraint(fields=["seed", "original_id"], name="reconstruction_reference_id_unique"),
            models.CheckConstraint(
                condition=Q(eligible=False) | Q(exclusion_reason=""), name="reconstruction_eligible_has_no_reason"
            ),
        ]
        ordering = ["seed_id", "id"]

    def __str__(self) -> str:
        return f"{self.seed}/{self.anon_id}"

    @property
    def number(self) -> int:
        return int(self.anon_id[1:])


class BibliographyFreeze(models.Model):
    """The frozen shown text of a seed's bibliography: what every prompt is built from. ``audit`` holds the audit's
    results at freezing (counts, exclusions and flags by anonymous id, thresholds)."""

    seed = models.OneToOneField(SeedPaper, on_delete=models.CASCADE, related_name="freeze")
    shown_text = models.TextField()
    content_hash = models.CharField(max_length=64, help_text="SHA-256 of shown_text")
    frozen_at = models.DateTimeField(auto_now_add=True)
    audit = models.JSONField(default=dict)

    def __str__(self) -> str:
        return f"bibliography of {self.seed} ({self.content_hash[:12]})"


class Hypothesis(models.Model):
    """One of a proposer's five hypotheses for a seed. ``cited`` holds anonymous reference ids of the frozen
    bibliography. ``family`` is the proposer's model family, for the judges' recusal."""

    seed = models.ForeignKey(SeedPaper, on_delete=models.CASCADE, related_name="hypotheses")
    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="reconstruction_hypotheses")
    family = models.CharField(max_length=100)
    slot = models.PositiveSmallIntegerField()
    title = models.TextField(max_length=TITLE_CHARS, blank=True)
    summary = models.TextField(max_length=NOTE_CHARS, blank=True)
    cited = models.JSONField(default=list, blank=True)
    valid = models.BooleanField(default=True)
    invalid_reason = models.TextField(max_length=NOTE_CHARS, blank=True)
    origin = models.ForeignKey(
        "self",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="selections",
        help_text="a selection pipeline's champion: the proposer's hypothesis it was selected from (its family is the origin's)",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["seed", "participant", "slot"], name="reconstruction_hypothesis_slot_unique"),
            models.CheckConstraint(condition=Q(slot__gte=1, slot__lte=5), name="reconstruction_hypothesis_slot_range"),
        ]
        ordering = ["seed_id", "participant__name", "slot"]
        verbose_name_plural = "hypotheses"

    def __str__(self) -> str:
        # A run page's label of what a judge labelled: in the page's language (English in commands and logs).
        return gettext("%(participant)s on %(seed)s, slot %(slot)s") % {
            "participant": self.participant,
            "seed": self.seed,
            "slot": self.slot,
        }


class MatchLabel(models.Model):
    """A judge's verdict on one hypothesis against the held-out seed. ``run`` is the engine run that produced it;
    an imported label has none and names its ``source`` (the run label of the file). A recused judgment (the judge
    is of the proposer's family) has no label: it is missing, not No-match."""

    class Label(models.TextChoices):
        MATCH = "match", "Match"
        NO_MATCH = "no_match", "No-match"

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, null=True, blank=True, related_name="reconstruction_labels")
    source = models.CharField(max_length=200, help_text="the run label (imported labels) or the run's label")
    hypothesis = models.ForeignKey(Hypothesis, on_delete=models.CASCADE, related_name="labels")
    judge = models.CharField(max_length=200)
    judge_family = models.CharField(max_length=100)
    label = models.CharField(max_length=10, choices=Label.choices, null=True, blank=True)
    reason = models.TextField(max_length=NOTE_CHARS, blank=True)
    recused = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["hypothesis", "judge", "source"], name="reconstruction_one_label_per_judge_source"),
            models.CheckConstraint(
                condition=Q(recused=True, label__isnull=True) | Q(recused=False, label__in=["match", "no_match"]),
                name="reconstruction_label_iff_not_recused",
            ),
        ]
        ordering = ["hypothesis_id", "judge", "source"]

    def __str__(self) -> str:
        return f"{self.judge} on {self.hypothesis}: {'recused' if self.recused else self.label}"


class TournamentRecord(models.Model):
    """A line of tournament.jsonl, stored as given (the Swiss selection's matches; parsed by later work)."""

    seed = models.ForeignKey(SeedPaper, on_delete=models.CASCADE, related_name="tournament_records")
    line = models.PositiveIntegerField(help_text="its line in the imported file, for the order of the export")
    record = models.JSONField()

    class Meta:
        ordering = ["seed_id", "line", "id"]


# --------------------------------------------------------------------------- runs (issue 13)


class ProposerRun(EngineRun):
    """Asks proposers for five hypotheses per seed from its frozen bibliography (``reconstruction.runs``), on the shared
    engine's elicitation driver (run kind ``reconstruction_proposer``). Fields as ``hypoarena.GenerationRun``."""

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="reconstruction_proposer_runs")
    prompt_version = models.CharField(max_length=50)

    class Meta(EngineRun.Meta):
        pass

    def __str__(self) -> str:
        return f"Reconstruction proposer run {self.pk} on {self.benchmark}"


class ProposerTask(ClaimableTask):
    """One proposer's five hypotheses for one seed. ``attempts`` keeps every raw answer with its schema problems."""

    run = models.ForeignKey(ProposerRun, on_delete=models.CASCADE, related_name="tasks")
    seed = models.ForeignKey(SeedPaper, on_delete=models.CASCADE, related_name="+")
    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="+")
    attempts = models.JSONField(default=list, blank=True)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "seed", "participant"], name="reconstruction_proposer_task_unique")]
        indexes = [models.Index(fields=["run", "status"])]


class MatchJudgeTask(ClaimableTask):
    """A match judge's task: one hypothesis against its held-out seed (``order`` is always ``single``)."""

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="reconstruction_match_tasks")
    hypothesis = models.ForeignKey(Hypothesis, on_delete=models.CASCADE, related_name="+")
    order = models.CharField(max_length=10, default="single")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "hypothesis", "order"], name="reconstruction_match_task_unique")]
        indexes = [models.Index(fields=["run", "status"])]


class MatchJudgment(JudgmentRecord):
    """A match judge's answer as given (invalid ones too); an accepted one's label is also a :class:`MatchLabel` with
    the run's label as its source, stored in the same transaction."""

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="reconstruction_match_judgments")
    hypothesis = models.ForeignKey(Hypothesis, on_delete=models.CASCADE, related_name="judgments")
    label = models.CharField(max_length=10, choices=MatchLabel.Label.choices, null=True, blank=True)
    reason = models.TextField(blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["run", "hypothesis", "order"],
                condition=Q(status="accepted"),
                name="reconstruction_one_accepted_match_judgment",
            ),
        ]
        ordering = ["hypothesis_id", "id"]


class SwissSelection(models.Model):
    """The multi-agent pipeline of PROTOCOL.md §3: per seed and slot, a Swiss tournament among the proposers'
    hypotheses, judged in both orders by judges that proposed neither candidate; the five slot champions become the
    hypotheses of ``participant`` (the selection system), to be match-judged like any proposer's five.

    A tournament is a sequence of small runs: each round of every tournament of the selection is one judge run per
    judge (``JudgeRun.subjects = reconstruction_swiss``); when a round's runs have all completed, the next round is
    paired from the results and launched (``reconstruction.swiss.selection_advance``, idempotent)."""

    class Status(models.TextChoices):
        RUNNING = "running", "running"
        WAITING = "waiting", "waiting for a failed round run to be resumed"
        COMPLETED = "completed", "completed"

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="swiss_selections")
    participant = models.OneToOneField(Participant, on_delete=models.PROTECT, related_name="swiss_selection")
    proposers = models.JSONField(help_text="participant names whose hypotheses compete")
    judges = models.JSONField(help_text='[{"model", "family"}]: every round is judged by each of them where not recused')
    seed = models.PositiveIntegerField(default=0, help_text="seeds the pairing lot and the tie-break lot")
    parameters = models.JSONField(default=dict, blank=True, help_text="endpoint settings of the round runs (no secrets)")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.RUNNING)
    round = models.PositiveSmallIntegerField(default=0, help_text="the round being judged (0: not started)")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"Swiss selection {self.participant.name} on {self.benchmark}"


class SwissTournament(models.Model):
    """One seed's one slot: its candidates (hypothesis ids), and when done its standings and champion."""

    selection = models.ForeignKey(SwissSelection, on_delete=models.CASCADE, related_name="tournaments")
    seed_paper = models.ForeignKey(SeedPaper, on_delete=models.CASCADE, related_name="+")
    slot = models.PositiveSmallIntegerField()
    candidates = models.JSONField(help_text="hypothesis ids")
    rounds = models.PositiveSmallIntegerField(help_text="max(1, n - 1)")
    standings = models.JSONField(default=list, blank=True)
    tie_break = models.JSONField(default=dict, blank=True)
    champion = models.ForeignKey(Hypothesis, on_delete=models.PROTECT, null=True, blank=True, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["selection", "seed_paper", "slot"], name="reconstruction_swiss_tournament_unique")
        ]
        ordering = ["seed_paper_id", "slot"]


class SwissMatch(models.Model):
    """A pairing of one round (``b`` empty: ``a`` has the bye)."""

    tournament = models.ForeignKey(SwissTournament, on_delete=models.CASCADE, related_name="matches")
    round = models.PositiveSmallIntegerField()
    a = models.ForeignKey(Hypothesis, on_delete=models.PROTECT, related_name="+")
    b = models.ForeignKey(Hypothesis, on_delete=models.PROTECT, null=True, blank=True, related_name="+")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tournament", "round", "a"], name="reconstruction_swiss_match_unique")]
        ordering = ["tournament_id", "round", "id"]


class SwissJudgeTask(ClaimableTask):
    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="reconstruction_swiss_tasks")
    match = models.ForeignKey(SwissMatch, on_delete=models.CASCADE, related_name="+")
    order = models.CharField(max_length=10)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "match", "order"], name="reconstruction_swiss_task_unique")]
        indexes = [models.Index(fields=["run", "status"])]


class SwissVote(JudgmentRecord):
    """One judge's answer on one match in one order: ``verdict`` as given (A, B or TIE about what it saw) and
    ``winner`` in the match's terms (a, b or tie). A vote is worth 1 (a tie ½ to each); points = votes / 2."""

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="reconstruction_swiss_votes")
    match = models.ForeignKey(SwissMatch, on_delete=models.CASCADE, related_name="votes")
    judge = models.CharField(max_length=200)
    verdict = models.CharField(max_length=5, null=True, blank=True)
    winner = models.CharField(max_length=4, blank=True)
    reason = models.TextField(blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["run", "match", "order"], condition=Q(status="accepted"), name="reconstruction_one_accepted_swiss_vote"
            ),
        ]
        ordering = ["match_id", "judge", "order"]
