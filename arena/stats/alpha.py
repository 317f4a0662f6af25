"""Krippendorff's alpha: a thin wrapper around the ``krippendorff`` package.

Reliability data follow the package's convention: rows are coders (annotators), columns are units, and a
missing value is ``np.nan`` (``None`` is accepted and converted). Labels may be numbers or strings; strings
are coded to integers first (for ordinal/interval/ratio levels pass ``value_domain`` to fix their order,
since alphabetical order is rarely the meaning).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import krippendorff
import numpy as np
import pandas as pd

LEVELS = ("nominal", "ordinal", "interval", "ratio")


def _is_missing(v: Any) -> bool:
    """None or NaN-like (``pd.isna``); a value ``pd.isna`` cannot answer for as a whole (e.g. a list) counts as present."""
    if v is None:
        return True
    try:
        return bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


def _is_number(v: Any) -> bool:
    """A numeric label (bool excluded: True/False are categories, not the numbers 1/0)."""
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)


def _float_table(rows: list[list[Any]], convert: Callable[[Any], float]) -> np.ndarray:
    """The coders × units float table the ``krippendorff`` package takes: ``convert`` of each value, NaN if missing."""
    return np.array([[np.nan if _is_missing(v) else convert(v) for v in r] for r in rows])


def _rectangular_rows(reliability_data: Sequence[Sequence[Any]] | np.ndarray) -> list[list[Any]]:
    """The data as lists of rows, refused unless non-empty and rectangular (a ragged table has no coder × unit grid)."""
    rows = [list(r) for r in reliability_data]
    if not rows or len({len(r) for r in rows}) != 1:
        raise ValueError("reliability data must be a non-empty rectangular coders × units table")
    return rows


def _coded_with_domain(
    rows: list[list[Any]], values: list[Any], numeric: bool, level: str, value_domain: Sequence[Any]
) -> tuple[np.ndarray, np.ndarray]:
    """Data and value domain when the caller fixed the domain: numbers stay numbers at interval/ratio level, other
    labels are coded by their position in the domain (which also fixes the order for ordinal data)."""
    code = {v: i for i, v in enumerate(value_domain)}
    unknown = {v for v in values if v not in code}
    if unknown:
        raise ValueError(f"values {sorted(map(str, unknown))} are not in value_domain")
    if numeric and level in ("interval", "ratio"):
        return _float_table(rows, float), np.array([float(v) for v in value_domain])
    return _float_table(rows, lambda v: float(code[v])), np.arange(len(value_domain), dtype=np.float64)


def _coded_without_domain(rows: list[list[Any]], values: list[Any], numeric: bool, level: str) -> np.ndarray:
    """Data without a value domain: numbers as they are; other labels coded alphabetically, which only a nominal
    level may do (alphabetical order is rarely the meaning of an ordinal scale)."""
    if numeric:
        return _float_table(rows, float)
    if level != "nominal":
        raise ValueError("non-numeric labels need value_domain for a non-nominal level")
    labels = sorted({str(v) for v in values})
    code = {v: i for i, v in enumerate(labels)}
    return _float_table(rows, lambda v: float(code[str(v)]))


def krippendorff_alpha(
    reliability_data: Sequence[Sequence[Any]] | np.ndarray,
    level: str = "nominal",
    *,
    value_domain: Sequence[Any] | None = None,
) -> float:
    """Krippendorff's alpha of coders × units data with missing values.

    Preconditions:
        ``reliability_data`` is rectangular (coders × units); missing values are None/NaN; ``level`` is one of
        ``nominal, ordinal, interval, ratio``; for non-numeric labels with a non-nominal level, ``value_domain``
        lists the labels in order. At least two distinct values must occur in pairable units.
    Returns:
        alpha as a float.
    Raises:
        ValueError: on an unknown level, a label outside ``value_domain``, or data without two distinct values.
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}")
    rows = _rectangular_rows(reliability_data)
    values = [v for r in rows for v in r if not _is_missing(v)]
    numeric = all(_is_number(v) for v in values)
    if value_domain is not None:
        data, domain = _coded_with_domain(rows, values, numeric, level, value_domain)
    else:
        data, domain = _coded_without_domain(rows, values, numeric, level), None
    if len(np.unique(data[~np.isnan(data)])) < 2:
        # Expected disagreement is 0: alpha = 1 − 0/0 is undefined.
        raise ValueError("alpha needs at least two distinct values")
    kw: dict[str, Any] = {"reliability_data": data, "level_of_measurement": level}
    if domain is not None:
        kw["value_domain"] = domain
    return float(krippendorff.alpha(**kw))


def reliability_matrix(frame: pd.DataFrame, *, unit: str, coder: str, value: str) -> tuple[list[list[Any]], list[Any], list[Any]]:
    """Pivot long-format annotations (one row per coder × unit) to the coders × units table.

    Returns:
        ``(table, coders, units)``; ``table[c][u]`` is the value or None when coder c did not code unit u.
    Raises:
        ValueError: when a coder coded a unit twice.
    """
    if frame.duplicated([unit, coder]).any():
        raise ValueError("a coder has two values for one unit")
    coders = sorted(frame[coder].unique().tolist(), key=str)
    units = sorted(frame[unit].unique().tolist(), key=str)
    lookup = {(r[coder], r[unit]): r[value] for r in frame[[coder, unit, value]].to_dict("records")}
    table = [[lookup.get((c, u)) for u in units] for c in coders]
    return table, coders, units
