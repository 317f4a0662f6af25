"""The call cache: a task whose request was answered before, and the answer accepted, takes that answer instead of
calling the endpoint again (resuming or repeating a run re-asks nothing it already has).

Content-addressed: the key is the sha256 of everything that decides the answer, as the call would send it: the
endpoint's URL, the request body (model, messages, every sampling parameter: ``Provider.request_body``), the
presentation order, the sample index and the prompt template's version. So a changed prompt, template, temperature
or token limit misses, and so does another sample: a run's ``sample`` parameter (0 unless a run asks for another)
is part of the key, so at temperature > 0 a run that draws sample 1 never reuses sample 0's answers. For a task that
asks again after a malformed answer, the key is its first request: the entry is the answer the kind accepted for it.

What is kept: only answers the run kind accepted (a judge's parsed verdict, an elicitation's answer that passed its
check); invalid, refused and failed answers never are. Every run that calls an endpoint keeps its accepted answers
(an insert per stored batch, in the store's transaction); reading is opt-in per run (``parameters["call_cache"]``:
the launch form's checkbox, ``run_judge --cache``), and on by default when a run is resumed (``jobs.lifecycle``).

How it runs: a driver keys the tasks it claims and looks them up in one indexed query per claimed batch (in its
database thread); a task found there is answered from the entry in ``work`` (no call, nothing counted in the call
ledger, its tokens 0: it costs this run nothing), parsed by the kind as a fresh answer would be (an answer the kind
no longer accepts is a miss: the endpoint is called). Its store records the hit (:class:`~jobs.models.CallCacheHit`,
with the run and task the answer came from) in the transaction that stores the answer, so a hit is stored exactly
once like any answer: a killed worker's resumed run makes no duplicate. The engine knows nothing about what a task
is about; the judge and elicitation drivers call this module for every kind they run.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .models import CallCacheEntry, CallCacheHit
from .providers import canonical_json

#: The run parameter that turns reading the cache on (``True``) or off.
CACHE_PARAMETER = "call_cache"
#: The run parameter that says which sample of each request the run draws (0 by default).
SAMPLE_PARAMETER = "sample"
KEY_VERSION = 1  # bump when what goes into a key changes: old entries then simply miss


def cache_on(parameters: dict[str, Any] | None) -> bool:
    """Whether a run with these parameters reads the cache."""
    return bool((parameters or {}).get(CACHE_PARAMETER))


def call_key(*, url: str, body: dict[str, Any], order: str, sample: int, template_version: str, request_json: str = "") -> str:
    """The sha256 (hex) of a request's identity; JSON with sorted keys, so equal requests give equal keys.

    ``request_json``, when given, is ``body`` as :func:`jobs.providers.canonical_json` spells it (what the call sends):
    the identity's JSON is then put together around it rather than encoded again, the same text either way (the
    identity's keys in sorted order, ``request`` second)."""
    if not request_json:
        request_json = canonical_json(body)
    text = (
        f'{{"order":{canonical_json(order)},"request":{request_json},"sample":{canonical_json(sample)},'
        f'"template":{canonical_json(template_version)},"url":{canonical_json(url.rstrip("/"))},"v":{KEY_VERSION}}}'
    )
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Cached:
    """An accepted answer found in the cache for a claimed task, with where it came from."""

    key: str
    text: str
    prompt_tokens: int | None
    completion_tokens: int | None
    source_kind: str
    source_run: int
    source_task: int

    def source(self) -> dict[str, Any]:
        """What a stored answer keeps of its origin (a judgment's ``metadata["cached_from"]``, an attempt's record)."""
        return {
            "kind": self.source_kind,
            "run": self.source_run,
            "task": self.source_task,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }


@dataclass(frozen=True)
class Answered:
    """An answer the kind accepted, to keep: the task that asked, the text and what it cost."""

    task_id: int
    text: str
    prompt_tokens: int | None
    completion_tokens: int | None
    latency: float | None


#: What a run that does not read the cache replaces in an entry it answers afresh (everything but the key).
_REFRESHED_FIELDS = [
    "model",
    "template_version",
    "sample",
    "text",
    "prompt_tokens",
    "completion_tokens",
    "latency_seconds",
    "source_kind",
    "source_run_id",
    "source_task_id",
]


