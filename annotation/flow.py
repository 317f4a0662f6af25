"""The annotator's way through a study besides answering: the assigned order, skips and flags (issue 24).

- **Order.** Items are done in the annotator's own order (``Assignment.position``). The *next* item is the first
  one neither submitted nor skipped; only it can be started. An item already started, skipped or submitted stays
  open (it can be continued, returned to, or viewed). The views refuse the rest, naming the next item.
- **Skip.** An annotator may set an item aside, with an optional reason. No label is written, so every figure
  reads the item as missing for that annotator, never as a verdict. The skip (when, why) is kept on the
  assignment, also after the item is answered later; the item's clock is not touched (it counts from Start).
- **Flag.** A comment to the researcher about a problem with an item ("the proposal text is cut off"). It is
  not an answer: the annotator answers the item as well, or skips it. The figures never read flags.

Nothing here carries model identity: skips and flags belong to the annotator's assignment, reached by its token.
"""

from __future__ import annotations

import hashlib
from datetime import datetime

from django.db import transaction
from django.db.models import Exists, OuterRef, QuerySet, Subquery
from django.utils import timezone
from django.utils.translation import gettext as _

from arena.errors import AppError

from .models import FLAG_COMMENT_MAX, Assignment, Flag, Label

SKIP_REASON_MAX = 500
NUL = "\x00"


class OutOfOrder(AppError):
    """The item is later in the annotator's order than the next one; ``following`` is the item to do first."""

    status_code = 403

    def __init__(self, following: Assignment) -> None:
        super().__init__(f"item {following.position} comes first")
        self.following = following


class FlagRefused(AppError, ValueError):
    """The flag's comment is missing, too long or unstorable; the message (active language) says which."""


class SkipRefused(AppError, ValueError):
    """The skip cannot be recorded as asked (an unstorable reason); the message says why."""


def pending_in_order(*, study_id: int, annotator_id: int) -> QuerySet[Assignment]:
    """The annotator's items still to answer in the study, skipped ones left out, in their assigned order."""
    return Assignment.objects.filter(
        study_id=study_id, annotator_id=annotator_id, label__isnull=True, skipped_at__isnull=True
    ).order_by("position")


def next_position_subquery() -> Subquery:
    """The position of the annotator's next item (for an assignment row, as ``OuterRef``): annotated on the
    annotator's lookups, the order check costs no query of its own."""
    return Subquery(
        pending_in_order(study_id=OuterRef("study_id"), annotator_id=OuterRef("annotator_id")).values("position")[:1]  # type: ignore[arg-type]
    )


def assignment_check_order(*, assignment: Assignment) -> None:
    """Raise :class:`OutOfOrder` (naming the next item) when ``assignment`` is later than the annotator's next item.

    An item already started, skipped or submitted is always open. The next item's position is read from the
    ``next_position`` annotation when the lookup carried one (:func:`next_position_subquery`), else looked up.
    """
    if assignment.opened_at is not None or assignment.skipped_at is not None or has_label(assignment):
        return
    pending = pending_in_order(study_id=assignment.study_id, annotator_id=assignment.annotator_id)
    if hasattr(assignment, "next_position"):
        next_position = assignment.next_position
    else:
        next_position = pending.values_list("position", flat=True).first()
    if next_position is None or assignment.position == next_position:
        return
    raise OutOfOrder(pending.only("id", "token", "position").first())  # type: ignore[arg-type]  # one is pending


def has_label(assignment: Assignment) -> bool:
    """Whether the assignment has its label (submitted), through the ``select_related`` cache when present."""
    try:
        assignment.label  # noqa: B018 - follows the select_related cache when present
    except Label.DoesNotExist:
        return False
    return True


