"""The engine's gates: checks every judging task kind runs before a prompt is sent.

- **Orientation gate** (:func:`orientation_sort`): in a two-sided task, the reverse prompt shows exactly the
  original's B as A and its A as B. A kind runs it on every subject when a run is created. A reverse task that does
  not swap is a rendering fault: nothing is launched. A subject whose two sides read the same once redacted (two
  participants gave the same text, or texts that differ only by the names redaction removes) cannot be judged blind —
  both orders show one prompt — so it is *skipped*: left out of the run, counted in the run's skipped subjects and
  named in its log, while the rest of the run goes ahead; a run whose every subject is like that is refused. One rule
  for every two-sided kind, here rather than in each protocol.
- **Blindness gate** (:func:`blindness_problem`): the second line of defence after redaction (``arena.blindness``).
  A prompt that still names a participant (in any spelling, in any script), the internal key of what is judged, or
  any alias of the benchmark's participants and judges inside a shown block is refused, and its task fails with the
  reason.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from typing import Any

from arena import blindness
from arena.aliases import LOOKALIKES

from .execution import run_event_add
from .lifecycle import RunError
from .models import RunEvent, RunKind
from .prompts import RenderedTask

# Every ASCII byte but digits and lower-case letters (what ``squash`` deletes after lower-casing).
_NOT_ALNUM = bytes(b for b in range(128) if not (48 <= b <= 57 or 97 <= b <= 122))


def squash(text: str) -> str:
    """Lower case with everything but letters and digits dropped: 'GPT-5.2', 'gpt_5.2' and 'GPT 5.2' meet.

    Same as ``re.sub(r"[^0-9a-z]+", "", text.lower())`` (non-ASCII characters go too), in C: the gate squashes
    every prompt, and the regular expression was a tenth of a driver's CPU."""
    return text.lower().encode("ascii", "ignore").translate(None, _NOT_ALNUM).decode("ascii")


# The fold is case-blind, so it reads as Latin only the look-alike letters of ``arena.aliases.LOOKALIKES`` whose two
# cases look like the two cases of one Latin letter (а/А, о/О, с/С, α/Α, κ/Κ, ...): Greek ν looks like v but its capital
# Ν like N, Cyrillic в like nothing Latin but its capital В like B (review: a table made from the capitals read ν as "v"
# and в, н, м, т as b, h, m, t). Redaction, which sees case, reads the others too.
_FOLD_LOOKALIKES = {k: v for k, v in LOOKALIKES.items() if k.islower() and LOOKALIKES.get(k.upper(), v.upper()).lower() == v}


def _folded_char(char: str) -> str:
    """One character as :func:`fold` reads it (see there)."""
    decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", char).casefold())
    return "".join(_FOLD_LOOKALIKES.get(c, c) for c in decomposed if c.isalnum())


class _Folds(dict[int, str]):
    """``str.translate``'s table for :func:`fold`: a character's entry is made the first time it is met (a few thousand
    at most in practice; every code point, 1.1 million short strings, in the worst case)."""

    def __missing__(self, code: int) -> str:
        folded = self[code] = _folded_char(chr(code))
        return folded


_FOLDS = _Folds()


def fold(text: str) -> str:
    """:func:`squash` for every script: each character NFKD-normalised (full-width and other compatibility forms read as
    what they stand for: "Ｑ" as "Q", "ｶ" as "カ"), case-folded, its accents dropped ("Ё" reads as "е"), a Cyrillic or
    Greek letter drawn like a Latin one read as it (``arena.aliases.LOOKALIKES``: "Сlaude" with a Cyrillic С reads as
    "claude"), and everything but letters and digits (of any script) dropped: "通义 千问", "通义－千问" and "通义千问" meet.

    Character by character (a translation table), so that, like ``squash``, the fold of a concatenation is the
    concatenation of the folds: the piecewise scan below rests on it."""
    return text.translate(_FOLDS)


