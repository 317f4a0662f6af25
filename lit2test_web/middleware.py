"""A request that waits too long for a pooled database connection gets a 503 asking to retry, not a 500; times are
shown in the reader's time zone."""

from __future__ import annotations

import functools
import logging
import zoneinfo
from collections.abc import Callable

from django.db import OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.deprecation import MiddlewareMixin
from django.utils.translation import gettext_lazy

from .errors import is_api_request

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 5
BUSY_MESSAGE = gettext_lazy("The database is busy; retry in a few seconds.")


def is_pool_exhausted(exc: BaseException) -> bool:
    """Whether ``exc`` says that no pooled connection came free in time (psycopg_pool.PoolTimeout or
    TooManyRequests, which Django wraps in its OperationalError)."""
    try:
        from psycopg_pool import PoolTimeout, TooManyRequests
    except ImportError:  # no pool installed: never the cause
        return False
    cause = exc.__cause__ if isinstance(exc, OperationalError) else exc
    return isinstance(cause, (PoolTimeout, TooManyRequests))


class DatabaseBusyMiddleware(MiddlewareMixin):
    """Turns an exhausted connection pool into ``503 Service Unavailable`` with ``Retry-After``.

    The pool (settings ``DB_POOL_MAX_SIZE``, ``DB_POOL_TIMEOUT``) bounds the connections a process holds;
    under more load than it serves, requests queue for a connection and those that wait past the timeout
    are told to come back. API requests get the API's JSON error shape.
    """

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not is_pool_exhausted(exception):
            return None
        logger.warning("database connection pool exhausted: %s %s answered 503 (%s)", request.method, request.path, exception)
        if is_api_request(request):
            response: HttpResponse = JsonResponse({"detail": str(BUSY_MESSAGE)}, status=503)
        else:  # in the reader's language and the app's look, with no query (the pool is what is short)
            response = HttpResponse(render_to_string("503.html", {"message": BUSY_MESSAGE}), status=503)
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response


#: The cookie in which a browser names its time zone (static/js/app.js sets it from Intl's resolved time zone).
TIME_ZONE_COOKIE = "tz"


@functools.lru_cache(maxsize=256)
def _zone(name: str) -> zoneinfo.ZoneInfo | None:
    """The IANA zone ``name`` names, or None for anything else (a crafted cookie is ignored, never an error)."""
    if not (0 < len(name) <= 64) or not all(c.isascii() and (c.isalnum() or c in "/_+-") for c in name):
        return None
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        return None


class ReaderTimeZoneMiddleware:
    """Times shown in the reader's own time zone, the one their browser names (cookie ``tz``); UTC without it.

    Annotators in Shanghai read "Draft saved 01:38" at 09:38 local time: the save looked eight hours old.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        zone = _zone(request.COOKIES.get(TIME_ZONE_COOKIE, ""))
        if zone is None:
            timezone.deactivate()
        else:
            timezone.activate(zone)
        try:
            return self.get_response(request)
        finally:
            timezone.deactivate()
