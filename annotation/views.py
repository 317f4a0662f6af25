"""Pages of the annotation app: the annotator's list, the annotation screen, the guideline, and the study pages."""

from __future__ import annotations

import csv
import functools
import secrets
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Count, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.translation import get_language, gettext_lazy, pgettext_lazy
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from arena.csvsafe import csv_safe
from arena.numbers import whole_number
from arena.permissions import researcher_required

from .charts import scatter_plot
from .flow import (
    SKIP_FLAG_CSV_COLUMNS,
    SKIP_REASON_MAX,
    FlagRefused,
    OutOfOrder,
    SkipRefused,
    assignment_check_order,
    assignment_flag,
    assignment_skip,
    has_label,
    next_position_subquery,
    study_flags,
    study_skip_flag_rows,
    study_skips,
)
from .forms import StudyCreateForm
from .models import FAST_ANSWER_SECONDS, FLAG_COMMENT_MAX, Assignment, Flag, Label, Study
from .rubric import (
    CHOICES,
    CONFIDENCE,
    DIMENSIONS,
    FIELD_NAMES,
    INVALID_REASONS,
    RATIONALE_MAX,
    RATIONALE_MIN,
    SCREENING,
    SIDES,
    TIE_REASONS,
    draft_values,
    field_label,
    score_field,
    validate_submission,
    value_label,
)
from .selectors import (
    LABEL_CSV_COLUMNS,
    STATUS_DRAFT,
    STATUS_OVER_TIME,
    STATUS_SKIPPED,
    STATUS_STARTED,
    STATUS_SUBMITTED,
    STATUS_TODO,
    annotator_overview,
    assignment_next,
    assignment_total,
    assignments_for_user,
    item_screen,
    label_as_values,
    study_agreement,
    study_label_rows,
    study_progress,
    study_validation,
)
from .selectors import (
    study_list as select_study_list,
)
from .services import (
    NUL,
    AlreadySubmitted,
    StaleDraft,
    StudyCreatedAlready,
    StudyCreateError,
    SubmissionIncomplete,
    TooFast,
    UnstorableValues,
    assignment_draft_version,
    assignment_open,
    assignment_save_draft,
    assignment_submit,
    study_create,
)

STATUS_LABELS = {
    STATUS_TODO: gettext_lazy("To do"),
    STATUS_STARTED: gettext_lazy("Started"),
    STATUS_DRAFT: gettext_lazy("Draft"),
    STATUS_SUBMITTED: gettext_lazy("Submitted"),
    STATUS_OVER_TIME: gettext_lazy("Over time"),
    STATUS_SKIPPED: gettext_lazy("Skipped"),
}
ROUND_LABELS = {Study.Round.PRACTICE: gettext_lazy("Practice round"), Study.Round.FORMAL: gettext_lazy("Formal round")}
#: The study page's names of the majority labels (the keys of annotation.stats; the agreement JSON keeps the keys).
MAJORITY_LABELS = MappingProxyType(
    {
        "first": pgettext_lazy("majority label", "first"),
        "second": pgettext_lazy("majority label", "second"),
        "TIE": pgettext_lazy("majority label", "TIE"),
        "INVALID": pgettext_lazy("majority label", "INVALID"),
        "naive baseline": pgettext_lazy("majority label", "naive baseline"),
        "no majority": pgettext_lazy("majority label", "no majority"),
    }
)


def _get_assignment_for_user(request: HttpRequest, token: str, *, page: bool = True) -> Assignment:
    """The request user's own assignment with this token; anything else (another annotator's, unknown) is 404.

    It carries ``next_position``, the position of the annotator's next item (the order check, annotation.flow), and,
    for a request that renders the item's page (``page``), ``n_done``, how many of the annotator's items in its study
    are submitted (the screen's progress bar), and ``n_flags`` and ``last_flag``, the annotator's own flags on it —
    each by a subquery of the same query: the annotator's hot paths keep their query counts, and the autosave (an
    htmx POST on every change, answered by its status line) runs only the subquery it needs.
    """
    annotations: dict[str, Any] = {"next_position": next_position_subquery()}
    if page:
        done = (
            Label.objects.filter(assignment__study_id=OuterRef("study_id"), assignment__annotator_id=OuterRef("annotator_id"))
            .order_by()
            .values("assignment__annotator_id")
            .annotate(n=Count("pk"))
            .values("n")
        )
        flags = Flag.objects.filter(assignment_id=OuterRef("pk")).order_by()
        annotations |= {
            "n_done": Coalesce(Subquery(done), 0),
            "n_flags": Coalesce(Subquery(flags.values("assignment_id").annotate(n=Count("pk")).values("n")), 0),
            "last_flag": Subquery(flags.order_by("-created_at", "-id").values("comment")[:1]),
        }
    try:
        return assignments_for_user(user=request.user).select_related("study").annotate(**annotations).get(token=token)
    except Assignment.DoesNotExist:
        raise Http404(_("No such item.")) from None


