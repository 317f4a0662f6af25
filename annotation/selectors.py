"""Reads of the annotation app: what an annotator may see, study progress, validation and agreement figures."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.cache import cache
from django.db.models import Count, Max, QuerySet
from django.utils import timezone

from arena.models import Benchmark, Context, JudgeRun, Paper
from arena.selectors import run_cases_frame, run_data_version, run_default

from .flow import has_label, pending_in_order
from .models import Assignment, Item, Label, Study
from .rubric import DIMENSION_KEYS, SIX_FIELDS, score_field, validate_submission

if TYPE_CHECKING:
    import pandas as pd

# --------------------------------------------------------------------------- annotator side

STATUS_TODO, STATUS_STARTED, STATUS_DRAFT = "todo", "started", "draft"
STATUS_SUBMITTED, STATUS_OVER_TIME, STATUS_SKIPPED = "submitted", "over_time", "skipped"
STATUS_PENDING = (STATUS_TODO, STATUS_STARTED, STATUS_DRAFT)


def assignments_for_user(*, user: AbstractBaseUser) -> QuerySet[Assignment]:
    """Only the user's own assignments: every annotator-facing lookup starts here."""
    return Assignment.objects.filter(annotator=user).select_related("study", "label")


def draft_has_input(draft: Mapping[str, object] | None) -> bool:
    """Whether a stored draft holds something the annotator entered (a value that is not blank)."""
    return any(isinstance(v, str) and v.strip() for v in (draft or {}).values())


def assignment_status(assignment: Assignment) -> str:
    """``todo`` (clock not started), ``started`` (clock running, nothing entered yet), ``draft`` (something
    entered, not submitted), ``skipped`` (set aside, not answered since: annotation.flow), ``submitted`` or ``over_time``.

    The clock starts only when the annotator presses Start on the item's start page (or saves answers), so
    an item opened by nobody, or merely reached after submitting the one before, is still ``todo``.
    """
    if has_label(assignment):
        return STATUS_OVER_TIME if assignment.label.over_time else STATUS_SUBMITTED
    if assignment.skipped_at is not None:
        return STATUS_SKIPPED
    if draft_has_input(assignment.draft):
        return STATUS_DRAFT
    if assignment.opened_at is not None:
        return STATUS_STARTED
    return STATUS_TODO


@dataclass
class StudyOverview:
    study: Study
    assignments: list[Assignment]
    statuses: list[str] = field(default_factory=list)

    @property
    def rows(self) -> list[tuple[Assignment, str]]:
        return list(zip(self.assignments, self.statuses, strict=True))

    @property
    def total(self) -> int:
        return len(self.assignments)

    @property
    def done(self) -> int:
        return sum(s in (STATUS_SUBMITTED, STATUS_OVER_TIME) for s in self.statuses)

    @property
    def skipped(self) -> int:
        return self.statuses.count(STATUS_SKIPPED)

    @functools.cached_property
    def next_assignment(self) -> Assignment | None:
        """The first item in the annotator's order neither submitted nor skipped: the one to start (annotation.flow)."""
        return next((a for a, s in self.rows if s in STATUS_PENDING), None)

    def is_open(self, assignment: Assignment, status: str) -> bool:
        """Whether the list links the item: the next one, or one started, skipped or submitted (annotation.flow)."""
        return status != STATUS_TODO or assignment == self.next_assignment


def annotator_overview(*, user: AbstractBaseUser) -> list[StudyOverview]:
    """The user's studies (newest first), each with their assignments in the user's own order."""
    by_study: dict[int, StudyOverview] = {}
    for a in assignments_for_user(user=user).order_by("-study__created_at", "-study_id", "position"):
        overview = by_study.setdefault(a.study_id, StudyOverview(a.study, []))
        overview.assignments.append(a)
        overview.statuses.append(assignment_status(a))
    return list(by_study.values())


