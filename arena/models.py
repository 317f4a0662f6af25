"""The shared core's data model: benchmarks and their participants, judge runs and what every judging kind records of
an answer (:class:`JudgmentRecord`), and the literature neighbourhoods, proposals and canonical pairs that Lit2Test,
its diagnostic controls and the human calibration studies share.

Which protocol a benchmark follows, and what a judge run judges, are names of the protocol registry
(``arena.protocols``), validated against it: no closed list of protocols lives here.

Identity rules that matter for blindness: a CanonicalPair's ``public_id`` is random and
is the only pair identifier that may leave the researcher side; ``internal_key`` (the
release's ``pair_id``) names the models and stays internal.
"""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models
from django.db.models import Q

from .numbers import whole_number
from .protocols import default_protocol, judge_subjects, protocol_label, validate_protocol, validate_subjects
from .schemas import AB_TIE, SIX_FIELD

#: The subjects of a judge run that judges this module's canonical pairs: the leaderboard's input, the only runs that
#: may be canonical.
PAIRS = "pairs"


def new_public_id() -> str:
    # Random, not derived from the pair: a hash of (context, models) could be
    # recomputed for each of the few model combinations and would leak identity.
    return secrets.token_hex(8)


class Benchmark(models.Model):
    """A versioned benchmark. Its canonical judge and verdict rule never change within a version.

    ``protocol`` names the registered protocol (``arena.protocols``) its data follow; that protocol's app holds its
    data and pages, and other protocols' pages refuse it and say where its own are.
    """

    name = models.CharField(max_length=100)
    version = models.CharField(max_length=50, default="1")
    description = models.TextField(blank=True)
    canonical_judge = models.CharField(
        max_length=200, blank=True, help_text="Fixed per version; a different judge needs a new version."
    )
    verdict_rule = models.CharField(max_length=50, default=AB_TIE.name)
    proposal_schema = models.CharField(max_length=50, default=SIX_FIELD.name)
    orientation_seed = models.BigIntegerField(default=20260101)
    protocol = models.CharField(max_length=20, default=default_protocol, validators=[validate_protocol])
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["name", "version"], name="benchmark_name_version_unique")]
        ordering = ["name", "version"]

    def __str__(self) -> str:
        return f"{self.name} v{self.version}"

    def get_protocol_display(self) -> str:
        """The protocol's label, as its app registered it."""
        return protocol_label(self.protocol)

    def next_version(self) -> str:
        """The version after this one: "2" after "1", "beta.1" after "beta"."""
        numbered = whole_number(self.version)
        return str(int(self.version) + 1) if numbered else f"{self.version}.1"

    def lock(self) -> None:
        """Hold this benchmark's row until the caller's transaction ends (call it inside ``transaction.atomic()``).

        Writers that decide what to write from what is stored (an import into an existing benchmark, a launch that
        asks only what no run is asking yet) take it first: two at once then run one after the other (PostgreSQL),
        and the second sees what the first wrote instead of writing it again or failing on a unique key. SQLite
        serialises writers anyway."""
        type(self).objects.select_for_update().filter(pk=self.pk).values_list("pk", flat=True).first()


class Batch(models.Model):
    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="batches")
    name = models.CharField(max_length=100)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["benchmark", "name"], name="batch_name_unique")]
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Context(models.Model):
    """A literature neighborhood. Verdict-only releases create contexts without text."""

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="contexts")
    batch = models.ForeignKey(Batch, on_delete=models.SET_NULL, null=True, blank=True, related_name="contexts")
    external_id = models.CharField(max_length=300)
    base_topic_id = models.CharField(max_length=300, blank=True)
    condition = models.CharField(max_length=100, blank=True)
    field = models.TextField(blank=True)
    research_context = models.TextField(blank=True)
    open_problem = models.TextField(blank=True)
    resource_constraint = models.TextField(blank=True)
    task_instruction = models.TextField(blank=True)
    source_policy = models.CharField(max_length=300, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    has_text = models.BooleanField(default=False)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["benchmark", "external_id"], name="context_external_id_unique")]
        ordering = ["external_id"]

    def __str__(self) -> str:
        return self.external_id


