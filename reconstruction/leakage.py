"""Leakage control for Reconstruction bibliographies (PROTOCOL.md §3; issues 13 and 22): pure functions, no Django.

A proposer sees a seed paper's bibliography and must recover the seed's idea; the value of the benchmark rests on
the bibliography telling it nothing it could not have known before the seed was published. Three checks, each with
a documented action:

1. **Temporal cutoff** (exclude). A reference is eligible only when it was published *strictly before* the seed's
   date T0. An undated reference is excluded ("undated"), as is one of the same day ("same day as the seed"), one
   after it, and one whose date is only known to a month or a year that does not end before T0 (a reference dated
   "2021" cannot be shown for a seed of 2021-06-01: it may be from December).
2. **Overlap with the seed** (exclude). The seed's title and abstract are held out; a reference that repeats them
   would hand them over. Texts are compared *normalised* (:func:`fold`, below) as word tokens (letters and digits);
   a reference is excluded when, in its title or abstract,

   - the seed's title appears as a contiguous run of whole tokens (titles of :data:`TITLE_MIN_TOKENS` tokens or
     more; a shorter title only when the reference's title equals it). The run is compared with its token breaks
     ignored, so "Net- works", "Net-works" and "Networks" are the same run;
   - it shares any :data:`SPAN_N`-gram (:data:`SPAN_N` consecutive tokens) with the seed's title + abstract, each side
     read twice, with hyphens between letters splitting words ("self-supervised" → "self", "supervised") and joining
     them ("Net- works" → "networks"); or
   - the Jaccard index of its abstract's :data:`JACCARD_N`-gram set and the seed abstract's exceeds
     :data:`JACCARD_MAX`.

   An 8-token run shared verbatim is rare between two distinct abstracts of a field (stock phrases are shorter) and
   common in a copied or lightly edited one; the Jaccard bound catches paraphrase that keeps most 5-grams.
3. **Identifying metadata** (scrub, and flag). What could let a proposer look a paper up instead of reasoning is
   replaced in the shown text by :data:`SCRUBBED` and recorded as a flag (its kind) on the reference; scrubbing
   rather than excluding keeps an otherwise good reference (the metadata is incidental to its content). The kinds
   (:data:`METADATA_PATTERNS`, the order in which they are looked for):

   - ``url``: ``http(s)://`` and ``ftp://`` links, ``www.`` hosts, and a host with a path without a scheme
     (``doi.org/…``, ``dx.doi.org/…``, ``arxiv.org/abs/…``, ``github.com/…``, ``example.edu/…``);
   - ``doi``: ``10.<4–9 digits>/<suffix>``, with or without ``doi:``/``DOI``, also with spaces around the slash
     (``10.1234 / enz.2023``: then the suffix must hold a letter or a dot, so that "10.1234 / 2" stays);
   - ``arxiv``: an id after ``arXiv``/``arXiv:``/``arxiv.org`` (new style ``2403.01234``, ``2403.01234v2``; old style
     ``hep-th/9901001``, ``math.AG/0601001``), "arXiv preprint" and "arXiv e-print"; and *bare* ids: a new-style id
     only when it is a valid one — ``YYMM.NNNN`` for 0704–1412, ``YYMM.NNNNN`` from 1501, month 01–12, not inside a
     longer number — so ordinary decimals (0.95, 3.5, 2024.0123) stay; an old-style one with a known archive name;
   - ``email``;
   - ``author list``: "<names> et al." in any spelling (``et al``, ``et. al.``, ``et al.,``, ``et alii``, a year after
     it), the names being one or more surnames joined by commas, "and" or "&", each with initials and name
     particles (van, von, der, de, di, da, du, la, le, ...) — so "van der Berg et al." leaves nothing of the name; the
     name next to "et al" may start with any letter of any script, the others with a capital;
   - ``venue``: conference and journal names from a maintained list — acronyms scrubbed wherever they stand
     (:data:`VENUE_ACRONYMS`: NeurIPS, ICML, ICLR, EMNLP, CVPR, AAAI, PNAS, ...), full names (:data:`VENUE_NAMES`:
     "Neural Information Processing Systems", "Nature Communications", "Physical Review Letters", ...), and
     :data:`VENUE_WORDS` (ACL, WWW, CHI, COLT, ALT, Nature, Science, Cell, Neuron, ...) that are also ordinary words
     or abbreviations, so they are scrubbed only as a citation: with a year or volume ("Nature 521, 436",
     "Science 2019", "ACL'20") or after "published/appeared/presented in". A judgment call: "Science" in "computer
     science" or "the Science of ..." and "cell" or "Nature" in a sentence stay, because they are not a citation and
     removing them would damage ordinary abstracts; the price is that a bare "in Nature." without a year or a verb
     before it is shown. Then the patterns "Proceedings of …"/"Proc. …", "Advances in …" (after "In", or with
     a volume: "Advances in Neural Information Processing Systems 36"; a title "Advances in Graph Learning" stays),
     "Lecture Notes in …", "<…> Journal of …", "<…> Transactions on …", "<…> Conference/Symposium on …",
     abbreviated journals with a volume ("Phys. Rev. Lett. 120"), and an acronym of two capitals or more with a year:
     ``ICML-2024``, ``FOO'24``, ``SemEval 2020`` (the space form for three letters or more: "US 2020" stays).

   A reference's own original id is scrubbed too (kind ``reference id``), wherever it stands as a whole word.
   :func:`metadata_hits` on a scrubbed text is empty, which the freeze checks again before it stores anything.

   Known over-reach, accepted because each costs a few words of one reference and never a whole one: a capitalised
   word of the list followed by a year ("Computer Science 2019" → "Computer [removed]"), an unknown acronym with a
   year ("COVID 2020", "JPEG-2000"), a number "10.1234/5" written without spaces, and a bare decimal that is a valid
   new-style arXiv id ("1203.4567").

**Normalisation.** PDF-extracted and adversarial text hides the same words behind other code points; every check
reads text through two functions:

- :func:`display_text` (what is shown, and what the scrub reads): NFKC (ligatures ``ﬁ``/``ﬂ``/``ﬀ`` → ``fi``/``fl``/
  ``ff``, fullwidth letters and digits → ASCII, no-break and other spaces → a space), invisible code points dropped
  (soft hyphen, zero-width space/joiners, word joiner, bidi controls, BOM, variation selectors, tag characters:
  :data:`INVISIBLE`), a hyphen at a line break joined ("Net-\\nworks" → "Networks"; before a capital the hyphen is
  kept: "Bose-Einstein"), and whitespace collapsed to single spaces. The scrub then matches its patterns on the
  *skeleton* of that text (:func:`skeleton`: same length, one character for one, with diacritics folded, look-alike
  Cyrillic and Greek letters mapped to Latin, dashes to "-" and typographic apostrophes to "'"), so "Özdemir",
  "ІСМL" (Cyrillic) and "ICML–2024" (en dash) are found, and replaces the same span of the shown text.
- :func:`fold` (what the overlap checks compare): the displayed text, look-alike letters mapped, case-folded, NFKD
  with combining marks dropped (diacritics folded: "Netwörks" → "networks") and the letters without a decomposition
  folded (ø, ł, đ, æ → ae, œ → oe, ß → ss, ...).

The shown text of a frozen bibliography (:func:`bibliography_text`) holds, per eligible reference, its anonymous id,
shown title and shown abstract, nothing else; its SHA-256 (:func:`bibliography_hash`) is stored with it. The import
numbers the anonymous ids it draws with the eligible references first (R1..Rk without a gap, in a random order), so
the shown ids do not tell that references were excluded.

An import audits thousands of references, some with long abstracts, so the patterns are compiled once, their repeats
are bounded (no match scans further than a long author list or venue name), and each runs only on a text that holds
a string it needs (:class:`Rule`); look-alike letters are those of :data:`_LOOKALIKES` (Cyrillic and Greek), not the
whole of Unicode's confusables.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from functools import lru_cache

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
NOTHING_LEFT = "nothing of its title is left once identifying metadata is removed"

PRECISIONS = ("day", "month", "year")

# ---------------------------------------------------------------------------------------------------- normalisation

#: Code points that are invisible but can split a word or hide a pattern: every format character (Cf: soft hyphen,
#: zero-width space and joiners, word joiner, bidi controls, BOM, tag characters, ...) and the other default-ignorable
#: ones (combining grapheme joiner, Hangul fillers, variation selectors). Dropped from every text.
INVISIBLE = re.compile(
    "[\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4\u17b5\u180b-\u180f"
    "\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)
#: Combining diacritical marks (Latin, Greek and Cyrillic diacritics, and their extensions): dropped after NFKD.
_COMBINING = re.compile("[\u0300-\u036f\u0483-\u0489\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")
# A hyphen at a line break: joined before a lowercase letter (a word broken in two), kept before anything else.
_BREAK_JOIN = re.compile(r"(?<=[^\W\d_])[-\u2010]\s*\n\s*(?=[a-z\u00df-\u00f6\u00f8-\u00ff])")
_BREAK_KEEP = re.compile(r"(?<=\w)([-\u2010])\s*\n\s*(?=\w)")
_SPACES = re.compile(r"\s+")
#: Cyrillic and Greek letters drawn like Latin ones (a homoglyph hides a word from a pattern), and the dashes and
#: apostrophes of typography: one character for one.
_LOOKALIKES = dict(
    zip(
        "АВЕКМНОРСТХІЈЅҮԚԜӀаеорсухіјѕһԁԛԝӏүкΑΒΕΖΗΙΚΜΝΟΡΤΥΧοαικνρυχγ"
        "\u2010\u2011\u2012\u2013\u2014\u2015\u2043\u2212\ufe58\ufe63\u2018\u2019\u201b\u02bc\u02b9\u2032",
        "ABEKMHOPCTXIJSYQWIaeopcyxijshdqwlykABEZHIKMNOPTYXoaikvpuxy" + "-" * 10 + "'" * 6,
        strict=True,
    )
)
_LOOKALIKE_TABLE = str.maketrans(_LOOKALIKES)
#: Letters NFKD does not decompose, folded to Latin: one character each for the skeleton, as read for comparisons.
_BARE_LETTERS = dict(zip("øØłŁđĐðÐħĦıŀĿæÆœŒßþÞŧŦ", "oOlLdDdDhHilLaAoOstTtT", strict=True))
_FOLD_TABLE = str.maketrans(_LOOKALIKES | _BARE_LETTERS | {"æ": "ae", "œ": "oe", "ß": "ss", "þ": "th"})
_SKELETON_TABLE: dict[int, str] = {}  # filled as characters are met (a few hundred at most)


def display_text(text: str) -> str:
    """The text as shown and scrubbed (module docstring, "Normalisation"): NFKC, invisible code points dropped, a
    hyphen at a line break joined, whitespace collapsed. Idempotent."""
    text = text or ""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", INVISIBLE.sub("", text))
    if "\n" in text:
        text = _BREAK_KEEP.sub(r"\1", _BREAK_JOIN.sub("", text))
    return _SPACES.sub(" ", text).strip()


def _skeleton_char(c: str) -> str:
    if c in _LOOKALIKES:
        return _LOOKALIKES[c]
    base = _COMBINING.sub("", unicodedata.normalize("NFKD", c))
    if len(base) != 1:
        return _BARE_LETTERS.get(c, c)
    return _LOOKALIKES.get(base) or _BARE_LETTERS.get(base, base)


def skeleton(text: str) -> str:
    """``text`` with each character replaced by one plain one (diacritics and look-alikes folded, dashes "-",
    apostrophes "'"): what the scrub's patterns read. Same length as ``text``, so a span found in it is the same span
    of ``text``. Give it a :func:`display_text`."""
    if text.isascii():
        return text
    for c in set(text):
        if ord(c) > 127 and ord(c) not in _SKELETON_TABLE:
            _SKELETON_TABLE[ord(c)] = _skeleton_char(c)
    return text.translate(_SKELETON_TABLE)


def fold(text: str) -> str:
    """What the overlap checks compare: :func:`display_text`, look-alike letters mapped to Latin, case-folded, NFKD
    with combining marks dropped, letters without a decomposition folded (ø → o, æ → ae, ...)."""
    text = display_text(text)
    if text.isascii():
        return text.lower()
    text = text.translate(_LOOKALIKE_TABLE).casefold()
    return _COMBINING.sub("", unicodedata.normalize("NFKD", text)).translate(_FOLD_TABLE)


_TOKEN = re.compile(r"[^\W_]+")
_HYPHEN_GAP = re.compile(r"(?<=[^\W_])-\s*(?=[^\W_])")


def tokens(text: str) -> list[str]:
    """Word tokens (runs of letters and digits) of the folded text, a hyphen splitting words: what every overlap check
    compares."""
    return _TOKEN.findall(fold(text))


def joined_tokens(text: str) -> list[str]:
    """:func:`tokens` with a hyphen between two letters, and the spaces after it, joining them ("Net- works" →
    "networks"): the other reading of a hyphen, for the span check."""
    return _TOKEN.findall(_HYPHEN_GAP.sub("", fold(text)))


def ngrams(words: Sequence[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def jaccard(a: set, b: set) -> float:
    """|a ∩ b| / |a ∪ b|; 0 when both are empty (nothing shared)."""
    union = a | b
    return len(a & b) / len(union) if union else 0.0


def _title_in(words: Sequence[str], title: Sequence[str]) -> bool:
    """The title's letters, in order, fill a contiguous run of whole tokens of ``words``, however the run is cut into
    tokens ("net works", "networks" and "net-works" hold the title "Networks"). One pass of ``str.find``."""
    needle = "".join(title)
    if not needle:
        return False
    starts, ends, at = set(), set(), 0
    for w in words:
        starts.add(at)
        at += len(w)
        ends.add(at)
    haystack = "".join(words)
    i = haystack.find(needle)
    while i != -1:
        if i in starts and i + len(needle) in ends:
            return True
        i = haystack.find(needle, i + 1)
    return False


# ---------------------------------------------------------------------------------------------------- dates


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


# ---------------------------------------------------------------------------------------------------- overlap


@dataclass(frozen=True)
class _Seed:
    """What the overlap check compares a seed's references with, computed once per seed."""

    title: tuple[str, ...]
    spans: frozenset[tuple[str, ...]]  # its title's and abstract's SPAN_N-grams, hyphens read both ways
    grams: frozenset[tuple[str, ...]]  # its abstract's JACCARD_N-grams


