"""What the engine tells the apps that plug into it.

``run_closed`` is sent when a run has ended with all its tasks done (completed, or failed with some tasks failed; not
when its follow-up step sets it running again, nor when it fails before its tasks are done), after the transaction
that ended it commits (a run that is resumed and ends again sends it again): a protocol connects to it to do what
may follow a run without holding it (e.g. store its report for the first reader, ``lit2test.apps``). Arguments: ``sender`` the run kind (``"judge"``,
a protocol's elicitation kind ...), ``run_id``. A receiver must be quick (enqueue work, do not do it) and must not
raise: the run has ended whatever it does; an exception is logged and the other receivers still run.
"""

from __future__ import annotations

import logging

from django.dispatch import Signal

log = logging.getLogger(__name__)

run_closed = Signal()


def run_closed_send(kind: str, run_id: int) -> None:
    """Send :data:`run_closed` (after commit: call it through ``transaction.on_commit``)."""
    for receiver, outcome in run_closed.send_robust(sender=kind, run_id=run_id):
        if isinstance(outcome, Exception):
            log.error("after %s run %s ended, %r failed: %r", kind, run_id, receiver, outcome, exc_info=outcome)