# --------------------------------------------------------------------------- annotator pages


def _entry_url(assignment: Assignment, status: str) -> str:
    """Where a link to an item goes: an item whose clock has not started opens on its start page."""
    unstarted = status == STATUS_TODO or (status == STATUS_SKIPPED and assignment.opened_at is None)
    return reverse("annotation:item-start" if unstarted else "annotation:item", args=[assignment.token])


def _refuse_out_of_order(request: HttpRequest, assignment: Assignment, exc: OutOfOrder) -> HttpResponse:
    """A later item than the next one, reached by a crafted or old URL: 403, naming the item to do first."""
    following = {"following": exc.following, "following_url": reverse("annotation:item-start", args=[exc.following.token])}
    return _start_page(request, assignment, following, status=403)


def _start_page(request: HttpRequest, assignment: Assignment, extra: dict | None = None, *, status: int = 200) -> HttpResponse:
    """An item's start page (its position, study and round; ``extra`` for a refusal's next item)."""
    context = {
        "assignment": assignment,
        "study": assignment.study,
        "round_label": ROUND_LABELS.get(assignment.study.round, ""),
        "total": assignment_total(assignment=assignment),
    }
    return render(request, "annotation/item_start.html", context | (extra or {}), status=status)


@require_GET
@login_required
def annotate_home(request: HttpRequest) -> HttpResponse:
    overviews = annotator_overview(user=request.user)
    for ov in overviews:
        ov.round_label = ROUND_LABELS.get(ov.study.round, ov.study.round)
        # Only the next item (and those started, skipped or submitted) has a link: the order is the annotator's own.
        ov.labelled_rows = [
            (a, status, STATUS_LABELS[status], _entry_url(a, status) if ov.is_open(a, status) else None) for a, status in ov.rows
        ]
        ov.next_url = next((url for a, _s, _l, url in ov.labelled_rows if a == ov.next_assignment), None)
    return render(request, "annotation/annotate_home.html", {"overviews": overviews})


GUIDE_CONTEXT = MappingProxyType(
    {
        "dimensions": DIMENSIONS,
        "screening": SCREENING,
        "choices": CHOICES,
        "tie_reasons": TIE_REASONS,
        "invalid_reasons": INVALID_REASONS,
        "confidence": CONFIDENCE,
        "rationale_min": RATIONALE_MIN,
        "rationale_max": RATIONALE_MAX,
    }
)


@require_GET
@login_required
def guide(request: HttpRequest) -> HttpResponse:
    return render(request, "annotation/guide.html", dict(GUIDE_CONTEXT))


@functools.lru_cache(maxsize=16)
def _guide_body(language: str) -> str:
    """The guideline's text (annotation/guide.html#guide_body) in ``language`` (the active one), for the work
    screen's in-place panel: it depends on nothing else, so it is rendered once per language in each process."""
    return render_to_string("annotation/guide.html#guide_body", {**GUIDE_CONTEXT, "in_place": True})


def _form_context(values: Mapping[str, str], errors: Mapping[str, str]) -> dict[str, Any]:
    dims = []
    for d in DIMENSIONS:
        cells = []
        for side in SIDES:
            name = score_field(side, d.key)
            cells.append({"name": name, "side": side.upper(), "value": values.get(name, ""), "error": errors.get(name)})
        dims.append({"key": d.key, "label": d.label, "question": d.question, "anchors": d.anchor_items, "cells": cells})
    return {
        "values": values,
        "errors": errors,
        "dims": dims,
        "screening": SCREENING,
        "choices": CHOICES,
        "tie_reasons": TIE_REASONS,
        "invalid_reasons": INVALID_REASONS,
        "confidence": CONFIDENCE,
        "rationale_min": RATIONALE_MIN,
        "rationale_max": RATIONALE_MAX,
    }


