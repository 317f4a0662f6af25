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

from arena.models import Benchmark, JudgeRun, Participant

SLOTS = (1, 2, 3, 4, 5)


class SeedPaper(models.Model):
    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="reconstruction_seeds")
    external_id = models.CharField(max_length=300, help_text="The seed_id of the files; unique within the benchmark.")
    domain = models.CharField(max_length=100)
    title = models.TextField(help_text="Held out: only match judges read it.")
    abstract = models.TextField(help_text="Held out: only match judges read it.")
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
    original_id = models.CharField(max_length=300, help_text="The ref_id of the files (a DOI, an OpenAlex id ...): researcher-side only.")
    title = models.TextField()
    abstract = models.TextField(blank=True)
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
            models.CheckConstraint(condition=Q(eligible=False) | Q(exclusion_reason=""), name="reconstruction_eligible_has_no_reason"),
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
    title = models.TextField(blank=True)
    summary = models.TextField(blank=True)
    cited = models.JSONField(default=list, blank=True)
    valid = models.BooleanField(default=True)
    invalid_reason = models.TextField(blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["seed", "participant", "slot"], name="reconstruction_hypothesis_slot_unique"),
            models.CheckConstraint(condition=Q(slot__gte=1, slot__lte=5), name="reconstruction_hypothesis_slot_range"),
        ]
        ordering = ["seed_id", "participant__name", "slot"]
        verbose_name_plural = "hypotheses"

    def __str__(self) -> str:
        return f"{self.participant} on {self.seed}, slot {self.slot}"


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
    reason = models.TextField(blank=True)
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