def blindness_problem(
    rendered: RenderedTask, internal_key: str, names: list[str], hits: Callable[[str], list[Any]]
) -> str | None:
    """The reason a prompt must not be sent, or None: it names a participant (in any spelling, in any script: see
    ``_fold_terms`` for names beyond ASCII, and why a name of one CJK character is left to the alias check), the
    internal key of what is judged, or an alias of the benchmark's participants and judges inside a shown block
    (contexts may cite models: the literature names them for both sides). The refusal names a block as its header
    does ("=== PROPOSAL B ===": "proposal B still names ...")."""
    named, text = _scan(rendered, _squashed_names(names))
    if not named:
        # A prompt with letters beyond ASCII may spell any name with them ("Clàude", "Сlaude" with a Cyrillic С): every
        # name is looked for in it folded. An ASCII prompt folds as it squashes: only the names beyond ASCII have
        # anything more to look for (none in the common case: no second scan).
        terms = _fold_search(names, ascii_text=rendered.system.isascii() and rendered.user.isascii())
        named = bool(terms) and _scan(rendered, terms, fold)[0]
    if named:
        return "blindness gate: the prompt contains a participant's name"
    if squash(internal_key) in text:
        return "blindness gate: the prompt contains the internal id of what is judged"
    leaks = [(i, hit) for i, block in enumerate((rendered.block_a, rendered.block_b)) for hit in hits(block)]
    if leaks:
        index, hit = leaks[0]
        return (
            f"blindness gate: {_block_name(rendered.block_a if index == 0 else rendered.block_b, index)} still names {', '.join(hit.aliases)!r} (an alias of "
            f"{', '.join(hit.owners)}) after redaction; re-scan the benchmark's blindness page, then resume"
        )
    return None


def names_in(text: str, names: list[str]) -> bool:
    """Whether ``text`` names any of ``names`` in any spelling or script, as :func:`blindness_problem` looks for them
    in a prompt (for a text checked whole, e.g. the diagnostic controls' generation prompts)."""
    squashed = squash(text)
    if any(n in squashed for n in _squashed_names(names)):
        return True
    terms = _fold_search(names, ascii_text=text.isascii())
    if not terms:
        return False
    folded = fold(text)
    return any(n in folded for n in terms)


# How names are looked for. Every name's ``squash`` is looked for in the squashed prompt (the fast path). A name with
# letters or digits that ``squash`` does not see (another script: "通义千问", "Ёлка"; full-width forms: "ＧＰＴ５"; accents)
# is also looked for in the folded prompt (``fold``), as its fold and as each run of the non-ASCII letters and digits of
# its fold (so "通义" alone is caught for "Qwen 通义", as "qwen" alone is). The search is over the whole prompt (system
# message, material before the blocks, the blocks), so a folded string of one character is not looked for: one CJK
# character is part of many ordinary words and would refuse every prompt that has it. Such a name (or part) is left to
# redaction and to the alias check on the shown blocks, which do match a name of one CJK character.
_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]{2,}")


def _fold_terms(name: str) -> list[str]:
    """What the folded prompt is searched for to find ``name`` (comment above): nothing when ``squash`` sees all of it."""
    folded = fold(name)
    if folded == squash(name):
        return []
    return ([folded] if len(folded) > 1 else []) + _NON_ASCII_RUN.findall(folded)


# The gate's scan of a prompt, piece by piece. A prompt is its system message, the material it shows before the blocks
# (the same in many tasks), its two shown blocks (each shown in many tasks) and the template's joins; squashing and
# searching the whole prompt for every name was most of the gate's CPU. ``squash`` maps a concatenation to the
# concatenation of its pieces' squashes (it works character by character: lower-casing is contextual only for the
# Greek final sigma, which the ASCII step drops either way), so the squashed prompt is the join of its pieces' squashes,
# each computed once; and a name is in the joined text exactly when it is inside one piece (remembered per piece) or
# crosses a join between pieces (searched in a window of the name's length either side of each join). The same holds
# for ``fold`` (character by character by construction), which the second scan uses.
_PIECES_MAX = 4096  # pieces remembered per list of names at most (bounded memory on huge benchmarks)
_pieces: dict[tuple[Callable[[str], str], tuple[str, ...]], dict[str, tuple[str, bool]]] = {}
_names: dict[tuple[str, ...], tuple[str, ...]] = {}
_folded_names_memory: dict[tuple[str, ...], tuple[str, ...]] = {}


def _squashed_names(names: list[str]) -> tuple[str, ...]:
    """The names squashed, the empty ones left out (a name that squashes to nothing is left to the folded scan)."""
    key = tuple(names)
    squashed = _names.get(key)
    if squashed is None:
        if len(_names) > 64:
            _names.clear()
        # A name with letters squash cannot see keeps its ASCII part unless that is only digits ("文心一言 4.0" would
        # refuse every prompt with "40" in it): the folded scan looks for the whole name and its non-ASCII part.
        squashed = _names[key] = tuple(
            dict.fromkeys(s for n in names if (s := squash(n)) and not (s.isdigit() and _fold_terms(n)))
        )
    return squashed