QUESTION_FRAGMENTS = ("screening_question", "score_questions", "choice_questions")


def _question_fragments(values: Mapping[str, object], errors: Mapping[str, str], *, submitted: bool) -> Mapping[str, str]:
    """The item page's three blocks of questions (partials of annotation/item.html), rendered for these answers.

    They are most of the page's rendering (about 40 radio buttons with their anchors, all translated) and
    depend on nothing but the active language, the known fields' values and errors, and ``submitted``:
    rendered once per such state in each process (:func:`_render_question_fragments`). Every item opens with
    the same empty answers, so that case is rendered once per language.
    """
    key_values = tuple(values.get(name) for name in FIELD_NAMES)
    key_errors = tuple(errors.get(name) for name in FIELD_NAMES)
    if not all(v is None or isinstance(v, str) for v in (*key_values, *key_errors)):  # never from draft_values; kept honest
        return _render_question_fragments.__wrapped__(get_language(), key_values, key_errors, submitted)
    return _render_question_fragments(get_language(), key_values, key_errors, submitted)


@functools.lru_cache(maxsize=256)
def _render_question_fragments(
    language: str, values: tuple[str | None, ...], errors: tuple[str | None, ...], submitted: bool
) -> Mapping[str, str]:
    """Pure in its arguments (``language`` is the active one): the partials get nothing else in their context.
    The answer is shared by every later caller with the same arguments, hence read-only."""
    given_values = {name: v for name, v in zip(FIELD_NAMES, values, strict=True) if v is not None}
    given_errors = {name: e for name, e in zip(FIELD_NAMES, errors, strict=True) if e is not None}
    context = {"submitted": submitted, **_form_context(given_values, given_errors)}
    # render_to_string returns a SafeString, escaped by the template engine as every page is.
    return MappingProxyType({name: render_to_string(f"annotation/item.html#{name}", context) for name in QUESTION_FRAGMENTS})


def _render_item(
    request: HttpRequest,
    assignment: Assignment,
    *,
    values: Mapping[str, str],
    errors: Mapping[str, str] | None = None,
    status: int = 200,
    not_saved: bool = False,
    stale_answers: list[tuple[str, str]] | None = None,
    fast_minimum: int = 0,
    flag_open: bool = False,
) -> HttpResponse:
    submitted = None
    try:
        submitted = assignment.label
    except Label.DoesNotExist:
        pass
    errors = errors or {}
    context = {
        "assignment": assignment,
        "token": assignment.token,
        "study": assignment.study,
        "round_label": ROUND_LABELS.get(assignment.study.round, ""),
        "screen": item_screen(assignment=assignment),
        "submitted": submitted,
        "saved_at": assignment.draft_saved_at,
        "draft_version": assignment_draft_version(assignment),
        "draft_page": secrets.token_urlsafe(12),  # this page's id: its own saves are never stale to it
        "not_saved": not_saved,
        "stale_answers": stale_answers,  # None, or this stale page's answers that were not saved (label, value)
        "fast_minimum": fast_minimum,  # > 0: the submission came too soon after Start; ask to confirm it
        "error_list": [(name, field_label(name), errors[name]) for name in FIELD_NAMES if name in errors],
        "fragments": _question_fragments(values, errors, submitted=submitted is not None),
        "guide_body": _guide_body(get_language()),
        "skip_reason_max": SKIP_REASON_MAX,
        "flag_open": flag_open,
        "flag_comment_max": FLAG_COMMENT_MAX,
    }
    return render(request, "annotation/item.html", context, status=status)


@never_cache
@require_http_methods(["GET", "POST"])
@login_required
def item_start(request: HttpRequest, token: str) -> HttpResponse:
    """The page before an item: its time cap and a Start button. Only the POST of that button starts the clock.

    An item already started (or submitted) has nothing to start: both methods go on to the item.
    """
    assignment = _get_assignment_for_user(request, token)
    if assignment.opened_at is not None or has_label(assignment):
        return redirect("annotation:item", token=token)
    try:
        assignment_check_order(assignment=assignment)
    except OutOfOrder as exc:
        return _refuse_out_of_order(request, assignment, exc)
    if request.method == "POST":
        assignment_open(assignment=assignment)
        return redirect("annotation:item", token=token)
    return _start_page(request, assignment)


