"""Writes of the annotation app: creating studies, opening items, saving drafts, accepting submissions, managing annotators."""

from __future__ import annotations

import math
import random
import secrets
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, Group
from django.contrib.auth.tokens import default_token_generator
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode
from django.utils.translation import gettext as _

from arena import naive
from arena.errors import AppError
from arena.models import PAIRS, Benchmark, CanonicalPair, Context, Proposal
from arena.permissions import ANNOTATORS_GROUP
from arena.protocols import ProtocolSpec, protocol_phrase, protocols_judging
from arena.selectors import run_cases_frame, run_default

from .models import Assignment, Item, Label, NaiveProposal, Study
from .rubric import CHOICE_A, CHOICE_B, FIELD_NAMES, clean_submission, draft_values, validate_submission

MAX_CAP_MINUTES = 240


class StudyCreateError(AppError, ValueError):
    """The study cannot be created as asked; the message says why (shown in the form and by the command)."""


class StudyCreatedAlready(StudyCreateError):
    """The study form was posted twice (at once, or again from a stale page): ``study`` is the one it made."""

    def __init__(self, study: Study) -> None:
        self.study = study
        super().__init__(f"study {study.pk} was created from this form already; nothing new was made")


class AlreadySubmitted(AppError):
    """The assignment already has an accepted label; it is read-only."""


class UnstorableValues(AppError, ValueError):
    """Some values hold a character that cannot be stored (NUL); ``errors`` maps each field to its message.

    Raised before the draft is written, so the draft stored before stays as it was.
    """

    def __init__(self, errors: dict[str, str]) -> None:
        super().__init__(", ".join(sorted(errors)))
        self.errors = errors


class StaleDraft(AppError):
    """The values were typed on a page older than the stored draft (another window, or a re-sent form).

    Raised before anything is written: older values never overwrite newer ones.
    """


class SubmissionIncomplete(AppError):
    """The completeness validator rejected a submission; ``errors`` maps each field to its message."""

    def __init__(self, errors: dict[str, str]) -> None:
        super().__init__(", ".join(sorted(errors)))
        self.errors = errors


class TooFast(AppError):
    """A complete submission arrived sooner after Start than the study's minimum and was not confirmed.

    The values are kept as the draft; submitted again with ``confirm_fast`` they are accepted (and flagged).
    """

    def __init__(self, elapsed_seconds: float, minimum_seconds: int) -> None:
        super().__init__(f"submitted {elapsed_seconds:.1f} s after Start; the study asks for at least {minimum_seconds} s")
        self.elapsed_seconds = elapsed_seconds
        self.minimum_seconds = minimum_seconds


def _rng(seed: int, *parts: object) -> random.Random:
    # random.Random seeds a str through SHA-512: reproducible across processes and Python versions,
    # and each (purpose, annotator, item) gets its own independent stream.
    return random.Random(":".join(str(p) for p in (seed, *parts)))


# --------------------------------------------------------------------------- sampling


def study_protocols() -> list[ProtocolSpec]:
    """The protocols whose benchmarks can hold a study: those whose runs judge canonical pairs (``arena.models.PAIRS``),
    which a study shows to annotators and stratifies by a judge run's order stability. Other protocols' benchmarks
    hold other subjects (cases, hypotheses, candidate lists)."""
    return protocols_judging(PAIRS)


def study_protocols_text() -> str:
    """ "Lit2Test": the labels of the protocols studies support, for forms and refusals."""
    return " or ".join(p.label for p in study_protocols()) or "no installed protocol"


@dataclass(frozen=True)
class EligibleContext:
    context: Context
    pairs: list[CanonicalPair]
    stratum: str


