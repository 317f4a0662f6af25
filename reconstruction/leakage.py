"""Leakage control for Reconstruction bibliographies (PROTOCOL.md §3; issue 13): pure functions, no Django.

A proposer sees a seed paper's bibliography and must recover the seed's idea; the value of the benchmark rests on
the bibliography telling it nothing it could not have known before the seed was published. Three checks, each with
a documented action:

1. **Temporal cutoff** (exclude). A reference is eligible only when it was published *strictly before* the seed's
   date T0. An undated reference is excluded ("undated"), as is one of the same day ("same day as the seed"), one
   after it, and one whose date is only known to a month or a year that does not end before T0 (a reference dated
   "2021" cannot be shown for a seed of 2021-06-01: it may be from December).
2. **Overlap with the seed** (exclude). The seed's title and abstract are held out; a reference that repeats them
   would hand them over. Texts are normalised to lowercase word tokens (letters and digits); a reference is
   excluded when, in its title or abstract,

   - the seed's title appears as a contiguous run of tokens (titles of :data:`TITLE_MIN_TOKENS` tokens or more;
     a shorter title only when the reference's title equals it), or
   - it shares any :data:`SPAN_N`-gram (:data:`SPAN_N` consecutive tokens) with the seed's title + abstract, or
   - the Jaccard index of its abstract's :data:`JACCARD_N`-gram set and the seed abstract's exceeds
     :data:`JACCARD_MAX`.

   An 8-token run shared verbatim is rare between two distinct abstracts of a field (stock phrases are shorter) and
   common in a copied or lightly edited one; the Jaccard bound catches paraphrase that keeps most 5-grams.
3. **Identifying metadata** (scrub, and flag). What could let a proposer look the seed up instead of reasoning —
   DOIs, arXiv identifiers, URLs, e-mail addresses, "Name et al." author mentions, venue strings ("Proceedings of
   …", "NeurIPS 2021", "arXiv preprint") and the reference's own original id — is replaced in the shown text by
   :data:`SCRUBBED` and recorded as a flag on the reference. Scrubbing rather than excluding keeps an otherwise good
   reference (the metadata is incidental to its content); :func:`metadata_hits` on the scrubbed text is empty, which
   the freeze checks again before it stores anything.

The shown text of a frozen bibliography (:func:`bibliography_text`) holds, per eligible reference, its anonymous id,
shown title and shown abstract, nothing else; its SHA-256 (:func:`bibliography_hash`) is stored with it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta

#: Minimum eligible references for a seed to be used.
MIN_ELIGIBLE = 3
#: A shared run of this many tokens with the seed's title + abstract excludes a reference.
SPAN_N = 8
#: Jaccard of the abstracts' n-gram sets (of this n) above JACCARD_MAX excludes a reference.
JACCARD_N = 5
JACCARD_MAX = 0.2
#: A seed title this long or longer is searched for inside reference text; a shorter one only matched whole.
TITLE_MIN_TOKENS = 3
SCRUBBED = "[removed]"

UNDATED = "undated"
SAME_DAY = "same day as the seed"
AFTER = "published after the seed"
IMPRECISE = "dated only to a {precision} that does not end before the seed's date"

PRECISIONS = ("day", "month", "year")

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)

#: (kind, pattern) of identifying metadata; order matters (a URL holding a DOI is removed as a URL first).
METADATA_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("url", re.compile(r"(?:https?|ftp)://\S+|\bwww\.\S+|\b(?:doi|arxiv|openreview|aclanthology)\.org/\S*", re.IGNORECASE)),
    ("doi", re.compile(r"\b(?:doi:\s*)?10\.\d{4,9}/[^\s\"<>]+", re.IGNORECASE)),
    (
        "arxiv",
        re.compile(
            r"\barXiv:\s*(?:\d{4}\.\d{4,5}|[a-z\-]+(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?|\b\d{4}\.\d{4,5}v\d+\b|\barXiv\s+preprint\b",
            re.IGNORECASE,
        ),
    ),
    ("email", re.compile(r"\b[\w.+-]+@[\w-]+\.[\w.-]+\b")),
    ("author list", re.compile(r"\b[A-Z][\w'\-]+(?:\s+(?:and|&)\s+[A-Z][\w'\-]+)?,?\s+et\s+al\b\.?")),
    (
        "venue",
        re.compile(
            r"\b(?:In\s+)?Proc(?:eedings|\.)\s+of\s+(?:the\s+)?[^.;,)]*"
            r"|\b(?:NeurIPS|NIPS|ICML|ICLR|ACL|EMNLP|NAACL|EACL|COLING|CVPR|ICCV|ECCV|AAAI|IJCAI|KDD|SIGIR|WSDM|CHI|UAI|AISTATS|COLT)"
            r"\s*['’]?\s*(?:19|20)?\d{2}\b"
            r"|\b(?:Journal\s+of|Transactions\s+on)\s+[A-Z][^.;,)]*"
        ),
    ),
)


def tokens(text: str) -> list[str]:
    """Lowercase word tokens (runs of letters and digits): what every overlap check compares."""
    return [t.lower() for t in _TOKEN.findall(text or "")]


def ngrams(words: Sequence[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def jaccard(a: set, b: set) -> float:
    """|a ∩ b| / |a ∪ b|; 0 when both are empty (nothing shared)."""
    union = a | b
    return len(a & b) / len(union) if union else 0.0


def _contains(haystack: Sequence[str], needle: Sequence[str]) -> bool:
    n = len(needle)
    return n > 0 and any(list(haystack[i : i + n]) == list(needle) for i in range(len(haystack) - n + 1))


def period_end(published: date, precision: str) -> date:
    """The last day a date of that precision may stand for (2021-03 → 2021-03-31, 2021 → 2021-12-31)."""
    if precision == "year":
        return date(published.year, 12, 31)
    if precision == "month":
        following = date(published.year + (published.month == 12), published.month % 12 + 1, 1)
        return following - timedelta(days=1)
    return published


def temporal_exclusion(published: date | None, t0: date, precision: str = "day") -> str | None:
    """Why a reference of that date cannot be shown for a seed of date ``t0``; None when it is strictly before."""
    if published is None:
        return UNDATED
    last = period_end(published, precision)
    if last < t0:
        return None
    if precision != "day" and published <= t0:
        return IMPRECISE.format(precision=precision)
    return SAME_DAY if published == t0 else AFTER


def overlap_exclusion(*, seed_title: str, seed_abstract: str, title: str, abstract: str) -> str | None:
    """Why a reference's text repeats the held-out seed (module docstring, check 2); None when it does not."""
    seed_title_t = tokens(seed_title)
    ref_title_t, ref_abstract_t = tokens(title), tokens(abstract)
    if seed_title_t:
        if len(seed_title_t) >= TITLE_MIN_TOKENS:
            for where, words in (("title", ref_title_t), ("abstract", ref_abstract_t)):
                if _contains(words, seed_title_t):
                    return f"its {where} repeats the seed's title"
        elif ref_title_t == seed_title_t:
            return "its title is the seed's title"
    seed_spans = ngrams(seed_title_t, SPAN_N) | ngrams(tokens(seed_abstract), SPAN_N)
    for where, words in (("title", ref_title_t), ("abstract", ref_abstract_t)):
        shared = ngrams(words, SPAN_N) & seed_spans
        if shared:
            example = " ".join(sorted(shared)[0])
            return f"its {where} shares a span of {SPAN_N} words with the seed (\u201c{example}\u201d)"
    score = jaccard(ngrams(ref_abstract_t, JACCARD_N), ngrams(tokens(seed_abstract), JACCARD_N))
    if score > JACCARD_MAX:
        return f"its abstract overlaps the seed's abstract (Jaccard of {JACCARD_N}-grams {score:.2f} > {JACCARD_MAX})"
    return None


