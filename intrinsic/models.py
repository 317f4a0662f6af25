"""The Intrinsic-scoring data model (PROTOCOL.md §4; issue 14).

An Intrinsic benchmark is an :class:`arena.models.Benchmark` with ``protocol = "intrinsic"``. Each **paper** has a
discipline, a background and a research question; its **candidates** are hypotheses, exactly one of them the paper's
own (the *gold*), the others distractors, kept in the order of the file (``position``). A **scorer** is one way of
ranking the candidates: a model read by a criterion — ``nll`` (mean/sum of −log softmax at each target token of the
hypothesis span), ``energy`` (mean/sum of the negated raw target logit) or ``listwise`` (a chat judge's ordered top
5). Lower scores are better. A nll/energy scorer stores one **candidate score** per candidate (mean over the span,
the primary aggregate; the sum, a length check; the span's token count); a listwise scorer stores one **listwise
ranking** per paper (its top candidates in order, or invalid with the reason).

The statistics (gold rank under the pessimistic tie rule, Hit@k, MRR, bootstraps) are computed from these rows by
``arena/stats``; nothing here ranks.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from arena.models import Benchmark, JudgeRun, JudgmentRecord
from jobs.models import ClaimableTask, EngineRun

PROTOCOL = "intrinsic"  # Benchmark.protocol of an Intrinsic-scoring benchmark
LISTWISE_KIND = "intrinsic_listwise"  # the judging task kind of listwise runs

#: How many candidates a listwise judge returns, in order; the others share the terminal rank.
LISTWISE_TOP = 5
# Lengths of the text columns an import writes (read from the columns by ``intrinsic.import_lines``, as every importer
# does; the database does not enforce a TextField's max_length). Generous for real data: a background runs to a few
# thousand characters and a candidate hypothesis to a paragraph; a line beyond these is a mistake, not a paper.
TEXT_CHARS = 100_000
REASON_CHARS = 50_000


class Paper(models.Model):
    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="intrinsic_papers")
    external_id = models.CharField(max_length=300, help_text="The paper_id of the files; unique within the benchmark.")
    discipline = models.CharField(max_length=100)
    background = models.TextField(max_length=TEXT_CHARS)
    question = models.TextField(max_length=TEXT_CHARS, help_text="The research question the candidates answer.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["benchmark", "external_id"], name="intrinsic_paper_id_unique")]
        ordering = ["benchmark_id", "discipline", "external_id"]

    def __str__(self) -> str:
        return self.external_id


class Candidate(models.Model):
    """One candidate hypothesis of a paper. ``gold`` marks the paper's own (exactly one per paper: a partial unique
    constraint holds at most one, the import checks there is one). Researcher-side: which candidate is gold never
    reaches a scorer's prompt."""

    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="candidates")
    external_id = models.CharField(max_length=300, help_text="The candidate's id in the files; unique within the paper.")
    text = models.TextField(max_length=TEXT_CHARS)
    gold = models.BooleanField(default=False)
    position = models.PositiveSmallIntegerField(help_text="Its place in the paper's line (0 first): the export keeps the order.")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["paper", "external_id"], name="intrinsic_candidate_id_unique"),
            models.UniqueConstraint(fields=["paper", "position"], name="intrinsic_candidate_position_unique"),
            models.UniqueConstraint(fields=["paper"], condition=Q(gold=True), name="intrinsic_one_gold_per_paper"),
            models.CheckConstraint(condition=~Q(text=""), name="intrinsic_candidate_text_not_empty"),
        ]
        ordering = ["paper_id", "position"]

    def __str__(self) -> str:
        return f"{self.paper}/{self.external_id}"


class Scorer(models.Model):
    """A model read by one criterion. ``endpoint`` describes where its numbers came from (a deployment, a file, the
    demo generator): researcher-side, like ``model``. A scorer holds one result per candidate (nll, energy) or per
    paper (listwise); a rerun is a new scorer."""

    class Criterion(models.TextChoices):
        NLL = "nll", "NLL (−log softmax)"
        ENERGY = "energy", "raw-logit energy (−logit)"
        LISTWISE = "listwise", "listwise judge (top 5)"

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="intrinsic_scorers")
    name = models.CharField(max_length=200, help_text="Unique within the benchmark; names the scorer in files and reports.")
    model = models.CharField(max_length=200)
    criterion = models.CharField(max_length=10, choices=Criterion.choices)
    endpoint = models.TextField(
        max_length=TEXT_CHARS, blank=True, help_text="Where the scores came from (an endpoint, a file, a generator)."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["benchmark", "name"], name="intrinsic_scorer_name_unique"),
            models.CheckConstraint(
                condition=Q(criterion__in=["nll", "energy", "listwise"]), name="intrinsic_scorer_criterion_known"
            ),
        ]
        ordering = ["benchmark_id", "name"]

    def __str__(self) -> str:
        return self.name

    @property
    def is_listwise(self) -> bool:
        return self.criterion == self.Criterion.LISTWISE