@lru_cache(maxsize=64)
def _seed(seed_title: str, seed_abstract: str) -> _Seed:
    abstract = tokens(seed_abstract)
    spans = (
        ngrams(tokens(seed_title), SPAN_N)
        | ngrams(abstract, SPAN_N)
        | ngrams(joined_tokens(seed_title), SPAN_N)
        | ngrams(joined_tokens(seed_abstract), SPAN_N)
    )
    return _Seed(tuple(tokens(seed_title)), frozenset(spans), frozenset(ngrams(abstract, JACCARD_N)))


def overlap_exclusion(*, seed_title: str, seed_abstract: str, title: str, abstract: str) -> str | None:
    """Why a reference's text repeats the held-out seed (module docstring, check 2); None when it does not."""
    seed = _seed(seed_title or "", seed_abstract or "")
    ref_title_t, ref_abstract_t = tokens(title), tokens(abstract)
    if seed.title:
        if len(seed.title) >= TITLE_MIN_TOKENS:
            for where, words in (("title", ref_title_t), ("abstract", ref_abstract_t)):
                if _title_in(words, seed.title):
                    return f"its {where} repeats the seed's title"
        elif "".join(ref_title_t) == "".join(seed.title):
            return "its title is the seed's title"
    for where, text, words in (("title", title, ref_title_t), ("abstract", abstract, ref_abstract_t)):
        shared = (ngrams(words, SPAN_N) | ngrams(joined_tokens(text), SPAN_N)) & seed.spans
        if shared:
            example = " ".join(sorted(shared)[0])
            return f"its {where} shares a span of {SPAN_N} words with the seed (\u201c{example}\u201d)"
    score = jaccard(ngrams(ref_abstract_t, JACCARD_N), set(seed.grams))
    if score > JACCARD_MAX:
        return f"its abstract overlaps the seed's abstract (Jaccard of {JACCARD_N}-grams {score:.2f} > {JACCARD_MAX})"
    return None