def eligible_contexts(*, benchmark: Benchmark, exclude_round: str | None = None) -> tuple[list[EligibleContext], dict]:
    """Contexts a study can use, each with its stratum, and a description of the stratification.

    A context is eligible when it has text and both proposals of each of its canonical pairs (so all
    of its pairs can be shown). ``exclude_round`` drops contexts already used by studies of that round on
    the benchmark, which keeps practice cases held out of the formal round and vice versa.

    Stratum = ``<batch>/<stability>``. Stability comes from the benchmark's default judge run
    (``arena.selectors.run_default``), folded per canonical pair: a context is ``sensitive`` when the share
    of its judged pairs that are order-sensitive is above the run's overall share of order-sensitive cases
    (in the release, 250/1,200 ≈ 21%, i.e. two or more of a context's six pairs), else ``stable``; a context
    none of whose pairs has both orders judged is ``unjudged``.
    """
    contexts = list(Context.objects.filter(benchmark=benchmark, has_text=True).select_related("batch").order_by("external_id"))
    if exclude_round:
        used = set(
            Item.objects.filter(study__benchmark=benchmark, study__round=exclude_round).values_list("context_id", flat=True)
        )
        contexts = [c for c in contexts if c.pk not in used]
    pairs_by_context: dict[int, list[CanonicalPair]] = defaultdict(list)
    for pair in CanonicalPair.objects.filter(context__in=contexts).order_by("internal_key"):
        pairs_by_context[pair.context_id].append(pair)
    have = set(Proposal.objects.filter(context__in=contexts).values_list("context_id", "participant_id"))
    run = run_default(benchmark=benchmark)
    overall = 0.0
    per_pair: dict[str, str] = {}
    if run is not None:
        frame = run_cases_frame(run=run)
        complete = frame["original"].notna() & frame["reverse"].notna()
        stable = complete & (frame["original"] == frame["reverse"]) & (frame["original"] != "TIE")
        n_complete = int(complete.sum())
        overall = float((complete & ~stable).sum() / n_complete) if n_complete else 0.0
        for key, c, s in zip(frame["case"], complete, stable, strict=True):
            if c:
                per_pair[key] = "stable" if s else "sensitive"
    out = []
    for context in contexts:
        pairs = pairs_by_context.get(context.pk, [])
        if not pairs or any(
            (context.pk, p.participant_a_id) not in have or (context.pk, p.participant_b_id) not in have for p in pairs
        ):
            continue
        judged = [per_pair[p.internal_key] for p in pairs if p.internal_key in per_pair]
        if not judged:
            stability = "unjudged"
        else:
            share = judged.count("sensitive") / len(judged)
            stability = "sensitive" if share > overall else "stable"
        batch = context.batch.name if context.batch else "-"
        out.append(EligibleContext(context, pairs, f"{batch}/{stability}"))
    return out, {"run_id": run.pk if run else None, "sensitive_share_threshold": overall}


def stratified_sample(strata: Mapping[str, Sequence[str]], n: int, rng: random.Random) -> dict[str, list[str]]:
    """Draw ``n`` members across strata, proportionally to stratum size (largest remainder; ties broken by ``rng``).

    Precondition: ``0 <= n <= total members``. Returns the chosen members per stratum (sorted).
    """
    total = sum(len(m) for m in strata.values())
    if not 0 <= n <= total:
        raise ValueError("n must be between 0 and the number of members")
    names = sorted(strata)
    quotas = {s: n * len(strata[s]) / total for s in names} if total else {}
    take = {s: math.floor(q) for s, q in quotas.items()}
    tiebreak = {s: rng.random() for s in names}
    left = n - sum(take.values())
    for s in sorted(names, key=lambda s: (-(quotas[s] - take[s]), tiebreak[s]))[:left]:
        take[s] += 1
    return {s: sorted(rng.sample(sorted(strata[s]), take[s])) for s in names if take[s]}


# --------------------------------------------------------------------------- studies