def assignment_skip(*, assignment: Assignment, reason: str = "", now: datetime | None = None) -> bool:
    """Set the item aside: record when and why; no label is written. True if skipped now, False if it already was.

    One conditional update: a skip posted twice (at once, or again from a stale page) is recorded once, and an
    item with a label is never skipped (``AlreadySubmitted`` from :mod:`annotation.services` is raised then).
    Precondition: the item is open to the annotator (:func:`assignment_check_order`).
    """
    from .services import AlreadySubmitted

    reason = reason.strip()[:SKIP_REASON_MAX]
    if NUL in reason:
        raise SkipRefused(_("Not skipped: the reason holds a NUL character (\\0), which cannot be stored; remove it."))
    now = now or timezone.now()
    with transaction.atomic():
        done = (
            Assignment.objects.filter(pk=assignment.pk, skipped_at__isnull=True)
            .exclude(Exists(Label.objects.filter(assignment_id=OuterRef("pk"))))
            .update(skipped_at=now, skip_reason=reason)
        )
    if done:
        assignment.skipped_at, assignment.skip_reason = now, reason
        return True
    if Label.objects.filter(assignment_id=assignment.pk).exists():
        raise AlreadySubmitted
    assignment.refresh_from_db(fields=["skipped_at", "skip_reason"])
    return False


def flag_comment_digest(comment: str) -> str:
    return hashlib.sha256(comment.encode("utf-8")).hexdigest()


def assignment_flag(*, assignment: Assignment, comment: str, now: datetime | None = None) -> tuple[Flag, bool]:
    """Record the annotator's flag on the item; ``(flag, created)``. The same comment on the same item is stored
    once (a form sent twice, or again from a stale page), so ``created`` is False then.

    Raises :class:`FlagRefused` for an empty comment, one over ``FLAG_COMMENT_MAX`` characters, or one with a NUL.
    Precondition: the item is open to the annotator (:func:`assignment_check_order`).
    """
    comment = comment.strip()
    if not comment:
        raise FlagRefused(_("Flag not sent: write what is wrong with the item (for example, “the proposal text is cut off”)."))
    if len(comment) > FLAG_COMMENT_MAX:
        raise FlagRefused(
            _("Flag not sent: the comment has %(n)d characters; shorten it to %(max)d.")
            % {"n": len(comment), "max": FLAG_COMMENT_MAX}
        )
    if NUL in comment:
        raise FlagRefused(_("Flag not sent: the comment holds a NUL character (\\0), which cannot be stored; remove it."))
    return Flag.objects.get_or_create(
        assignment=assignment,
        comment_digest=flag_comment_digest(comment),
        defaults={"comment": comment, "created_at": now or timezone.now()},
    )


# --------------------------------------------------------------------------- researcher side


def study_skips(*, study_id: int) -> list[Assignment]:
    """Every skip of the study, by item (generation order) then annotator; each with its item, annotator and label."""
    return list(
        Assignment.objects.filter(study_id=study_id, skipped_at__isnull=False)
        .select_related("annotator", "item", "label")
        .order_by("item__position", "annotator__username")
    )


def study_flags(*, study_id: int) -> list[Flag]:
    """Every flag of the study, by item (generation order), annotator and time."""
    return list(
        Flag.objects.filter(assignment__study_id=study_id)
        .select_related("assignment__annotator", "assignment__item")
        .order_by("assignment__item__position", "assignment__annotator__username", "created_at", "id")
    )


SKIP_FLAG_CSV_COLUMNS = [
    "study",
    "kind",
    "item",
    "item_position",
    "annotator",
    "annotator_position",
    "at",
    "text",
    "answered_later",
]


def study_skip_flag_rows(*, study_id: int) -> list[dict[str, object]]:
    """One row per skip and per flag, for the researchers' CSV: the skips first, each group by item."""
    rows: list[dict[str, object]] = []
    for a in study_skips(study_id=study_id):
        rows.append(_row(study_id, "skip", a, a.skipped_at, a.skip_reason, answered=has_label(a)))
    for f in study_flags(study_id=study_id):
        rows.append(_row(study_id, "flag", f.assignment, f.created_at, f.comment, answered=None))
    return rows


def _row(study_id: int, kind: str, a: Assignment, at: datetime | None, text: str, *, answered: bool | None) -> dict[str, object]:
    return {
        "study": study_id,
        "kind": kind,
        "item": a.item_id,
        "item_position": a.item.position,
        "annotator": a.annotator.get_username(),
        "annotator_position": a.position,
        "at": at.isoformat() if at else "",
        "text": text,
        "answered_later": "" if answered is None else int(answered),
    }