def _literal(text: str) -> re.Pattern[str]:
    """``text`` anywhere, case-insensitively, but not inside a longer word (an id "a1" is not found in "data1x")."""
    return re.compile(rf"(?<!\w){re.escape(text.strip())}(?!\w)", re.IGNORECASE)


def metadata_hits(text: str, *, also: Iterable[str] = ()) -> list[tuple[str, str]]:
    """(kind, matched text) of identifying metadata in ``text``; ``also`` are literal strings to find too (the
    reference's original id), reported as kind "reference id"."""
    hits: list[tuple[str, str]] = []
    for kind, pattern in METADATA_PATTERNS:
        hits.extend((kind, m.group()) for m in pattern.finditer(text or ""))
    for literal in also:
        if literal and literal.strip() and _literal(literal).search(text or ""):
            hits.append(("reference id", literal))
    return hits


def scrub(text: str, *, also: Iterable[str] = ()) -> tuple[str, list[str]]:
    """``text`` with identifying metadata replaced by :data:`SCRUBBED`, and the kinds removed (sorted, unique)."""
    kinds: set[str] = set()
    out = text or ""
    for kind, pattern in METADATA_PATTERNS:
        out, count = pattern.subn(SCRUBBED, out)
        if count:
            kinds.add(kind)
    for literal in also:
        if literal and literal.strip():
            out, count = _literal(literal).subn(SCRUBBED, out)
            if count:
                kinds.add("reference id")
    return out, sorted(kinds)