@transaction.atomic
def study_create(
    *,
    benchmark: Benchmark,
    n_contexts: int,
    annotators: Sequence[AbstractBaseUser],
    round: str = Study.Round.FORMAL,
    n_naive_controls: int = 2,
    cap_minutes: int = 10,
    annotators_per_item: int | None = None,
    seed: int | None = None,
    name: str = "",
    created_by: AbstractBaseUser | None = None,
    pairs_per_context: int | None = None,
    launch_key: str = "",
) -> Study:
    """Create a study: a stratified sample of contexts, all their real pairs, hidden naive controls, assignments.

    Sampling: contexts are stratified by batch and judge stability as :func:`eligible_contexts` describes,
    and ``n_contexts`` are drawn proportionally across strata with the study seed. Contexts used by studies
    of the other round on the benchmark are held out. ``n_naive_controls`` distinct chosen contexts each get
    one control that pairs a seeded-chosen real proposal with the naive baseline's proposal
    (:mod:`arena.naive`). With ``pairs_per_context`` K, every chosen context shows exactly K items: K
    of its real pairs, or in a control context K - 1 real pairs and the control, chosen so that the naive
    proposal's single appearance lies within the range of the context's real proposals' appearance counts
    (:func:`arena.naive.plan_context`; the release showed 90 of 120 real pairs). Without it every
    canonical pair becomes an item and a control adds one more, which lets controls be spotted by counting.

    Assignment: each item goes to ``annotators_per_item`` annotators (default: all), balancing load. Each
    annotator gets their own random order of their items and their own random A/B side per item, both drawn
    from the study seed, the annotator and the item (so independent of generation order and of the others).
    Tokens are drawn from ``secrets`` and carry no information.

    Preconditions: every annotator is active and in the ``annotators`` group; ``1 <= n_contexts <=`` eligible
    contexts; ``0 <= n_naive_controls <= n_contexts``; ``1 <= annotators_per_item <= len(annotators)``;
    ``1 <= cap_minutes <= 240``; ``1 <= pairs_per_context <=`` the pairs of every eligible context, and with
    controls at most :func:`arena.naive.max_hiding_k` (5 for four models). Raises
    :class:`StudyCreateError` otherwise, having written nothing; :class:`StudyCreatedAlready` when the study form's
    ``launch_key`` made a study already (the first of two posts at once holds the key, and PostgreSQL makes the
    second wait for it).
    """
    if launch_key and (made := Study.objects.filter(launch_key=launch_key).first()) is not None:
        raise StudyCreatedAlready(made)
    if round not in Study.Round.values:
        raise StudyCreateError(f"round must be one of {', '.join(Study.Round.values)}")
    annotators, per_item = _annotators_checked(annotators, annotators_per_item)
    if not 1 <= cap_minutes <= MAX_CAP_MINUTES:
        raise StudyCreateError(f"the cap must be between 1 and {MAX_CAP_MINUTES} minutes")
    eligible, strat_meta = _eligible_checked(
        benchmark=benchmark,
        round=round,
        n_contexts=n_contexts,
        n_naive_controls=n_naive_controls,
        pairs_per_context=pairs_per_context,
    )
    seed = secrets.randbelow(2**31) if seed is None else int(seed)

    strata: dict[str, list[str]] = defaultdict(list)
    for e in eligible:
        strata[e.stratum].append(e.context.external_id)
    chosen = stratified_sample(strata, n_contexts, _rng(seed, "strata"))
    chosen_ids = sorted(cid for members in chosen.values() for cid in members)

    study = _study_insert(
        launch_key=launch_key,
        benchmark=benchmark,
        name=name.strip() or f"{benchmark.name} v{benchmark.version} · {timezone.now():%Y-%m-%d}",
        round=round,
        judge_run_id=strat_meta["run_id"],
        cap_minutes=cap_minutes,
        annotators_per_item=per_item,
        n_contexts=n_contexts,
        n_naive_controls=n_naive_controls,
        seed=seed,
        created_by=created_by,
        stratification={
            "rule": "batch x judge stability; sensitive when the context's share of order-sensitive pairs exceeds the run's",
            **strat_meta,
            "strata": {s: {"eligible": len(strata[s]), "chosen": chosen.get(s, [])} for s in sorted(strata)},
            "pairs_per_context": pairs_per_context,
        },
    )
    study.annotators.set(annotators)
    items = _items_create(
        study=study,
        benchmark=benchmark,
        by_id={e.context.external_id: e for e in eligible},
        chosen_ids=chosen_ids,
        n_naive_controls=n_naive_controls,
        pairs_per_context=pairs_per_context,
        seed=seed,
    )
    _assignments_create(study=study, items=items, annotators=annotators, per_item=per_item, seed=seed)
    return study


