"""The engine's gates: checks every judging task kind runs before a prompt is sent.

- **Orientation gate** (:func:`orientation_gate`): in a two-sided task, the reverse prompt shows exactly the
  original's B as A and its A as B. A kind runs it on every subject when a run is created; nothing is launched if
  one fails.
- **Blindness gate** (:func:`blindness_problem`): the second line of defence after redaction (``arena.blindness``).
  A prompt that still names a participant (in any spelling), the internal key of what is judged, or any alias of the
  benchmark's participants and judges inside a shown block is refused, and its task fails with the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arena import blindness

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
    text = squash(rendered.system + "\n" + rendered.user)
    for name in names:
        if squash(name) and squash(name) in text:
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


def orientation_gate(original: RenderedTask, reverse: RenderedTask) -> bool:
    """The reverse task must show exactly the original's B as A and its A as B (and the two must differ)."""

    def body(block: str) -> str:
        return block.split("\n", 1)[1]

    return (
        body(reverse.block_a) == body(original.block_b)
        and body(reverse.block_b) == body(original.block_a)
        and body(original.block_a) != body(original.block_b)
    )