@never_cache
@require_GET
@login_required
def item_detail(request: HttpRequest, token: str) -> HttpResponse:
    """The annotation screen of a started item (or a submitted one, read-only).

    An item whose clock has not started goes to its start page: showing the screen never starts a clock.
    ``?check=1`` (where a rejected submission lands) names what the stored draft still misses.
    """
    assignment = _get_assignment_for_user(request, token)
    try:
        values = label_as_values(assignment.label)
    except Label.DoesNotExist:
        if assignment.opened_at is None:
            return redirect("annotation:item-start", token=token)
        values = dict(assignment.draft or {})
        if request.GET.get("check") == "1":
            return _render_item(request, assignment, values=values, errors=validate_submission(values))
        if request.GET.get("fast") == "1":
            return _render_item(request, assignment, values=values, fast_minimum=assignment.study.min_answer_seconds)
    # ?flag=1: back from a refused flag, its panel open where the annotator was writing it.
    return _render_item(request, assignment, values=values, flag_open=request.GET.get("flag") == "1")


def _render_save_status(
    request: HttpRequest, assignment: Assignment, *, save_error: str = "", already_submitted: bool = False, status: int = 200
) -> HttpResponse:
    """The autosave's answer: the status line, and the draft version the form sends with its next save.

    A refusal (422 for a NUL, 409 for a stale page) is swapped in by annotation.js instead of being retried.
    """
    context = {
        "saved_at": assignment.draft_saved_at,
        "save_error": save_error,
        "already_submitted": already_submitted,
        # A refused stale page keeps its old version: its next save is refused too, never let through.
        "oob_version": not already_submitted and status != 409,
        "draft_version": assignment_draft_version(assignment),
    }
    return render(request, "annotation/item.html#save_status", context, status=status)


def _render_stale(request: HttpRequest, assignment: Assignment) -> HttpResponse:
    """A Submit or Save from a page older than the stored draft (another window saved since): the item again (409)
    with the stored, newer answers in the form, and this page's answers that differ from them listed beside, not
    saved, so nothing typed is lost (a redirect to the item dropped them all, a whole rationale with them)."""
    assignment.refresh_from_db(fields=["draft", "draft_saved_at"])
    stored, sent = assignment.draft or {}, draft_values(request.POST)
    differing = [
        (field_label(name), value_label(name, sent[name]) if sent.get(name) else "")
        for name in FIELD_NAMES
        if sent.get(name, "") != stored.get(name, "")
    ]
    return _render_item(request, assignment, values=stored, status=409, stale_answers=differing)


def _render_unstorable(request: HttpRequest, assignment: Assignment, exc: UnstorableValues) -> HttpResponse:
    """The form again (422) with the refused values shown, each NUL as U+FFFD so the annotator sees where it was."""
    shown = {k: v.replace(NUL, "\ufffd") for k, v in draft_values(request.POST).items()}
    errors = {**validate_submission(shown), **exc.errors}
    return _render_item(request, assignment, values=shown, errors=errors, status=422, not_saved=True)


@never_cache
@require_http_methods(["GET", "POST"])
@login_required
def item_draft(request: HttpRequest, token: str) -> HttpResponse:
    """Store the values typed so far (htmx on every change; a plain POST from the no-JavaScript button).

    A GET (a reload, or the language switch returning here) goes back to the item: nothing is lost.
    """
    # The autosave's answer is its status line: no progress bar or flags to count (a plain POST may render the page).
    assignment = _get_assignment_for_user(request, token, page=not request.htmx)
    if request.method == "GET":
        return redirect("annotation:item", token=token)
    try:
        assignment_check_order(assignment=assignment)  # a save starts the clock: only of an item open to the annotator
    except OutOfOrder as exc:
        return _refuse_out_of_order(request, assignment, exc)
    try:
        assignment_save_draft(assignment=assignment, values=request.POST, base_version=request.POST.get("draft_version"))
        already = False
    except AlreadySubmitted:
        already = True
    except StaleDraft:
        if not request.htmx:
            return _render_stale(request, assignment)
        stale = _("Not saved: newer answers were saved in another window. Reload the page to continue with them.")
        return _render_save_status(request, assignment, save_error=stale, status=409)
    except UnstorableValues as exc:
        if not request.htmx:
            return _render_unstorable(request, assignment, exc)
        fields = ", ".join(str(field_label(name)) for name in FIELD_NAMES if name in exc.errors)
        save_error = _("Not saved: %(fields)s: a NUL character (\\0) cannot be stored; remove it.") % {"fields": fields}
        return _render_save_status(request, assignment, save_error=save_error, status=422)
    if request.htmx:
        return _render_save_status(request, assignment, already_submitted=already)
    if not already:
        messages.success(request, _("Draft saved."))
    return redirect("annotation:item", token=token)


