"""One candidate hypothesis scored by a completions endpoint: the model's surprisal over the hypothesis span.

No Django here (only the engine's error classes and key lookup; ``jobs.engine`` is imported where it is called): a
scoring driver calls ``CompletionsScorer`` through ``jobs.engine.call_with_backoff`` like a chat provider, because it
implements the ``Provider`` protocol (``complete`` takes the messages of ``scoring_messages`` and returns a
``SpanScore``, a ``Completion`` that carries the score). ``score_with_retries`` does that for one candidate with the
engine's retries, ``score_candidates`` for a batch, several at a time.

Calls and retries, as for every run kind (issue 22): each HTTP request is a call in the driver's ledger, a
``/tokenize`` request as much as a completions one, counted right before it is sent (``counted(before_request)``
gives one task's view of the scorer that does so). An answer that comes back without usable prompt
log-probabilities (none at all, null, a list missing, lists of different lengths, a value that is not finite, a
span token without a value, the prompt not echoed in full) is a malformed answer: ``complete`` returns it as a
``MalformedAnswer`` and ``score_with_retries`` asks again, ``jobs.driving.MAX_PARSE_ATTEMPTS`` answers at most
like the judging kinds, then gives a reason a person can read (``malformed_reason``: what was wrong, which
endpoint and model, what to check). What contradicts the configuration (raw logits for 'nll', two tokenizers, text
offsets that are not character offsets) stays a PermanentError: asking again would not change it.

The method (PROTOCOL.md §4, issue 14)
  prompt  = ``Background: {background}\\nResearch Question: {question}\\nHypothesis: {candidate}``
  prefix  = the prompt up to and including ``Hypothesis:`` (the space before the candidate is *not* in it)
  span    = the prompt tokens at index >= len(tokens of the prefix tokenized on its own)
  value   = −(what the endpoint reports for the span token): NLL ℓ_t = −log softmax(z_t)[x_t] when the server gives
            log-probabilities, energy E_t = −z_t[x_t] when it gives raw logits (vLLM ``--logprobs-mode raw_logits``)
  score   = mean over the span (primary), sum (the length check) and the token count; lower is better.

Requests per candidate: ``POST /tokenize`` of the prefix (cached: the 16 candidates of a paper share it),
``POST /tokenize`` of the prompt, and ``POST {base_url}/completions`` with ``echo: true``, ``logprobs: K`` and
``max_tokens: 1`` (the token it generates is not part of the span: only the prompt's tokens are read).

Where the span starts: when the prompt's first k tokens are the prefix's k tokens (a clean boundary, the usual
case), the span is the tokens from index k. When they differ, the last token(s) of the prefix merged with the
candidate's first characters (``"...sis:" + " We"`` tokenized as ``"sis: We"``): "index >= k" would then skip
candidate tokens (k counts the prefix's own, finer tokens), so the span falls back to text offsets — the prompt
tokens whose ``text_offset`` is at or after the prefix's length — and the score records ``span_method
"text_offset"`` and ``boundary_merged``. The straddling token, which predicts prefix and candidate characters
together, is left out; ``skipped_chars`` says how many candidate characters it covered (they are not scored).
Without ``/tokenize`` (a server answering 404, e.g. not vLLM) every span is located by text offsets.
Limit of text offsets: they must be character offsets into the prompt (OpenAI's and vLLM's are computed from the
decoded tokens, which drift when a token decodes to a replacement character); the fallback checks they increase
and stay inside the prompt.

Which values the server gives is configuration, not guesswork: the scorer names the server's ``--logprobs-mode``
(``raw_logprobs``, vLLM's default, gives NLL; ``raw_logits`` gives energy; the ``processed_*`` modes apply
sampling processors and are refused), and a criterion the mode cannot give is refused before any request. The
configuration is then checked against what comes back: a value above 0, or top-K values whose probabilities sum
above 1, cannot be a log-probability, so it proves raw logits. Every answer of a server configured as log-softmax
is checked this way (a contradiction is a PermanentError, never a silently wrong score); ``probe()`` checks a
server configured as raw logits once before a run, and refuses it unless the proof shows up. The limit: the check
proves logits, it cannot prove log-softmax — a logits server whose logits were all negative with small
exponentials would pass as log-softmax (real models' top logits are positive, so a short probe finds them).
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from jobs.parsing import ParseError
from jobs.providers import (
    Completion,
    PermanentError,
    Provider,
    TransientError,
    api_key_from_env,
    error_message,
    shorten,
)

PROMPT_TEMPLATE = "Background: {background}\nResearch Question: {question}\nHypothesis: {candidate}"
PREFIX_TEMPLATE = "Background: {background}\nResearch Question: {question}\nHypothesis:"
CRITERIA = ("nll", "energy")
#: What each vLLM ``--logprobs-mode`` gives; the ``processed_*`` modes (after temperature, penalties) give neither.
MODE_GIVES: dict[str, str | None] = {
    "raw_logprobs": "nll",
    "raw_logits": "energy",
    "processed_logprobs": None,
    "processed_logits": None,
}
MODE_FOR = {"nll": "raw_logprobs", "energy": "raw_logits"}
#: Slack for float rounding when deciding that a value cannot be a log-probability.
LOGPROB_TOLERANCE = 1e-4
TOP_LOGPROBS = 5  # alternatives per position: their probabilities must sum to at most 1 under log-softmax
PREFIX_CACHE = 256  # prefixes whose tokens are kept (a paper's candidates share one; a batch spans a few papers)
PROBE = (
    "A cell culture was grown in standard medium for three days.",
    "Does the medium change growth?",
    "The medium changes the growth rate of the culture.",
)
ROLES = ("background", "question", "hypothesis")
#: Awaited right before each HTTP request is sent: where a driver counts the call in its ledger.
BeforeRequest = Callable[[], Awaitable[None]]


class EmptyCandidate(PermanentError):
    """A candidate with no text: its span would be empty, so it has no score."""


def build_prompt(background: str, question: str, candidate: str) -> str:
    """The scoring prompt of one candidate (the template of issue 14). Refuses a blank candidate."""
    if not candidate or not candidate.strip():
        raise EmptyCandidate("the candidate hypothesis is empty: an empty span has no score; fix the candidate's text")
    return PROMPT_TEMPLATE.format(background=background, question=question, candidate=candidate)


def build_prefix(background: str, question: str) -> str:
    """Everything of the prompt up to and including ``Hypothesis:``, tokenized on its own to find the span."""
    return PREFIX_TEMPLATE.format(background=background, question=question)


def scoring_messages(background: str, question: str, candidate: str) -> list[dict[str, str]]:
    """What ``call_with_backoff`` hands to ``CompletionsScorer.complete``: the three texts, by role."""
    return [{"role": role, "content": text} for role, text in zip(ROLES, (background, question, candidate), strict=True)]


@dataclass
class SpanScore(Completion):
    """The score of one candidate; ``text`` is its JSON summary (what a driver stores as the raw answer).

    ``values``: per span token, −(the endpoint's value), i.e. ℓ_t (criterion "nll") or E_t ("energy").
    ``span_method``: "tokenize" (index >= the prefix's token count) or "text_offset" (the fallback, see the
    module docstring); ``boundary_merged``: the prompt's tokens differ from the prefix's at the boundary;
    ``skipped_chars``: candidate characters inside a straddling token, hence unscored;
    ``logits_proved``: a value came back that no log-probability can have.
    """

    criterion: str = "nll"
    values: list[float] = field(default_factory=list)
    tokens: list[str] = field(default_factory=list)
    mean: float = math.nan
    total: float = math.nan
    n_tokens: int = 0
    span_method: str = "tokenize"
    boundary_merged: bool = False
    skipped_chars: int = 0
    logits_proved: bool = False

    def summary(self) -> dict[str, Any]:
        return {
            "criterion": self.criterion,
            "mean": self.mean,
            "sum": self.total,
            "n_tokens": self.n_tokens,
            "span_method": self.span_method,
            "boundary_merged": self.boundary_merged,
            "skipped_chars": self.skipped_chars,
            "logits_proved": self.logits_proved,
        }


@dataclass
class MalformedAnswer(Completion):
    """An answer that came back (and was paid for) without usable prompt log-probabilities. ``complete`` returns it
    rather than raising, as a chat provider returns a judge's unparseable text: the engine's ``call_with_backoff``
    hands answers back and the caller asks again (:func:`score_with_retries`). ``problem`` says what was wrong in
    words; ``text`` is the start of the answer."""

    problem: str = ""


class MalformedLogprobs(ParseError):
    """What ``score`` raises for a :class:`MalformedAnswer`; the message is its problem."""


@dataclass
class Echoed:
    """The checked ``logprobs`` block of a completions answer: lists of one length, values finite numbers or None."""

    tokens: list[str]
    values: list[float | None]
    offsets: list[int]
    top: list[Any]


def _shown(value: Any) -> str:
    """A JSON value as a person reads it in an error: its kind and its start."""
    kinds = {type(None): "null", bool: "a boolean", str: "a string", dict: "an object", list: "a list"}
    kind = kinds.get(type(value), "a number")
    return kind if value is None else f"{kind} ({shorten(json.dumps(value), 40)})"


def _listed(block: dict[str, Any], key: str, types: type | tuple[type, ...], described: str) -> list[Any]:
    value = block.get(key)
    if value is None:
        raise MalformedLogprobs(f"logprobs.{key} is missing")
    if not isinstance(value, list):
        raise MalformedLogprobs(f"logprobs.{key} is {_shown(value)}, not a list")
    wrong = next((i for i, item in enumerate(value) if isinstance(item, bool) or not isinstance(item, types)), None)
    if wrong is not None:
        raise MalformedLogprobs(f"logprobs.{key}[{wrong}] is {_shown(value[wrong])}; it must hold {described}")
    return value


def read_logprobs(data: Any) -> Echoed:
    """The ``choices[0].logprobs`` block of a completions answer, checked. :class:`MalformedLogprobs` says in words
    what is missing or wrong (never a Python error): no choice, no block (null: a server that ignores ``echo`` or
    ``logprobs``), a list missing or of the wrong type, lists of different lengths, a value that is not finite."""
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise MalformedLogprobs("the answer has no choices[0]")
    block = choices[0].get("logprobs")
    if block is None:
        raise MalformedLogprobs("the answer came without log-probabilities (choices[0].logprobs is missing or null)")
    if not isinstance(block, dict):
        raise MalformedLogprobs(f"choices[0].logprobs is {_shown(block)}, not an object")
    tokens = _listed(block, "tokens", str, "strings")
    values = _listed(block, "token_logprobs", (int, float, type(None)), "numbers or null")
    offsets = _listed(block, "text_offset", int, "integers")
    if not len(tokens) == len(values) == len(offsets):
        raise MalformedLogprobs(
            f"logprobs has {len(tokens)} tokens, {len(values)} token_logprobs and {len(offsets)} text_offset values; "
            "there must be one of each per token"
        )
    bad = next((i for i, v in enumerate(values) if v is not None and not math.isfinite(v)), None)
    if bad is not None:
        raise MalformedLogprobs(f"logprobs.token_logprobs[{bad}] is {values[bad]!r}, not a finite number")
    top = block.get("top_logprobs")
    return Echoed(tokens=tokens, values=values, offsets=offsets, top=top if isinstance(top, list) else [])


def _count(usage: dict[str, Any], key: str) -> int | None:
    """A token count of the answer's ``usage``, or None when it is absent or not a count."""
    value = usage.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _texts(messages: list[dict[str, str]]) -> tuple[str, str, str]:
    """The background, question and candidate that ``scoring_messages`` packed into ``messages``."""
    texts = {m.get("role"): m.get("content") for m in messages}
    if set(texts) != set(ROLES) or not all(isinstance(t, str) for t in texts.values()):
        raise PermanentError(f"a scoring request needs the roles {', '.join(ROLES)} (built by scoring_messages)")
    return texts["background"], texts["question"], texts["hypothesis"]  # type: ignore[return-value]


@dataclass
class ModeProbe:
    """What a probe saw: whether raw logits were proved, and the evidence (or its absence) in words."""

    logits_proved: bool
    detail: str


def _evidence_of_logits(token_logprobs: Sequence[float | None], top_logprobs: Sequence[Any]) -> str | None:
    """Why these values cannot be log-probabilities (a value above 0, or top-K probabilities summing above 1), or None."""
    for position, value in enumerate(token_logprobs):
        if value is not None and value > LOGPROB_TOLERANCE:
            return f"value {value:+.4f} at prompt token {position}"
    for position, top in enumerate(top_logprobs):
        if isinstance(top, dict) and top:
            values = [v for v in top.values() if isinstance(v, int | float)]
            if not values:
                continue
            peak = max(values)
            if peak + math.log(sum(math.exp(v - peak) for v in values)) > LOGPROB_TOLERANCE:
                return f"the top {len(values)} values at prompt token {position} sum to probability above 1"
    return None


def completions_body(model: str, prompt: str) -> dict[str, Any]:
    """The completions request that scores a candidate: the prompt echoed with its tokens' log-probabilities and one
    token generated (what the call cache keys a candidate's score on, ``intrinsic.scoring``)."""
    return {"model": model, "prompt": prompt, "echo": True, "logprobs": TOP_LOGPROBS, "max_tokens": 1, "temperature": 0.0}


class CompletionsScorer:
    """Scores candidates with one model and one criterion against an OpenAI-compatible completions endpoint.

    Preconditions: ``logprobs_mode`` is the server's ``--logprobs-mode`` (vLLM; a server that is not vLLM gives
    log-probabilities: "raw_logprobs"), and it gives ``criterion`` — else PermanentError at construction, naming the
    criterion, the endpoint and the flag to set. The API key comes from the environment variable ``api_key_env``.
    ``tokenize_url`` defaults to ``/tokenize`` at the server's root (``base_url`` without its ``/v1``).
    """

    replay = False

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        criterion: str,
        logprobs_mode: str,
        api_key_env: str | None = None,
        timeout: float = 120.0,
        connections: int = 8,
        tokenize_url: str | None = None,
    ) -> None:
        import httpx

        if criterion not in CRITERIA:
            raise PermanentError(f"unknown criterion {criterion!r}: choose one of {', '.join(CRITERIA)}")
        if logprobs_mode not in MODE_GIVES:
            raise PermanentError(
                f"unknown logprobs mode {logprobs_mode!r} for {base_url}: choose one of "
                f"{', '.join(MODE_GIVES)} (the value of the server's --logprobs-mode)"
            )
        gives = MODE_GIVES[logprobs_mode]
        if gives != criterion:
            what = {"nll": "log-probabilities", "energy": "raw logits", None: "values after sampling processors"}
            other = f" (or score this endpoint with criterion {gives!r})" if gives else ""
            raise PermanentError(
                f"criterion {criterion!r} needs {what[criterion]}, but the endpoint {base_url} is configured as running "
                f"--logprobs-mode {logprobs_mode}, which gives {what[gives]}: start vLLM with --logprobs-mode "
                f"{MODE_FOR[criterion]}{other}"
            )
        self.model = model
        self.criterion = criterion
        self.logprobs_mode = logprobs_mode
        self.base_url = base_url.rstrip("/")
        self.url = self.base_url + "/completions"
        root = self.base_url[: -len("/v1")] if self.base_url.endswith("/v1") else self.base_url
        self.tokenize_url = tokenize_url or root + "/tokenize"
        self.headers = {
            "Authorization": f"Bearer {api_key_from_env(api_key_env)}",
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": "lit2test-web",
        }
        self.client = httpx.AsyncClient(
            timeout=timeout,
            follow_redirects=False,
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=max(1, connections)),
        )
        self.tokenize_absent = False  # set once the server answers /tokenize with 404
        self._prefixes: OrderedDict[str, list[int]] = OrderedDict()

    # ------------------------------------------------------------------ Provider protocol
    async def complete(
        self, *, messages: list[dict[str, str]], task: tuple[int, str] | None = None
    ) -> SpanScore | MalformedAnswer:
        """The score of the candidate that ``scoring_messages`` packed into ``messages``, or the
        :class:`MalformedAnswer` to ask again (:func:`score_with_retries` does)."""
        return await self.answer(*_texts(messages))

    def counted(self, before_request: BeforeRequest | None) -> Provider:
        """This scorer as the provider of one task: ``before_request`` is awaited right before each request it sends,
        a ``/tokenize`` one as much as the completions one, so that the driver's ledger counts every request."""
        return _CountedScorer(self, before_request)

    async def close(self) -> None:
        await self.client.aclose()

    # ------------------------------------------------------------------ scoring
    async def score(
        self, background: str, question: str, candidate: str, *, before_request: BeforeRequest | None = None
    ) -> SpanScore:
        """Score one candidate; TransientError for what a retry may fix, :class:`MalformedLogprobs` for an answer
        without usable log-probabilities (worth asking again), PermanentError otherwise."""
        answer = await self.answer(background, question, candidate, before_request=before_request)
        if isinstance(answer, MalformedAnswer):
            raise MalformedLogprobs(answer.problem)
        return answer

    async def answer(
        self, background: str, question: str, candidate: str, *, before_request: BeforeRequest | None = None
    ) -> SpanScore | MalformedAnswer:
        """One try: the tokenizations not cached yet, then the completions request, each preceded by
        ``before_request``. The span's score, or a :class:`MalformedAnswer` saying what was unusable; raises
        TransientError or PermanentError as ``score`` does."""
        prompt = build_prompt(background, question, candidate)
        prefix = build_prefix(background, question)
        started = time.perf_counter()
        prefix_ids = await self._prefix_tokens(prefix, before_request)
        prompt_ids = await self._tokenize(prompt, before_request) if prefix_ids is not None else None
        data = await self._post(
            self.url,
            completions_body(self.model, prompt),
            what="completions",
            before_request=before_request,
        )
        latency = time.perf_counter() - started
        usage = data.get("usage") if isinstance(data, dict) else None
        usage = usage if isinstance(usage, dict) else {}
        tokens_in, tokens_out = _count(usage, "prompt_tokens"), _count(usage, "completion_tokens")
        try:
            result = self._span_score(read_logprobs(data), prompt, prefix, prefix_ids, prompt_ids, tokens_in)
        except MalformedLogprobs as exc:
            return MalformedAnswer(
                text=shorten(json.dumps(data)),
                latency_seconds=latency,
                prompt_tokens=tokens_in,
                completion_tokens=tokens_out,
                problem=str(exc),
            )
        result.latency_seconds, result.prompt_tokens, result.completion_tokens = latency, tokens_in, tokens_out
        result.text = json.dumps(result.summary())
        return result

    def _span_score(
        self,
        echoed: Echoed,
        prompt: str,
        prefix: str,
        prefix_ids: list[int] | None,
        prompt_ids: list[int] | None,
        counted: int | None,
    ) -> SpanScore:
        """The span's values in a checked answer (see the module docstring for where the span starts). Raises
        MalformedLogprobs for a prompt not echoed in full or a span token without a value, PermanentError for what
        contradicts the configuration (raw logits for 'nll', two tokenizers, offsets that are not character offsets)."""
        offsets = echoed.offsets
        n_prompt = self._prompt_length(counted, prompt_ids, offsets, len(prompt))
        evidence = _evidence_of_logits(echoed.values[:n_prompt], echoed.top[:n_prompt])
        if evidence is not None and MODE_GIVES[self.logprobs_mode] == "nll":
            raise PermanentError(
                f"the endpoint {self.base_url} returns raw logits ({evidence}), not log-probabilities, so criterion "
                f"'nll' cannot be read from it: restart vLLM without --logprobs-mode raw_logits (its default is "
                f"raw_logprobs), or score it with criterion 'energy' and logprobs_mode 'raw_logits'"
            )

        if prefix_ids is not None and prompt_ids is not None and prompt_ids[: len(prefix_ids)] == prefix_ids:
            start, method, merged = len(prefix_ids), "tokenize", False
            if start >= n_prompt:
                raise PermanentError(f"the candidate adds no token after the prefix at {self.tokenize_url}")
            positions = list(range(start, n_prompt))
        else:
            merged = prefix_ids is not None
            method = "text_offset"
            if any(b < a for a, b in zip(offsets[:n_prompt], offsets[1:n_prompt], strict=False)) or (
                n_prompt and offsets[n_prompt - 1] >= len(prompt)
            ):
                raise PermanentError(
                    f"the text offsets of {self.url} are not character offsets into the prompt (they decrease or pass "
                    "its end), so the hypothesis span cannot be located: serve /tokenize (vLLM) or fix the offsets"
                )
            positions = [i for i in range(n_prompt) if offsets[i] >= len(prefix)]
            if not positions:
                raise PermanentError(f"no prompt token of {self.url} starts inside the candidate: its span is empty")
        skipped = offsets[positions[0]] - len(prefix) if method == "text_offset" else 0
        missing = next((i for i in positions if echoed.values[i] is None), None)
        if missing is not None:
            raise MalformedLogprobs(
                f"logprobs.token_logprobs[{missing}] is null, but token {echoed.tokens[missing]!r} is in the hypothesis"
            )
        values = [-float(echoed.values[i]) for i in positions]  # type: ignore[arg-type]
        return SpanScore(
            text="",
            latency_seconds=0.0,
            criterion=self.criterion,
            values=values,
            tokens=[echoed.tokens[i] for i in positions],
            mean=math.fsum(values) / len(values),
            total=math.fsum(values),
            n_tokens=len(values),
            span_method=method,
            boundary_merged=merged,
            skipped_chars=skipped,
            logits_proved=evidence is not None,
        )

    def malformed_reason(self, problems: Sequence[str]) -> str:
        """Why a candidate has no score after every answer came without usable log-probabilities: what was wrong,
        from which endpoint and model, and what to check (for a task's failure; a person reads it)."""
        distinct = list(dict.fromkeys(problems))
        what = distinct[0] if len(distinct) == 1 else "; ".join(f"answer {i}: {p}" for i, p in enumerate(problems, 1))
        # The problem first: a runs page shows the first 90 characters of a task's reason.
        return (
            f"no usable prompt log-probabilities in {len(problems)} answer(s) from the endpoint {self.url} (model "
            f"{self.model!r}): {what}; check that it serves legacy completions with echo=true and logprobs={TOP_LOGPROBS} "
            "for this model (vLLM's /v1/completions does; chat-only servers do not)"
        )

    async def probe(self, *, before_request: BeforeRequest | None = None) -> ModeProbe:
        """Check the configured mode on a short fixed prompt (:meth:`mode_check`); MalformedLogprobs as ``score``."""
        return self.mode_check(await self.score(*PROBE, before_request=before_request))

    def mode_check(self, result: SpanScore) -> ModeProbe:
        """What the probe's answer says of the configured mode; refuses (PermanentError) a mode it contradicts.

        A server configured as raw logits passes only if the answer proves logits (see the module docstring);
        one configured as log-probabilities passes unless the answer proves logits (``score`` refuses it then).
        """
        if MODE_GIVES[self.logprobs_mode] == "energy" and not result.logits_proved:
            raise PermanentError(
                f"the endpoint {self.base_url} is configured as running --logprobs-mode raw_logits, but its answer to a "
                "probe looks like log-probabilities (no value above 0, top values summing to at most probability 1): "
                "start vLLM with --logprobs-mode raw_logits, or score it with criterion 'nll'"
            )
        detail = (
            "raw logits proved by the probe"
            if result.logits_proved
            else "consistent with log-probabilities (no value above 0); a server of raw logits that are all "
            "negative would look the same"
        )
        return ModeProbe(logits_proved=result.logits_proved, detail=detail)

    # ------------------------------------------------------------------ helpers
    def _prompt_length(self, counted: int | None, prompt_ids: list[int] | None, offsets: list[int], length: int) -> int:
        """How many of the echoed tokens are the prompt's (the rest were generated), cross-checked with /tokenize.
        ``counted``: the answer's ``usage.prompt_tokens``, if it gave one."""
        if prompt_ids is not None:
            if counted is not None and counted != len(prompt_ids):
                raise PermanentError(
                    f"{self.tokenize_url} counts {len(prompt_ids)} prompt tokens but {self.url} counted {counted}: the two "
                    "endpoints must serve the same model (set tokenize_url to the completions server's /tokenize)"
                )
            counted = len(prompt_ids)
        if counted is None:
            counted = sum(1 for offset in offsets if offset < length)  # generated tokens start at or after the prompt's end
        if counted > len(offsets):
            raise MalformedLogprobs(
                f"the answer echoed {len(offsets)} token(s) of a prompt of {counted}: the prompt was not echoed in full"
            )
        return counted

    async def _prefix_tokens(self, prefix: str, before_request: BeforeRequest | None) -> list[int] | None:
        if self.tokenize_absent:
            return None
        cached = self._prefixes.get(prefix)
        if cached is not None:
            self._prefixes.move_to_end(prefix)
            return cached
        ids = await self._tokenize(prefix, before_request)
        if ids is not None:
            self._prefixes[prefix] = ids
            while len(self._prefixes) > PREFIX_CACHE:
                self._prefixes.popitem(last=False)
        return ids

    async def _tokenize(self, text: str, before_request: BeforeRequest | None) -> list[int] | None:
        """The server's token ids of ``text`` (with its special tokens, as the completions endpoint adds them), or
        None when the server has no /tokenize."""
        if self.tokenize_absent:
            return None
        data = await self._post(
            self.tokenize_url, {"model": self.model, "prompt": text}, what="tokenize", before_request=before_request
        )
        if data is None:
            self.tokenize_absent = True
            return None
        tokens = data.get("tokens") if isinstance(data, dict) else None
        if not isinstance(tokens, list) or not all(isinstance(t, int) for t in tokens):
            raise PermanentError(f"{self.tokenize_url} did not answer a token list: {shorten(json.dumps(data))}")
        return tokens

    async def _post(self, url: str, body: dict[str, Any], *, what: str, before_request: BeforeRequest | None = None) -> Any:
        """POST JSON, awaiting ``before_request`` first; None for a tokenize route that does not exist. Errors keep the
        chat provider's meaning."""
        import httpx

        if before_request is not None:
            await before_request()
        try:
            response = await self.client.post(url, content=json.dumps(body).encode(), headers=self.headers)
        except httpx.TimeoutException:
            raise TransientError(f"the {what} endpoint timed out") from None
        except httpx.TransportError as exc:
            raise TransientError(f"connection to the {what} endpoint failed: {type(exc).__name__}") from None
        status = response.status_code
        if status == 429 or status >= 500:
            header = response.headers.get("retry-after")
            try:
                retry_after = float(header) if header is not None else None
            except ValueError:
                retry_after = None
            raise TransientError(f"HTTP {status} from {url}", retry_after=retry_after)
        if what == "tokenize" and status in (404, 405):
            return None
        if status >= 300:
            raise PermanentError(f"HTTP {status} from {url}: {shorten(error_message(response.content))}")
        try:
            return json.loads(response.content)
        except ValueError:
            raise PermanentError(f"{url} answered something that is not JSON: {shorten(response.text)}") from None