def _study_insert(*, launch_key: str, **fields: object) -> Study:
    """The study row, in a savepoint: a second post of one form fails on its key, and says which study it made."""
    try:
        with transaction.atomic():
            return Study.objects.create(launch_key=launch_key, **fields)  # type: ignore[arg-type]
    except IntegrityError:
        made = Study.objects.filter(launch_key=launch_key).first() if launch_key else None
        if made is None:
            raise
        raise StudyCreatedAlready(made) from None


def _annotators_checked(
    annotators: Sequence[AbstractBaseUser], annotators_per_item: int | None
) -> tuple[list[AbstractBaseUser], int]:
    """The study's annotators (each once, in the order given) and how many see each item (default: all of them).

    Only active members of the annotators group are assigned items: the group is who labels, and an inactive account
    cannot sign in to do it."""
    annotators = list(dict.fromkeys(annotators))
    if not annotators:
        raise StudyCreateError("choose at least one annotator")
    outside = [u.get_username() for u in annotators if not (u.is_active and u.groups.filter(name=ANNOTATORS_GROUP).exists())]
    if outside:
        raise StudyCreateError(f"not active members of the {ANNOTATORS_GROUP!r} group: {', '.join(outside)}")
    per_item = len(annotators) if annotators_per_item is None else annotators_per_item
    if not 1 <= per_item <= len(annotators):
        raise StudyCreateError(f"annotators per item must be between 1 and {len(annotators)}")
    return annotators, per_item


def _eligible_checked(
    *, benchmark: Benchmark, round: str, n_contexts: int, n_naive_controls: int, pairs_per_context: int | None
) -> tuple[list[EligibleContext], dict]:
    """The contexts a study of ``round`` may draw from (those of the other round held out) and their stratification,
    after checking that the numbers asked for fit them; :class:`StudyCreateError` says what does not."""
    if benchmark.protocol not in {p.name for p in study_protocols()}:
        raise StudyCreateError(
            f"{benchmark} is {protocol_phrase(benchmark.protocol)} benchmark: studies label canonical pairs, which only "
            f"{study_protocols_text()} benchmarks hold; choose one of those"
        )
    other_round = Study.Round.PRACTICE if round == Study.Round.FORMAL else Study.Round.FORMAL
    eligible, strat_meta = eligible_contexts(benchmark=benchmark, exclude_round=other_round)
    if strat_meta["run_id"] is None:
        raise StudyCreateError(f"{benchmark} has no judge run to stratify by; import or run one first")
    if n_contexts < 1:
        raise StudyCreateError(f"the number of contexts must be at least 1 (asked for {n_contexts})")
    if not 1 <= n_contexts <= len(eligible):
        raise StudyCreateError(
            f"{benchmark} has {len(eligible)} contexts with text and all proposals available for a {round} study "
            f"(contexts of {other_round} studies are held out); asked for {n_contexts}"
        )
    if not 0 <= n_naive_controls <= n_contexts:
        raise StudyCreateError(f"naive controls must be between 0 and the number of contexts ({n_contexts})")
    if pairs_per_context is not None:
        _check_pairs_per_context(pairs_per_context, eligible, with_controls=n_naive_controls > 0)
    return eligible, strat_meta


