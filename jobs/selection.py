"""The task-selection grammar every protocol's runs share: ``all``, ``GROUP:NAME`` for each group the protocol names
(a batch, a domain, a system, a discipline) and ``sample:N`` (N drawn with the run's seed, returned in id order).

A protocol declares its grammar once (:class:`Selection`) and chooses its subjects with it; a malformed
selection or an empty group is refused with a :class:`~jobs.lifecycle.RunError` that names the grammar.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.numbers import whole_number

from .lifecycle import RunError


@dataclass(frozen=True)
class Selection:
    # group name -> the group an item belongs to, e.g. {"domain": lambda match: match.case.domain.name}
    groups: dict[str, Callable[[Any], str]] = field(default_factory=dict)
    flag: str = "--select"  # how a refusal names the selection ("--select", "papers")
    run: str = ""  # the run it selects for, in refusals: " for a HypoArena run"
    # the refusal of a group with no items: a template of {group}, {value!r} and {known}; "": an empty group is no error
    empty: str = "no items in {group} {value!r}; its {group}s are {known}"

    def grammar(self) -> str:
        """ "'all', 'domain:NAME' or 'sample:N'": the forms this selection accepts."""
        forms = ["'all'", *(f"'{group}:NAME'" for group in self.groups), "'sample:N'"]
        return ", ".join(forms[:-1]) + " or " + forms[-1]

    def choose[T](
        self, items: Sequence[T], spec: str, seed: int, *, sample_from: Callable[[list[T]], list[T]] | None = None
    ) -> list[T]:
        """The items ``spec`` selects, in the given order (a sample in primary-key order). ``sample_from`` narrows what
        a sample draws from (Lit2Test samples only pairs with text)."""
        kind, _, value = spec.partition(":")
        if kind == "all" and not value:
            return list(items)
        if kind in self.groups and value:
            group_of = self.groups[kind]
            chosen = [item for item in items if group_of(item) == value]
            if not chosen and self.empty:
                known = ", ".join(sorted({group_of(item) for item in items})) or "none"
                raise RunError(self.empty.format(group=kind, value=value, known=known))
            return chosen
        # isascii too: "²" is a digit to str.isdigit() but no number to int()
        if kind == "sample" and whole_number(value) and int(value) > 0:
            pool = sample_from(list(items)) if sample_from is not None else list(items)
            drawn = random.Random(seed).sample(pool, min(int(value), len(pool)))
            return sorted(drawn, key=lambda item: item.pk)  # type: ignore[attr-defined]
        raise RunError(f"{self.flag} must be {self.grammar()}{self.run}, got {spec!r}")