def _fold_search(names: list[str], *, ascii_text: bool) -> tuple[str, ...]:
    """What a text's fold is searched for: an ASCII text's (it folds as it squashes) only the names beyond ASCII
    (:func:`_folded_names`), any other text's every name (:func:`_all_folded_names`)."""
    return _folded_names(names) if ascii_text else _all_folded_names(names)


def _folded_names(names: list[str]) -> tuple[str, ...]:
    """What an ASCII prompt's fold is searched for (``_fold_terms`` of every name); empty when every name is ASCII."""
    return _remembered(("ascii", *names), lambda: (t for n in names for t in _fold_terms(n)))


#: The shortest ASCII name looked for in the fold of a prompt with letters beyond ASCII. The fold drops spaces and reads
#: look-alike letters as Latin whatever the word, so a short name turns up in ordinary text: Russian "около 1" folds to
#: "…o1", Ukrainian "у інших" to "yi…" (review). Such a name is still looked for as it is spelt (the ASCII scan) and by
#: redaction, which reads look-alikes only in words that hold a Latin letter.
MIN_FOLDED_ASCII_NAME = 4


def _all_folded_names(names: list[str]) -> tuple[str, ...]:
    """What a prompt with letters beyond ASCII is searched for, folded: every name's fold too (an ASCII name's is its
    squash: to be found spelt with accents or look-alike letters; from :data:`MIN_FOLDED_ASCII_NAME` characters), but a
    fold of one character, or of digits only for a name with letters beyond ASCII (as ``_squashed_names`` leaves such
    digits out)."""

    def terms() -> Iterable[str]:
        for n in names:
            folded, beyond = fold(n), _fold_terms(n)
            shortest = 2 if beyond else MIN_FOLDED_ASCII_NAME
            if len(folded) >= shortest and not (folded.isdigit() and beyond):
                yield folded
            yield from beyond

    return _remembered(("any", *names), terms)


def _remembered(key: tuple[str, ...], terms: Callable[[], Iterable[str]]) -> tuple[str, ...]:
    found = _folded_names_memory.get(key)
    if found is None:
        if len(_folded_names_memory) > 64:
            _folded_names_memory.clear()
        found = _folded_names_memory[key] = tuple(dict.fromkeys(terms()))
    return found


def _pieces_of(rendered: RenderedTask) -> list[str]:
    """``rendered.system + "\n" + rendered.user`` cut into consecutive pieces: the system message, and the user message
    cut around its shown blocks (wherever they are found in it, in order; the cuts only have to join back to it)."""
    pieces = [rendered.system, "\n"]
    user, start = rendered.user, 0
    for block in (rendered.block_a, rendered.block_b):
        at = user.find(block, start) if block else -1
        if at >= 0:
            pieces += (user[start:at], block)
            start = at + len(block)
    pieces.append(user[start:])
    return pieces


def _scan(rendered: RenderedTask, names: tuple[str, ...], read: Callable[[str], str] = squash) -> tuple[bool, str]:
    """(whether a name is in the prompt as ``read`` reads it, that reading): the same as ``any(n in text for n in
    names)`` and ``text`` for ``text = read(rendered.system + "\n" + rendered.user)``; ``read`` is :func:`squash` or
    :func:`fold` (any function that maps a concatenation to the concatenation of its pieces' readings)."""
    memory = _pieces.get((read, names))
    if memory is None:
        if len(_pieces) > 16:
            _pieces.clear()
        memory = _pieces[(read, names)] = {}
    squashed: list[str] = []
    named = False
    for piece in _pieces_of(rendered):
        known = memory.get(piece)
        if known is None:
            if len(memory) > _PIECES_MAX:
                memory.clear()
            text = read(piece)
            known = memory[piece] = (text, any(n in text for n in names))
        squashed.append(known[0])
        named = named or known[1]
    text = "".join(squashed)
    if not named and names:
        reach = max(map(len, names)) - 1  # a name crossing a join lies within ``reach`` characters either side of it
        join = 0
        for piece in squashed[:-1]:
            join += len(piece)
            window = text[max(0, join - reach) : join + reach]
            if any(n in window for n in names):
                return True, text
    return named, text


