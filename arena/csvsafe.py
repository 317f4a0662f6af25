"""CSV cells that a spreadsheet will not run as formulas.

A text cell starting with ``=``, ``+``, ``-`` or ``@`` (or a tab or carriage return, which some
spreadsheets skip before looking for one of those) is read by Excel, LibreOffice and Google Sheets
as a formula: ``=HYPERLINK(...)`` in a proposal or an annotator's reason would run on the machine
of the researcher who opens the export. OWASP's recommendation ("CSV Injection") is to prefix such
a cell with a single quote, which spreadsheets take as "this is text" and do not display.

Only text is changed: numbers written as numbers (a negative value, say) stay numbers. Every CSV
the application writes passes its cells through :func:`csv_safe`.
"""

from __future__ import annotations

from typing import Any

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def csv_safe(value: Any) -> Any:
    """``value`` as a CSV cell: text that starts like a formula gets a leading ``'``; anything else is unchanged."""
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return "'" + value
    return value