@never_cache
@require_http_methods(["GET", "POST"])
@login_required
def item_submit(request: HttpRequest, token: str) -> HttpResponse:
    """Accept a complete submission and go to the next item's start page; or name what is missing.

    Post/redirect/get: a rejected submission stores what was typed as the draft and redirects to the item
    (``?check=1`` names the missing answers), so a reload never posts the form again. A form typed on an
    older draft than the stored one is refused without writing anything. Only a value that cannot be stored
    (NUL) is answered in place (422), since it cannot be kept as a draft to show after a redirect.
    A GET goes back to the item.
    """
    assignment = _get_assignment_for_user(request, token)
    if request.method == "GET":
        return redirect("annotation:item", token=token)
    try:
        assignment_check_order(assignment=assignment)
    except OutOfOrder as exc:
        return _refuse_out_of_order(request, assignment, exc)
    try:
        label = assignment_submit(
            assignment=assignment,
            values=request.POST,
            base_version=request.POST.get("draft_version"),
            confirm_fast=request.POST.get("confirm_fast") == "1",
        )
    except AlreadySubmitted:
        messages.info(request, _("This item was already submitted; it cannot be changed."))
        return redirect("annotation:item", token=token)
    except StaleDraft:
        return _render_stale(request, assignment)
    except SubmissionIncomplete:
        return redirect(reverse("annotation:item", args=[token]) + "?check=1")
    except TooFast:
        return redirect(reverse("annotation:item", args=[token]) + "?fast=1")  # "are you sure?", answers kept
    except UnstorableValues as exc:
        return _render_unstorable(request, assignment, exc)
    if label.over_time:
        messages.warning(request, _("Submitted after the time cap: your answer is kept and marked over time."))
    else:
        messages.success(request, _("Submitted. Thank you!"))
    return _to_next_item(assignment)


def _to_next_item(assignment: Assignment) -> HttpResponse:
    """On to the annotator's next item in their order (its start page: its clock starts only at Start), or to the list
    when only skipped items (or none) are left."""
    following = assignment_next(assignment=assignment)
    if following is None:
        return redirect("annotation:home")
    return redirect("annotation:item-start", token=following.token)


def _keep_draft(assignment: Assignment, request: HttpRequest) -> None:
    """Store the answers sent along with a skip or a flag (the work form's own fields), as a draft save would: nothing
    typed is lost. What a draft save would refuse (a stale page, a NUL, a submitted item) is left as stored, and the
    annotator is told when the answers sent differ from those kept (the skip or flag itself still goes through)."""
    if "draft_version" not in request.POST:
        return
    try:
        assignment_save_draft(assignment=assignment, values=request.POST, base_version=request.POST.get("draft_version"))
    except AlreadySubmitted:
        pass  # the skip or flag says what a submitted item allows
    except StaleDraft:  # refused only when the answers differ from those kept (annotation.services._write_draft)
        messages.warning(
            request,
            _(
                "The answers on that page of item %(n)d were not saved: newer answers were saved after it was "
                "loaded (in another window?). The newer ones are kept; check them when you return to the item."
            )
            % {"n": assignment.position},
        )
    except UnstorableValues:
        messages.warning(
            request,
            _(
                "The answers on that page of item %(n)d were not saved: a NUL character (\\0) cannot be stored. "
                "The answers saved before are kept; check them when you return to the item."
            )
            % {"n": assignment.position},
        )


def _aside_post(request: HttpRequest, token: str) -> tuple[Assignment, HttpResponse | None]:
    """What a skip and a flag share: the annotator's own assignment, a GET sent back to the item, an item out of its
    order refused (nothing written), and the answers sent along kept as the draft. The answer to give now, or None."""
    assignment = _get_assignment_for_user(request, token)
    if request.method == "GET":
        return assignment, redirect("annotation:item", token=token)
    try:
        assignment_check_order(assignment=assignment)
    except OutOfOrder as exc:
        return assignment, _refuse_out_of_order(request, assignment, exc)
    _keep_draft(assignment, request)
    return assignment, None