# ---------------------------------------------------------------------------------------------------- metadata

#: Venue acronyms that are nothing else: scrubbed wherever they stand as a word (case as written), with a year if any.
VENUE_ACRONYMS = (
    "NeurIPS", "NIPS", "ICML", "ICLR", "EMNLP", "NAACL", "EACL", "AACL", "IJCNLP", "COLING", "CoNLL", "TACL", "CVPR",
    "ICCV", "ECCV", "WACV", "BMVC", "AAAI", "IJCAI", "KDD", "SIGKDD", "SIGIR", "WSDM", "CIKM", "RecSys", "AISTATS",
    "PMLR", "JMLR", "TMLR", "TPAMI", "IJCV", "ICRA", "IROS", "CoRL", "ICASSP", "INTERSPEECH", "Interspeech", "MICCAI",
    "SIGGRAPH", "SIGMOD", "VLDB", "ICDE", "ICDM", "PNAS", "NEJM", "JAMA", "eLife", "OpenReview", "PLOS", "PLoS",
)  # fmt: skip
#: Venue names that are also ordinary words or abbreviations: scrubbed only as a citation (module docstring).
VENUE_WORDS = (
    "ACL", "WWW", "CHI", "UAI", "COLT", "ALT", "RSS", "SDM", "STOC", "FOCS", "SODA", "CCS", "ISCA", "MICRO", "FSE",
    "ICSE", "PLDI", "POPL", "NSDI", "OSDI", "SOSP", "ECML", "PKDD", "ISMB", "RECOMB", "LREC", "BMJ", "Nature",
    "Science", "Cell", "Neuron", "Lancet",
)  # fmt: skip
#: Full venue names, scrubbed wherever they stand (case as written).
VENUE_NAMES = (
    "Neural Information Processing Systems", "Association for Computational Linguistics",
    "Empirical Methods in Natural Language Processing", "Computer Vision and Pattern Recognition",
    r"Knowledge Discovery (?:and|&) Data Mining", "Research and Development in Information Retrieval",
    "Uncertainty in Artificial Intelligence", "Artificial Intelligence and Statistics", "The Web Conference",
    r"Nature (?:Communications|Physics|Materials|Methods|Genetics|Biotechnology|Neuroscience|Chemistry|Medicine"
    r"|Machine Intelligence|Nanotechnology|Photonics|Climate Change|Energy|Catalysis|Electronics|Human Behaviour"
    r"|Cell Biology|Immunology|Microbiology|Protocols|Astronomy|Geoscience|Sustainability|Computational Science"
    r"|Reviews [A-Z]\w+)",
    r"Science (?:Advances|Robotics|Translational Medicine|Immunology|Signaling)",
    r"Cell (?:Reports|Systems|Metabolism|Stem Cell|Host (?:and|&) Microbe|Chemical Biology|Genomics)",
    r"Physical Review (?:Letters|[A-Z]\b|X\b)", r"Phys\. ?Rev\. ?(?:Lett\.|[A-Z]\b)", "Nucleic Acids Research",
    "Angewandte Chemie", "Nano Letters", "ACS Nano", "The Lancet",
)  # fmt: skip

