"""Error pages: under ``/api/`` an unknown URL answers in the API's JSON error shape, elsewhere Django's page."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.defaults import page_not_found


def is_api_request(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if is_api_request(request):
        # e.g. /api/runs/abc/progress/: no route matches, so no API view (and no DRF handler) was reached.
        return JsonResponse({"detail": f"no such API resource: {request.path}"}, status=404)
    return page_not_found(request, exception)