def _items_create(
    *,
    study: Study,
    benchmark: Benchmark,
    by_id: Mapping[str, EligibleContext],
    chosen_ids: Sequence[str],
    n_naive_controls: int,
    pairs_per_context: int | None,
    seed: int,
) -> list[Item]:
    """The study's items, in position order: the real pairs of each chosen context (all, or the K of its plan), then
    the hidden naive controls. Returns them as stored (with their ids), for the assignments."""
    proposals = {
        (p.context_id, p.participant_id): p
        for p in Proposal.objects.filter(context__external_id__in=chosen_ids, context__benchmark=benchmark).select_related(
            "participant"
        )
    }
    rng = _rng(seed, "controls")
    control_ids = set(rng.sample(chosen_ids, n_naive_controls))
    plans: dict[str, naive.ContextPlan] = {}
    if pairs_per_context is not None:
        for cid in chosen_ids:
            ends = [(p.participant_a_id, p.participant_b_id) for p in by_id[cid].pairs]
            plan = naive.plan_context(ends, k=pairs_per_context, control=cid in control_ids, rng=_rng(seed, "pairs", cid))
            assert plan is not None  # _check_pairs_per_context ruled this out
            plans[cid] = plan
    items = _real_items(study=study, by_id=by_id, chosen_ids=chosen_ids, plans=plans, proposals=proposals)
    for cid in sorted(control_ids):
        context = by_id[cid].context
        if cid in plans:
            real = proposals[(context.pk, plans[cid].control_partner)]
        else:
            real = rng.choice(sorted((p for (c, _), p in proposals.items() if c == context.pk), key=lambda p: p.participant.name))
        items.append(
            Item(
                study=study,
                position=len(items) + 1,
                context=context,
                first_proposal=real,
                naive=naive_for_context(context=context),
                is_control=True,
            )
        )
    Item.objects.bulk_create(items)
    return list(study.items.order_by("position"))


def _real_items(
    *,
    study: Study,
    by_id: Mapping[str, EligibleContext],
    chosen_ids: Sequence[str],
    plans: Mapping[str, naive.ContextPlan],
    proposals: Mapping[tuple[int, int], Proposal],
) -> list[Item]:
    """An item per shown canonical pair of each chosen context (every pair, or those of the context's plan), numbered
    from 1 in the order of the contexts' ids and their pairs."""
    items: list[Item] = []
    for cid in chosen_ids:
        e = by_id[cid]
        shown = None if cid not in plans else set(plans[cid].pairs)
        for pair in e.pairs:
            if shown is not None and (pair.participant_a_id, pair.participant_b_id) not in shown:
                continue
            items.append(
                Item(
                    study=study,
                    position=len(items) + 1,
                    context=e.context,
                    pair=pair,
                    first_proposal=proposals[(e.context.pk, pair.participant_a_id)],
                    second_proposal=proposals[(e.context.pk, pair.participant_b_id)],
                )
            )
    return items


def _assignments_create(
    *, study: Study, items: Sequence[Item], annotators: Sequence[AbstractBaseUser], per_item: int, seed: int
) -> None:
    """Each item to ``per_item`` annotators, balancing load; each annotator's own order of items and own A/B side per
    item, drawn from the seed, the annotator and the item (so independent of generation order and of the others)."""
    load = {u.pk: 0 for u in annotators}
    per_annotator: dict[int, list[Item]] = defaultdict(list)
    assign_rng = _rng(seed, "assign")
    for item in assign_rng.sample(items, len(items)):
        ranked = sorted(annotators, key=lambda u: (load[u.pk], assign_rng.random()))
        for user in ranked[:per_item]:
            load[user.pk] += 1
            per_annotator[user.pk].append(item)
    rows = []
    for user in annotators:
        mine = sorted(per_annotator[user.pk], key=lambda it: it.position)
        _rng(seed, "order", user.pk).shuffle(mine)
        for place, item in enumerate(mine, start=1):
            rows.append(
                Assignment(
                    study=study,
                    item=item,
                    annotator=user,
                    position=place,
                    a_is_first=_rng(seed, "side", user.pk, item.position).random() < 0.5,
                )
            )
    Assignment.objects.bulk_create(rows)


def _check_pairs_per_context(k: int, eligible: Sequence[EligibleContext], *, with_controls: bool) -> None:
    fewest = min(len(e.pairs) for e in eligible)
    if not 1 <= k <= fewest:
        raise StudyCreateError(
            f"pairs per context must be between 1 and {fewest} (the pairs of each eligible context); asked for {k}"
        )
    if with_controls:
        most = min(naive.max_hiding_k([(p.participant_a_id, p.participant_b_id) for p in e.pairs]) for e in eligible)
        if k > most:
            raise StudyCreateError(
                f"with hidden naive controls, pairs per context must be at most {most}: at {k} every real proposal "
                "appears at least twice while a control's naive proposal appears once, which gives the control away; "
                "choose a smaller number or no controls"
            )


