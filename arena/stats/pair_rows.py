"""Canonical cases from per-pair rows the database has already folded (issue 25, item 1).

A judge run stores ordered judgments, two per canonical pair. The database groups them by pair and returns one
row per pair that has an accepted judgment: its id, its context, its two stored sides (``participant_a``,
``participant_b``) and one small code per order (:data:`SIDE_A`, :data:`SIDE_B`, :data:`SIDE_TIE`,
:data:`SIDE_NONE`, :data:`SIDE_OTHER`) and for the side shown as A in the original order. This module turns those
integer rows into the :class:`~arena.stats.folding.EncodedCases` that :func:`~arena.stats.folding.encode_cases`
builds from the ``cases`` frame of the same run, array for array: rows in pair-id order, models sorted by name,
verdicts relative to the lower-index model. No frame of names is built and no string is parsed per judgment.

Why per case and not per case type: the case and context bootstraps need only case-type counts (by context), but
the document's ``honest_intervals`` section draws its simulated verdicts judgment by judgment in row order (its
coverage estimate keeps that random stream), so a document equal bit for bit needs the cases themselves, in the same
order. Integer rows are cheap; the names, batches and contexts are looked up once per distinct value.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .folding import HI, LO, MISSING, TIE, TIE_CODE, EncodedCases

#: An order's code relative to the pair's stored sides: no accepted judgment in that order (or no side recorded).
SIDE_NONE = 0
#: The pair's ``participant_a`` won (or, for the shown side, was shown as A).
SIDE_A = 1
#: The pair's ``participant_b`` won (or was shown as A).
SIDE_B = 2
#: The judgment is a TIE (verdict codes only).
SIDE_TIE = 3
#: The winner (or the side shown as A) is neither model of the pair: the stored data contradict each other.
SIDE_OTHER = 4


def encode_pair_rows(
    *,
    pair: np.ndarray,
    context: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    original: np.ndarray,
    reverse: np.ndarray,
    shown_a: np.ndarray,
    names: Mapping[int, str],
    contexts: Mapping[int, tuple[str, str]],
) -> EncodedCases:
    """The :class:`EncodedCases` of per-pair rows (any row order; they are sorted by pair id here).

    Preconditions:
        ``pair`` (pair ids, unique), ``context`` (context ids), ``a`` and ``b`` (participant ids of the pair's
        stored sides) are integer arrays of one length; ``original``, ``reverse`` hold each order's code
        (``SIDE_*``), ``shown_a`` the side shown as A in the original order (:data:`SIDE_NONE` when unknown);
        ``names`` maps every participant id in ``a`` and ``b`` to its model name; ``contexts`` maps every context id
        to ``(external id, batch name)``.
    Returns:
        The cases, one per row in pair-id order; ``case`` holds each pair's id (as a string). Models are the
        sorted names of the participants the rows name, as :func:`~arena.stats.folding.encode_cases` sorts them.
    Raises:
        ValueError: naming the first offending pair id, when a pair's two sides are one model, a verdict or the
            side shown as A names a model outside the pair, or a model is called ``"TIE"``.
    """
    order = np.argsort(np.asarray(pair, dtype=np.int64), kind="stable")
    pair, context, a, b = (np.asarray(x, dtype=np.int64)[order] for x in (pair, context, a, b))
    original, reverse, shown_a = (np.asarray(x, dtype=np.int64)[order] for x in (original, reverse, shown_a))
    if (pair[1:] == pair[:-1]).any():  # sorted: a repeated id sits next to itself
        raise ValueError("encode_pair_rows: pair ids must be unique (one row per canonical pair)")
    # A handful of participants: each side is found by a binary search over their ids (np.unique over both sides
    # of 560,000 pairs cost 0.2 s), and only those the rows name become models.
    known = np.array(sorted(names), dtype=np.int64)
    sides = np.searchsorted(known, np.concatenate([a, b])) if len(known) else np.zeros(2 * len(a), dtype=np.int64)
    unknown = np.flatnonzero((sides >= len(known)) | (known[np.minimum(sides, len(known) - 1)] != np.concatenate([a, b])))
    if len(unknown):
        raise ValueError(f"pair {pair[unknown[0] % len(a)]}: a side is not a participant of the benchmark")
    named = np.flatnonzero(np.bincount(sides, minlength=len(known)))
    models = tuple(sorted({str(names[int(known[i])]) for i in named}))
    if TIE in models:
        raise ValueError(f"a model may not be named {TIE!r}: it is the tie verdict")
    index_of = np.full(len(known), -1, dtype=np.int64)  # model index of each known participant (-1: named by no row)
    index_of[named] = [models.index(str(names[int(known[i])])) for i in named]
    ia, ib = index_of[sides[: len(a)]], index_of[sides[len(a) :]]
    same = np.flatnonzero(ia == ib)
    if len(same):
        raise ValueError(f"pair {pair[same[0]]}: both sides are model {models[ia[same[0]]]!r}")
    a_is_lo = ia < ib
    code_of_a = np.where(a_is_lo, LO, HI)
    code_of_b = np.where(a_is_lo, HI, LO)
    for column, codes in (("original", original), ("reverse", reverse), ("shown_a_original", shown_a)):
        bad = np.flatnonzero(
            (codes == SIDE_OTHER)
            | (codes < SIDE_NONE)
            | (codes > SIDE_OTHER)
            | ((codes == SIDE_TIE) & (column == "shown_a_original"))
        )
        if len(bad):
            r = bad[0]
            raise ValueError(
                f"pair {pair[r]}: its {column} names neither {models[ia[r]]!r}, {models[ib[r]]!r} nor {TIE!r} "
                "(a judgment whose winner or shown side is not a model of its pair): correct or delete that judgment"
            )

    def verdicts(codes: np.ndarray) -> np.ndarray:
        return np.select(
            [codes == SIDE_A, codes == SIDE_B, codes == SIDE_TIE], [code_of_a, code_of_b, TIE_CODE], default=MISSING
        ).astype(np.int8)

    context_ids, context_code = np.unique(context, return_inverse=True)
    labels = [contexts[int(c)] for c in context_ids]
    external = np.empty(len(labels), dtype=object)
    external[:] = [label[0] for label in labels]
    batch = np.empty(len(labels), dtype=object)
    batch[:] = [label[1] for label in labels]
    case = np.empty(len(pair), dtype=object)
    case[:] = list(map(str, pair.tolist()))
    return EncodedCases(
        models=models,
        case=case,
        context=external[context_code.reshape(-1)],
        batch=batch[context_code.reshape(-1)],
        lo=np.minimum(ia, ib),
        hi=np.maximum(ia, ib),
        original=verdicts(original),
        reverse=verdicts(reverse),
        shown_a=verdicts(shown_a),
    )
