"""The engine's gates: checks every judging task kind runs before a prompt is sent.

- **Orientation gate** (:func:`orientation_sort`): in a two-sided task, the reverse prompt shows exactly the
  original's B as A and its A as B. A kind runs it on every subject when a run is created. A reverse task that does
  not swap is a rendering fault: nothing is launched. A subject whose two sides read the same once redacted (two
  participants gave the same text, or texts that differ only by the names redaction removes) cannot be judged blind —
  both orders show one prompt — so it is *skipped*: left out of the run, counted in the run's skipped subjects and
  named in its log, while the rest of the run goes ahead; a run whose every subject is like that is refused. One rule
  for every two-sided kind, here rather than in each protocol.
- **Blindness gate** (:func:`blindness_problem`): the second line of defence after redaction (``arena.blindness``).
  A prompt that still names a participant (in any spelling), the internal key of what is judged, or any alias of the
  benchmark's participants and judges inside a shown block is refused, and its task fails with the reason.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from arena import blindness

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


def blindness_problem(
    rendered: RenderedTask, internal_key: str, names: list[str], hits: Callable[[str], list[Any]]
) -> str | None:
    """The reason a prompt must not be sent, or None: it names a participant (in any spelling), the internal key of
    what is judged, or an alias of the benchmark's participants and judges inside a shown block (contexts may cite
    models: the literature names them for both sides). The refusal names a block as its header does ("=== PROPOSAL B
    ===": "proposal B still names ...")."""
    named, text = _scan(rendered, _squashed_names(names))
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


# The gate's scan of a prompt, piece by piece. A prompt is its system message, the material it shows before the blocks
# (the same in many tasks), its two shown blocks (each shown in many tasks) and the template's joins; squashing and
# searching the whole prompt for every name was most of the gate's CPU. ``squash`` maps a concatenation to the
# concatenation of its pieces' squashes (it works character by character: lower-casing is contextual only for the
# Greek final sigma, which the ASCII step drops either way), so the squashed prompt is the join of its pieces' squashes,
# each computed once; and a name is in the joined text exactly when it is inside one piece (remembered per piece) or
# crosses a join between pieces (searched in a window of the name's length either side of each join).
_PIECES_MAX = 4096  # pieces remembered per list of names at most (bounded memory on huge benchmarks)
_pieces: dict[tuple[str, ...], dict[str, tuple[str, bool]]] = {}
_names: dict[tuple[str, ...], tuple[str, ...]] = {}


def _squashed_names(names: list[str]) -> tuple[str, ...]:
    """The names squashed, the empty ones left out (a name that squashes to nothing names nothing)."""
    key = tuple(names)
    squashed = _names.get(key)
    if squashed is None:
        if len(_names) > 64:
            _names.clear()
        squashed = _names[key] = tuple(dict.fromkeys(n for n in map(squash, names) if n))
    return squashed


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


def _scan(rendered: RenderedTask, names: tuple[str, ...]) -> tuple[bool, str]:
    """(whether a name is in the squashed prompt, the squashed prompt): the same as ``any(n in text for n in names)``
    and ``text`` for ``text = squash(rendered.system + "\n" + rendered.user)``."""
    memory = _pieces.get(names)
    if memory is None:
        if len(_pieces) > 16:
            _pieces.clear()
        memory = _pieces[names] = {}
    squashed: list[str] = []
    named = False
    for piece in _pieces_of(rendered):
        known = memory.get(piece)
        if known is None:
            if len(memory) > _PIECES_MAX:
                memory.clear()
            text = squash(piece)
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