_ARCHIVES = (
    "hep-th|hep-ph|hep-lat|hep-ex|gr-qc|astro-ph|cond-mat|quant-ph|math-ph|nucl-th|nucl-ex|physics|math|cs|nlin|q-bio"
    "|q-fin|stat|adap-org|chao-dyn|solv-int|patt-sol|cmp-lg|comp-gas|alg-geom|dg-ga|funct-an|q-alg|mtrl-th|supr-con"
    "|chem-ph|atom-ph|acc-phys|ao-sci|bayes-an|plasm-ph"
)
_MONTH = r"(?:0[1-9]|1[0-2])"
# A new-style id standing alone: YYMM.NNNN for 0704-1412, YYMM.NNNNN from 1501 (arXiv's own rule), not in a number.
_BARE_NEW = rf"(?<![\w.])(?:(?:0[7-9]|1[0-4]){_MONTH}\.\d{{4}}|(?:1[5-9]|[2-4]\d){_MONTH}\.\d{{5}})(?:v\d+)?(?!\w|[.,]\d)"
_BARE_OLD = rf"(?<![\w/.-])(?:{_ARCHIVES})(?:\.[A-Z]{{2}})?/(?:9[1-9]|0\d){_MONTH}\d{{3}}(?:v\d+)?(?!\d)"
_PREFIXED = r"\barXiv(?:\.org)?\s*[:.]?\s*(?:abs/|pdf/)?(?:\d{4}\.\d{4,5}|[a-z]+(?:-[a-z]+)?(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?"

