"""The one base class of the application's errors.

Every refusal a person can meet (an import that cannot be read, a run that cannot be launched, a study that
cannot be created, a report with nothing to report) is an :class:`AppError`: its message names what is wrong and
what to do. Pages show the message on their form; the API's exception handler (``arena.apis.exception_handler``)
maps any AppError, of any protocol, to a JSON answer with :attr:`AppError.status_code` and
:meth:`AppError.payload`, so no API view needs its own ``try``. Engine-internal failures (a transient HTTP error,
a malformed model answer that is retried) are not AppErrors: nobody outside the engine sees them.
"""

from __future__ import annotations

import json
from typing import Any


class AppError(Exception):
    """A refusal with a message for the person who asked; ``status_code`` is what the API answers with."""

    status_code: int = 400

    def payload(self) -> dict[str, Any]:
        """The JSON body of the API's answer: ``{"detail": message}`` (subclasses may add fields)."""
        return {"detail": str(self)}


class NotFoundError(AppError):
    """There is nothing to answer with (a report of a benchmark without data, say): 404."""

    status_code = 404


def json_error_text(exc: json.JSONDecodeError, *, line: bool = True) -> str:
    """What is wrong with a JSON text and where, in words: ``Unterminated string starting at line 1 column 9``
    (Python's own messages for some errors end in "at", which a plain "at column" would double)."""
    where = f"line {exc.lineno} column {exc.colno}" if line else f"column {exc.colno}"
    return f"{exc.msg.removesuffix(' at')} at {where}"