def naive_for_context(*, context: Context) -> NaiveProposal:
    """The naive baseline's proposal for ``context`` (written once per generator version, then reused). Stored as the
    generator wrote it: it is redacted where it is shown (``Item.second_content``), with the aliases of then."""
    found = NaiveProposal.objects.filter(context=context, generator_version=naive.VERSION).first()
    if found:
        return found
    words = naive.context_words(context)
    return NaiveProposal.objects.get_or_create(
        context=context, generator_version=naive.VERSION, defaults={"content": naive.naive_proposal(words)}
    )[0]


# --------------------------------------------------------------------------- annotating


def assignment_open(*, assignment: Assignment, now: datetime | None = None) -> Assignment:
    """Start the item's clock (server time) when the annotator chooses to begin it; later calls change nothing.

    Called by the item's start page (the annotator presses Start) and by the first save of answers. Showing
    an item, its start page or the list never starts a clock.
    The conditional update makes two simultaneous starts agree on one ``opened_at``: the one whose update
    found the clock still unset knows the value it wrote; only the other reads the winner's back.
    """
    if assignment.opened_at is None:
        opened = now or timezone.now()
        if Assignment.objects.filter(pk=assignment.pk, opened_at__isnull=True).update(opened_at=opened):
            assignment.opened_at = opened
        else:
            assignment.refresh_from_db(fields=["opened_at"])
    return assignment


def assignment_draft_version(assignment: Assignment) -> str:
    """The stored draft's version as the page echoes it back (``draft_version``): when it was saved, or "" if never.

    A timestamp, not a counter: it carries nothing about the item, and every save moves it forward.
    """
    saved = assignment.draft_saved_at
    return "" if saved is None else saved.astimezone(UTC).isoformat(timespec="microseconds")


#: Longest page id kept (``Assignment.draft_page``); a longer one is no page id (the save is then checked as before).
DRAFT_PAGE_MAX = 64


def draft_page_of(values: Mapping[str, object]) -> str:
    """The id of the page the values were typed on (its ``draft_page`` field), or "" when none is usable."""
    page = values.get("draft_page")
    return page if isinstance(page, str) and 0 < len(page) <= DRAFT_PAGE_MAX and page.isprintable() else ""


NUL = "\x00"


def unstorable_value_errors(values: Mapping[str, object]) -> dict[str, str]:
    """``{field: message}`` for each known field whose value holds a NUL character, in the active language.

    PostgreSQL stores no NUL in text or JSON (SQLite does), so such a value is refused on every database alike.
    """
    return {
        name: _("A NUL character (\\0) cannot be stored: remove it (it is shown as “�”) and send again.")
        for name in FIELD_NAMES
        if isinstance(value := values.get(name), str) and NUL in value
    }


def assignment_save_draft(
    *, assignment: Assignment, values: Mapping[str, object], base_version: str | None = None, now: datetime | None = None
) -> Assignment:
    """Store the raw values typed so far (known fields only). Starts the item's clock if it was not started
    (whatever the outcome: sending answers is the annotator working on the item).

    ``base_version`` is the draft version the values were typed on (:func:`assignment_draft_version`, echoed
    by the page). When it is given and the stored draft has moved on since, saved by another page (the
    ``draft_page`` id each item page sends, :func:`draft_page_of`), nothing is written: older values never
    overwrite newer ones. ``None`` skips the check (a form from before the page carried the version).

    Raises:
        StaleDraft: the stored draft is newer than ``base_version``; nothing is written.
        UnstorableValues: a value holds a NUL character; the draft is not written (the previous one stays).
        AlreadySubmitted: the item has a label (drafts never change a submission).
    """
    now = now or timezone.now()
    assignment_open(assignment=assignment, now=now)  # sending answers is choosing to work on the item
    with transaction.atomic():
        _write_draft(assignment=assignment, values=values, base_version=base_version, now=now)
    return assignment


