"""The model path of ``generate_controls``: subtle corruptions and sham rewrites written by a language model,
each checked by a validation call, up to :data:`MAX_ROUNDS` rounds (PROTOCOL.md §1; issue 11).

One *job* is one variant (a source proposal, a kind — ``subtle`` or ``sham`` — and a target dimension). A round
is a generation call, deterministic checks of its answer, then a validation call; the first round whose edit
passes both is the variant. Every step is an :class:`Attempt` (the caller stores them as ``ControlAttempt``
rows, failures included):

* generation: ``error`` (the call failed after ``jobs.engine.call_with_backoff``'s retries), ``refused`` (no
  JSON object and the text reads as a refusal), ``malformed`` (no usable JSON), ``off_target`` (the answer
  rewrites another field, or gives six fields and changes one besides the target), ``rejected`` (the new text
  is empty, unchanged or too long), else ``accepted``;
* validation (``--validator-model``, by default the same model): ``error``, ``refused``, ``malformed`` as
  above, ``off_target`` (the validator says the edit changes more than the target field's role), ``degraded``
  (a sham the validator calls degraded), ``rejected`` (a subtle edit it calls not degraded), else
  ``accepted``.

A failed check feeds its reason into the next round's prompt. After :data:`MAX_ROUNDS` failed rounds the caller
uses the reserve template (``controls.variants.reserve_subtle`` / ``reserve_sham``). A call error ends the job
instead (no variant, no reserve): a broken endpoint or a wrong model name must not quietly turn every variant
into a reserve; running the command again retries it. A prompt that fails the blindness gate ends the job the
same way, before any call.

The variant is always rebuilt from its source and the new text of the target field, so the other five fields are
byte-identical by construction. No database access here: the caller reads before and writes after
(``controls.services``), so the event loop never touches the ORM.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from arena.aliases import Matcher
from arena.errors import json_error_text
from arena.schemas import SIX_FIELD
from jobs.engine import call_with_backoff, run_blocking
from jobs.gates import names_in
from jobs.providers import OpenAICompatibleProvider, Provider

from . import prompts
from .models import ControlAttempt

MAX_ROUNDS = 4
CALL_TIMEOUT = 300.0  # seconds per call; a field rewrite is short, but shared endpoints queue
# Generation wants some variety between rounds (a retry that repeats a refused answer is wasted); validation wants
# the same verdict for the same edit.
GENERATE_TEMPERATURE = 0.7
VALIDATE_TEMPERATURE = 0.0
# A field is at most SIX_FIELD.max_chars (6,000) characters, about 1,500 tokens, plus the JSON around it.
GENERATE_MAX_TOKENS = 2_000
VALIDATE_MAX_TOKENS = 500
SHOWN_CHARS = 300  # of an answer quoted in a reason

Outcome = ControlAttempt.Outcome
Step = ControlAttempt.Step

FENCE = re.compile(r"^\s*```(?:json)?\s*\n(?P<body>.*)\n\s*```\s*$", re.DOTALL)
REFUSAL = re.compile(
    r"\b(?:I\s*(?:can'?t|can’t|cannot|can not|won'?t|won’t|will not|am not able|'m not able|’m not able|am unable|'m unable|’m unable)"
    r"|I'?m sorry|I’m sorry|I am sorry|as an AI)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class LlmSettings:
    """The endpoint and models of the model path (the command's options). The API key is read from the environment
    variable ``api_key_env`` names when the providers are built (``jobs.providers.api_key_from_env``), never kept."""

    model: str | None
    base_url: str | None
    api_key_env: str | None
    validator_model: str | None = None  # None: the generating model validates too
    concurrency: int = 8

    @property
    def validator(self) -> str:
        return self.validator_model or self.model or ""


@dataclass
class Job:
    """One variant to write. ``blind_source`` is the source proposal as blind readers see it (what the model is
    shown); ``source`` its stored content (what the variant is rebuilt from); ``forbidden`` the texts no prompt may
    contain (participant names, the control id)."""

    control_id: str
    kind: str  # "subtle" | "sham"
    target: str
    field: str
    context_text: str
    blind_source: dict[str, str]
    source: dict[str, str]
    forbidden: Sequence[str]


@dataclass
class Attempt:
    round: int
    step: str
    outcome: str
    reason: str = ""
    raw_text: str = ""
    model: str = ""
    prompt_version: str = ""


@dataclass
class JobResult:
    job: Job
    attempts: list[Attempt] = field(default_factory=list)
    text: str | None = None  # the accepted new text of the target field
    rounds: int = 0  # model rounds used
    stopped: str | None = None  # why the job ended without a variant (a call error, the blindness gate)
    call_failed: bool = False  # it ended on a call error (the endpoint, not this variant)

    @property
    def needs_reserve(self) -> bool:
        return self.text is None and self.stopped is None


class AttemptFailed(Exception):
    def __init__(self, outcome: str, reason: str) -> None:
        super().__init__(reason)
        self.outcome = outcome
        self.reason = reason


# --------------------------------------------------------------------------- parsing


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + "…"


def answer_object(text: str) -> dict[str, object]:
    """The JSON object of an answer (one fenced block tolerated, as in ``jobs.parsing``). Raises
    :class:`AttemptFailed`: ``refused`` when there is no object and the text reads as a refusal, else ``malformed``."""
    if not text.strip():
        raise AttemptFailed(Outcome.MALFORMED, "the answer is empty")
    match = FENCE.match(text)
    body = match.group("body") if match else text
    try:
        value = json.loads(body)
    except json.JSONDecodeError as exc:
        if REFUSAL.search(text):
            raise AttemptFailed(Outcome.REFUSED, f"the model refused: {_short(text)!r}") from None
        raise AttemptFailed(Outcome.MALFORMED, f"not a JSON object ({json_error_text(exc)}): {_short(text)!r}") from None
    if not isinstance(value, dict):
        raise AttemptFailed(Outcome.MALFORMED, f"expected a JSON object, got {type(value).__name__}")
    return value


def parse_generation(text: str, *, field_name: str, shown: Mapping[str, str], source: Mapping[str, str]) -> str:
    """The new text of ``field_name`` from a generation answer, checked deterministically; raises
    :class:`AttemptFailed`. ``shown`` is the proposal as the model saw it (a six-field answer must repeat the other
    five exactly), ``source`` the stored one (the new text must differ from both)."""
    obj = answer_object(text)
    if "text" in obj:
        named = obj.get("field", field_name)
        if named != field_name:
            raise AttemptFailed(Outcome.OFF_TARGET, f"the answer rewrites {named!r}; the field to rewrite is {field_name!r}")
        new = obj["text"]
    elif set(SIX_FIELD.fields) <= set(obj):
        changed = [name for name in SIX_FIELD.fields if name != field_name and obj[name] != shown.get(name)]
        if changed:
            raise AttemptFailed(Outcome.OFF_TARGET, f"the answer also changes {', '.join(changed)}; only {field_name} may change")
        new = obj[field_name]
    elif len(obj) == 1 and next(iter(obj)) in SIX_FIELD.fields:
        named = next(iter(obj))
        if named != field_name:
            raise AttemptFailed(Outcome.OFF_TARGET, f"the answer rewrites {named!r}; the field to rewrite is {field_name!r}")
        new = obj[named]
    else:
        raise AttemptFailed(Outcome.MALFORMED, f'expected {{"field", "text"}}, got the keys {", ".join(map(repr, sorted(obj)))}')
    if not isinstance(new, str):
        raise AttemptFailed(Outcome.MALFORMED, f"the new text must be a string, got {type(new).__name__}")
    if not new.strip():
        raise AttemptFailed(Outcome.REJECTED, f"the new text of {field_name} is empty")
    if new.strip() in (str(shown.get(field_name, "")).strip(), str(source.get(field_name, "")).strip()):
        raise AttemptFailed(Outcome.REJECTED, f"the new text of {field_name} is the original unchanged")
    if len(new) > SIX_FIELD.max_chars:
        raise AttemptFailed(Outcome.REJECTED, f"the new text has {len(new)} characters; the limit is {SIX_FIELD.max_chars}")
    return new


def parse_validation(text: str) -> tuple[bool, bool, str]:
    """(only_target_changed, degraded, reason) of a validation answer; raises :class:`AttemptFailed`."""
    obj = answer_object(text)
    flags = []
    for key in ("only_target_changed", "degraded"):
        value = obj.get(key)
        if not isinstance(value, bool):
            raise AttemptFailed(
                Outcome.MALFORMED, f"{key!r} must be true or false, got {value!r}" if key in obj else f"missing key {key!r}"
            )
        flags.append(value)
    reason = obj.get("reason")
    return flags[0], flags[1], reason.strip() if isinstance(reason, str) else ""


def validation_outcome(kind: str, only_target_changed: bool, degraded: bool, reason: str) -> tuple[str, str]:
    """What a validator's answer means for a ``kind`` edit, as (outcome, reason)."""
    said = f": {_short(reason)}" if reason else ""
    if not only_target_changed:
        return Outcome.OFF_TARGET, f"the validator says the edit changes more than the target field{said}"
    if kind == "sham" and degraded:
        return Outcome.DEGRADED, f"the validator says the sham degrades the field{said}"
    if kind == "subtle" and not degraded:
        return Outcome.REJECTED, f"the validator says the field is not degraded{said}"
    return Outcome.ACCEPTED, f"the validator accepts the edit{said}"


# --------------------------------------------------------------------------- blindness


def blindness_problem(
    messages: list[dict[str, str]], *, forbidden: Sequence[str], blocks: Sequence[str], matcher: Matcher
) -> str | None:
    """The gate every prompt passes before it is sent (as the judges' does): no participant name or control id
    anywhere, in any spelling, and no model alias left in the proposal blocks after redaction."""
    if names_in("\n".join(m["content"] for m in messages), list(forbidden)):  # the judges' gate's own reading
        return "blindness gate: the prompt contains a participant's name or the control id; re-scan the benchmark's blindness page, then run again"
    for block in blocks:
        hits = matcher.hits(block)
        if hits:
            return (
                f"blindness gate: a proposal still names {', '.join(hits[0].aliases)!r} (an alias of {', '.join(hits[0].owners)}) "
                "after redaction; re-scan the benchmark's blindness page, then run again"
            )
    return None


# --------------------------------------------------------------------------- the rounds


@dataclass
class _Endpoints:
    generator: Provider
    validator: Provider
    generator_model: str
    validator_model: str
    slots: asyncio.Semaphore


async def _call(endpoints: _Endpoints, provider: Provider, messages: list[dict[str, str]]) -> tuple[str | None, str]:
    """(text, error): one answer, with ``call_with_backoff``'s retries; ``--concurrency`` calls at a time."""
    async with endpoints.slots:
        outcome = await call_with_backoff(provider, None, messages, None)
    if outcome.completion is None:
        return None, outcome.error or "no answer"
    return outcome.completion.text, ""


async def job_run(job: Job, endpoints: _Endpoints, matcher: Matcher) -> JobResult:
    """Up to :data:`MAX_ROUNDS` rounds for one variant (see the module docstring)."""
    result = JobResult(job=job)
    prompt = prompts.GENERATE_PROMPT[job.kind]
    feedback = ""
    for rnd in range(1, MAX_ROUNDS + 1):
        result.rounds = rnd

        def attempt(step: str, outcome: str, reason: str, raw: str = "", *, rnd: int = rnd) -> None:
            validating = step == Step.VALIDATE
            result.attempts.append(
                Attempt(
                    round=rnd,
                    step=step,
                    outcome=outcome,
                    reason=reason,
                    raw_text=raw,
                    model=endpoints.validator_model if validating else endpoints.generator_model,
                    prompt_version=prompts.VALIDATE_PROMPT.version if validating else prompt.version,
                )
            )

        messages = prompts.render_generate(
            prompt=prompt, context_text=job.context_text, blind_source=job.blind_source, field=job.field, feedback=feedback
        )
        blocked = blindness_problem(
            messages, forbidden=job.forbidden, blocks=[prompts.proposal_block("PROPOSAL", job.blind_source)], matcher=matcher
        )
        if blocked:
            attempt(Step.GENERATE, Outcome.ERROR, blocked)
            result.stopped = blocked
            return result
        text, error = await _call(endpoints, endpoints.generator, messages)
        if text is None:
            attempt(Step.GENERATE, Outcome.ERROR, f"the generation call failed: {error}")
            result.stopped, result.call_failed = f"the generation call failed: {error}", True
            return result
        try:
            new = parse_generation(text, field_name=job.field, shown=job.blind_source, source=job.source)
        except AttemptFailed as failed:
            attempt(Step.GENERATE, failed.outcome, failed.reason, text)
            feedback = failed.reason
            continue
        attempt(Step.GENERATE, Outcome.ACCEPTED, "passed the deterministic checks (one field, changed, within the limit)", text)

        edited = dict(job.blind_source) | {job.field: matcher.redact(new)[0]}
        messages = prompts.render_validate(
            context_text=job.context_text, blind_source=job.blind_source, blind_edited=edited, field=job.field
        )
        blocked = blindness_problem(
            messages,
            forbidden=job.forbidden,
            blocks=[
                prompts.proposal_block("ORIGINAL PROPOSAL", job.blind_source),
                prompts.proposal_block("EDITED PROPOSAL", edited),
            ],
            matcher=matcher,
        )
        if blocked:
            attempt(Step.VALIDATE, Outcome.ERROR, blocked)
            result.stopped = blocked
            return result
        text, error = await _call(endpoints, endpoints.validator, messages)
        if text is None:
            attempt(Step.VALIDATE, Outcome.ERROR, f"the validation call failed: {error}")
            result.stopped, result.call_failed = f"the validation call failed: {error}", True
            return result
        try:
            outcome, reason = validation_outcome(job.kind, *parse_validation(text))
        except AttemptFailed as failed:
            outcome, reason = failed.outcome, failed.reason
        attempt(Step.VALIDATE, outcome, reason, text)
        if outcome == Outcome.ACCEPTED:
            result.text = new
            return result
        feedback = reason
    return result


def jobs_run(jobs: Sequence[Job], *, settings: LlmSettings, matcher: Matcher) -> list[JobResult]:
    """Run ``jobs`` concurrently (``asyncio.gather``; at most ``settings.concurrency`` calls in flight) and return
    their results in the same order. Blocking (``jobs.engine.run_blocking``): call it from synchronous code."""

    async def main() -> list[JobResult]:
        assert settings.model and settings.base_url, "checked by the caller"
        generator = OpenAICompatibleProvider(
            base_url=settings.base_url,
            model=settings.model,
            api_key_env=settings.api_key_env,
            temperature=GENERATE_TEMPERATURE,
            max_tokens=GENERATE_MAX_TOKENS,
            timeout=CALL_TIMEOUT,
            connections=settings.concurrency,
        )
        validator = OpenAICompatibleProvider(
            base_url=settings.base_url,
            model=settings.validator,
            api_key_env=settings.api_key_env,
            temperature=VALIDATE_TEMPERATURE,
            max_tokens=VALIDATE_MAX_TOKENS,
            timeout=CALL_TIMEOUT,
            connections=settings.concurrency,
        )
        endpoints = _Endpoints(
            generator, validator, settings.model, settings.validator, asyncio.Semaphore(max(1, settings.concurrency))
        )
        try:
            return list(await asyncio.gather(*(job_run(job, endpoints, matcher) for job in jobs)))
        finally:
            await generator.close()
            await validator.close()

    return run_blocking(main)