class _CountedScorer:
    """One task's view of a :class:`CompletionsScorer` (its client and prefix cache), counting each request it sends."""

    replay = False

    def __init__(self, scorer: CompletionsScorer, before_request: BeforeRequest | None) -> None:
        self.scorer = scorer
        self.before_request = before_request

    async def complete(
        self, *, messages: list[dict[str, str]], task: tuple[int, str] | None = None
    ) -> SpanScore | MalformedAnswer:
        return await self.scorer.answer(*_texts(messages), before_request=self.before_request)

    async def close(self) -> None:
        return None  # the client is the scorer's, closed by whoever made the scorer


class _FailedCalls:
    """``call_with_backoff``'s ``before_call`` when the scorer counts its own requests: a try is not one call (its
    requests are counted one by one as they are sent), and a try that failed is passed on to the ledger's ``failed``."""

    def __init__(self, ledger: Any) -> None:
        self.ledger_failed = getattr(ledger, "failed", None)

    async def __call__(self) -> None:
        return None

    async def failed(self, message: str) -> None:
        if self.ledger_failed is not None:
            await self.ledger_failed(message)


@dataclass
class ScoreOutcome:
    """One candidate after its retries: ``completion`` its score, or None and ``error`` (why, in words). ``calls``:
    the tries (``call_with_backoff``'s, each one request sequence); ``requests``: the HTTP requests sent, which the
    ledger counts; ``malformed``: the problems of the answers asked again; the tokens of every answer (a malformed
    answer was paid for too)."""

    completion: SpanScore | None = None
    error: str | None = None
    calls: int = 0
    requests: int = 0
    malformed: list[str] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0