class Paper(models.Model):
    context = models.ForeignKey(Context, on_delete=models.CASCADE, related_name="papers")
    position = models.PositiveSmallIntegerField()
    title = models.TextField()
    abstract = models.TextField(blank=True)
    limitation = models.TextField(blank=True)
    key_contribution = models.TextField(blank=True)
    important_result = models.TextField(blank=True)
    url = models.URLField(max_length=500, blank=True)
    source_paper_id = models.CharField(max_length=200, blank=True)
    year = models.CharField(max_length=10, blank=True)
    venue = models.CharField(max_length=200, blank=True)
    decision = models.CharField(max_length=100, blank=True)
    primary_area = models.CharField(max_length=300, blank=True)
    metadata = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["context", "position"], name="paper_position_unique")]
        ordering = ["context_id", "position"]

    def __str__(self) -> str:
        return self.title


class Participant(models.Model):
    """A proposer model, named exactly as in the release (e.g. ``GPT 5.2``)."""

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="participants")
    name = models.CharField(max_length=200)
    provider = models.JSONField(default=dict, blank=True)
    aliases = models.JSONField(
        default=list,
        blank=True,
        help_text='Other names the model goes by: [{"text", "mode", "source": "derived" | "researcher"}]; see arena/aliases.py.',
    )
    aliases_reviewed_at = models.DateTimeField(
        null=True, blank=True, help_text="When a researcher last saved the aliases; until then they are derived."
    )

    class Meta:
        constraints = [models.UniqueConstraint(fields=["benchmark", "name"], name="participant_name_unique")]
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Proposal(models.Model):
    class Status(models.TextChoices):
        VALID = "valid", "valid"
        INVALID = "invalid", "invalid"

    context = models.ForeignKey(Context, on_delete=models.CASCADE, related_name="proposals")
    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="proposals")
    schema = models.CharField(max_length=50, default=SIX_FIELD.name)
    content = models.JSONField(help_text="The schema's fields, e.g. the six contract fields.")
    validation_status = models.CharField(max_length=10, choices=Status.choices)
    validation_errors = models.JSONField(default=list, blank=True)
    release_metadata = models.JSONField(default=dict, blank=True)
    # Blindness (arena/blindness.py): ``content`` is the text as received, for researchers and exports;
    # judges and annotators see ``blind_content``, the content with every model alias redacted, used
    # while ``blind_digest`` is the digest of ``content`` it was made from. ``redactions`` records what
    # was replaced: field, offsets, text, aliases and models.
    blind_content = models.JSONField(null=True, blank=True)
    blind_digest = models.CharField(max_length=64, blank=True)
    redactions = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["context", "participant"], name="proposal_context_participant_unique")]
        ordering = ["context_id", "participant__name"]

    def __str__(self) -> str:
        return f"{self.participant} on {self.context}"


class CanonicalPair(models.Model):
    """Two participants' proposals for one context, with a seeded A/B orientation.

    In the original order ``participant_a`` is shown as A; the reverse order swaps them.
    """

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="pairs")
    context = models.ForeignKey(Context, on_delete=models.CASCADE, related_name="pairs")
    participant_a = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="+")
    participant_b = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="+")
    internal_key = models.CharField(max_length=500, help_text="The release pair_id; names the models, never shown.")
    public_id = models.CharField(max_length=32, unique=True, default=new_public_id, editable=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["benchmark", "internal_key"], name="pair_internal_key_unique"),
            models.CheckConstraint(condition=~Q(participant_a=models.F("participant_b")), name="pair_distinct_models"),
        ]
        ordering = ["context_id", "internal_key"]

    def __str__(self) -> str:
        return self.public_id