# Names before "et al.": initials (J., J.-P.), particles, a surname (apostrophes, hyphens and marks inside), with
# bounded repeats so that a match never scans further than a long author list.
_INITIALS = r"(?:[^\W\d_]\.\s?(?:-\s?)?){0,4}"
_PARTICLES = (
    r"(?:(?i:van|von|der|den|de|del|della|degli|dei|di|da|dal|dalla|du|des|dos|das|do|la|le|lo|ter|ten|te|op|bin|ibn"
    r"|al|el|st\.?|zu|af|av|y|mac|ap)\s+){0,3}"
)
_SURNAME_REST = r"[\w'\-\u0300-\u036f]*+(?:\s+[A-Z]{1,3}\b\.?)?"  # and trailing initials, as in "Smith JR"
_CAPITAL_NAME = rf"{_INITIALS}{_PARTICLES}[^\W\d_a-z]{_SURNAME_REST}"
_ANY_NAME = rf"{_INITIALS}{_PARTICLES}[^\W\d_]{_SURNAME_REST}"
_AND = r"(?:\s*,\s*(?:and\s+|&\s*)?|\s+and\s+|\s*&\s*)"
_ET_AL = r"(?i:,?\s+et\s*\.?\s*al(?:ii|ia)?\b\.?)(?:,?\s*(?:19|20)\d{2}[a-z]?\b)?,?"

