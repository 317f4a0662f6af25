"""Model aliases and their redaction from text. Plain Python: no Django import.

A participant (or a judge) is known by more than its release name: its family ("claude", "gpt"), its
vendor ("Anthropic", "OpenAI") and short or colloquial names ("ChatGPT", "deep seek"). Model outputs do
name themselves ("As Claude, a model trained by Anthropic ..."), so every alias of every model of a
benchmark is found in proposal text and replaced by :data:`PLACEHOLDER`.

Matching rules (the README's "Blindness and roles" section says the same for researchers):

* Text is compared after Unicode NFKC normalisation (full-width letters and digits become ASCII), with
  every dash (``‐ ‑ ‒ – — −`` …) read as ``-`` and zero-width characters and soft hyphens ignored.
* An alias is a sequence of tokens: runs of letters or digits, split also where letters meet digits and
  where a lower-case letter meets an upper-case one (``DeepSeek-V3.2`` is ``deep seek v 3 2``). Between two
  tokens the text may have nothing or up to three spaces, hyphens, underscores or dots, so ``deepseek``,
  ``Deep Seek`` and ``deep-seek`` all meet the alias ``deep seek``; between two numbers it may also say
  ``point`` or ``dot`` (``V3 point 2``).
* A match must start and end at a word edge: ``GPT`` is found in ``GPT-4`` and ``GPT4`` but not in
  ``ChatGPT`` (a separate alias, ``chat gpt``), and ``glm`` is not found in ``GLMs``.
* A version that follows a match belongs to it (``GPT-4o``, ``Llama 3.1 70B``, ``V3 point 2``), and so do
  variant words written with a capital or glued with a hyphen (``Gemini 2.5 Pro``, ``GPT-4-turbo``).
  Matches separated only by spaces, hyphens, underscores or slashes are redacted as one.
* Each alias has a *mode*, because some vendor and family words are ordinary words too:

  - ``word``: any capitalisation; a plural ``s`` is included (``GPTs``).
  - ``proper``: only written with a capital first letter (``Anthropic``, not the adjective ``anthropic``;
    ``LLaMA``, not the animal).
  - ``brand``: a common word or acronym (``meta``, ``sonnet``, ``glm``, ``grok``, ``moonshot``): only with a
    capital first letter, never as the first half of a hyphenated word (``Meta-analysis``), and only in an
    identifying position: followed by a version (``GLM-5``, ``Sonnet 4.6``), followed by ``AI``, ``Inc``,
    ``model(s)``, ``LLM``, ``family``, ``series``, ``team``, ``assistant``, ``chatbot``, ``API`` or a
    possessive ``'s`` (``Sonnet family``, ``Meta's``), or preceded by ``by``, ``from``, ``as``, ``am``,
    ``I'm``, ``called``, ``named``, ``trained``, ``developed``, ``built``, ``created``, ``powered`` or
    ``made`` (``trained by Meta``, ``As GLM``). So a generalized linear model (``a GLM``, ``GLMs``) and a
    meta-analysis stay readable.
  - ``exact``: case-sensitive (``xAI``, so that explainable AI, ``XAI``, is not hit).

* A few known non-model uses are exempt by rule (``Claude Shannon``).

Aliases are derived from a model's name and provider metadata with :data:`VENDORS`, a small table: the
tokens of the name that identify a vendor ("claude", "gpt", "deepseek", "glm", "gemini", ...) bring in all
of that vendor's aliases. A name the table does not know yields only itself; the researcher adds aliases.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from .errors import AppError

PLACEHOLDER = "[redacted]"

WORD, PROPER, BRAND, EXACT = "word", "proper", "brand", "exact"
MODES = (WORD, PROPER, BRAND, EXACT)
MODE_HELP = {
    WORD: "any capitalisation, plural included",
    PROPER: "only with a capital first letter",
    BRAND: "a common word: only capitalised and in an identifying position (version, 'AI', 'model', 'by …')",
    EXACT: "case-sensitive",
}

#: Where an alias comes from: the model's own name (always matched, cannot be removed), the vendor
#: table, or a researcher.
NAME, DERIVED, RESEARCHER = "name", "derived", "researcher"

MAX_ALIAS_LENGTH = 100
MAX_ALIASES = 100


@dataclass(frozen=True)
class Vendor:
    name: str
    #: Names that, found among a model name's tokens, say the model is this vendor's.
    triggers: tuple[str, ...]
    aliases: tuple[tuple[str, str], ...]


# Family, vendor and colloquial names. Ordinary English words are "brand" or "proper" (see the module doc).
VENDORS: tuple[Vendor, ...] = (
    Vendor(
        "Anthropic",
        ("claude", "anthropic", "sonnet", "opus", "haiku"),
        (("claude", WORD), ("anthropic", PROPER), ("sonnet", BRAND), ("opus", BRAND), ("haiku", BRAND)),
    ),
    Vendor(
        "OpenAI",
        ("gpt", "chatgpt", "openai"),
        (("gpt", WORD), ("chat gpt", WORD), ("openai", WORD), ("open ai", BRAND)),
    ),
    Vendor("DeepSeek", ("deepseek",), (("deep seek", WORD), ("深度求索", WORD))),
    Vendor(
        "Zhipu AI",
        ("glm", "chatglm", "zhipu", "zai"),
        (("glm", BRAND), ("chat glm", WORD), ("zhipu", WORD), ("z.ai", BRAND), ("智谱", WORD)),
    ),
    Vendor(
        "Google",
        ("gemini", "gemma", "bard", "google", "deepmind", "palm"),
        (
            ("gemini", WORD),
            ("gemma", PROPER),
            ("google", WORD),
            ("deepmind", WORD),
            ("deep mind", BRAND),
            ("bard", BRAND),
            ("palm", BRAND),
        ),
    ),
    Vendor("Meta", ("llama", "meta"), (("llama", PROPER), ("meta", BRAND))),
    Vendor(
        "Alibaba",
        ("qwen", "qwq", "tongyi", "alibaba"),
        (("qwen", WORD), ("qwq", WORD), ("tongyi", WORD), ("qianwen", WORD), ("alibaba", PROPER), ("通义", WORD), ("千问", WORD)),
    ),
    Vendor(
        "Mistral AI",
        ("mistral", "mixtral", "codestral", "magistral", "ministral"),
        (("mistral", PROPER), ("mixtral", WORD), ("codestral", WORD), ("magistral", WORD), ("ministral", WORD)),
    ),
    Vendor("xAI", ("grok", "xai"), (("grok", BRAND), ("xAI", EXACT))),
    Vendor("Moonshot AI", ("kimi", "moonshot"), (("kimi", PROPER), ("moonshot", BRAND), ("月之暗面", WORD))),
    Vendor("MiniMax", ("minimax",), (("minimax", BRAND),)),
    Vendor("Baidu", ("ernie", "baidu"), (("ernie", BRAND), ("baidu", WORD), ("文心", WORD))),
    Vendor("Microsoft", ("phi", "microsoft"), (("phi", BRAND), ("microsoft", PROPER))),
    Vendor("Cohere", ("cohere",), (("cohere", BRAND),)),
    Vendor("ByteDance", ("doubao", "bytedance"), (("doubao", WORD), ("bytedance", WORD), ("豆包", WORD))),
    Vendor("Tencent", ("hunyuan", "tencent"), (("hunyuan", WORD), ("tencent", WORD), ("混元", WORD))),
)

#: Uses of an alias that are not a model: a match followed by this (case-sensitive) is skipped.
EXCEPTIONS: dict[str, re.Pattern[str]] = {
    "claude": re.compile(r"(?:\s+E\.)?\s+Shannon(?![A-Za-z])"),
}

# Provider-metadata keys whose values are model identifiers (e.g. "anthropic/claude-sonnet-4-6").
MODEL_ID_KEYS = ("model", "model_id", "id", "api_model", "slug")


# --------------------------------------------------------------------------- normalisation


_ZERO_WIDTH = frozenset("\u00ad\u200b\u200c\u200d\u2060\ufeff\u180e")
_DASHES = frozenset("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u2043\ufe58\ufe63\uff0d")


#: Cyrillic and Greek letters drawn like a Latin letter (Unicode's confusables for these scripts, the unmistakable ones),
#: read as that letter where names are looked for: "Сlaude" with a Cyrillic С is Claude to a reader and to a judge. Only
#: for matching; what is shown keeps its letters. (``jobs.gates.fold`` reads them so too.)
LOOKALIKES = {
    **dict(zip("АВЕКМНОРСТХУЅІЈԚԜ", "ABEKMHOPCTXYSIJQW", strict=True)),
    **dict(zip("аеорсухѕіјԛԝһԁ", "aeopcyxsijqwhd", strict=True)),
    **dict(zip("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧ", "ABEZHIKMNOPTYX", strict=True)),
    **dict(zip("αικνορυ", "aikvopu", strict=True)),
}


def _read_as(c: str) -> str:
    """A character of an NFKC form beyond ASCII as the matcher reads it: a combining accent as nothing ("C\u0301laude"),
    a dash as ``-``, a space as `` ``, a Latin letter with accents as the letter ("à" as "a"); else as it is (look-alike
    letters are read in their word's context: :func:`_latin_lookalikes`)."""
    category = unicodedata.category(c)
    if category == "Mn":
        return ""
    if c in _DASHES or category == "Pd":
        return "-"
    if category == "Zs":
        return " "
    base = unicodedata.normalize("NFKD", c)
    if len(base) > 1 and base[0].isascii() and base[0].isalpha():
        return base[0]
    return c


_LOOKALIKE_CHARS = re.compile("[" + re.escape("".join(LOOKALIKES)) + "]")
_LATIN_LETTER = re.compile("[A-Za-z]")
_WORD = re.compile(r"\w+")
_TO_LATIN = str.maketrans(LOOKALIKES)


def _latin_lookalikes(text: str) -> str:
    """``text`` with the look-alike letters of each word that also holds a Latin letter read as Latin ("Сlaude" with a
    Cyrillic Es, "GLМ-5"), one character for one: a word of Cyrillic or Greek alone keeps its letters, so that "около 1"
    does not read as "o1" (UTS #39's mixed-script rule; review)."""
    if not _LOOKALIKE_CHARS.search(text):
        return text

    def word(m: re.Match[str]) -> str:
        w = m.group(0)
        return w.translate(_TO_LATIN) if _LATIN_LETTER.search(w) and _LOOKALIKE_CHARS.search(w) else w

    return _WORD.sub(word, text)


@lru_cache(maxsize=1 << 16)
def _reading(ch: str) -> str:
    """What one character of a text beyond ASCII becomes in the matcher's reading (remembered: a text's characters
    repeat, CJK text's by the thousand)."""
    if ch in _ZERO_WIDTH:
        return ""
    return "".join(c if c.isascii() else _read_as(c) for c in unicodedata.normalize("NFKC", ch))


def normalise(text: str) -> tuple[str, list[int]]:
    """NFKC text with dashes as ``-``, accents of Latin letters and zero-width characters and combining marks dropped,
    look-alike letters of other scripts read as Latin (:data:`LOOKALIKES`), and for each of its characters the offset of
    the character of ``text`` it came from (plus one final entry, ``len(text)``)."""
    if text.isascii():  # NFKC keeps ASCII as it is, and every dash and zero-width character is beyond it
        return text, list(range(len(text) + 1))
    out: list[str] = []
    where: list[int] = []
    for i, ch in enumerate(text):
        read = ch if ch.isascii() else _reading(ch)
        out.append(read)
        where.extend([i] * len(read))
    where.append(len(text))
    return _latin_lookalikes("".join(out)), where


_TOKEN = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+|[^\W\d_A-Za-z]+")


def tokens(text: str) -> list[str]:
    """An alias's tokens as written (see the module doc): ``DeepSeek-V3.2`` -> Deep, Seek, V, 3, 2."""
    return _TOKEN.findall(normalise(text)[0])


def _is_cjk(token: str) -> bool:
    return any(unicodedata.east_asian_width(c) in ("W", "F") for c in token)


def squash(text: str) -> str:
    return "".join(tokens(text)).lower()


# --------------------------------------------------------------------------- aliases


@dataclass(frozen=True)
class Alias:
    text: str
    mode: str = WORD
    source: str = DERIVED

    @property
    def key(self) -> tuple[str, str]:
        return (" ".join(t.lower() for t in tokens(self.text)) if self.mode != EXACT else " ".join(tokens(self.text)), self.mode)

    def as_dict(self) -> dict[str, str]:
        return {"text": self.text, "mode": self.mode, "source": self.source}

    @classmethod
    def from_dict(cls, value: Mapping[str, Any]) -> Alias:
        return cls(str(value["text"]), str(value.get("mode") or WORD), str(value.get("source") or DERIVED))


class AliasError(AppError, ValueError):
    """Aliases a researcher typed cannot be stored; ``problems`` names each line and what is wrong."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("; ".join(problems))

    def payload(self) -> dict[str, Any]:
        return {"detail": "the aliases were not saved", "problems": self.problems}


def check_alias(text: str, mode: str) -> str | None:
    """What is wrong with an alias, or None."""
    if mode not in MODES:
        return f"unknown mode {mode!r} (use one of {', '.join(MODES)})"
    if len(text) > MAX_ALIAS_LENGTH:
        return f"longer than {MAX_ALIAS_LENGTH} characters"
    if any(unicodedata.category(c) in ("Cc", "Cs", "Co", "Cn") for c in text):
        return "contains a control or unassigned character"
    parts = tokens(text)
    if not parts or (sum(len(p) for p in parts) < 2 and not any(_is_cjk(p) for p in parts)):
        return "an alias needs at least two letters or digits"
    if squash(text) == squash(PLACEHOLDER):
        return f"the placeholder {PLACEHOLDER} cannot be an alias"
    return None


def parse_alias_lines(text: str) -> list[tuple[str, str]]:
    """``alias`` or ``alias | mode`` per line -> (alias, mode) pairs; raises AliasError naming each bad line."""
    found: list[tuple[str, str]] = []
    problems = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        alias, _, mode = line.partition("|")
        alias, mode = alias.strip(), (mode.strip().lower() or WORD)
        problem = check_alias(alias, mode)
        if problem:
            problems.append(f"line {number}: {alias[:40]!r}: {problem}")
        else:
            found.append((alias, mode))
    if len(found) > MAX_ALIASES:
        problems.append(f"at most {MAX_ALIASES} aliases per model, got {len(found)}")
    if problems:
        raise AliasError(problems)
    return found


def _token_runs(parts: Sequence[str]) -> set[str]:
    """Every contiguous run of tokens joined: 'Deep','Seek','V','3' gives deep, deepseek, seek, ..."""
    low = [p.lower() for p in parts]
    return {"".join(low[i:j]) for i in range(len(low)) for j in range(i + 1, len(low) + 1)}


def vendors_of(*names: str) -> list[Vendor]:
    runs: set[str] = set()
    for name in names:
        runs |= _token_runs(tokens(name))
    return [v for v in VENDORS if runs & set(v.triggers)]


def derive_aliases(name: str, provider: Mapping[str, Any] | None = None) -> list[Alias]:
    """The aliases a model gets without a researcher: its vendors' aliases (found from the name and the
    provider metadata's strings) and the model identifiers in the metadata. The name itself is always
    matched and is not listed here."""
    provider = provider or {}
    strings = [str(v) for v in provider.values() if isinstance(v, str)]
    found: dict[tuple[str, str], Alias] = {}
    for vendor in vendors_of(name, *strings):
        for text, mode in vendor.aliases:
            alias = Alias(text, mode, DERIVED)
            found.setdefault(alias.key, alias)
    for key in MODEL_ID_KEYS:
        value = provider.get(key)
        if isinstance(value, str) and value.strip():
            model_id = value.strip().rsplit("/", 1)[-1]
            if check_alias(model_id, WORD) is None and squash(model_id) != squash(name) and len(squash(model_id)) >= 4:
                alias = Alias(model_id, WORD, DERIVED)
                found.setdefault(alias.key, alias)
    own = Alias(name, WORD).key
    return [a for k, a in found.items() if k != own]


# --------------------------------------------------------------------------- matching


@dataclass(frozen=True)
class Term:
    """One alias of one model of a benchmark: what to look for and whom it names."""

    alias: Alias
    owner: str
    role: str  # "participant" | "judge"


_SEP = r"[ \t\-_.]{0,3}"
_SEP_NUMBERS = r"(?:[ \t\-_.]{0,3}|[ \t]*(?:point|dot)[ \t]*)"
_VERSION = re.compile(r"[ \-_]{0,2}v?[0-9]+(?:(?:\.|[ \t]*(?:point|dot)[ \t]+)[0-9]+)*(?:[a-z]{1,2}(?![a-z]))?", re.IGNORECASE)
_VARIANT = re.compile(
    r"([ \-_])(pro|flash|turbo|mini|nano|preview|instruct|chat|max|plus|lite|ultra|reasoner|thinking|coder|"
    r"sonnet|opus|haiku|exp|base|it|r1)(?![A-Za-z0-9])",
    re.IGNORECASE,
)
_SUFFIX = re.compile(r"[ \-](?:AI|Inc\.?|LLC|Labs?)(?![A-Za-z])")
_FOLLOW = re.compile(
    r"['’]s(?![A-Za-z])|-AI(?![A-Za-z])|[ ]{1,2}(?:AI|Inc|LLC|Labs?|[Mm]odels?|LLMs?|[Ff]amily|[Ss]eries|[Tt]eam|[Aa]ssistant|[Cc]hatbot|API)(?![A-Za-z])"
)
_PRECEDE = re.compile(
    r"(?<![A-Za-z])(?:by|from|as|am|I'm|I’m|called|named|trained|developed|built|created|powered|made)[ \t]*[:,]?[ \t]+(?:the[ \t]+)?$",
    re.IGNORECASE,
)
_MERGE_GAP = re.compile(r"[ \t\-_/]{0,3}")


def _pattern(alias: Alias) -> re.Pattern[str]:
    parts = tokens(alias.text)
    body = []
    for i, part in enumerate(parts):
        if i:
            body.append(_SEP_NUMBERS if part.isdigit() and parts[i - 1].isdigit() else _SEP)
        body.append(re.escape(part if alias.mode == EXACT else part.lower()))
    first, last = parts[0], parts[-1]
    before = "" if _is_cjk(first) else r"(?<![A-Za-z0-9])"
    if _is_cjk(last):
        after = ""
    elif last.isdigit():
        after = r"(?![0-9])"
    else:
        after = (r"(?:s)?" if alias.mode == WORD else "") + r"(?![A-Za-z])"
    flags = 0 if alias.mode == EXACT else re.IGNORECASE
    return re.compile(before + "".join(body) + after, flags)


#: The characters beyond ASCII that a case-insensitive ``re`` match takes for an ASCII letter (İ ı ſ K), or that
#: ``str.lower`` turns into one. Elsewhere an ASCII token occurs in a text's lower case wherever a case-insensitive
#: pattern starting with it can match, so an alias whose first token is absent is skipped unsearched.
_CASE_FOLDS_TO_ASCII = frozenset("\u0130\u0131\u017f\u212a")


def _ascii_first(alias: Alias) -> str | None:
    first = tokens(alias.text)[0]
    return first.lower() if first.isascii() else None


@dataclass(frozen=True)
class Hit:
    start: int
    end: int
    aliases: tuple[str, ...]
    owners: tuple[str, ...]


def _extend(text: str, end: int) -> tuple[int, bool]:
    """Past a version or variant words that follow a match; also says whether a version was found."""
    versioned = False
    while True:
        version = _VERSION.match(text, end)
        if version and version.end() > end and any(c.isdigit() for c in version.group()):
            end, versioned = version.end(), True
            continue
        variant = _VARIANT.match(text, end)
        if variant and (variant.group(1) in "-_" or variant.group(2)[0].isupper()):
            end = variant.end()
            continue
        suffix = _SUFFIX.match(text, end)  # "Zhipu AI", "Mistral AI": the company's name is one span
        if suffix:
            end = suffix.end()
            continue
        return end, versioned


def _identifying(text: str, start: int, core_end: int, versioned: bool) -> bool:
    """A brand alias counts only capitalised and in an identifying position (see the module doc)."""
    if not text[start].isupper():
        return False
    if versioned:
        return True
    if _FOLLOW.match(text, core_end):
        return True
    if text[core_end : core_end + 1] == "-" and text[core_end + 1 : core_end + 2].isalpha():
        return False  # the first half of a hyphenated word: Meta-analysis
    return bool(_PRECEDE.search(text[max(0, start - 40) : start]))


class Matcher:
    """Finds every term of a benchmark in a text. Build with :func:`matcher_for` (cached)."""

    def __init__(self, terms: Iterable[Term]) -> None:
        grouped: dict[tuple[str, str], list[Term]] = {}
        for term in terms:
            if check_alias(term.alias.text, term.alias.mode) is None:
                grouped.setdefault(term.alias.key, []).append(term)
        # Per alias: its pattern, mode, the exception phrase it must not match (Claude Shannon), its text and owners.
        self.patterns = [
            (
                _pattern(group[0].alias),
                mode,
                EXCEPTIONS.get(alias_key.replace(" ", "")),
                group[0].alias.text,
                tuple(sorted({t.owner for t in group})),
            )
            for (alias_key, mode), group in grouped.items()
        ]
        # Per alias: its first token in lower case when it is ASCII, else None (see ``_may_occur``).
        self.firsts = [_ascii_first(group[0].alias) for group in grouped.values()]

    @staticmethod
    def _may_occur(lowered: str | None, first: str | None) -> bool:
        """False only when the alias cannot match: its first token does not occur in the text. ``lowered`` is the
        normalised text in lower case when reading it so is exact (None otherwise): then every character of it is
        one the pattern's case-insensitive match would see as ASCII letter-for-letter (``_CASE_FOLDS_TO_ASCII``)."""
        return lowered is None or first is None or first in lowered

    def hits(self, text: str) -> list[Hit]:
        """Merged matches, in offsets of ``text`` itself (not of its normalised form)."""
        norm, where = normalise(text)
        lowered = None if _CASE_FOLDS_TO_ASCII.intersection(norm) else norm.lower()
        raw: list[tuple[int, int, str, tuple[str, ...]]] = []
        for (pattern, mode, exception, alias_text, owners), first in zip(self.patterns, self.firsts, strict=True):
            if not self._may_occur(lowered, first):
                continue
            for m in pattern.finditer(norm):
                if mode == PROPER and not norm[m.start()].isupper():
                    continue
                if exception is not None and exception.match(norm, m.end()):
                    continue
                end, versioned = _extend(norm, m.end())
                if mode == BRAND and not _identifying(norm, m.start(), m.end(), versioned):
                    continue
                raw.append((m.start(), end, alias_text, owners))
        raw.sort()
        merged: list[list[Any]] = []
        for start, end, alias, owners in raw:
            if merged and (start <= merged[-1][1] or _MERGE_GAP.fullmatch(norm, merged[-1][1], start)):
                last = merged[-1]
                last[1] = max(last[1], end)
                last[2].add(alias)
                last[3].update(owners)
            else:
                merged.append([start, end, {alias}, set(owners)])
        return [Hit(where[s], where[e - 1] + 1, tuple(sorted(a)), tuple(sorted(o))) for s, e, a, o in merged]

    def redact(self, text: str) -> tuple[str, list[Hit]]:
        hits = self.hits(text)
        out = text
        for hit in reversed(hits):
            out = out[: hit.start] + PLACEHOLDER + out[hit.end :]
        return out, hits


@lru_cache(maxsize=64)
def _cached_matcher(terms: tuple[Term, ...]) -> Matcher:
    return Matcher(terms)


def matcher_for(terms: Iterable[Term]) -> Matcher:
    return _cached_matcher(tuple(sorted(set(terms), key=lambda t: (t.alias.text, t.alias.mode, t.owner, t.role, t.alias.source))))


# --------------------------------------------------------------------------- proposals


@dataclass
class Redacted:
    content: dict[str, Any]
    records: list[dict[str, Any]] = field(default_factory=list)


#: The version of how text is read for names (:func:`normalise`, :data:`LOOKALIKES`, the vendor table): part of every
#: proposal's :func:`content_digest`, so blind text made by an older reading is stale, redacted afresh where it is shown
#: and counted on the benchmark's blindness page until the benchmark is scanned again (``manage.py blindness_scan``).
#: 2: accents, combining accents and look-alike Cyrillic and Greek letters; 3: look-alikes only in a word that also
#: holds a Latin letter.
READING = 3


def content_digest(content: Any) -> str:
    """A fingerprint of a proposal's content and of the reading that redacts it (:data:`READING`): blind content made
    from other content, or by another reading, is stale."""
    text = json.dumps(content, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(f"reading {READING}\n{text}".encode()).hexdigest()


def redact_content(content: Mapping[str, Any], matcher: Matcher, *, own: str = "") -> Redacted:
    """The content with every alias replaced, and one record per replaced span: field, offsets in the
    original field text, the text, the aliases and models it matched, and whether it names ``own``."""
    result = Redacted(content=dict(content))
    for key, value in content.items():
        if value is None or isinstance(value, bool | int | float):
            continue
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        blind, hits = matcher.redact(text)
        if not hits:
            continue
        result.content[key] = blind
        for hit in hits:
            result.records.append(
                {
                    "field": key,
                    "start": hit.start,
                    "end": hit.end,
                    "text": text[hit.start : hit.end],
                    "aliases": list(hit.aliases),
                    "owners": list(hit.owners),
                    "self": own in hit.owners,
                }
            )
    return result
