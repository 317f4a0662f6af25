"""Case-level and context-cluster bootstraps of the Bradley–Terry fits, vectorised over replicates.

Resampling n cases with replacement and counting how many copies of each distinct case type were drawn
gives type counts distributed Multinomial(n, type frequencies / n). Drawing those counts directly is the
same bootstrap distribution, without materialising any resampled case: every replicate's win matrix is
``counts @ M`` (see :mod:`arena.stats.matrices`), all replicates form one (R, K, K) tensor, and the MM
algorithm runs on the whole tensor at once (:func:`arena.stats.bt.fit_bt_batch`).

The context-cluster bootstrap resamples whole contexts (the pairs of a context share proposals, so they
are not independent): it draws C context indices per replicate, counts them, and turns context counts into
case-type counts through a sparse (C, T) table (each context holds a handful of the T case types). Until
issue 10 it drew a multinomial over distinct context compositions and multiplied a dense table in int64:
the same bootstrap distribution, but 655 s and 20 GiB at 50,000 contexts; the random stream changed then,
so cluster values match that version only up to Monte Carlo error (tests/stats/test_stats_bootstrap.py).

Issue 25: large case draws go through independent Poisson counts corrected to n (:func:`draw_case_counts`;
the same distribution, another stream, tests/stats/test_stats_bootstrap_draws.py); the cluster draw turns
context counts into type counts block by block, and from 4,096 contexts on draws the context counts as
Poisson counts, two per 16-bit table lookup, corrected to C (:class:`_ContextCounts`; the same distribution,
another stream, tests/stats/test_stats_bootstrap_clusters.py). Smaller data (the release) keep the streams
and values of issue 10.

Replicates are drawn and fitted in chunks, so memory is bounded; chunks consume the random stream as
one big draw would, so the chunk size never changes a value.

Randomness comes only from a seeded ``numpy.random.Generator``: equal seeds give equal results. (The
stream differs from a resample-the-rows implementation, so values match other tools only up to Monte
Carlo error.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import sparse, special

from .bt import fit_bt_batch, replicate_rankings
from .folding import EncodedCases
from .matrices import FIT_KINDS, CaseTypes, case_types, type_matrix, win_matrices_from_type_matrix

#: Elements (R·K·K) of one chunk of win matrices; larger problems are fitted chunk by chunk to bound memory.
_CHUNK_ELEMENTS = 4_000_000
#: Elements (R·T or R·C) of one chunk of type or context counts.
_COUNT_ELEMENTS = 16_000_000
#: The case draw uses :class:`_PoissonMultinomial` from this many types on (small draws are cheap either way
#: and keep numpy's multinomial stream) ...
_POISSON_MIN_TYPES = 4096
#: ... when its CDF tables (one per distinct type count c, about c + 12√c + 30 entries each) stay this short.
_POISSON_MAX_TABLE = 1_000_000
#: Replicates whose context counts are turned into type counts by one sparse product.
_CONTEXT_BLOCK = 64
#: The cluster draw uses :class:`_ContextCounts` from this many contexts on (the release's ~200 keep the
#: issue-10 stream of ``rng.integers``).
_FAST_MIN_CONTEXTS = 4096
#: Cells drawn and looked up per call in :meth:`_ContextCounts.draw_block`: numpy widens the 16-bit cells it is given
#: to 64-bit indices first, and a block's 1.6M at once go through memory where 32K stay in the cache.
_TAKE_CHUNK = 1 << 15


def as_generator(seed: int | np.random.Generator | None) -> np.random.Generator:
    """A numpy Generator from a seed (or the generator itself)."""
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(seed)


def draw_case_counts(types: CaseTypes, replicates: int, rng: np.random.Generator) -> np.ndarray:
    """Type counts (R, T) of ``replicates`` case-level bootstrap resamples (n cases with replacement each).

    Two exact samplers of the same Multinomial(n, counts / n), chosen by size (both deterministic given the
    data and the seed): numpy's multinomial, a loop of T conditional binomials (~100 ns each), when types
    are few or the CDF tables would be long (the release: 1,200 cases, 18 types: its stream is unchanged);
    otherwise :class:`_PoissonMultinomial`, about 3× cheaper at 200 models × 500,000 cases (54,000 types).
    Each replicate's draws follow the previous one's in the stream, so drawing in chunks gives the values of
    one large draw.
    """
    n = int(types.counts.sum())
    if n == 0:
        return np.zeros((replicates, types.n_types), dtype=np.int64)
    values = np.unique(types.counts)
    if types.n_types < _POISSON_MIN_TYPES or (values + 12 * np.sqrt(values) + 30).sum() > _POISSON_MAX_TABLE:
        return rng.multinomial(n, types.counts / n, size=replicates)
    sampler = _PoissonMultinomial(types.counts)
    out = np.empty((replicates, types.n_types), dtype=np.int64)
    for r in range(replicates):
        out[r] = sampler.draw(rng)
    return out


class _PoissonMultinomial:
    """Exact Multinomial(n, c / n) draws for integer counts c (n = Σ c) through independent Poisson counts.

    Independent X_t ~ Poisson(c_t) are, given their sum S, Multinomial(S, c / n) (S ~ Poisson(n)). If S > n,
    removing a uniformly random subset of S − n of the S drawn items leaves n exchangeable draws: Multinomial
    (n, c / n); if S < n, adding n − S independent draws from c / n gives the same. |S − n| is about √n, so the
    correction is cheap; each X_t is one uniform inverted through a table of the Poisson(c_t) CDF (types with
    equal c_t share one table) with a guide table, all types at once: a few vectorised passes, against
    ~100 ns per type for the conditional binomials of numpy's multinomial.
    The CDFs are float64 (scipy.special.pdtr), the precision of numpy's own samplers; the last entry is set to
    1 (tables reach c + 12√c + 30, beyond which the Poisson mass is below 1e-20).
    """

    def __init__(self, counts: np.ndarray) -> None:
        self.counts = np.asarray(counts, dtype=np.int64)
        self.n = int(self.counts.sum())
        self.cum = np.cumsum(self.counts)
        values, of_type = np.unique(self.counts, return_inverse=True)
        cdfs, guides = [], []
        for c in values.tolist():
            cdf = special.pdtr(np.arange(int(c + 12 * np.sqrt(c) + 30)), c)
            cdf[-1] = 1.0
            # Guide table: cell j of 2**m equal cells starts the search at the first k with F(k) >= j / 2**m.
            cells = 1 << int(np.ceil(np.log2(2 * len(cdf))))
            cdfs.append(cdf)
            guides.append((np.searchsorted(cdf, np.arange(cells) / cells, side="left"), cells))
        cdf_start = np.cumsum([0] + [len(f) for f in cdfs])[:-1]
        guide_start = np.cumsum([0] + [len(g) for g, _ in guides])[:-1]
        self.cdf = np.concatenate(cdfs)
        # Per type: its table's offset in ``cdf``, its guide cells (a power of 2: u * cells is exact) and offset.
        self.cdf_start = cdf_start[of_type.reshape(-1)]
        self.cells = np.array([c for _, c in guides], dtype=np.float64)[of_type.reshape(-1)]
        self.guide = np.concatenate([g + s0 for (g, _), s0 in zip(guides, cdf_start, strict=True)])
        self.guide_start = guide_start[of_type.reshape(-1)]

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        """One (T,) count vector."""
        x = self.invert(rng.random(len(self.counts)))
        total = int(x.sum())
        if total > self.n:
            # Items numbered type by type; drop a uniform random subset of total − n of them.
            drop = rng.choice(total, total - self.n, replace=False)
            x -= np.bincount(np.searchsorted(np.cumsum(x), drop, side="right"), minlength=len(x))
        elif total < self.n:
            # n − total more cases, uniform over the n cases (numbered type by type).
            extra = rng.integers(0, self.n, size=self.n - total)
            x += np.bincount(np.searchsorted(self.cum, extra, side="right"), minlength=len(x))
        return x

    def invert(self, u: np.ndarray) -> np.ndarray:
        """X_t = the smallest k with u_t <= F_t(k) (as searchsorted(F_t, u_t, "left")) for uniforms u (T,).

        From the guide cell's start, stepping forward while F_t(k) < u_t: a step or two for most types, but
        a u in a table's last guide cell (where the tail's entries crowd near 1) may need ~14, so the steps
        after the first run on the types still short only (issue 25: all types stepped until the last was
        done, 2/3 of the draw at 200 models; the same k).
        """
        k = self.guide[self.guide_start + (u * self.cells).astype(np.intp)]
        k += self.cdf[k] < u
        short = np.flatnonzero(self.cdf[k] < u)
        while len(short):
            k[short] += 1
            short = short[self.cdf[k[short]] < u[short]]
        return k - self.cdf_start


def context_type_table(enc: EncodedCases, types: CaseTypes) -> sparse.csr_matrix:
    """Case-type counts of each context, as a sparse (C, T) matrix over the contexts with a complete case.

    Rows follow the sorted context ids. Sparse because a context holds a handful of case types (6 pairs at
    most in the release's design) among T, which grows with models² (about 120,000 at 200 models).
    """
    ctx = enc.context[enc.complete]
    # Codes in sorted order of the context ids, as np.unique(ctx.astype(str)) gave them, 3× faster at 300,000
    # cases: the cases of a context usually come together, so only the first of each run is hashed
    # (pd.factorize), and only the distinct ids are sorted. Any order gives the same codes.
    head = np.ones(len(ctx), dtype=bool)
    np.not_equal(ctx[1:], ctx[:-1], out=head[1:])
    run_idx, ids = pd.factorize(ctx[head], sort=False, use_na_sentinel=False)
    if pd.api.types.infer_dtype(ids, skipna=False) == "string":
        # The distinct ids sorted as numpy strings (code point order, as Python's), 2× faster than pandas sorting the
        # objects; with a NUL anywhere, as Python objects (numpy drops a string's trailing NULs: "a" and "a\x00" met).
        nul = any("\x00" in i for i in ids)
        order = np.argsort(np.asarray(ids, dtype=object) if nul else ids.astype(str), kind="stable")
        rank = np.empty(len(ids), dtype=np.intp)
        rank[order] = np.arange(len(ids))
        ctx_idx = np.repeat(rank[run_idx], np.diff(np.append(np.flatnonzero(head), len(ctx))))
    else:  # ids are strings (EncodedCases); anything else sorts as its str
        _, ctx_idx = np.unique(ctx.astype(str), return_inverse=True)
        ctx_idx = ctx_idx.reshape(-1)
    n_ctx = int(ctx_idx.max()) + 1 if len(ctx_idx) else 0
    ones = np.ones(len(ctx_idx), dtype=np.int64)
    # Duplicate (context, type) entries are summed by the conversion to CSR.
    return sparse.csr_matrix((ones, (ctx_idx, types.of_case)), shape=(n_ctx, types.n_types))


def draw_context_counts(table: sparse.csr_matrix, replicates: int, rng: np.random.Generator) -> np.ndarray:
    """Type counts (R, T) of ``replicates`` context-cluster bootstrap resamples (C contexts with replacement).

    See :class:`_ClusterCounts` (this is ``_ClusterCounts(table, replicates, rng).take(replicates)``).
    """
    return _ClusterCounts(table, replicates, rng).take(replicates)


class _ClusterCounts:
    """The type counts of R context-cluster bootstrap resamples, served chunk by chunk (:meth:`take`).

    Each replicate's context counts are Multinomial(C, 1/C) (C indices drawn uniformly and counted), and become
    type counts through one sparse product per block of :data:`_CONTEXT_BLOCK` replicates, with the counts laid
    out (C, block) so that every stored entry of the table adds a short contiguous row (issue 25: one mat-vec
    per replicate walked the table R times). Partial sums stay below 2**24 when float32 is used (checked: C
    times the largest context), so the product is exact either way.

    Two exact samplers, chosen by size: below :data:`_FAST_MIN_CONTEXTS` contexts (the release: ~200), the
    issue-10 stream (``rng.integers`` then ``bincount``); from there on :class:`_ContextCounts` (issue 25:
    ~3× cheaper at 50,000 contexts; the same law, another stream, tests/stats/test_stats_bootstrap_clusters.py).
    Blocks always hold :data:`_CONTEXT_BLOCK` replicates but the last (R is known from the start), so any
    sequence of :meth:`take` calls gives the values of one ``take(R)``.
    """

    def __init__(self, table: sparse.csr_matrix, replicates: int, rng: np.random.Generator) -> None:
        self.n_ctx, self.n_types = table.shape
        self.rng = rng
        self.to_draw = replicates
        self.ready = np.zeros((0, self.n_types), dtype=np.int64)
        largest = int(np.asarray(table.sum(axis=1)).max()) if self.n_ctx else 0
        self.dtype = np.float32 if self.n_ctx * largest < 2**24 else np.float64
        self.by_type = sparse.csc_matrix(table.T, dtype=self.dtype)
        self.fast = _ContextCounts(self.n_ctx) if self.n_ctx >= _FAST_MIN_CONTEXTS else None
        self.counts_buffer: np.ndarray | None = None  # the fast draw's counts, block after block (no new memory each)

    def take(self, m: int) -> np.ndarray:
        """The next ``m`` replicates' type counts (m, T), int64."""
        if m > len(self.ready) + self.to_draw:
            raise ValueError(f"take({m}): only {len(self.ready) + self.to_draw} of the replicates are left")
        if self.n_ctx == 0:
            self.to_draw -= m
            return np.zeros((m, self.n_types), dtype=np.int64)
        parts = []
        while m > 0:
            if not len(self.ready):
                self.ready = self._block(min(_CONTEXT_BLOCK, self.to_draw))
            parts.append(self.ready[:m])
            m -= len(parts[-1])
            self.ready = self.ready[len(parts[-1]) :]
        return np.concatenate(parts) if len(parts) != 1 else parts[0]

    def _block(self, m: int) -> np.ndarray:
        self.to_draw -= m
        if self.fast is not None:
            if self.counts_buffer is None or self.counts_buffer.shape[1] != m:
                self.counts_buffer = np.empty((self.n_ctx, m), dtype=self.dtype)  # one per block size (two at most)
            by_ctx = self.fast.draw_block(m, self.rng, self.dtype, out=self.counts_buffer)
        else:
            idx_type = np.int32 if self.n_ctx < 2**31 else np.int64  # 32-bit draws are about twice as fast
            picks = self.rng.integers(0, self.n_ctx, size=(m, self.n_ctx), dtype=idx_type)
            counts = np.empty((m, self.n_ctx), dtype=self.dtype)
            for r in range(m):
                counts[r] = np.bincount(picks[r], minlength=self.n_ctx)
            # One transposing copy per block (cheaper than writing each replicate's counts as a strided column).
            by_ctx = np.ascontiguousarray(counts.T)
        return np.rint(self.by_type @ by_ctx).T.astype(np.int64, order="C")


class _ContextCounts:
    """Exact Multinomial(C, 1/C) counts (C contexts drawn with replacement), two counts per 16 random bits.

    Independent X_c ~ Poisson(λ) are, given their sum S, Multinomial(S, 1/C); adding C − S more uniform draws
    (S ≤ C) or removing a uniformly random subset of S − C of the S items (S > C) leaves Multinomial(C, 1/C)
    whatever λ. With λ = 1 − 4/√C the sum falls short of C by ~4√C (~900 uniform draws to add at 50,000) and
    exceeds it with probability ~3e-5 (the removal, exact but slower, is then taken).

    Counts are drawn a block of m replicates at a time, laid out (C, m) as the sparse product wants them: one
    16-bit word gives the counts of one context in two neighbouring replicates, (X, Y) drawn from the joint law
    of two independent Poisson(λ) by inversion. Its table G (lexicographic joint CDF, float64: the precision of
    numpy's own samplers) is cut into 2**16 cells; a word whose cell holds no boundary of G gives the pair by
    one lookup (:attr:`lut`), the rare others (52 cells of 65,536 at λ ≈ 1) are completed with a uniform from
    ``rng.random`` and located in G. A replicate thus costs C/8 raw 64-bit words from the generator and one
    table lookup per two counts, against one bounded integer and one scattered count per context for
    ``rng.integers`` + ``bincount``, and no transposing copy.

    Stream of a block: its C·⌈m/2⌉ words, the refinement uniforms (in word order), the added draws of the
    replicates short of C (one ``rng.integers`` call, replicate after replicate), then the removals of those
    over C in turn (:class:`_ClusterCounts` fixes the block sizes).
    """

    #: Values 0 … L − 1 of each Poisson count; the mass beyond L − 1 (< 1e-22 for λ ≤ 1) goes to L − 1.
    L = 24
    #: Lookup-table entry of a cell holding a boundary of G (needs more bits).
    SPLIT = 0xFFFF

    def __init__(self, n_ctx: int) -> None:
        self.n_ctx = n_ctx
        lam = max(0.5, 1.0 - 4.0 / np.sqrt(n_ctx))  # 0.5 for tiny C (tests): both corrections then occur often
        cdf = special.pdtr(np.arange(self.L), lam)
        cdf[-1] = 1.0
        pmf = np.diff(cdf, prepend=0.0)
        g = (cdf - pmf)[:, None] + pmf[:, None] * cdf[None, :]  # P(X < a) + P(X = a) P(Y <= b)
        g[:, -1] = cdf  # each row ends exactly where the next begins
        self.g = np.maximum.accumulate(g.ravel())
        self.g[-1] = 1.0
        edge = np.searchsorted(self.g, np.arange(2**16 + 1) / 2**16, side="left")  # #{G < u} at each cell edge
        # The pair of u is #{G < u} (X = index // L, Y = index % L): constant over a cell without a boundary.
        pure = edge[:-1] == edge[1:]
        x, y = np.divmod(edge[:-1], self.L)
        self.lut = np.where(pure, x | (y << 8), self.SPLIT).astype("<u2")  # bytes (X, Y)
        self.sum_type = np.uint32 if n_ctx < 2**27 else np.uint64  # uint32 sums are 2× faster; no overflow here
        self.pairs = np.zeros(0, dtype="<u2")  # the looked-up words of a block, kept for the next (no new memory each)

    def draw_block(self, m: int, rng: np.random.Generator, dtype: type, out: np.ndarray | None = None) -> np.ndarray:
        """Counts of ``m`` replicates, laid out (C, m) in ``dtype``: in ``out`` when given (a C-contiguous (C, m) array
        of ``dtype`` the caller reuses from block to block), else in a new array."""
        c, half = self.n_ctx, (m + 1) // 2
        n = c * half
        n_words = (n + 3) // 4
        if len(self.pairs) != 4 * n_words:
            self.pairs = np.empty(4 * n_words, dtype="<u2")
        pairs = self.pairs
        # Words drawn and looked up a cache's worth at a time, into arrays kept from block to block (issue 25: a
        # block's own arrays, megabytes, were new memory each time; the page faults and numpy's 64-bit copy of all the
        # block's indices cost half the draw). random_raw is one stream: the words, so the values, are the same.
        found = []
        for start in range(0, n_words, _TAKE_CHUNK // 4):
            cell = rng.bit_generator.random_raw(min(_TAKE_CHUNK // 4, n_words - start)).astype("<u8", copy=False).view("<u2")
            looked_up = pairs[4 * start : 4 * start + len(cell)]
            np.take(self.lut, cell, out=looked_up, mode="clip")  # every 16-bit word is an index: no bounds check needed
            hit = np.flatnonzero(looked_up == self.SPLIT)
            if len(hit):
                found.append((hit + 4 * start, cell[hit]))
        pairs = pairs[:n]
        if found:
            split, cells = np.concatenate([h for h, _ in found]), np.concatenate([cl for _, cl in found])
            keep = split < n  # the last word's spare 16-bit parts are not counts
            split, cells = split[keep], cells[keep]
            u = (cells + rng.random(len(split))) / 2**16
            x, y = np.divmod(np.searchsorted(self.g, u, side="left"), self.L)
            pairs[split] = x | (y << 8)
        counts = pairs.view(np.uint8).reshape(c, 2 * half)[:, :m]
        short = c - counts.sum(axis=0, dtype=self.sum_type).astype(np.int64)
        by_ctx = np.empty((c, m), dtype=dtype) if out is None else out
        np.copyto(by_ctx, counts)
        one = by_ctx.dtype.type(1)  # a scalar of the array's type: np.add.at casts a Python 1 per item, 6× slower
        add = np.flatnonzero(short >= 0)
        # The missing draws of all replicates short of C at once (uniform contexts), then the removals.
        picks = rng.integers(0, c, size=int(short[add].sum()))
        np.add.at(by_ctx.reshape(-1), picks * m + np.repeat(add, short[add]), one)
        for r in np.flatnonzero(short < 0).tolist():
            # Items numbered context by context; remove a uniform random subset of s − C of them.
            s = c - int(short[r])
            drop = rng.choice(s, s - c, replace=False)
            np.subtract.at(by_ctx[:, r], np.searchsorted(np.cumsum(counts[:, r], dtype=np.int64), drop, side="right"), one)
        return by_ctx


def _chunk_replicates(n_models: int, n_types: int) -> int:
    """Replicates per chunk: (R, K, K) win matrices and (R, T) type counts stay bounded (the context draw holds only
    blocks of (C, _CONTEXT_BLOCK) counts, whatever the chunk)."""
    return max(1, min(_CHUNK_ELEMENTS // max(1, n_models * n_models), _COUNT_ELEMENTS // max(1, n_types)))


@dataclass(frozen=True)
class BootstrapFits:
    """Bootstrap replicates of one or more BT fits.

    Attributes:
        unit: ``"case"`` or ``"context"``.
        replicates: R.
        theta: fit kind → (R, K) centered log-abilities.
        diverged, converged: fit kind → (R,) flags (diverged replicates only arise with pseudo-count 0).
    """

    unit: str
    replicates: int
    theta: dict[str, np.ndarray] = field(default_factory=dict)
    diverged: dict[str, np.ndarray] = field(default_factory=dict)
    converged: dict[str, np.ndarray] = field(default_factory=dict)


def bootstrap_fits(
    enc: EncodedCases,
    *,
    unit: str = "case",
    kinds: Sequence[str] = FIT_KINDS,
    replicates: int = 10_000,
    seed: int | np.random.Generator | None = 0,
    pseudo_count: float = 0.5,
    init: dict[str, np.ndarray] | None = None,
    reference_rank: np.ndarray | None = None,
) -> BootstrapFits:
    """Bootstrap the BT fits ``kinds`` of the complete cases of ``enc``.

    Preconditions:
        ``unit`` is ``"case"`` (resample canonical pairs; both orders travel together) or ``"context"``
        (resample whole contexts); ``replicates >= 1``; ``init`` optionally maps a kind to a warm-start
        θ (K,) such as its point estimate; ``reference_rank`` is needed only for kind ``"scheme_b"``.
        All kinds are fitted on the same resamples.
    Returns:
        :class:`BootstrapFits`.
    """
    if replicates < 1:
        raise ValueError("replicates must be >= 1")
    rng = as_generator(seed)
    types = case_types(enc)
    if unit == "case":

        def draw(m: int) -> np.ndarray:
            return draw_case_counts(types, m, rng)

    elif unit == "context":
        table = context_type_table(enc, types)
        clusters = _ClusterCounts(table, replicates, rng)

        def draw(m: int) -> np.ndarray:
            return clusters.take(m)

    else:
        raise ValueError("unit must be 'case' or 'context'")
    k = enc.n_models
    # Replicates are drawn and fitted chunk by chunk, so memory stays bounded whatever R, K, T and C are;
    # the chunks consume the random stream exactly as one draw of all R would.
    chunk = _chunk_replicates(k, types.n_types)
    mats = {}
    for kind in kinds:
        extra = {"reference_rank": reference_rank} if kind == "scheme_b" else {}
        mats[kind] = type_matrix(types, kind, **extra)
    parts: dict[str, list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = {kind: [] for kind in kinds}
    for start in range(0, replicates, chunk):
        counts = draw(min(chunk, replicates - start))
        for kind in kinds:
            w = win_matrices_from_type_matrix(mats[kind], counts, k)
            fit = fit_bt_batch(w, pseudo_count=pseudo_count, init=None if init is None else init.get(kind))
            parts[kind].append((fit.theta, fit.diverged, fit.converged))
    out = BootstrapFits(unit=unit, replicates=replicates)
    for kind in kinds:
        out.theta[kind] = np.concatenate([p[0] for p in parts[kind]])
        out.diverged[kind] = np.concatenate([p[1] for p in parts[kind]])
        out.converged[kind] = np.concatenate([p[2] for p in parts[kind]])
    return out


def percentile_ci(theta: np.ndarray, level: float = 0.95) -> np.ndarray:
    """Percentile interval per column of a (R, K) array: shape (K, 2), linear interpolation between order statistics."""
    alpha = (1.0 - level) / 2.0
    return np.percentile(theta, [100 * alpha, 100 * (1 - alpha)], axis=0).T


@dataclass(frozen=True)
class RankingSummary:
    """Distribution of full rankings over replicates.

    Attributes:
        rankings: distinct rankings (tuples of model indices, best first), most frequent first
            (equal counts: lexicographic order of the index tuples, so the result is deterministic).
        counts: replicate count of each.
        top1: (K,) fraction of replicates where each model ranks first.
        rank_probabilities: (K, K) fraction of replicates where model i has rank position r.
    """

    rankings: list[tuple[int, ...]]
    counts: np.ndarray
    top1: np.ndarray
    rank_probabilities: np.ndarray

    @property
    def modal(self) -> tuple[int, ...]:
        """The most frequent ranking."""
        return self.rankings[0]

    @property
    def modal_fraction(self) -> float:
        """Fraction of replicates giving the modal ranking."""
        return float(self.counts[0] / self.counts.sum())


#: Up to this many models a ranking's digits base K fit an int64 (15**15 < 2**63 <= 16**16).
_MAX_CODED_MODELS = 15


def ranking_summary(theta: np.ndarray) -> RankingSummary:
    """Summarise the rankings implied by replicate strengths ``theta`` (R, K); tied strengths in random order
    (:func:`arena.stats.bt.replicate_rankings`)."""
    ranks = replicate_rankings(theta)
    r, k = ranks.shape
    if k <= _MAX_CODED_MODELS:
        # Each ranking as one integer (its digits base K): the codes sort as the rows do lexicographically, so the
        # distinct rankings and their counts are np.unique(ranks, axis=0)'s, several times faster than its row sort.
        codes = ranks.astype(np.int64) @ (np.int64(k) ** np.arange(k - 1, -1, -1, dtype=np.int64))
        _, first, counts = np.unique(codes, return_index=True, return_counts=True)
        uniq = ranks[first]
    else:
        uniq, counts = np.unique(ranks, axis=0, return_counts=True)
    order = np.argsort(-counts, kind="stable")
    positions = np.empty_like(ranks)
    np.put_along_axis(positions, ranks, np.broadcast_to(np.arange(k), ranks.shape), axis=1)
    rank_prob = np.stack([np.bincount(positions[:, i], minlength=k) for i in range(k)]) / r
    return RankingSummary(
        rankings=[tuple(int(x) for x in uniq[i]) for i in order],
        counts=counts[order],
        top1=np.bincount(ranks[:, 0], minlength=k) / r,
        rank_probabilities=rank_prob,
    )