def assignment_next(*, assignment: Assignment) -> Assignment | None:
    """The annotator's next item of the same study in their assigned order: the first neither submitted nor skipped
    (annotation.flow), other than this one. None when only skipped items (or none) are left.

    One query for one row (token and position only).
    """
    return (
        pending_in_order(study_id=assignment.study_id, annotator_id=assignment.annotator_id)
        .exclude(pk=assignment.pk)
        .only("id", "token", "position")
        .first()
    )


# Per study, what never changes while the study exists: the text of its contexts (a context with text is
# never rewritten: a re-import that differs is refused, arena/release.py) with their papers, and each
# annotator's number of items (assignments are written once, by study_create). Held per process and keyed
# by the study's id *and* creation time, so a study that replaces a deleted one (an id used again, as SQLite
# does after a rollback) never meets another's entries. The proposals are not held here: their blind text
# changes when a researcher edits aliases (arena/blindness.py), so it is read with the item every time.
StudyKey = tuple[int, datetime]


def _study_key(study: Study) -> StudyKey:
    return (study.pk, study.created_at)


@functools.lru_cache(maxsize=2048)
def _neighborhood(study_key: StudyKey, context_id: int) -> tuple[Mapping[str, str], tuple[Mapping[str, str], ...]]:
    """The context's four text fields and its papers, as the screen shows them (read-only mappings: shared)."""
    context = Context.objects.only(*NEIGHBORHOOD_FIELDS).get(pk=context_id)
    papers = tuple(
        MappingProxyType(
            {"title": p.title, "url": p.url, "source_id": p.source_paper_id, "abstract": p.abstract, "limitation": p.limitation}
        )
        for p in Paper.objects.filter(context_id=context_id)
        .only("title", "url", "source_paper_id", "abstract", "limitation")
        .order_by("position")
    )
    return MappingProxyType({f: getattr(context, f) for f in NEIGHBORHOOD_FIELDS}), papers


@functools.lru_cache(maxsize=8192)
def _assignment_total(study_key: StudyKey, annotator_id: int) -> int:
    return Assignment.objects.filter(study_id=study_key[0], annotator_id=annotator_id).count()


NEIGHBORHOOD_FIELDS = ("research_context", "open_problem", "resource_constraint", "task_instruction")


def assignment_total(*, assignment: Assignment) -> int:
    """How many items the annotator has in the assignment's study (held per process once counted)."""
    return _assignment_total(_study_key(assignment.study), assignment.annotator_id)