@dataclass(frozen=True)
class ReferenceIn:
    """A reference as the audit reads it: its original id is only used to find it in the text."""

    original_id: str
    title: str
    abstract: str
    published: date | None
    precision: str = "day"


@dataclass
class Audited:
    """A reference after the audit: whether it may be shown, why not, and its shown (scrubbed) text."""

    eligible: bool
    exclusion_reason: str
    shown_title: str
    shown_abstract: str
    flags: list[str] = field(default_factory=list)


def audit_reference(ref: ReferenceIn, *, seed_title: str, seed_abstract: str, t0: date) -> Audited:
    """The three checks of the module docstring on one reference. Exclusion reasons are joined with "; " (all of
    them are listed, so the audit page says everything that is wrong). Overlap is checked on the text as given,
    before scrubbing, so scrubbing cannot hide a repeat of the seed."""
    reasons = [
        r
        for r in (
            temporal_exclusion(ref.published, t0, ref.precision),
            overlap_exclusion(seed_title=seed_title, seed_abstract=seed_abstract, title=ref.title, abstract=ref.abstract),
        )
        if r
    ]
    also = [ref.original_id]
    shown_title, title_kinds = scrub(ref.title, also=also)
    shown_abstract, abstract_kinds = scrub(ref.abstract, also=also)
    flags = sorted(set(title_kinds) | set(abstract_kinds))
    if not shown_title.replace(SCRUBBED, "").strip():
        reasons.append("nothing of its title is left once identifying metadata is removed")
    return Audited(not reasons, "; ".join(reasons), shown_title, shown_abstract, flags)


def bibliography_text(entries: Iterable[tuple[str, str, str]]) -> str:
    """The shown text of a bibliography from (anonymous id, shown title, shown abstract), ordered by the id's number
    (R2 before R10). Every prompt is built from this text, and nothing else about a reference."""

    def number(anon_id: str) -> int:
        return int(anon_id[1:])

    blocks = [
        f"[{anon}] {title.strip()}\n{abstract.strip()}".rstrip()
        for anon, title, abstract in sorted(entries, key=lambda e: number(e[0]))
    ]
    return "\n\n".join(blocks) + ("\n" if blocks else "")


def bibliography_hash(text: str) -> str:
    """SHA-256 of the shown text (UTF-8), hex: equal iff the text is."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def shown_text_problems(text: str, *, seed_title: str, original_ids: Iterable[str]) -> list[str]:
    """What must never be in a frozen bibliography's text but is (checked again at freezing, whatever the per-reference
    audit did): the seed's title, identifying metadata, an original reference id. Empty when clean."""
    problems = [f"{kind}: {hit!r}" for kind, hit in metadata_hits(text, also=original_ids)]
    title = tokens(seed_title)
    if title and _contains(tokens(text), title) and len(title) >= TITLE_MIN_TOKENS:
        problems.append("the seed's title")
    return problems
