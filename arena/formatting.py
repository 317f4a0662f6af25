"""How numbers read in the leaderboard page and the ``leaderboard`` command (one place, so both agree).

A real minus sign (U+2212), thousands separators ("10,000"), an en dash inside W–L–T counts, and an em
dash for a value that does not exist. Rounding is Python's ``format`` of the stored float (so 1.26505 shows
as 1.27 at two decimals and 1.265 at three).
"""

from __future__ import annotations

from collections.abc import Sequence

MINUS = "\u2212"
DASH = "\u2013"  # en dash, between the counts of W–L–T and the ends of a range
NONE = "\u2014"  # em dash: no value


def number(value: float | int | None, digits: int = 2) -> str:
    """``-0.7313`` → ``−0.73``; ``10000`` (digits 0) → ``10,000``; None → ``—``."""
    if value is None:
        return NONE
    text = f"{value:,.{digits}f}"
    if text.startswith("-") and float(text[1:].replace(",", "")) == 0:
        text = text[1:]  # no "−0.00"
    return text.replace("-", MINUS)


#: Words of a domain's name written in capitals when a slug is shown as a label.
ACRONYMS = frozenset({"ai", "cs", "hci", "it", "ml", "nlp", "cv", "rl", "llm", "us", "uk", "eu"})


def domain_label(name: str | None) -> str:
    """A domain's name as a reader sees it: a slug (``it_operations``, ``social-science``) becomes ``IT operations``,
    ``Social science``; a name that already reads as words (spaces or capitals, ``Earth Science``) is kept as it is;
    ``all`` (the pooled scope) becomes ``All domains``. Pages keep the slug itself in ``data-`` attributes and URLs."""
    if name is None or name == "":
        return NONE
    if name == "all":
        return "All domains"
    if " " in name or any(c.isupper() for c in name):
        return name
    words = [w for w in name.replace("-", "_").split("_") if w]
    if not words:
        return name
    words = [w.upper() if w in ACRONYMS else w for w in words]
    first = words[0]
    words[0] = first if first.isupper() else first[:1].upper() + first[1:]
    return " ".join(words)


def count(value: int | None) -> str:
    """An integer with thousands separators: ``10000`` → ``10,000``."""
    return NONE if value is None else number(int(value), 0)


def interval(ci: Sequence[float | None] | None, digits: int = 2) -> str:
    """``[1.15, 1.39]``; ``—`` when there is no interval."""
    if not ci or ci[0] is None or ci[1] is None:
        return NONE
    return f"[{number(ci[0], digits)}, {number(ci[1], digits)}]"


def share(value: float | None, digits: int = 3) -> str:
    """A fraction in [0, 1] as ``0.875`` (``—`` when None)."""
    return number(value, digits)


def percent(value: float | None, digits: int = 1) -> str:
    """A fraction as a percentage: ``0.875`` → ``87.5%``."""
    return NONE if value is None else f"{number(100 * value, digits)}%"


def wlt(*counts: int | float | None) -> str:
    """Counts joined by en dashes: ``424–49–127``."""
    return DASH.join(count(c) if isinstance(c, int) or c is None else number(c, 1) for c in counts)


def ranking(models: Sequence[str]) -> str:
    """``A > B > C``."""
    return " > ".join(models)


def table(headers: list[str], rows: list[list[str]], *, align: str = "") -> list[str]:
    """A plain-text table for a report command; ``align`` has one letter per column, ``l`` or ``r`` (default: the first
    column left, the figures right)."""
    widths = [max(len(str(c)) for c in col) for col in zip(headers, *rows, strict=True)]
    align = align or "l" + "r" * (len(headers) - 1)

    def line(cells: list[str]) -> str:
        return "  ".join(
            str(c).ljust(w) if a == "l" else str(c).rjust(w) for c, w, a in zip(cells, widths, align, strict=True)
        ).rstrip()

    return [line(headers), "  ".join("-" * w for w in widths), *(line(r) for r in rows)]