# A venue's name after "Proceedings of", "Advances in", "Conference on", ...: capitalised words, abbreviations,
# acronyms, numbers and ordinals, joined by small words; it ends on a name word, never on a small word.
_VENUE_WORD = r"(?:[A-Z][\w'\-&]*\.?|\d+(?:st|nd|rd|th)?\b|'\d{2}\b)"
_TAIL = rf"{_VENUE_WORD}(?:\s+(?:(?:of|the|on|and|for|in|&|/|-|:)\s+){{0,3}}{_VENUE_WORD}){{0,24}}"
_YEAR = r"(?:\s*-?\s*(?:19|20)\d{2}|\s*'\d{2})(?!\d)"
_CITED = (
    r"(?:\s*,?\s*\(?(?:19|20)\d{2}\b\)?|\s*'\d{2}\b|\s*-\s*(?:19|20)\d{2}\b"
    r"|\s+\d{1,4}(?:\s*[:(,]\s*|\s+)\d+(?:\s*-\s*\d+)?\)?(?:\s*\((?:19|20)\d{2}\))?)"
)
_PREFIX = r"(?:(?:IEEE|ACM|IEEE/ACM|IEEE/CVF|The|American|European|International|British|Royal|National|Annual)\s+){0,4}"


def _words(names: Iterable[str]) -> str:
    return "|".join(names)


@dataclass(frozen=True)
class Rule:
    """One pattern of identifying metadata, matched on the :func:`skeleton` of a :func:`display_text`. ``needs``: the
    text must hold one of these strings (in its lowercase when ``lowered``) for the pattern to be worth running — a
    quick ``in`` test that keeps the audit of a long bibliography fast. A match with a group named ``v`` removes only
    that group (the context around it, "published in", is kept)."""

    kind: str
    pattern: re.Pattern[str]
    needs: tuple[str, ...] = ()
    lowered: bool = False

    def finds(self, plain: str, lowered: str) -> Iterable[tuple[int, int]]:
        if self.needs and not any(n in (lowered if self.lowered else plain) for n in self.needs):
            return
        for m in self.pattern.finditer(plain):
            yield m.span("v") if "v" in self.pattern.groupindex and m.group("v") else m.span()


_DIGITS = tuple("0123456789")


def _venue(pattern: str, *needs: str) -> Rule:
    return Rule("venue", re.compile(pattern), needs)


