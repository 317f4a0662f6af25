"""The project's URLs plus one view that fails, for the error-page test in tests/test_security.py."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.urls import path

from lit2test_web.urls import urlpatterns as project_urlpatterns


def boom(request: HttpRequest) -> HttpResponse:
    raise RuntimeError("postgres://user:secret@db/lit2test CELERY_BROKER_URL=redis://broker")


urlpatterns = [path("boom/", boom), *project_urlpatterns]