@never_cache
@require_http_methods(["GET", "POST"])
@login_required
def item_skip(request: HttpRequest, token: str) -> HttpResponse:
    """Set the item aside (optional reason) and go on to the next item; a skip is no answer (annotation.flow).

    The answers sent with it are kept as the draft, for when the annotator returns. Sent twice, it is recorded
    once. A GET goes back to the item.
    """
    assignment, answer = _aside_post(request, token)
    if answer is not None:
        return answer
    try:
        skipped = assignment_skip(assignment=assignment, reason=request.POST.get("skip_reason", ""))
    except AlreadySubmitted:
        messages.info(request, _("This item was already submitted; it cannot be skipped."))
        return redirect("annotation:item", token=token)
    except SkipRefused as exc:
        messages.error(request, str(exc))
        return redirect("annotation:item", token=token)
    if skipped:
        messages.info(
            request,
            _("Item %(n)d skipped. It stays on your list as skipped: return to it whenever you are ready.")
            % {"n": assignment.position},
        )
    else:
        messages.info(request, _("Item %(n)d was skipped already.") % {"n": assignment.position})
    return _to_next_item(assignment)


@never_cache
@require_http_methods(["GET", "POST"])
@login_required
def item_flag(request: HttpRequest, token: str) -> HttpResponse:
    """Flag a problem with the item for the researcher, with a required comment; back to the item, answers kept.

    A flag is a note, not an answer: the annotator answers the item too (or skips it). Sent twice with the same
    comment, it is recorded once. A GET goes back to the item.
    """
    assignment, answer = _aside_post(request, token)
    if answer is not None:
        return answer
    try:
        _flag, created = assignment_flag(assignment=assignment, comment=request.POST.get("flag_comment", ""))
    except FlagRefused as exc:
        messages.error(request, str(exc))
        return redirect(reverse("annotation:item", args=[token]) + "?flag=1#flag")
    if created:
        messages.success(request, _("Flag sent to the study coordinator. You can still answer the item, or skip it."))
    else:
        messages.info(request, _("You had already flagged this item with this comment; it is recorded once."))
    return redirect("annotation:item", token=token)


# --------------------------------------------------------------------------- researcher pages


@require_http_methods(["GET", "POST"])
@researcher_required
def study_list(request: HttpRequest) -> HttpResponse:
    form = StudyCreateForm(request.POST or None, initial={"launch_key": secrets.token_urlsafe(24)})
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            study = study_create(
                benchmark=data["benchmark"],
                n_contexts=data["n_contexts"],
                annotators=list(data["annotators"]),
                round=data["round"],
                n_naive_controls=data["n_naive_controls"],
                pairs_per_context=data["pairs_per_context"],
                cap_minutes=data["cap_minutes"],
                annotators_per_item=data["annotators_per_item"],
                seed=data["seed"],
                name=data["name"],
                created_by=request.user,
                launch_key=data["launch_key"] or "",
            )
        except StudyCreatedAlready as exc:
            messages.info(
                request, _("Study %(id)s was created from this form already; nothing new was made.") % {"id": exc.study.pk}
            )
            return redirect("annotation:study", study_id=exc.study.pk)
        except StudyCreateError as exc:
            form.add_error(None, str(exc))
        else:
            counts = {"id": study.pk, "items": study.items.count(), "assignments": study.assignments.count()}
            messages.success(request, _("Study %(id)s created: %(items)s items, %(assignments)s assignments.") % counts)
            return redirect("annotation:study", study_id=study.pk)
    return render(request, "annotation/study_list.html", {"studies": select_study_list(), "form": form})


@require_POST
@researcher_required
def study_min_answer(request: HttpRequest, study_id: int) -> HttpResponse:
    """The researcher's minimum time per answer (seconds from Start to Submit; 0 = none), from the study page."""
    study = get_object_or_404(Study, pk=study_id)
    raw = request.POST.get("min_answer_seconds", "").strip()
    if not whole_number(raw) or int(raw) > MAX_MIN_ANSWER_SECONDS:
        messages.error(
            request,
            _("Minimum time per answer: give whole seconds from 0 to %(max)s, not %(value)s.")
            % {"max": MAX_MIN_ANSWER_SECONDS, "value": repr(raw)},
        )
    else:
        study.min_answer_seconds = int(raw)
        study.save(update_fields=["min_answer_seconds"])
        messages.success(request, _("Minimum time per answer set to %(n)s s.") % {"n": study.min_answer_seconds})
    return redirect("annotation:study", study_id=study.pk)