#: The rules of identifying metadata, by kind in the order they are looked for (module docstring, check 3); a match
#: inside what an earlier one removes adds nothing (a URL holding a DOI is removed as a URL).
METADATA_PATTERNS: tuple[Rule, ...] = (
    Rule("url", re.compile(r"(?:https?|ftp)://\S+|\bwww\.\S+", re.IGNORECASE), ("://", "www."), lowered=True),
    Rule(
        "url",
        re.compile(r"(?<![\w.-])(?:[\w-]{1,63}\.){1,8}(?:org|com|net|edu|gov|io|ai|cc|info|co|uk|de|fr|cn|jp)\s*/\S*", re.I),
        ("/",),
    ),
    Rule("email", re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+\.[\w.-]+\b"), ("@",)),
    Rule(
        "doi",
        re.compile(
            r"\b(?:doi\s*[:.]?\s*)?10\.\d{4,9}(?:/|\s+/\s*(?=[^\s\"<>]*[A-Za-z.])|\s*/\s+(?=[^\s\"<>]*[A-Za-z.]))[^\s\"<>]+",
            re.IGNORECASE,
        ),
        ("10.",),
    ),
    Rule("arxiv", re.compile(rf"{_PREFIXED}|\barXiv\s+(?:preprint|e-?prints?)\b", re.IGNORECASE), ("arxiv",), lowered=True),
    Rule("arxiv", re.compile(_BARE_NEW), (".",)),
    Rule("arxiv", re.compile(_BARE_OLD, re.IGNORECASE), ("/",)),
    Rule(
        "author list",
        re.compile(rf"(?<![\w'\-.\[])(?:{_CAPITAL_NAME}{_AND}){{0,12}}{_ANY_NAME}{_ET_AL}"),
        ("et",),
        lowered=True,
    ),
    _venue(rf"(?<![\w-])(?:{_words(VENUE_ACRONYMS)})(?:{_YEAR})?(?![\w-])"),
    _venue(rf"(?<![\w-])(?:{_words(VENUE_WORDS)}){_CITED}", *_DIGITS),
    Rule(
        "venue",
        re.compile(
            rf"(?i:published|appeared|appearing|presented|accepted|reported|to\s+appear)\s+(?i:in|at)\s+(?:the\s+)?"
            rf"(?P<v>(?:{_words(VENUE_WORDS)}))\b"
        ),
        ("publish", "appear", "present", "accept", "report"),
        lowered=True,
    ),
    _venue(rf"\b(?:{_words(VENUE_NAMES)})(?:\s+\d+)?"),
    _venue(rf"(?<!\w)(?:[Ii]n:?\s+)?(?:Proceedings|PROCEEDINGS|Proc\.)(?:\s+of)?(?:\s+the)?\s+{_TAIL}", "Proc", "PROC"),
    _venue(rf"(?<!\w)[Ii]n:?\s+Advances\s+in\s+{_TAIL}", "Advances"),
    _venue(rf"\bAdvances\s+in\s+(?:{_VENUE_WORD}\s+(?:(?:of|the|on|and|for|in|&)\s+){{0,3}}){{1,24}}\d+\b", "Advances"),
    _venue(rf"\bLecture\s+Notes\s+in\s+{_TAIL}", "Lecture"),
    _venue(
        rf"\b{_PREFIX}(?:Journal\s+of|Transactions\s+on|Letters\s+on)\s+(?:the\s+)?{_TAIL}", "Journal", "Transactions", "Letters"
    ),
    _venue(
        rf"(?:\b\d+(?:st|nd|rd|th)\s+)?\b{_PREFIX}(?:Joint\s+|Asian\s+|Pacific\s+){{0,2}}(?:Conference|Symposium)\s+(?:on|of)\s+"
        rf"(?:the\s+)?{_TAIL}",
        "Conference",
        "Symposium",
    ),
    _venue(
        rf"(?:\b\d+(?:st|nd|rd|th)\s+|\b(?:International|Annual|Joint)\s+)(?:Workshop|Meeting)\s+(?:on|of)\s+(?:the\s+)?{_TAIL}",
        "Workshop",
        "Meeting",
    ),
    _venue(r"(?<![\w.])(?<![A-Za-z]\.\s)(?:J\.\s*)?(?:[A-Z][a-z]{1,8}\.\s*){2,8}(?:[A-Z]\s+)?\d+\b", *_DIGITS),
    _venue(r"(?<![\w'-])(?=[A-Za-z]*[A-Z][A-Za-z]*[A-Z])[A-Za-z]{2,12}(?:-(?:19|20)\d{2}|'\d{2})(?!\d)", *_DIGITS),
    _venue(r"(?<![\w'-])(?=[A-Za-z]*[A-Z][A-Za-z]*[A-Z])[A-Za-z]{3,12}\s(?:19|20)\d{2}(?!\d)", *_DIGITS),
)


def _literal(text: str) -> re.Pattern[str]:
    """``text`` anywhere, case-insensitively, but not inside a longer word (an id "a1" is not found in "data1x")."""
    return re.compile(rf"(?<!\w){re.escape(skeleton(display_text(text)))}(?!\w)", re.IGNORECASE)


def _spans(shown: str, also: Iterable[str]) -> list[tuple[int, int, str]]:
    """(start, end, kind) of the identifying metadata in ``shown`` (a :func:`display_text`), each kind's matches in
    :data:`METADATA_PATTERNS` order; a match inside an earlier one is left out. Sorted by start."""
    plain = skeleton(shown)
    found: list[tuple[int, int, str]] = []
    starts: list[int] = []  # the text covered so far, as sorted disjoint intervals [starts[i], ends[i])
    ends: list[int] = []

    def add(start: int, end: int, kind: str) -> None:
        i = bisect_right(starts, start) - 1
        if end <= start or (i >= 0 and end <= ends[i]):
            return  # empty, or inside what an earlier match removes
        found.append((start, end, kind))
        lo, hi = bisect_left(ends, start), bisect_right(starts, end)
        if lo < hi:
            start, end = min(start, starts[lo]), max(end, ends[hi - 1])
        starts[lo:hi], ends[lo:hi] = [start], [end]

    lowered = plain.lower()
    for rule in METADATA_PATTERNS:
        for start, end in rule.finds(plain, lowered):
            add(start, end, rule.kind)
    for literal in also:
        if literal and literal.strip():
            for m in _literal(literal).finditer(plain):
                add(*m.span(), "reference id")
    return sorted(found)


def metadata_hits(text: str, *, also: Iterable[str] = ()) -> list[tuple[str, str]]:
    """(kind, matched text) of identifying metadata in ``text``; ``also`` are literal strings to find too (the
    reference's original id), reported as kind "reference id"."""
    shown = display_text(text)
    return [(kind, shown[s:e]) for s, e, kind in _spans(shown, also)]


_REPEATED = re.compile(rf"{re.escape(SCRUBBED)}(?:[\s,;]*{re.escape(SCRUBBED)})+")


def scrub(text: str, *, also: Iterable[str] = ()) -> tuple[str, list[str]]:
    """``text`` as displayed (:func:`display_text`) with identifying metadata replaced by :data:`SCRUBBED`, and the
    kinds removed (sorted, unique). Runs again on its result until nothing is found (at most three passes), so that
    :func:`metadata_hits` on what it returns is empty."""
    out, kinds, also = display_text(text), set(), list(also)
    for _ in range(3):
        spans = _spans(out, also)
        if not spans:
            break
        merged: list[list[int]] = []
        for start, end, kind in spans:
            kinds.add(kind)
            if merged and start <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        pieces, at = [], 0
        for start, end in merged:
            pieces.append(out[at:start] + SCRUBBED)
            at = end
        out = _REPEATED.sub(SCRUBBED, "".join(pieces) + out[at:])
    return out, sorted(kinds)


# ---------------------------------------------------------------------------------------------------- the audit


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
    if not _TOKEN.search(shown_title.replace(SCRUBBED, "")):
        reasons.append(NOTHING_LEFT)
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
    audit did): the seed's title, identifying metadata, an original reference id — read through the same
    normalisation as the audit. Empty when clean."""
    problems = [f"{kind}: {hit!r}" for kind, hit in metadata_hits(text, also=original_ids)]
    title = tokens(seed_title)
    if len(title) >= TITLE_MIN_TOKENS and _title_in(tokens(text), title):
        problems.append("the seed's title")
    return problems