def _write_draft(*, assignment: Assignment, values: Mapping[str, object], base_version: str | None, now: datetime) -> None:
    """The checks and the write of :func:`assignment_save_draft`; the caller holds a transaction open.

    The assignment's row stays locked until that transaction ends, so a submission checked and written in
    the same transaction cannot be overtaken by a draft or another submission of the same item.
    """
    locked = Assignment.objects.select_for_update().only("id", "draft_saved_at", "draft_page", "draft").get(pk=assignment.pk)
    page, draft = draft_page_of(values), draft_values(values)
    # Newer than the page's version is stale unless this very page wrote it (a save that got through but whose answer
    # was lost, a dropped connection, left the page one version behind, and every later save and the Submit were
    # refused as if another window had saved), or the values are those stored (nothing older can overwrite then).
    stale = (
        base_version is not None
        and base_version != assignment_draft_version(locked)
        and not (page and page == locked.draft_page)
        and draft != (locked.draft or {})
    )
    errors = unstorable_value_errors(values)
    if (stale or errors) and Label.objects.filter(assignment_id=locked.pk).exists():
        raise AlreadySubmitted  # a submitted item says so first, whatever else is wrong with the values
    if stale:
        raise StaleDraft
    if errors:
        raise UnstorableValues(errors)
    # Every save gets a later version than the one before, even within one clock tick.
    previous = locked.draft_saved_at
    saved_at = now if previous is None or now > previous else previous + timedelta(microseconds=1)
    # The label check is in the update: a statement of its own, after the lock, so it sees a label committed
    # while this waited for the lock (a condition in the locking query would read the older snapshot).
    written = (
        Assignment.objects.filter(pk=locked.pk)
        .exclude(Exists(Label.objects.filter(assignment_id=OuterRef("pk"))))
        .update(draft=draft, draft_saved_at=saved_at, draft_page=page)
    )
    if not written:
        raise AlreadySubmitted
    assignment.draft, assignment.draft_saved_at, assignment.draft_page = draft, saved_at, page


def assignment_submit(
    *,
    assignment: Assignment,
    values: Mapping[str, object],
    base_version: str | None = None,
    now: datetime | None = None,
    confirm_fast: bool = False,
) -> Label:
    """Accept a complete submission; what arrives after the cap is kept and marked over time.

    The values are first stored as the draft (so a rejected submission loses nothing; ``base_version`` as in
    :func:`assignment_save_draft`), then the completeness validator runs. The cap is measured on the server
    from ``opened_at``. Draft and label are written in one transaction, under the assignment's row lock.

    Raises:
        StaleDraft: the values were typed on an older draft than the stored one; nothing is written.
        UnstorableValues: a value holds a NUL character; the draft is not written (the previous one stays).
        AlreadySubmitted: the assignment already has a label.
        SubmissionIncomplete: the validator found problems (``errors`` names each field); the draft is kept.
        TooFast: complete, but sooner after Start than ``Study.min_answer_seconds`` and not ``confirm_fast``;
            the draft is kept.
    """
    now = now or timezone.now()
    assignment_open(assignment=assignment, now=now)
    errors = validate_submission(values)
    elapsed = (now - assignment.opened_at).total_seconds()
    minimum = assignment.study.min_answer_seconds
    too_fast = not errors and not confirm_fast and elapsed < minimum
    try:
        with transaction.atomic():
            _write_draft(assignment=assignment, values=values, base_version=base_version, now=now)
            if errors or too_fast:
                label = None  # the draft is committed; the caller hears what is missing, or asks to confirm
            else:
                label = Label.objects.create(assignment=assignment, **_label_fields(assignment, values, now))
    except IntegrityError as exc:  # a concurrent submission of the same assignment won (where rows are not locked)
        raise AlreadySubmitted from exc
    if too_fast:
        raise TooFast(elapsed, minimum)
    if label is None:
        raise SubmissionIncomplete(errors)
    return label