class JudgeRun(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        RUNNING = "running", "running"
        PAUSED = "paused", "paused"
        COMPLETED = "completed", "completed"
        FAILED = "failed", "failed"
        CANCELLED = "cancelled", "cancelled"

    ACTIVE_STATUSES = (Status.PENDING, Status.RUNNING, Status.PAUSED)

    class Provider(models.TextChoices):
        RECORDED = "recorded", "recorded (replay of stored judgments)"
        OPENAI_COMPATIBLE = "openai_compatible", "OpenAI-compatible endpoint"

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="runs")
    label = models.CharField(max_length=200, help_text="Distinguishes runs of one judge, e.g. the source file.")
    run_type = models.CharField(max_length=50, default="holistic")
    judge_model = models.CharField(max_length=200)
    provider = models.CharField(max_length=50, choices=Provider.choices)
    prompt_version = models.CharField(max_length=50, blank=True)
    parameters = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    is_canonical = models.BooleanField(default=False)
    # What the run judges: a judging task kind (``jobs.subjects``), registered by the app that owns its subjects; only
    # a run of the canonical pairs feeds a leaderboard, every other kind keeps its verdicts in its own tables.
    subjects = models.CharField(max_length=30, default=PAIRS, validators=[validate_subjects])
    launched_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    # The key of the launch form this run was made from: the same form posted again (twice at once, or a stale page
    # re-posted) finds this run instead of making and paying for a second one. "" for runs made otherwise.
    launch_key = models.CharField(max_length=64, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["benchmark", "judge_model", "label"], name="run_judge_label_unique"),
            models.UniqueConstraint(fields=["launch_key"], condition=~models.Q(launch_key=""), name="run_launch_key_unique"),
            # Only a run of the canonical pairs may be its benchmark's canonical judge (the leaderboard's input).
            models.CheckConstraint(
                condition=~models.Q(is_canonical=True) | models.Q(subjects=PAIRS), name="run_canonical_judges_pairs"
            ),
        ]
        ordering = ["benchmark_id", "created_at", "id"]

    def __str__(self) -> str:
        return f"{self.judge_model} ({self.label})"

    def get_subjects_display(self) -> str:
        """What the run judges, as its task kind's app labels it."""
        kind = judge_subjects.get(self.subjects)
        return kind.label if kind is not None else self.subjects

    @property
    def is_imported(self) -> bool:
        """Verdicts imported from a release file: the judge was called when the release was made, not by this app."""
        return self.provider == self.Provider.RECORDED and not (self.parameters or {}).get("replay_of")

    @property
    def is_replay(self) -> bool:
        """A replay of another stored run (``--replay-of``): no model is called."""
        return self.provider == self.Provider.RECORDED and not self.is_imported


class JudgmentRecord(models.Model):
    """What every judging kind keeps of one answered task, whatever it judged (each kind's judgment model extends it;
    the subclass declares ``run`` and its subject): the order it was asked in, accepted or invalid, the raw answer and
    the problems of an invalid one, which attempt was kept, latency and tokens."""

    class Status(models.TextChoices):
        ACCEPTED = "accepted", "accepted"
        INVALID = "invalid", "invalid"

    order = models.CharField(max_length=10)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACCEPTED)
    raw_response = models.TextField(blank=True)
    errors = models.JSONField(default=list, blank=True)
    attempt = models.PositiveSmallIntegerField(default=1)
    latency_seconds = models.FloatField(null=True, blank=True)
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        abstract = True


