"""The product's own pages above every app: the home page sends each person where their work is."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET

from annotation.selectors import assignments_for_user
from arena.permissions import user_is_researcher


@require_GET
@login_required
def home(request: HttpRequest) -> HttpResponse:
    """Researchers to the dashboard, annotators with assignments to their items, anyone else to a welcome page."""
    if user_is_researcher(request.user):
        return redirect("arena:dashboard")
    if assignments_for_user(user=request.user).exists():
        return redirect("annotation:home")
    return render(request, "arena/welcome.html")


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """A form refused by the CSRF check (``CSRF_FAILURE_VIEW``), in the app's layout and the reader's language: the
    page was older than the sign-in (signing in again elsewhere renews the token) or the session ended. Django's own
    page said "CSRF verification failed" and to set DEBUG, and nothing of what to do. The reason stays in the log."""
    return render(request, "403_csrf.html", status=403)
