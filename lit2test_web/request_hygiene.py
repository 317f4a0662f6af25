"""Requests that no well-behaved client sends, refused before any view or middleware stores a part of them."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest


class NulInHeaderMiddleware:
    """A NUL character in a header value is a 400 that names the header.

    RFC 9110 (section 5.5) lets a recipient reject such a message. Without this, django-axes would try to
    store the User-Agent of a failed login in PostgreSQL, which stores no NUL (a 500); runserver passes
    such headers through (gunicorn and h11 refuse them already).
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        for key, value in request.META.items():
            if key.startswith("HTTP_") and isinstance(value, str) and "\x00" in value:
                header = key.removeprefix("HTTP_").replace("_", "-").title()
                return HttpResponseBadRequest(
                    f"Bad request: the {header} header contains a NUL character.\n", content_type="text/plain"
                )
        return self.get_response(request)