class OrderedJudgment(JudgmentRecord):
    """One judge verdict on one presentation order of a canonical pair.

    ``winner`` is the participant the verdict favours (null for TIE or invalid). ``shown_a``
    and ``verdict`` are null when the source did not record which side was A (the release).
    """

    class Order(models.TextChoices):
        ORIGINAL = "original", "original"
        REVERSE = "reverse", "reverse"

    class Verdict(models.TextChoices):
        A = "A", "A"
        B = "B", "B"
        TIE = "TIE", "TIE"

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="judgments")
    pair = models.ForeignKey(CanonicalPair, on_delete=models.CASCADE, related_name="judgments")
    order = models.CharField(max_length=10, choices=Order.choices)
    shown_a = models.ForeignKey(Participant, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    verdict = models.CharField(max_length=5, choices=Verdict.choices, null=True, blank=True)
    is_tie = models.BooleanField(default=False)
    winner = models.ForeignKey(Participant, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    confidence = models.CharField(max_length=10, blank=True)
    main_reason = models.TextField(blank=True)
    weakness_a = models.TextField(blank=True)
    weakness_b = models.TextField(blank=True)

    class Meta:
        constraints = [
            # The database, not the worker, guarantees at most one accepted verdict per task.
            models.UniqueConstraint(
                fields=["run", "pair", "order"],
                condition=Q(status="accepted"),
                name="one_accepted_judgment_per_task",
            ),
            models.CheckConstraint(
                condition=Q(status="invalid") | Q(is_tie=True, winner__isnull=True) | Q(is_tie=False, winner__isnull=False),
                name="accepted_judgment_has_winner_or_tie",
            ),
        ]
        indexes = [models.Index(fields=["run", "status"])]
        ordering = ["pair_id", "order"]

    def __str__(self) -> str:
        return f"{self.pair.public_id}/{self.order}"


class JudgeRunVersion(models.Model):
    """How many times the ordered judgments of a run have changed, kept by the database itself.

    Triggers (migration 0003) count every INSERT, UPDATE and DELETE statement on ``OrderedJudgment`` in the
    transaction that makes it, whoever writes (an import's COPY, a judge run's workers, the admin, a shell): a
    cache of figures computed from a run's verdicts is keyed on this number instead of on its data, so a warm
    read costs one indexed lookup however many verdicts the run has. Application code never writes it.

    ``run_id`` is a plain column, not a foreign key: deleting a run deletes its judgments, whose trigger writes
    here, and an orphaned counter (ids are never reused) is harmless. No row means version 0.
    """

    run_id = models.BigIntegerField(primary_key=True)
    version = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"run {self.run_id} v{self.version}"


class BenchmarkDataVersion(models.Model):
    """How many times what a benchmark's reports read besides its verdicts has changed, kept by the database itself.

    Triggers (migration 0015) count every INSERT, UPDATE and DELETE statement (PostgreSQL; every row on SQLite):
    ``version`` on the benchmark's contexts, batches, participants and canonical pairs (a re-import that gives
    contexts their batches, a participant renamed), ``texts`` on its proposals and papers (a re-redaction, a
    generation run's new proposals), whoever writes. A leaderboard is keyed on ``version`` beside its run's
    :class:`JudgeRunVersion` (``arena.selectors.run_data_version``), its style-controlled section on ``texts`` too, so a
    cached or stored document never outlives the names, batches or texts it shows. Row 0 counts for every benchmark
    (a TRUNCATE; proposals and papers on SQLite, whose triggers cannot reach a proposal's benchmark). Application code
    never writes it. ``benchmark_id`` is a plain column (see :class:`JudgeRunVersion`). No row means 0.
    """

    benchmark_id = models.BigIntegerField(primary_key=True)
    version = models.BigIntegerField(default=0)
    texts = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"benchmark {self.benchmark_id} v{self.version}.{self.texts}"


class BenchmarkCounts(models.Model):
    """How many contexts (and of them with text), participants, pairs and runs each benchmark has, kept by the database.

    Triggers (migration 0011) add and subtract the rows of every INSERT, UPDATE and DELETE statement on those four
    tables in the transaction that makes it, whoever writes (an import's bulk inserts, a new version's pairs, a
    cascade delete, the admin, a shell), so the benchmark list reads five numbers instead of counting 560,000
    pairs per request (issue 25, item 5). Application code never writes it; :mod:`arena.counts` reads it.

    ``benchmark_id`` is a plain column, not a foreign key (as :class:`JudgeRunVersion`'s ``run_id``): deleting a
    benchmark deletes its rows first, whose triggers write here, and the leftover all-zero row is harmless.
    """

    benchmark_id = models.BigIntegerField(primary_key=True)
    n_contexts = models.BigIntegerField(db_default=0)
    n_text_contexts = models.BigIntegerField(db_default=0)
    n_participants = models.BigIntegerField(db_default=0)
    n_pairs = models.BigIntegerField(db_default=0)
    n_runs = models.BigIntegerField(db_default=0)

    def __str__(self) -> str:
        return f"benchmark {self.benchmark_id}: {self.n_pairs} pairs"


class StoredDocument(models.Model):
    """A report document kept in the database under the key of what it was computed from (issue 25, item 1).

    The cache (Redis) answers warm reads; this table answers the first read after the cache lost a document (a
    restart, an eviction, a deploy) and the first read of a finished judge run, whose default leaderboard a worker
    computes and stores here as the run ends: a cold page reads one row instead of refitting ten thousand bootstrap
    replicates. Only documents of default parameters are kept (``arena.caching.stored_document``'s ``durable``).

    ``slot`` says what the document is (e.g. "leaderboard:v4:12:all:10000:0:0.5" for run 12): one row per slot,
    replaced when the data under it change, so the table holds one document per report, never a history. ``key`` is
    the full key (the slot, the version of the data — the run's change counter, the labels' fingerprint — and of the
    statistics' code): a row whose key is not the one asked for, or older than the cache's timeout, is never served.
    The document is pickled and signed with ``SECRET_KEY``. Rows go with their benchmark.
    """

    slot = models.CharField(max_length=255, unique=True)
    key = models.CharField(max_length=255)
    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="+")
    document = models.BinaryField()
    stored_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return self.slot
