"""Style features of judged texts, for style control (issue 26): length, cited papers, structure.

Each feature is a count per text; style control uses the difference between the two sides of a judgment
(:func:`style_differences`). Counting is linear in the total text length.

* ``words``: whitespace-separated tokens.
* ``citations``: distinct paper ids of ``paper_ids`` (e.g. the context's OpenReview ids, as in the Lit2Test
  release, where a proposal cites papers by id) that occur in the text; without ids, distinct bracketed
  markers such as ``[3]`` or ``[Smith 2020]``.
* ``headers`` (Markdown ``#`` lines), ``lists`` (lines starting with ``-``, ``*``, ``+`` or ``1.``/``1)``),
  ``bold`` (``**…**`` or ``__…__`` spans) and ``structure``, their sum.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import numpy as np

FEATURES = ("words", "citations", "headers", "lists", "bold", "structure")

_HEADER = re.compile(r"^\s{0,3}#{1,6}\s", re.MULTILINE)
_LIST = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s", re.MULTILINE)
_BOLD = re.compile(r"\*\*[^*\n]+\*\*|__[^_\n]+__")
_BRACKET = re.compile(r"\[[^\[\]\n]{1,80}\]")


def _citations(text: str, ids: Sequence[str] | None) -> int:
    if ids:
        return sum(1 for pid in ids if pid and pid in text)
    return len(set(_BRACKET.findall(text)))


def style_features(texts: Iterable[str], paper_ids: Iterable[Sequence[str] | None] | None = None) -> dict[str, np.ndarray]:
    """Feature counts of each text: {feature: (n,) float array} for every name in :data:`FEATURES`.

    ``paper_ids`` (optional) gives, per text, the ids that count as cited papers (see module docstring).
    """
    texts = ["" if t is None else str(t) for t in texts]
    ids = [None] * len(texts) if paper_ids is None else list(paper_ids)
    if len(ids) != len(texts):
        raise ValueError(f"style_features: {len(ids)} paper-id lists for {len(texts)} texts (one per text)")
    out = {f: np.zeros(len(texts)) for f in FEATURES}
    for i, (t, pid) in enumerate(zip(texts, ids, strict=True)):
        out["words"][i] = len(t.split())
        out["citations"][i] = _citations(t, pid)
        out["headers"][i] = len(_HEADER.findall(t))
        out["lists"][i] = len(_LIST.findall(t))
        out["bold"][i] = len(_BOLD.findall(t))
    out["structure"] = out["headers"] + out["lists"] + out["bold"]
    return out


def style_differences(features_a: dict[str, np.ndarray], features_b: dict[str, np.ndarray], names: Sequence[str]) -> np.ndarray:
    """The (n, p) matrix of side-a minus side-b feature values for the features ``names`` (style control's input)."""
    unknown = [n for n in names if n not in features_a or n not in features_b]
    if unknown:
        raise ValueError(f"style_differences: unknown feature(s) {unknown}; choose from {sorted(features_a)}")
    return np.column_stack([np.asarray(features_a[n], float) - np.asarray(features_b[n], float) for n in names])