async def score_with_retries(
    scorer: CompletionsScorer,
    triple: tuple[str, str, str],
    *,
    attempts: int,
    limiter: Any = None,
    before_call: BeforeRequest | None = None,
) -> ScoreOutcome:
    """Score one (background, question, candidate) with the engine's retries: 429/5xx/timeouts with backoff
    (``jobs.engine.call_with_backoff``, in the endpoint ``limiter``'s slots), and an answer without usable
    log-probabilities asked again, ``attempts`` answers at most (the judging kinds' ``MAX_PARSE_ATTEMPTS``), after
    which ``error`` is :meth:`CompletionsScorer.malformed_reason`.

    ``before_call`` is the driver's ledger hook (``jobs.engine.BeforeCall``): awaited before every request sent, each
    ``/tokenize`` and completions request being a call, and its ``failed`` told of every try that failed."""
    from jobs.engine import call_with_backoff

    outcome = ScoreOutcome()

    async def before_request() -> None:
        if before_call is not None:
            await before_call()
        outcome.requests += 1

    provider = scorer.counted(before_request)
    messages = scoring_messages(*triple)
    for _ in range(max(1, attempts)):
        tried = await call_with_backoff(provider, limiter, messages, None, _FailedCalls(before_call))
        outcome.calls += tried.calls
        answer = tried.completion
        if answer is None:
            outcome.error = tried.error or "no answer"
            return outcome
        outcome.prompt_tokens += answer.prompt_tokens or 0
        outcome.completion_tokens += answer.completion_tokens or 0
        if not isinstance(answer, MalformedAnswer):
            outcome.completion = answer  # type: ignore[assignment]
            return outcome
        outcome.malformed.append(answer.problem)
    outcome.error = scorer.malformed_reason(outcome.malformed)
    return outcome


async def score_candidates(
    scorer: CompletionsScorer,
    candidates: Sequence[tuple[str, str, str]],
    *,
    limiter: Any = None,
    concurrency: int = 8,
    attempts: int | None = None,
) -> list[ScoreOutcome]:
    """Score (background, question, candidate) triples, one :func:`score_with_retries` each, ``concurrency`` at a
    time; ``attempts`` answers at most per candidate (default: the engine's ``MAX_PARSE_ATTEMPTS``).

    Returns a :class:`ScoreOutcome` per candidate, in order: ``completion`` is the ``SpanScore`` or None with
    ``error`` saying why (a permanent error, transient errors beyond the retry budget, or every answer malformed).
    """
    from jobs.driving import MAX_PARSE_ATTEMPTS

    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(triple: tuple[str, str, str]) -> ScoreOutcome:
        async with gate:
            return await score_with_retries(scorer, triple, attempts=attempts or MAX_PARSE_ATTEMPTS, limiter=limiter)

    return list(await asyncio.gather(*(one(triple) for triple in candidates)))
