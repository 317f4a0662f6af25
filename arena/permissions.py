from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from rest_framework.permissions import BasePermission

ANNOTATORS_GROUP = "annotators"


def user_is_researcher(user: object) -> bool:
    """Researchers are active staff users; only they reach the dashboard."""
    return bool(getattr(user, "is_authenticated", False) and user.is_active and user.is_staff)  # type: ignore[attr-defined]


def researcher_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Anonymous users go to the login page; signed-in non-researchers get 403."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not user_is_researcher(request.user):
            raise PermissionDenied("Only researchers can open the dashboard.")
        return view(request, *args, **kwargs)

    return wrapper


class IsResearcher(BasePermission):
    def has_permission(self, request, view) -> bool:  # noqa: ANN001
        return user_is_researcher(request.user)