def _block_name(block: str, index: int) -> str:
    """ "proposal B" for a block headed "=== PROPOSAL B ==="; "text A" for a block without a header."""
    words = block.split("\n", 1)[0].strip().strip("=").split()
    return f"{words[0].lower() if words else 'text'} {'AB'[index]}"


class AliasCheck:
    """The gate's alias check for one driver: the benchmark's matcher is read once per claimed batch (an alias
    edit applies from the next batch on), and a block shown in several tasks is checked once per matcher."""

    MEMORY = 10_000  # blocks remembered at most: bounded memory on huge benchmarks

    def __init__(self, benchmark_id: int) -> None:
        self.benchmark_id = benchmark_id
        self.matcher: Any = None
        self.seen: dict[str, list[Any]] = {}

    def refresh(self) -> None:
        matcher = blindness.benchmark_matcher(benchmark_id=self.benchmark_id)
        if matcher is not self.matcher:
            self.matcher, self.seen = matcher, {}

    def __call__(self, block: str) -> list[Any]:
        if block not in self.seen:
            if len(self.seen) > self.MEMORY:
                self.seen.clear()
            self.seen[block] = self.matcher.hits(block)
        return self.seen[block]


SAME = "the two sides read the same"
NOT_SWAPPED = "the reverse task does not swap A and B"
#: Subjects named at most in a refusal or a log line (the rest are counted): a line stays readable on a huge run.
NAMED = 20


def _body(block: str) -> str:
    """A shown block without its header line ("=== SUBMISSION A ==="), which names the label and nothing else."""
    return block.split("\n", 1)[1] if "\n" in block else ""


def orientation_problem(original: RenderedTask, reverse: RenderedTask) -> str | None:
    """None when the reverse task shows exactly the original's B as A and its A as B and the two differ;
    :data:`SAME` when both sides read the same (the subject cannot be judged blind); :data:`NOT_SWAPPED` otherwise
    (a rendering fault)."""
    if _body(reverse.block_a) != _body(original.block_b) or _body(reverse.block_b) != _body(original.block_a):
        return NOT_SWAPPED
    if _body(original.block_a) == _body(original.block_b):
        return SAME
    return None


def orientation_gate(original: RenderedTask, reverse: RenderedTask) -> bool:
    """The reverse task must show exactly the original's B as A and its A as B (and the two must differ)."""
    return orientation_problem(original, reverse) is None


def named(names: list[str]) -> str:
    """ "a, b, c" — at most :data:`NAMED` of them, then "and N more"."""
    shown = ", ".join(names[:NAMED])
    return shown + (f" and {len(names) - NAMED} more" if len(names) > NAMED else "")


def orientation_sort[T](
    subjects: Iterable[T],
    render: Callable[[T], tuple[RenderedTask, RenderedTask]],
    name: Callable[[T], str],
    *,
    what: str,
    fix: str,
) -> tuple[list[T], list[T]]:
    """Every subject through the orientation gate: ``(judgeable, same)``, ``same`` being the subjects whose two sides
    read the same once redacted, which a run skips (module doc). ``render`` gives a subject's (original, reverse)
    tasks, ``name`` how a researcher finds it ("match m-3f2 (case c1)"); ``what`` names them in the plural ("chosen
    matches") and ``fix`` says what to do when none is left.

    Raises :class:`RunError` (nothing is launched) when a reverse task does not swap A and B, or when there were
    subjects and every one of them reads the same on both sides."""
    judgeable: list[T] = []
    same: list[T] = []
    for subject in subjects:
        problem = orientation_problem(*render(subject))
        if problem == NOT_SWAPPED:
            raise RunError(f"orientation gate: the reverse task of {name(subject)} does not swap A and B; nothing was launched")
        (same if problem == SAME else judgeable).append(subject)
    if same and not judgeable:
        raise RunError(
            f"orientation gate: none of the {what} can be judged blind: in each ({named([name(s) for s in same])}) the two "
            f"sides read the same once model names are redacted, so no judge could tell them apart, in either order; "
            f"nothing was launched. {fix}"
        )
    return judgeable, same


def skipped_log(run: Any, names: list[str], why: str) -> None:  # noqa: ANN401
    """Name in the run's log the subjects its plan skipped, and why (call it from the plan's task factory: the line is
    written in the transaction that creates the run)."""
    if names:
        run_event_add(
            kind=RunKind.JUDGE,
            run_id=run.pk,
            code="skipped",
            message=f"{len(names)} skipped ({why}): {named(names)}",
            level=RunEvent.Level.WARNING,
        )