class CallCache:
    """One driver's use of the cache for one run: keys of its claimed tasks, what was found for them, and the writes.

    ``claimed`` and ``record`` run in the driver's database thread, ``take`` in its event loop; each task id is
    written before its task is queued and read after, so the two never race on one entry.
    """

    def __init__(self, *, kind: str, run: Any, template_version: str) -> None:  # noqa: ANN401
        parameters = run.parameters or {}
        self.kind, self.run_id = kind, run.pk
        self.read = cache_on(parameters)
        self.sample = int(parameters.get(SAMPLE_PARAMETER) or 0)
        self.template_version = template_version or ""
        self.keys: dict[int, tuple[str, str]] = {}  # task id -> (key, model)
        self.found: dict[int, Cached] = {}

    def claimed(self, tasks: Iterable[tuple[int, Any, list[dict[str, str]], str]]) -> None:
        """Key the claimed tasks, (task id, provider, first messages, order) each, and look them up in one query.

        A provider without a request body (a replay of stored answers) calls nothing: its tasks are not keyed."""
        keyed: dict[int, str] = {}
        for task_id, provider, messages, order in tasks:
            body = getattr(provider, "request_body", None)
            if body is None:
                continue
            request = body(messages)
            encoded = getattr(provider, "request_json", None)
            key = call_key(
                url=provider.url,
                body=request,
                order=order,
                sample=self.sample,
                template_version=self.template_version,
                request_json=encoded(messages) if encoded is not None else "",
            )
            self.keys[task_id] = (key, str(request.get("model", "")))
            keyed[task_id] = key
        if not self.read or not keyed:
            return
        rows = CallCacheEntry.objects.filter(key__in=set(keyed.values())).values_list(
            "key", "text", "prompt_tokens", "completion_tokens", "source_kind", "source_run_id", "source_task_id"
        )
        entries = {row[0]: Cached(*row) for row in rows}
        for task_id, key in keyed.items():
            if key in entries:
                self.found[task_id] = entries[key]

    def take(self, task_id: int) -> Cached | None:
        """The cached answer for a claimed task, once (a task handed back unanswered looks itself up when claimed again)."""
        return self.found.pop(task_id, None)

    def record(self, *, answered: Iterable[Answered] = (), hits: Iterable[tuple[int, Cached]] = ()) -> None:
        """Keep accepted answers and record hits, inside the caller's store transaction. A hit recorded already (a store
        repeated) is left as it is. An entry whose key is there already is left as it is by a run that reads the cache
        (another worker stored it first), and replaced by a run that does not: a run launched without the cache asked
        the endpoint afresh, which is how a researcher refreshes answers after the server changed behind the same URL
        and model name (a new checkpoint at the same path)."""
        entries = []
        for a in answered:
            key, model = self.keys.get(a.task_id, ("", ""))
            if not key:
                continue
            entries.append(
                CallCacheEntry(
                    key=key,
                    model=model[:200],
                    template_version=self.template_version[:50],
                    sample=self.sample,
                    text=a.text,
                    prompt_tokens=a.prompt_tokens,
                    completion_tokens=a.completion_tokens,
                    latency_seconds=a.latency,
                    source_kind=self.kind,
                    source_run_id=self.run_id,
                    source_task_id=a.task_id,
                )
            )
        if entries and self.read:
            CallCacheEntry.objects.bulk_create(entries, ignore_conflicts=True)
        elif entries:
            CallCacheEntry.objects.bulk_create(
                entries, update_conflicts=True, unique_fields=["key"], update_fields=_REFRESHED_FIELDS
            )
        rows = [
            CallCacheHit(
                kind=self.kind,
                run_id=self.run_id,
                task_id=task_id,
                key=cached.key,
                source_kind=cached.source_kind,
                source_run_id=cached.source_run,
                source_task_id=cached.source_task,
            )
            for task_id, cached in hits
        ]
        if rows:
            CallCacheHit.objects.bulk_create(rows, ignore_conflicts=True)

    def forget(self, task_ids: Iterable[int]) -> None:
        """Drop what is held for tasks whose answers were stored (or handed to another driver)."""
        for task_id in task_ids:
            self.keys.pop(task_id, None)
            self.found.pop(task_id, None)


def cache_hits(*, kind: str, run: Any) -> int:  # noqa: ANN401
    """How many of a run's tasks were answered from the cache (those of a run resumed since without it count too)."""
    return CallCacheHit.objects.filter(kind=kind, run_id=run.pk).count()