def _label_fields(assignment: Assignment, values: Mapping[str, object], now: datetime) -> dict[str, object]:
    """A complete submission's label, sides as shown (A/B) and canonical (first/second). Precondition: valid values."""
    clean = clean_submission(values)
    deadline = assignment.deadline()
    first_is_a = assignment.a_is_first
    winner_side = ""
    if clean.choice in (CHOICE_A, CHOICE_B):
        chose_a = clean.choice == CHOICE_A
        winner_side = Label.Side.FIRST if chose_a == first_is_a else Label.Side.SECOND
    return {
        "screening": clean.screening,
        "choice": clean.choice,
        "winner_side": winner_side,
        "reason": clean.reason,
        "confidence": clean.confidence,
        "rationale": clean.rationale,
        "scores_a": clean.scores_a,
        "scores_b": clean.scores_b,
        "scores_first": clean.scores_a if first_is_a else clean.scores_b,
        "scores_second": clean.scores_b if first_is_a else clean.scores_a,
        "over_time": deadline is not None and now > deadline,
        "elapsed_seconds": (now - assignment.opened_at).total_seconds(),
        "submitted_at": now,
    }


# --------------------------------------------------------------------------- annotators


class AnnotatorError(AppError, ValueError):
    """The annotator cannot be created or changed as asked; the message says why (shown in the form)."""


def annotator_is_manageable(user: AbstractBaseUser) -> bool:
    """Researchers manage members of the annotators group who are neither staff nor superusers.

    The limit matters: a set-password link is a way into an account, so none is ever made for a researcher.
    """
    return (
        not getattr(user, "is_staff", False)
        and not getattr(user, "is_superuser", False)
        and user.groups.filter(name=ANNOTATORS_GROUP).exists()
    )


@transaction.atomic
def annotator_create(*, username: str, email: str = "") -> AbstractBaseUser:
    """A new, active annotator in the annotators group, with no usable password until they set one through
    the link of :func:`annotator_set_password_token`.

    Raises :class:`AnnotatorError` for an invalid username or one that is taken (in any letter case: two
    accounts that differ only in case would be told apart by nobody).
    """
    users = get_user_model()
    username = username.strip()
    try:
        users.username_validator(username)
    except ValidationError as exc:
        raise AnnotatorError(" ".join(exc.messages)) from None
    if not username:
        raise AnnotatorError("choose a username")
    if users.objects.filter(username__iexact=username).exists():
        raise AnnotatorError(f"the username {username!r} is taken")
    user = users(username=username, email=users.objects.normalize_email(email.strip()), is_active=True)
    user.set_unusable_password()
    try:
        with transaction.atomic():
            user.save()
    except IntegrityError:  # the same form posted twice at once: the first made the account
        raise AnnotatorError(f"the username {username!r} is taken") from None
    user.groups.add(Group.objects.get_or_create(name=ANNOTATORS_GROUP)[0])
    return user


def annotator_set_active(*, user: AbstractBaseUser, active: bool) -> AbstractBaseUser:
    """Activate or deactivate an annotator. A deactivated annotator cannot log in, and a session they already
    have ends at their next request (Django's ``ModelBackend`` gives no user for an inactive account); their
    assignments and labels stay. Precondition: :func:`annotator_is_manageable`, else :class:`AnnotatorError`.
    """
    if not annotator_is_manageable(user):
        raise AnnotatorError(f"{user.get_username()} is not an annotator that researchers manage")
    type(user).objects.filter(pk=user.pk).update(is_active=active)
    user.is_active = active
    return user


def annotator_set_password_token(*, user: AbstractBaseUser) -> tuple[str, str]:
    """``(uidb64, token)`` of a set-password link for an active annotator (Django's password-reset tokens).

    Nothing is stored: the token is valid for ``PASSWORD_RESET_TIMEOUT`` (three days) and only until the
    password changes or the annotator logs in, so a link works once. Raises :class:`AnnotatorError` for
    anyone else (researchers, inactive users).
    """
    if not annotator_is_manageable(user) or not user.is_active:
        raise AnnotatorError(f"no set-password link for {user.get_username()}: not an active annotator")
    return urlsafe_base64_encode(force_bytes(user.pk)), default_token_generator.make_token(user)