def _fast_answers(study: Study) -> list[Label]:
    """The study's answers submitted sooner after Start than its flag threshold, fastest first."""
    return list(
        Label.objects.filter(assignment__study=study, elapsed_seconds__lt=study.fast_answer_seconds)
        .select_related("assignment__annotator")
        .order_by("elapsed_seconds", "id")
    )


MAX_MIN_ANSWER_SECONDS = 3600


@require_GET
@researcher_required
def study_detail(request: HttpRequest, study_id: int) -> HttpResponse:
    """Progress, validation and agreement; the live part polls itself every 5 seconds."""
    study = get_object_or_404(Study.objects.select_related("benchmark", "judge_run"), pk=study_id)
    include_over_time = request.GET.get("include_over_time") == "1"
    doc = study_agreement(study=study, include_over_time=include_over_time)
    validation = study_validation(study=study)
    judge_strengths = doc["judge"]["strengths"]
    human_wr = doc["human_win_rate"] or {}
    models = [m for m in doc["judge"]["order"] if m in human_wr or (doc["human_bt"] and m in doc["human_bt"]["strengths"])]
    hbt = doc["human_bt"] or {}
    model_rows = [
        {
            "model": m,
            "judge_strength": judge_strengths.get(m),
            "human_wr": human_wr.get(m),
            "human_bt": (hbt.get("strengths") or {}).get(m),
            "human_bt_ci": (hbt.get("ci") or {}).get(m),
        }
        for m in models
    ]
    loo_rows = [{"annotator": a, **v} for a, v in doc["leave_one_out"].items()]
    context = {
        "study": study,
        "doc": doc,
        "include_over_time": include_over_time,
        "progress": study_progress(study=study),
        "skips": study_skips(study_id=study.pk),
        "flags": study_flags(study_id=study.pk),
        "fast_answers": _fast_answers(study),
        "fast_default": FAST_ANSWER_SECONDS,
        "validation": validation,
        "validation_shown": (validation.invalid + validation.pending + validation.skipped)[:40],
        "model_rows": model_rows,
        "loo_rows": loo_rows,
        "loo_models": models,
        "scatter": scatter_plot(judge_strengths, human_wr),
        "majority_counts": [(MAJORITY_LABELS.get(k, k), n) for k, n in doc["majority"]["counts"].items()],
        "per_dimension": [
            (d.key, d.label, doc["krippendorff_alpha"]["dimensions"]["per_dimension"].get(d.key)) for d in DIMENSIONS
        ],
        "live_url": reverse("annotation:study", args=[study.pk]) + ("?include_over_time=1" if include_over_time else ""),
    }
    template = "annotation/study_detail.html#live" if request.htmx else "annotation/study_detail.html"
    return render(request, template, context)


@require_GET
@researcher_required
def study_labels_csv(request: HttpRequest, study_id: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=study_id)
    rows = study_label_rows(study=study)
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="study-{study.pk}-labels.csv"'
    response.write("\ufeff")  # a BOM so spreadsheet programs read the Chinese rationales as UTF-8
    writer = csv.DictWriter(response, fieldnames=LABEL_CSV_COLUMNS)
    writer.writeheader()
    # Reasons are annotators' free text: a cell a spreadsheet would run as a formula is neutralised.
    writer.writerows({key: csv_safe(value) for key, value in row.items()} for row in rows)
    return response


@require_GET
@researcher_required
def study_skips_flags_csv(request: HttpRequest, study_id: int) -> HttpResponse:
    """The study's skips and flags, one row each (annotation.flow.study_skip_flag_rows), beside labels.csv."""
    study = get_object_or_404(Study, pk=study_id)
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="study-{study.pk}-skips-flags.csv"'
    response.write("\ufeff")  # a BOM so spreadsheet programs read Chinese comments as UTF-8
    writer = csv.DictWriter(response, fieldnames=SKIP_FLAG_CSV_COLUMNS)
    writer.writeheader()
    # Reasons and comments are annotators' free text: a cell a spreadsheet would run as a formula is neutralised.
    writer.writerows({key: csv_safe(value) for key, value in row.items()} for row in study_skip_flag_rows(study_id=study.pk))
    return response