class CandidateScore(models.Model):
    """A nll/energy scorer's numbers for one candidate: ``mean`` over the hypothesis span (the primary aggregate),
    ``total`` (the sum; a length check) and ``tokens`` (the span's length). Lower is better. ``source`` says where the
    row came from ("import" for a scores.jsonl line, "run N" for a scoring run's); ``run`` is that scoring run, and
    ``detail`` what it saw of the span (per-token values, how the span was located; empty for an import)."""

    scorer = models.ForeignKey(Scorer, on_delete=models.CASCADE, related_name="scores")
    candidate = models.ForeignKey(Candidate, on_delete=models.CASCADE, related_name="scores")
    source = models.CharField(max_length=200, default="import")
    mean = models.FloatField()
    total = models.FloatField()
    tokens = models.PositiveIntegerField()
    run = models.ForeignKey("IntrinsicScoringRun", on_delete=models.SET_NULL, null=True, blank=True, related_name="scores")
    detail = models.JSONField(
        default=dict,
        blank=True,
        help_text='{"values": [per span token], "tokens": [their text], "span_method", "boundary_merged", "skipped_chars", "logits_proved"}',
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["scorer", "candidate"], name="intrinsic_one_score_per_candidate"),
            models.CheckConstraint(condition=Q(tokens__gte=1), name="intrinsic_score_has_tokens"),
        ]
        ordering = ["scorer_id", "candidate_id"]

    def __str__(self) -> str:
        return f"{self.scorer} on {self.candidate}: {self.mean:.4f}"


class ListwiseRanking(models.Model):
    """A listwise scorer's answer for one paper: ``top`` holds candidate external ids, best first (``LISTWISE_TOP``
    of them, or all when the paper has fewer); every other candidate shares the terminal rank. An ``invalid`` answer
    (unknown labels, duplicates, a short list after the retries) keeps no top and says why. ``run`` is the judge run
    that produced it, if any; ``source`` labels it ("import" for a listwise.jsonl line)."""

    class Status(models.TextChoices):
        ACCEPTED = "accepted", "accepted"
        INVALID = "invalid", "invalid"

    scorer = models.ForeignKey(Scorer, on_delete=models.CASCADE, related_name="rankings")
    run = models.ForeignKey(JudgeRun, on_delete=models.SET_NULL, null=True, blank=True, related_name="intrinsic_rankings")
    source = models.CharField(max_length=200, default="import")
    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="rankings")
    top = models.JSONField(default=list, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACCEPTED)
    reason = models.TextField(max_length=REASON_CHARS, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["scorer", "paper"], name="intrinsic_one_ranking_per_paper"),
            models.CheckConstraint(
                condition=Q(status="accepted", reason="") | Q(status="invalid") & ~Q(reason=""),
                name="intrinsic_ranking_reason_iff_invalid",
            ),
        ]
        ordering = ["scorer_id", "paper_id"]

    def __str__(self) -> str:
        return f"{self.scorer} on {self.paper}: {self.status}"


class IntrinsicScoringRun(EngineRun):
    """Scores candidates for one nll/energy :class:`Scorer` against an OpenAI-compatible completions endpoint
    (``intrinsic.scoring``), on the shared engine as run kind ``intrinsic_scoring``. Its fields are those of
    ``jobs.GenerationRun`` that the engine's provider, limiter and lease helpers read; ``parameters`` holds
    ``base_url``, ``api_key_env`` (the variable's name, never the key), ``model``, ``criterion``, ``logprobs_mode``,
    ``concurrency``, ``rate_per_second``, ``timeout``, ``lease_seconds`` and the prices."""

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="intrinsic_scoring_runs")
    scorer = models.ForeignKey(Scorer, on_delete=models.CASCADE, related_name="runs")

    class Meta(EngineRun.Meta):
        pass

    def __str__(self) -> str:
        return f"Intrinsic scoring run {self.pk} ({self.scorer})"


class ScoringTask(ClaimableTask):
    """One candidate to score in a scoring run: one request to the endpoint (plus its tokenizations)."""

    run = models.ForeignKey(IntrinsicScoringRun, on_delete=models.CASCADE, related_name="tasks")
    candidate = models.ForeignKey(Candidate, on_delete=models.CASCADE, related_name="+")
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "candidate"], name="intrinsic_scoring_task_unique")]
        indexes = [models.Index(fields=["run", "status"])]


class ListwiseTask(ClaimableTask):
    """One paper to rank in a listwise judge run (``JudgeRun.subjects == "intrinsic_listwise"``; order ``single``)."""

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="intrinsic_listwise_tasks")
    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="+")
    order = models.CharField(max_length=10, default="single")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "paper", "order"], name="intrinsic_listwise_task_unique")]
        indexes = [models.Index(fields=["run", "status"])]


class ListwiseJudgment(JudgmentRecord):
    """A listwise judge's answer as given (invalid ones too): ``labels`` as answered, best first, ``top`` the candidate
    external ids they stood for, ``shown`` the candidates' external ids in the order shown (C1 first: the seeded
    shuffle, researcher-side). An answer also becomes the paper's :class:`ListwiseRanking` under the run's listwise
    scorer, in the same transaction."""

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="intrinsic_listwise_judgments")
    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="listwise_judgments")
    labels = models.JSONField(default=list, blank=True)
    top = models.JSONField(default=list, blank=True)
    shown = models.JSONField(default=list, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["run", "paper", "order"], condition=Q(status="accepted"), name="intrinsic_one_accepted_listwise_judgment"
            ),
        ]
        ordering = ["paper_id", "id"]

    def __str__(self) -> str:
        return f"listwise {self.run_id} on {self.paper_id}: {self.status}"
