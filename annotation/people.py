"""Researchers' pages for the people who annotate: add and invite annotators (a set-password link the
researcher passes on; no email server involved), activate and deactivate them, and follow their progress.
The annotator's own set-password page is here too. Writes go through :mod:`annotation.services`.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.contrib.auth.views import PasswordResetConfirmView
from django.contrib.messages.views import SuccessMessageMixin
from django.db.models import Count, QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse, reverse_lazy
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from arena.permissions import ANNOTATORS_GROUP, researcher_required

from .forms import AnnotatorCreateForm
from .models import Assignment
from .services import (
    AnnotatorError,
    annotator_create,
    annotator_is_manageable,
    annotator_set_active,
    annotator_set_password_token,
)


def _annotators() -> QuerySet:
    """Every account researchers manage here: members of the annotators group who are not staff or superusers."""
    return (
        get_user_model()
        .objects.filter(groups__name=ANNOTATORS_GROUP, is_staff=False, is_superuser=False)
        .distinct()
        .order_by("username")
    )


def _get_annotator_for_researcher(user_id: int) -> AbstractBaseUser:
    """404 for anyone this page does not manage (researchers, outsiders, unknown ids)."""
    return get_object_or_404(_annotators(), pk=user_id)


def _progress(user_ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    """Per annotator, per study (newest first): items submitted and assigned. One query for any number of annotators."""
    rows = (
        Assignment.objects.filter(annotator_id__in=user_ids)
        .values("annotator_id", "study_id", "study__name", "study__round")
        .annotate(assigned=Count("id"), submitted=Count("label"))
        .order_by("annotator_id", "-study__created_at", "-study_id")
    )
    out: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        out[r["annotator_id"]].append(
            {
                "id": r["study_id"],
                "name": r["study__name"],
                "round": r["study__round"],
                "submitted": r["submitted"],
                "assigned": r["assigned"],
            }
        )
    return out


def _set_password_link(request: HttpRequest, user: AbstractBaseUser) -> str:
    uidb64, token = annotator_set_password_token(user=user)
    return request.build_absolute_uri(reverse("annotation:set-password", args=[uidb64, token]))


@require_http_methods(["GET", "POST"])
@researcher_required
def annotator_list(request: HttpRequest) -> HttpResponse:
    """Every annotator with their status and progress, and the form that adds one."""
    form = AnnotatorCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            user = annotator_create(username=form.cleaned_data["username"], email=form.cleaned_data["email"])
        except AnnotatorError as exc:
            form.add_error("username", str(exc))
        else:
            messages.success(request, f"Annotator {user.get_username()} created. Pass on the set-password link below.")
            return redirect("annotation:annotator", user_id=user.pk)
    annotators = list(_annotators())
    progress = _progress([u.pk for u in annotators])
    rows = [{"user": u, "invited": not u.has_usable_password(), "studies": progress.get(u.pk, [])} for u in annotators]
    return render(request, "annotation/annotators.html", {"rows": rows, "form": form})


def _render_detail(
    request: HttpRequest, annotator: AbstractBaseUser, *, link: str | None, new_link: bool = False
) -> HttpResponse:
    context = {
        "annotator": annotator,
        "invited": not annotator.has_usable_password(),
        "studies": _progress([annotator.pk]).get(annotator.pk, []),
        "link": link,
        "new_link": new_link,
    }
    return render(request, "annotation/annotator_detail.html", context)


@require_GET
@researcher_required
def annotator_detail(request: HttpRequest, user_id: int) -> HttpResponse:
    """One annotator: progress per study, and the set-password link while the invitation is open."""
    annotator = _get_annotator_for_researcher(user_id)
    invited = annotator.is_active and not annotator.has_usable_password()
    return _render_detail(request, annotator, link=_set_password_link(request, annotator) if invited else None)


@require_POST
@researcher_required
def annotator_link(request: HttpRequest, user_id: int) -> HttpResponse:
    """A new set-password link for an annotator who has a password (forgotten, or to be reset). Nothing is written."""
    annotator = _get_annotator_for_researcher(user_id)
    if not annotator.is_active:
        messages.error(request, f"{annotator.get_username()} is deactivated: activate them first.")
        return redirect("annotation:annotator", user_id=annotator.pk)
    return _render_detail(request, annotator, link=_set_password_link(request, annotator), new_link=True)


@require_POST
@researcher_required
def annotator_active(request: HttpRequest, user_id: int) -> HttpResponse:
    """Activate (``active=1``) or deactivate (``active=0``) an annotator, then back to the list."""
    annotator = _get_annotator_for_researcher(user_id)
    active = request.POST.get("active") == "1"
    try:
        annotator_set_active(user=annotator, active=active)
    except AnnotatorError as exc:  # pragma: no cover - _get_annotator_for_researcher admits only manageable users
        messages.error(request, str(exc))
    else:
        state = "activated" if active else "deactivated: they can no longer log in"
        messages.success(request, f"{annotator.get_username()} {state}.")
    return redirect("annotation:annotators")


class AnnotatorSetPasswordView(SuccessMessageMixin, PasswordResetConfirmView):
    """Where an annotator's set-password link leads (Django's password-reset confirmation, in the app's layout).

    A link for anyone but an active annotator is treated as invalid.
    """

    template_name = "registration/set_password.html"
    success_url = reverse_lazy("login")
    success_message = gettext_lazy("Your password is set. Log in with your username and the new password.")

    def get_user(self, uidb64: str) -> AbstractBaseUser | None:
        user = super().get_user(uidb64)
        if user is None or not user.is_active or not annotator_is_manageable(user):
            return None
        return user


set_password = AnnotatorSetPasswordView.as_view()
