"""One candidate hypothesis scored by a completions endpoint: the model's surprisal over the hypothesis span.

No Django here (only ``jobs.providers``' error classes and key lookup): a scoring driver calls
``CompletionsScorer`` through ``jobs.engine.call_with_backoff`` like a chat provider, because it implements the
``Provider`` protocol (``complete`` takes the messages of ``scoring_messages`` and returns a ``SpanScore``, a
``Completion`` that carries the score). ``score_candidates`` does that for a batch, one candidate per request,
several at a time.

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
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from jobs.providers import Completion, PermanentError, TransientError, api_key_from_env, error_message, shorten

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
    async def complete(self, *, messages: list[dict[str, str]], task: tuple[int, str] | None = None) -> SpanScore:
        """The score of the candidate that ``scoring_messages`` packed into ``messages``."""
        texts = {m.get("role"): m.get("content") for m in messages}
        if set(texts) != set(ROLES) or not all(isinstance(t, str) for t in texts.values()):
            raise PermanentError(f"a scoring request needs the roles {', '.join(ROLES)} (built by scoring_messages)")
        return await self.score(texts["background"], texts["question"], texts["hypothesis"])

    async def close(self) -> None:
        await self.client.aclose()

    # ------------------------------------------------------------------ scoring
    async def score(self, background: str, question: str, candidate: str) -> SpanScore:
        """Score one candidate; TransientError for what a retry may fix, PermanentError otherwise."""
        prompt = build_prompt(background, question, candidate)
        prefix = build_prefix(background, question)
        started = time.perf_counter()
        prefix_ids = await self._prefix_tokens(prefix)
        prompt_ids = await self._tokenize(prompt) if prefix_ids is not None else None
        data = await self._post(
            self.url,
            {
                "model": self.model,
                "prompt": prompt,
                "echo": True,
                "logprobs": TOP_LOGPROBS,
                "max_tokens": 1,
                "temperature": 0.0,
            },
            what="completions",
        )
        latency = time.perf_counter() - started
        try:
            choice = data["choices"][0]
            logprobs = choice["logprobs"]
            token_logprobs = list(logprobs["token_logprobs"])
            tokens = [str(t) for t in logprobs["tokens"]]
            offsets = [int(o) for o in logprobs["text_offset"]]
            top_logprobs = list(logprobs.get("top_logprobs") or [])
            usage = data.get("usage") or {}
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise PermanentError(
                f"the endpoint {self.url} did not return prompt log-probabilities ({type(exc).__name__}: {exc}): it must "
                "accept echo=true with logprobs (vLLM, or an OpenAI-compatible legacy completions server)"
            ) from None
        if not (len(token_logprobs) == len(tokens) == len(offsets)):
            raise PermanentError(f"the endpoint {self.url} returned logprobs lists of different lengths")
        n_prompt = self._prompt_length(usage, prompt_ids, offsets, len(prompt))
        evidence = _evidence_of_logits(token_logprobs[:n_prompt], top_logprobs[:n_prompt])
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
        raw = [token_logprobs[i] for i in positions]
        if any(v is None for v in raw):
            raise PermanentError(f"the endpoint {self.url} gave no value for a token of the hypothesis span")
        values = [-float(v) for v in raw]  # type: ignore[arg-type]
        result = SpanScore(
            text="",
            latency_seconds=latency,
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
            criterion=self.criterion,
            values=values,
            tokens=[tokens[i] for i in positions],
            mean=math.fsum(values) / len(values),
            total=math.fsum(values),
            n_tokens=len(values),
            span_method=method,
            boundary_merged=merged,
            skipped_chars=skipped,
            logits_proved=evidence is not None,
        )
        result.text = json.dumps(result.summary())
        return result

    async def probe(self) -> ModeProbe:
        """Check the configured mode on a short fixed prompt; refuses (PermanentError) a mode the answer contradicts.

        A server configured as raw logits passes only if the answer proves logits (see the module docstring);
        one configured as log-probabilities passes unless the answer proves logits (``score`` refuses it then).
        """
        result = await self.score(*PROBE)
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
    def _prompt_length(self, usage: dict[str, Any], prompt_ids: list[int] | None, offsets: list[int], length: int) -> int:
        """How many of the echoed tokens are the prompt's (the rest were generated), cross-checked with /tokenize."""
        counted = usage.get("prompt_tokens")
        if prompt_ids is not None:
            if isinstance(counted, int) and counted != len(prompt_ids):
                raise PermanentError(
                    f"{self.tokenize_url} counts {len(prompt_ids)} prompt tokens but {self.url} counted {counted}: the two "
                    "endpoints must serve the same model (set tokenize_url to the completions server's /tokenize)"
                )
            counted = len(prompt_ids)
        if not isinstance(counted, int):
            counted = sum(1 for offset in offsets if offset < length)  # generated tokens start at or after the prompt's end
        if counted > len(offsets):
            raise PermanentError(f"{self.url} echoed {len(offsets)} tokens for a prompt of {counted}: is echo supported?")
        return counted

    async def _prefix_tokens(self, prefix: str) -> list[int] | None:
        if self.tokenize_absent:
            return None
        cached = self._prefixes.get(prefix)
        if cached is not None:
            self._prefixes.move_to_end(prefix)
            return cached
        ids = await self._tokenize(prefix)
        if ids is not None:
            self._prefixes[prefix] = ids
            while len(self._prefixes) > PREFIX_CACHE:
                self._prefixes.popitem(last=False)
        return ids

    async def _tokenize(self, text: str) -> list[int] | None:
        """The server's token ids of ``text`` (with its special tokens, as the completions endpoint adds them), or
        None when the server has no /tokenize."""
        if self.tokenize_absent:
            return None
        data = await self._post(self.tokenize_url, {"model": self.model, "prompt": text}, what="tokenize")
        if data is None:
            self.tokenize_absent = True
            return None
        tokens = data.get("tokens") if isinstance(data, dict) else None
        if not isinstance(tokens, list) or not all(isinstance(t, int) for t in tokens):
            raise PermanentError(f"{self.tokenize_url} did not answer a token list: {shorten(json.dumps(data))}")
        return tokens

    async def _post(self, url: str, body: dict[str, Any], *, what: str) -> Any:
        """POST JSON; None for a tokenize route that does not exist. Errors keep the chat provider's meaning."""
        import httpx

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


async def score_candidates(
    scorer: CompletionsScorer, candidates: Sequence[tuple[str, str, str]], *, limiter: Any = None, concurrency: int = 8
) -> list[Any]:
    """Score (background, question, candidate) triples, one request each, ``concurrency`` at a time, with the
    engine's retries and backoff (``jobs.engine.call_with_backoff``) and its endpoint ``limiter`` if given.

    Returns the engine's ``CallOutcome`` per candidate, in order: ``completion`` is the ``SpanScore`` or None with
    ``error`` saying why (a permanent error, or transient errors beyond the retry budget).
    """
    from jobs.engine import call_with_backoff

    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(triple: tuple[str, str, str]) -> Any:
        async with gate:
            return await call_with_backoff(scorer, limiter, scoring_messages(*triple), None)

    return list(await asyncio.gather(*(one(triple) for triple in candidates)))