def item_screen(*, assignment: Assignment, now: datetime | None = None) -> dict[str, Any]:
    """What the annotation screen shows: the neighborhood, the proposals as A and B, position and clock.

    Only text meant for the annotator goes in here: no model name (proposals are shown redacted, see
    arena/blindness.py), pair id, proposal id or control flag. Precondition: ``assignment.study`` is loaded
    (``select_related``); the neighborhood and the item count come from the per-study memo above, so a warm
    screen costs one query (the item with its proposals).
    """
    now = now or timezone.now()
    item = (
        Item.objects.select_related("first_proposal", "second_proposal", "naive")
        .defer(*(f"{side}__{f}" for side in ("first_proposal", "second_proposal") for f in PROPOSAL_UNUSED_FIELDS))
        .get(pk=assignment.item_id)
    )
    first, second = item.first_content(), item.second_content(benchmark_id=assignment.study.benchmark_id)
    a, b = (first, second) if assignment.a_is_first else (second, first)
    deadline = assignment.deadline()
    remaining = None if deadline is None else int((deadline - now).total_seconds())
    context, papers = _neighborhood(_study_key(assignment.study), item.context_id)
    return {
        "context": context,
        "papers": papers,
        "rows": [{"key": key, "label": label, "a": a.get(key, ""), "b": b.get(key, "")} for key, label in SIX_FIELDS],
        "position": assignment.position,
        "total": assignment_total(assignment=assignment),
        "remaining_seconds": remaining,
        "remaining_minutes": None if remaining is None else max(0, -(-remaining // 60)),
        "over_time": remaining is not None and remaining <= 0,
        "cap_minutes": assignment.study.cap_minutes,
    }


# What the screen never reads of a proposal (arena.blindness.proposal_blind_content reads content, blind_content,
# blind_digest, and context and participant only for a proposal whose blind text is stale).
PROPOSAL_UNUSED_FIELDS = ("redactions", "release_metadata", "validation_errors")


def label_as_values(label: Label) -> dict[str, str]:
    """A stored label back in form-field form (sides as the annotator saw them)."""
    values = {
        "screening": label.screening,
        "choice": label.choice,
        "reason": label.reason,
        "confidence": label.confidence,
        "rationale": label.rationale,
    }
    for d in DIMENSION_KEYS:
        values[score_field("a", d)] = str(label.scores_a.get(d, ""))
        values[score_field("b", d)] = str(label.scores_b.get(d, ""))
    return values


# --------------------------------------------------------------------------- researcher side


def study_list() -> QuerySet[Study]:
    return Study.objects.select_related("benchmark").annotate(
        n_items=Count("items", distinct=True),
        n_assignments=Count("assignments", distinct=True),
        n_labels=Count("assignments__label", distinct=True),
    )


def study_progress(*, study: Study) -> list[dict[str, Any]]:
    """Per annotator: assigned, submitted, over time, INVALID choices, skipped, in progress, started, not started, last
    activity.

    The unsubmitted items follow the annotator's own statuses (:func:`assignment_status`): *skipped* is set aside
    and not answered since, *in progress* a draft with something entered, *started* a running clock with nothing
    entered yet, *not started* the rest. ``skips`` counts every skip, those answered later included.
    """
    rows = (
        Assignment.objects.filter(study=study)
        .values_list(
            "annotator__username",
            "opened_at",
            "draft",
            "draft_saved_at",
            "label__id",
            "label__over_time",
            "label__choice",
            "label__submitted_at",
            "skipped_at",
        )
        .order_by("annotator__username")
    )
    by_annotator: dict[str, dict[str, Any]] = {}
    for username, opened_at, draft, saved_at, label_id, over_time, choice, submitted_at, skipped_at in rows:
        r = by_annotator.setdefault(
            username,
            {
                "annotator": username,
                "total": 0,
                "submitted": 0,
                "over_time": 0,
                "invalid": 0,
                "skipped": 0,
                "skips": 0,
                "in_progress": 0,
                "started": 0,
                "not_started": 0,
                "last_activity": None,
            },
        )
        r["total"] += 1
        r["skips"] += skipped_at is not None
        if label_id is not None:
            r["submitted"] += 1
            r["over_time"] += bool(over_time)
            r["invalid"] += choice == "INVALID"
        elif skipped_at is not None:
            r["skipped"] += 1
        elif draft_has_input(draft):
            r["in_progress"] += 1
        elif opened_at is not None:
            r["started"] += 1
        else:
            r["not_started"] += 1
        for t in (submitted_at, saved_at, skipped_at):
            if t and (r["last_activity"] is None or t > r["last_activity"]):
                r["last_activity"] = t
    return list(by_annotator.values())


@dataclass(frozen=True)
class ValidationEntry:
    annotator: str
    position: int
    item: int
    status: str  # "ok" | "pending" | "skipped" | "invalid"
    problems: dict[str, str]
    started: bool = True


@dataclass(frozen=True)
class StudyValidation:
    entries: list[ValidationEntry]

    @property
    def ok(self) -> int:
        return sum(e.status == "ok" for e in self.entries)

    @property
    def pending(self) -> list[ValidationEntry]:
        return [e for e in self.entries if e.status == "pending"]

    @property
    def skipped(self) -> list[ValidationEntry]:
        return [e for e in self.entries if e.status == "skipped"]

    @property
    def invalid(self) -> list[ValidationEntry]:
        return [e for e in self.entries if e.status == "invalid"]

    @property
    def has_problems(self) -> bool:
        return bool(self.pending or self.invalid)


def study_validation(*, study: Study) -> StudyValidation:
    """The completeness validator over a whole study.

    A submitted label is re-validated from what is stored (``invalid`` if it fails: it should never);
    an unsubmitted assignment is ``pending`` with what its draft still misses, or ``skipped`` (set aside by the
    annotator: missing, not a verdict) with the same.
    """
    entries = []
    assignments = (
        Assignment.objects.filter(study=study).select_related("annotator", "label").order_by("annotator__username", "position")
    )
    for a in assignments:
        if has_label(a):
            problems = validate_submission(label_as_values(a.label))
            status = "invalid" if problems else "ok"
        else:
            problems = validate_submission(a.draft or {})
            status = "skipped" if a.skipped_at is not None else "pending"
        started = has_label(a) or a.opened_at is not None or bool(a.draft)
        entries.append(ValidationEntry(a.annotator.get_username(), a.position, a.item_id, status, problems, started))
    return StudyValidation(entries)


def study_run(*, study: Study) -> JudgeRun | None:
    return study.judge_run or run_default(benchmark=study.benchmark)


def judge_reference(*, run: JudgeRun | None) -> dict[str, Any]:
    """The judge's ordering and ordered-fit BT strengths (pseudo-count 0.5), as on the run's leaderboard."""
    if run is None:
        return {"order": [], "strengths": {}}
    key = f"annotation:judge-reference:v1:{run.pk}:{run_data_version(run=run)}"
    found = cache.get(key)
    if found is not None:
        return found
    from arena.stats import encode_cases, fit_bt, ranking_from_theta, win_matrix

    frame = run_cases_frame(run=run)
    if frame.empty:
        return {"order": [], "strengths": {}}
    enc = encode_cases(frame)
    fit = fit_bt(win_matrix(enc, "ordered"), pseudo_count=0.5)
    order = [enc.models[i] for i in ranking_from_theta(fit.theta)]
    found = {"order": order, "strengths": {enc.models[i]: float(fit.theta[i]) for i in range(enc.n_models)}}
    cache.set(key, found, timeout=24 * 3600)
    return found


def study_frames(*, study: Study) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The study's labels and items in the shape :mod:`annotation.stats` reads (model names included)."""
    import pandas as pd

    from . import stats  # numpy, pandas, arena.stats: loaded when a figure is computed

    items = list(
        Item.objects.filter(study=study).select_related("pair", "first_proposal__participant", "second_proposal__participant")
    )
    run = study_run(study=study)
    judge: dict[int, str | None] = {}
    pair_ids = [it.pair_id for it in items if it.pair_id]
    if run is not None and pair_ids:
        frame = run_cases_frame(run=run, pair_ids=pair_ids)
        by_key = {row.case: row for row in frame.itertuples(index=False)}
        for it in items:
            if it.pair_id is None:
                continue
            row = by_key.get(it.pair.internal_key)
            stable = (
                row is not None and isinstance(row.original, str) and row.original == row.reverse and row.original != stats.TIE
            )
            judge[it.pk] = row.original if stable else None
    item_rows = []
    sides: dict[int, tuple[str, str]] = {}
    for it in items:
        m1 = it.first_proposal.participant.name
        m2 = stats.NAIVE if it.is_control else it.second_proposal.participant.name
        sides[it.pk] = (m1, m2)
        item_rows.append(
            {"item": it.pk, "control": it.is_control, "model_1": m1, "model_2": m2, "judge_winner": judge.get(it.pk)}
        )
    label_rows = []
    labels = Label.objects.filter(assignment__study=study).select_related("assignment__annotator").order_by("id")
    for lab in labels:
        item_id = lab.assignment.item_id
        m1, m2 = sides[item_id]
        winner = {Label.Side.FIRST: m1, Label.Side.SECOND: m2}.get(lab.winner_side, lab.choice)
        row = {
            "item": item_id,
            "annotator": lab.assignment.annotator.get_username(),
            "control": m2 == stats.NAIVE,
            "model_1": m1,
            "model_2": m2,
            "winner": winner,
            "screening": lab.screening,
            "over_time": lab.over_time,
        }
        for d in DIMENSION_KEYS:
            row[f"s1_{d}"] = int(lab.scores_first[d])
            row[f"s2_{d}"] = int(lab.scores_second[d])
        label_rows.append(row)
    return (
        pd.DataFrame(label_rows, columns=stats.LABEL_COLUMNS),
        pd.DataFrame(item_rows, columns=stats.ITEM_COLUMNS),
    )


def _study_fingerprint(study: Study) -> str:
    agg = Label.objects.filter(assignment__study=study).aggregate(n=Count("id"), last=Max("id"), t=Max("submitted_at"))
    return f"{agg['n']}:{agg['last']}:{agg['t'].isoformat() if agg['t'] else ''}"


def study_agreement(*, study: Study, include_over_time: bool = False) -> dict[str, Any]:
    """Every agreement figure of the study (see :func:`annotation.stats.agreement_document`), cached per label set.

    A practice study is held out of every statistic: its document has the same keys with no figures.
    """
    import pandas as pd

    from . import stats  # numpy, pandas, arena.stats: loaded when a figure is computed

    run = study_run(study=study)
    reference = judge_reference(run=run)
    header = {
        "study": {"id": study.pk, "name": study.name, "round": study.round, "benchmark": str(study.benchmark)},
        "held_out": study.is_practice,
        "judge": {"run": run.pk if run else None, "model": run.judge_model if run else None, **reference},
    }
    if study.is_practice:
        return header | stats.agreement_document(stats.empty_labels(), pd.DataFrame(columns=stats.ITEM_COLUMNS), judge_order=[])
    verdicts = f"{run.pk}:{run_data_version(run=run)}" if run else "0"  # a judge run that changes changes the figures
    key = f"annotation:agreement:v2:{study.pk}:{_study_fingerprint(study)}:{int(include_over_time)}:{verdicts}"
    doc = cache.get(key)
    if doc is None:
        labels, items = study_frames(study=study)
        doc = stats.agreement_document(
            labels, items, judge_order=reference["order"], include_over_time=include_over_time, seed=study.seed % (2**32)
        )
        cache.set(key, doc, timeout=24 * 3600)
    return header | doc


def counted_real_labels(*, study: Study) -> pd.DataFrame:
    """The labels a human win rate counts, one row per label: those on real items (controls are held out) that
    arrived within the cap, with columns ``item``, ``control`` (False), ``model_1``, ``model_2`` (the item's first and
    second model) and ``winner`` (the chosen model, else the label's choice: TIE or INVALID), as
    :func:`study_frames` gives them.

    One grouped query: labels of one item with the same choice are counted together and repeated here. Reading the
    study's frames instead (every label's scores, and the judge's verdicts on every item) cost 0.6 s at 2,100 labels.
    """
    import pandas as pd

    from . import stats  # numpy, pandas, arena.stats: loaded when a figure is computed

    item = "assignment__item__"
    grouped = (
        Label.objects.filter(assignment__study=study, over_time=False, assignment__item__is_control=False)
        .values_list(
            f"{item}id",
            f"{item}first_proposal__participant__name",
            f"{item}second_proposal__participant__name",
            "winner_side",
            "choice",
        )
        .annotate(n=Count("id"))
        .order_by()
    )
    rows = []
    for item_id, m1, m2, side, choice, n in grouped:
        if m2 == stats.NAIVE:  # study_frames reads a second model of that name as a control
            continue
        winner = {Label.Side.FIRST: m1, Label.Side.SECOND: m2}.get(side, choice)
        rows.extend([(item_id, False, m1, m2, winner)] * n)
    return pd.DataFrame(rows, columns=["item", "control", "model_1", "model_2", "winner"])


def human_win_rate_for_benchmark(benchmark: Benchmark) -> dict[str, float] | None:
    """Human win rate per model (ties 0.5, INVALID excluded) from the benchmark's newest formal study with labels.

    Practice studies and over-time labels never count. None when no formal study has a counted label.
    """
    from . import stats  # numpy, pandas, arena.stats: loaded when a figure is computed

    studies = Study.objects.filter(benchmark=benchmark, round=Study.Round.FORMAL).order_by("-created_at", "-id")
    for study in studies:
        rates = stats.human_win_rate(counted_real_labels(study=study))
        if rates:
            return rates
    return None


def human_win_rate_report(*, benchmark: Benchmark) -> dict[str, Any] | None:
    """The leaderboard's "Human WR" with its evidence: per model the win rate, the number of counted labels and
    items, and an item-bootstrap 95% CI (``arena.stats.win_rates``), from the same study as
    :func:`human_win_rate_for_benchmark` (the newest formal study with a counted label on a real item), named.

    The leaderboard does not read annotation data itself: its callers pass this in. None without such a study.
    Labels come from :func:`counted_real_labels` (one grouped query per study).
    """
    from arena.stats import win_rates

    from . import stats  # numpy, pandas, arena.stats: loaded when a figure is computed

    studies = Study.objects.filter(benchmark=benchmark, round=Study.Round.FORMAL).order_by("-created_at", "-id")
    for study in studies:
        real = counted_real_labels(study=study)
        if real.empty:
            continue
        report = win_rates(real, tie=stats.TIE, invalid=stats.INVALID, seed=study.seed % (2**32))
        if report["models"]:
            return report | {"study": {"id": study.pk, "name": study.name, "round": study.round}}
    return None


LABEL_CSV_COLUMNS = (
    [
        "study",
        "round",
        "item",
        "item_position",
        "control",
        "context",
        "pair_public_id",
        "model_first",
        "model_second",
        "annotator",
        "annotator_position",
        "shown_a",
        "shown_b",
        "choice",
        "winner",
        "reason",
        "confidence",
        "screening",
    ]
    + [f"{side}_{d}" for d in DIMENSION_KEYS for side in ("first", "second")]
    + ["rationale", "opened_at", "submitted_at", "elapsed_seconds", "over_time"]
)


def study_label_rows(*, study: Study) -> list[dict[str, Any]]:
    """One row per label for the researchers' CSV export (this one names the models)."""
    from . import stats  # numpy, pandas, arena.stats: loaded when a figure is computed

    rows = []
    labels = Label.objects.filter(assignment__study=study).select_related(
        "assignment__annotator",
        "assignment__item__context",
        "assignment__item__pair",
        "assignment__item__first_proposal__participant",
        "assignment__item__second_proposal__participant",
    )
    for lab in labels.order_by("assignment__annotator__username", "assignment__position"):
        a = lab.assignment
        it = a.item
        m1 = it.first_proposal.participant.name
        m2 = stats.NAIVE if it.is_control else it.second_proposal.participant.name
        shown_a, shown_b = (m1, m2) if a.a_is_first else (m2, m1)
        winner = {Label.Side.FIRST: m1, Label.Side.SECOND: m2}.get(lab.winner_side, lab.choice)
        row: dict[str, Any] = {
            "study": study.pk,
            "round": study.round,
            "item": it.pk,
            "item_position": it.position,
            "control": int(it.is_control),
            "context": it.context.external_id,
            "pair_public_id": it.pair.public_id if it.pair_id else "",
            "model_first": m1,
            "model_second": m2,
            "annotator": a.annotator.get_username(),
            "annotator_position": a.position,
            "shown_a": shown_a,
            "shown_b": shown_b,
            "choice": lab.choice,
            "winner": winner,
            "reason": lab.reason,
            "confidence": lab.confidence,
            "screening": lab.screening,
        }
        for d in DIMENSION_KEYS:
            row[f"first_{d}"] = lab.scores_first[d]
            row[f"second_{d}"] = lab.scores_second[d]
        row |= {
            "rationale": lab.rationale,
            "opened_at": a.opened_at.isoformat() if a.opened_at else "",
            "submitted_at": lab.submitted_at.isoformat(),
            "elapsed_seconds": round(lab.elapsed_seconds, 1),
            "over_time": int(lab.over_time),
        }
        rows.append(row)
    return rows
