"""How far a judge of two-sided comparisons can be trusted: the judge-reliability panel's statistics (issue 26).

Arrays in, dataclasses out; numpy and scipy only. One row per stored verdict of one judge run (plus, optionally, the
verdicts of *reference* runs that judged the same items), in the protocol-neutral shape every pairwise protocol gives:

- ``item``: the judged subject (a canonical pair, a match, a control variant ...): the two presentation orders of one
  item share it, and the bootstrap resamples items, never single verdicts;
- ``side_a``, ``side_b``: the two sides' participants (integer codes); A and B are the item's own fixed orientation,
  not the presentation order;
- ``a_first``: 1 when side A was shown first, 0 when side B was, -1 when the source did not record it (the release);
- ``outcome``: 1.0 A won, 0.0 B won, 0.5 a tie, NaN an invalid answer;
- ``judge``: 0 for the run the panel is about, 1, 2 ... for reference runs (by default every row is 0);
- ``own_a``, ``own_b``: whether each side's participant is of its judge's family (None: the family is unknown);
- ``words_a``, ``words_b``: the length in words of each side's judged text (NaN where the text is not stored).

What is computed, and why so:

- **Position consistency**: among items with a valid verdict in both presentation orders of the run, the share whose
  verdict survives the swap, i.e. both orders name the same side (a tie in either order counts as not surviving, as
  Lit2Test's order-stable rule does).
- **First-shown share** (decisive verdicts with a known presentation order: how often the side shown first won; 0.5 is
  fair) and **preference fairness** (Shi et al. 2024's positional fairness, on items decisive in both orders:
  (items where the first-shown side won both times − items where the second-shown side won both times) / items; −1 to
  1, 0 fair, positive favours the first shown).
- **Order effect inside Bradley–Terry**: P(A beats B) = σ(β_A − β_B + γ_j s + δ [j = 0] (o_A − o_B)) with s = +1 when A
  was shown first, −1 when B was (0 when not recorded: such verdicts inform β only), γ_j one first-shown advantage per
  judge, o the own-family flags, fitted by penalised Newton–Raphson (a weak ridge on β alone keeps strengths finite
  under separation and centres them; γ and δ are not penalised). Ties are left out of the fit (counted in the panel).
- **Self-preference** δ: the run's judge's extra preference for participants of its own family. With one judge alone
  it is not identifiable when family is a participant's attribute (an own-family participant simply being stronger
  looks the same); it becomes estimable against reference runs of judges of other families that judged the same
  items (their verdicts fix the strengths). :func:`judge_reliability` says which, by the rank of the design.
- **Intervals**: percentile intervals of a bootstrap over items (each resampled item brings all its verdicts, both
  orders and every judge's). Chosen over profile likelihood because the two orders of an item are judgments of the
  same two texts, not independent Bernoulli draws: a likelihood interval would assume an independence the data do not
  have, in a direction that depends on the judge; resampling items is honest about it, and it is the resampling unit
  of the rest of the product (the case bootstrap moves both orders of a canonical pair together).
- **Content-blind baselines**: how often "the longer text wins", "the shorter text wins" and "the first-shown side
  wins" agree with the judge's decisive verdicts (length baselines on verdicts whose two texts have known, unequal
  lengths).

Fits run on the distinct design rows with their counts (a few hundred rows however many verdicts), and all bootstrap
replicates are fitted together (batched Newton steps), so a run of 100,000 verdicts costs little more than a small one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.sparse import csr_matrix

from .bt import blas_single_threaded_call

#: Bootstrap replicates of the panel's intervals by default (the command, the API and the page use the same).
DEFAULT_REPLICATES = 400
DEFAULT_SEED = 0
#: The ridge on strengths: small enough to leave the effects untouched (n is in the hundreds at least), large enough to
#: keep a participant that never loses finite.
RIDGE = 0.01
MAX_ITERATIONS = 60
TOLERANCE = 1e-9
#: Replicates fitted at once: bounds memory (chunk × verdicts floats) at ~50 MB for 112,000 verdicts.
CHUNK = 50

# Why an effect is not estimable (the report layer words them for people).
NO_KNOWN_ORDER = "no_known_order"  # no verdict of the run records which side was shown first
NO_FAMILY = "family_unknown"  # the judge's family or its participants' is not known
NO_OWN_FAMILY = "no_own_family_participant"  # no participant of the judge's family meets one of another family
CONFOUNDED = "confounded_without_reference"  # one judge alone: own-family preference is inseparable from strength
NOT_IDENTIFIED = "not_identified"  # the design does not separate the effect from the strengths
NO_DATA = "no_decisive_verdicts"


@dataclass(frozen=True)
class Consistency:
    items: int  # items with a valid verdict in both presentation orders
    consistent: int  # of which both orders name the same side
    flipped: int  # both orders decisive, naming different sides
    with_tie: int  # a tie in at least one order
    share: float | None


@dataclass(frozen=True)
class FirstShown:
    decisive: int  # decisive verdicts with a known presentation order
    first_wins: int
    share: float | None  # first_wins / decisive
    items: int  # items decisive in both known orders
    primacy: int  # items where the first-shown side won both times
    recency: int  # items where the second-shown side won both times
    fairness: float | None  # (primacy − recency) / items


@dataclass(frozen=True)
class Effect:
    """A fitted effect on the log-odds scale, with its bootstrap percentile interval; or why it is not estimable."""

    estimable: bool
    estimate: float | None = None
    ci: tuple[float, float] | None = None
    reason: str = ""
    replicates: int = 0  # bootstrap replicates whose fit converged (the interval's sample)


@dataclass(frozen=True)
class Baseline:
    agree: int
    n: int
    share: float | None


@dataclass(frozen=True)
class Reliability:
    verdicts: int
    valid: int
    invalid: int
    ties: int
    consistency: Consistency
    first_shown: FirstShown
    order_effect: Effect
    self_preference: Effect
    longer_wins: Baseline
    shorter_wins: Baseline
    first_wins: Baseline
    level: float
    replicates: int
    seed: int
    own_family: dict[str, int] = field(default_factory=dict)  # own-family verdicts: decisive, won (descriptive only)


def _share(num: int, den: int) -> float | None:
    return float(num) / den if den else None


def position_consistency(item: np.ndarray, a_first: np.ndarray, order: np.ndarray, outcome: np.ndarray) -> Consistency:
    """Items with valid verdicts in two presentation orders (``order``: 0 or 1 when ``a_first`` is unknown, else
    ``a_first`` itself decides), and how many keep their verdict. Where an item has several verdicts in one order the
    first counts."""
    valid = ~np.isnan(outcome)
    position = np.where(a_first >= 0, a_first, order).astype(np.int64)
    keys = np.stack([item[valid], position[valid]], axis=1)
    if not len(keys):
        return Consistency(0, 0, 0, 0, None)
    uniq, first = np.unique(keys, axis=0, return_index=True)
    value = outcome[valid][first]
    items, counts = np.unique(uniq[:, 0], return_counts=True)
    both = items[counts >= 2]
    in_both = np.isin(uniq[:, 0], both)
    # Each item in ``both`` has exactly two positions (0 and 1); rows of uniq are sorted by (item, position).
    v = value[in_both].reshape(-1, 2)
    a, b = v[:, 0], v[:, 1]
    tie = (a == 0.5) | (b == 0.5)
    same = (a == b) & ~tie
    n = len(v)
    return Consistency(n, int(same.sum()), int((~same & ~tie).sum()), int(tie.sum()), _share(int(same.sum()), n))


def first_shown(item: np.ndarray, a_first: np.ndarray, outcome: np.ndarray) -> FirstShown:
    """The first-shown share of decisive verdicts with a known order, and preference fairness over items decisive in both
    orders."""
    known = (a_first >= 0) & ~np.isnan(outcome) & (outcome != 0.5)
    first_won = np.where(a_first == 1, outcome == 1.0, outcome == 0.0)[known]
    decisive, wins = int(known.sum()), int(first_won.sum())
    keys = np.stack([item[known], a_first[known]], axis=1)
    if not len(keys):
        return FirstShown(0, 0, None, 0, 0, 0, None)
    uniq, first = np.unique(keys, axis=0, return_index=True)
    won = first_won[first]
    items, counts = np.unique(uniq[:, 0], return_counts=True)
    in_both = np.isin(uniq[:, 0], items[counts >= 2])
    w = won[in_both].reshape(-1, 2)
    primacy, recency = int(w.all(axis=1).sum()), int((~w).all(axis=1).sum())
    n = len(w)
    return FirstShown(decisive, wins, _share(wins, decisive), n, primacy, recency, _share(primacy - recency, n))


def baselines(a_first: np.ndarray, outcome: np.ndarray, words_a: np.ndarray, words_b: np.ndarray) -> tuple[Baseline, ...]:
    """How often "longer wins", "shorter wins" and "first shown wins" agree with the decisive verdicts."""
    decisive = ~np.isnan(outcome) & (outcome != 0.5)
    sized = decisive & ~np.isnan(words_a) & ~np.isnan(words_b) & (words_a != words_b)
    longer_a = words_a > words_b
    longer_agrees = int((longer_a == (outcome == 1.0))[sized].sum())
    n_sized = int(sized.sum())
    ordered = decisive & (a_first >= 0)
    first_agrees = int((np.where(a_first == 1, outcome == 1.0, outcome == 0.0))[ordered].sum())
    n_ordered = int(ordered.sum())
    return (
        Baseline(longer_agrees, n_sized, _share(longer_agrees, n_sized)),
        Baseline(n_sized - longer_agrees, n_sized, _share(n_sized - longer_agrees, n_sized)),
        Baseline(first_agrees, n_ordered, _share(first_agrees, n_ordered)),
    )


@dataclass(frozen=True)
class Design:
    """The fit's distinct design rows: ``x`` (rows × parameters), the row of each fitted verdict, its A-won flag, the
    item of each fitted verdict, and the columns of γ (per judge) and δ."""

    x: np.ndarray
    row: np.ndarray
    won: np.ndarray
    item: np.ndarray
    n_players: int
    gamma: list[int]
    delta: int | None
    penalty: np.ndarray


def design(
    *,
    item: np.ndarray,
    side_a: np.ndarray,
    side_b: np.ndarray,
    a_first: np.ndarray,
    outcome: np.ndarray,
    judge: np.ndarray,
    own_a: np.ndarray | None,
    own_b: np.ndarray | None,
) -> Design:
    """The Bradley–Terry design with a first-shown column per judge and, when families are known, the self-preference
    column of judge 0; decisive verdicts only."""
    fit = ~np.isnan(outcome) & (outcome != 0.5)
    players = int(max(side_a.max(initial=-1), side_b.max(initial=-1))) + 1
    judges = int(judge.max(initial=0)) + 1
    s = np.where(a_first == 1, 1, np.where(a_first == 0, -1, 0))[fit]
    with_delta = own_a is not None and own_b is not None
    own = (own_a.astype(np.int64) - own_b.astype(np.int64))[fit] if with_delta else np.zeros(int(fit.sum()), np.int64)
    j = judge[fit]
    own = np.where(j == 0, own, 0)
    # Each verdict's design row as one integer (a, b, judge, s, own): the distinct rows come from a 1-d unique, not a
    # row-wise one over a wide float matrix.
    key = (((side_a[fit] * players + side_b[fit]) * judges + j) * 3 + (s + 1)) * 3 + (own + 1)
    keys, row = np.unique(key, return_inverse=True)
    own_u, rest = keys % 3 - 1, keys // 3
    s_u, rest = rest % 3 - 1, rest // 3
    j_u, rest = rest % judges, rest // judges
    b_u, a_u = rest % players, rest // players
    cols = players + judges + (1 if with_delta else 0)
    x = np.zeros((len(keys), cols))
    at = np.arange(len(keys))
    x[at, a_u] += 1.0
    x[at, b_u] -= 1.0
    x[at, players + j_u] = s_u
    delta = players + judges if with_delta else None
    if delta is not None:
        x[:, delta] = own_u
    penalty = np.zeros(cols)
    penalty[:players] = RIDGE
    return Design(
        x,
        row.ravel(),
        (outcome[fit] == 1.0).astype(float),
        item[fit],
        players,
        list(range(players, players + judges)),
        delta,
        penalty,
    )


def fit_counts(x: np.ndarray, trials: np.ndarray, wins: np.ndarray, penalty: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Penalised logistic fits of binomial rows, batched: ``trials`` and ``wins`` are (B, rows); returns the (B, p)
    estimates and a (B,) converged flag. Newton–Raphson on the penalised log-likelihood (concave: the ridge makes it
    strictly so in the strengths), from zero; each Hessian of the batch is one matrix product over the rows."""
    b, p = trials.shape[0], x.shape[1]
    theta = np.zeros((b, p))
    outer = (x[:, :, None] * x[:, None, :]).reshape(len(x), p * p)
    eye = np.diag(penalty + 1e-10)
    done = np.zeros(b, dtype=bool)
    for _ in range(MAX_ITERATIONS):
        eta = theta @ x.T
        prob = 1.0 / (1.0 + np.exp(-eta))
        grad = (wins - trials * prob) @ x - theta * penalty
        weight = trials * prob * (1.0 - prob)
        hess = (weight @ outer).reshape(b, p, p) + eye
        step = np.linalg.solve(hess, grad[:, :, None])[:, :, 0]
        step[done] = 0.0
        theta += step
        done |= np.abs(step).max(axis=1) < TOLERANCE
        if done.all():
            break
    return theta, done & np.isfinite(theta).all(axis=1)


def _identified(x: np.ndarray, column: int) -> bool:
    """Whether ``column`` is identified: it is not a combination of the other columns, strengths taken up to the
    common constant that the ridge fixes."""
    others = [c for c in range(x.shape[1]) if c != column]
    return np.linalg.matrix_rank(x) > np.linalg.matrix_rank(x[:, others])


def _bootstrap(d: Design, replicates: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Fits of ``replicates`` item-resampled data sets: (replicates, p) estimates and converged flags."""
    rng = np.random.default_rng(seed)
    items, item_index = np.unique(d.item, return_inverse=True)
    shape = (len(items), len(d.x))
    # Per item, its verdicts by design row and its wins: a replicate's counts are its item multiplicities times these.
    per_item = csr_matrix((np.ones(len(d.row)), (item_index.ravel(), d.row)), shape=shape)
    won_item = csr_matrix((d.won, (item_index.ravel(), d.row)), shape=shape)
    thetas, oks = [], []
    for start in range(0, replicates, CHUNK):
        size = min(CHUNK, replicates - start)
        draws = rng.integers(0, len(items), size=(size, len(items)))
        flat = (np.arange(size)[:, None] * len(items) + draws).ravel()
        multiplicity = np.bincount(flat, minlength=size * len(items)).reshape(size, len(items)).astype(float)
        trials = np.asarray((per_item.T @ multiplicity.T).T)
        wins = np.asarray((won_item.T @ multiplicity.T).T)
        theta, ok = fit_counts(d.x, trials, wins, d.penalty)
        thetas.append(theta)
        oks.append(ok)
    return np.concatenate(thetas), np.concatenate(oks)


def _effect(estimate: float, samples: np.ndarray, level: float) -> Effect:
    samples = samples[np.isfinite(samples)]
    if not len(samples):
        return Effect(True, estimate, None, "", 0)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(samples, [tail, 100 - tail])
    return Effect(True, float(estimate), (float(low), float(high)), "", len(samples))


def _order_reason(d: Design, a_first: np.ndarray, judge: np.ndarray) -> str:
    if not len(d.row):
        return NO_DATA
    if not ((a_first >= 0) & (judge == 0)).any():
        return NO_KNOWN_ORDER
    return "" if _identified(d.x, d.gamma[0]) else NOT_IDENTIFIED


def _self_reason(d: Design, own_a: np.ndarray | None, own_b: np.ndarray | None, judge: np.ndarray) -> str:
    if d.delta is None or own_a is None or own_b is None:
        return NO_FAMILY
    if not len(d.row):
        return NO_DATA
    if not np.any((own_a != own_b) & (judge == 0)):
        return NO_OWN_FAMILY
    if _identified(d.x, d.delta):
        return ""
    return CONFOUNDED if int(judge.max(initial=0)) == 0 else NOT_IDENTIFIED


@blas_single_threaded_call  # small, memory-bound products: extra BLAS threads only wait for each other (see bt)
def judge_reliability(
    *,
    item: np.ndarray,
    side_a: np.ndarray,
    side_b: np.ndarray,
    a_first: np.ndarray,
    outcome: np.ndarray,
    order: np.ndarray | None = None,
    judge: np.ndarray | None = None,
    own_a: np.ndarray | None = None,
    own_b: np.ndarray | None = None,
    words_a: np.ndarray | None = None,
    words_b: np.ndarray | None = None,
    replicates: int = DEFAULT_REPLICATES,
    seed: int = DEFAULT_SEED,
    level: float = 0.95,
) -> Reliability:
    """The whole panel (see the module's docstring for each figure). Arrays have one entry per verdict; ``order`` (0 or
    1 per verdict) tells the two presentation orders apart where ``a_first`` is unknown."""
    n = len(outcome)
    item = np.asarray(item, dtype=np.int64)
    side_a, side_b = np.asarray(side_a, dtype=np.int64), np.asarray(side_b, dtype=np.int64)
    a_first = np.asarray(a_first, dtype=np.int64)
    outcome = np.asarray(outcome, dtype=float)
    judge = np.zeros(n, dtype=np.int64) if judge is None else np.asarray(judge, dtype=np.int64)
    order = np.zeros(n, dtype=np.int64) if order is None else np.asarray(order, dtype=np.int64)
    nan = np.full(n, np.nan)
    words_a = nan if words_a is None else np.asarray(words_a, dtype=float)
    words_b = nan if words_b is None else np.asarray(words_b, dtype=float)
    own_a = None if own_a is None else np.asarray(own_a, dtype=bool)
    own_b = None if own_b is None else np.asarray(own_b, dtype=bool)
    mine = judge == 0
    out = outcome[mine]
    d = design(item=item, side_a=side_a, side_b=side_b, a_first=a_first, outcome=outcome, judge=judge, own_a=own_a, own_b=own_b)
    order_reason = _order_reason(d, a_first, judge)
    self_reason = _self_reason(d, own_a, own_b, judge)
    order_effect, self_preference = Effect(False, reason=order_reason), Effect(False, reason=self_reason)
    if len(d.row) and not (order_reason and self_reason):
        trials = np.bincount(d.row, minlength=len(d.x))[None, :].astype(float)
        wins = np.bincount(d.row, weights=d.won, minlength=len(d.x))[None, :]
        theta, _ok = fit_counts(d.x, trials, wins, d.penalty)
        boot, ok = _bootstrap(d, replicates, seed) if replicates else (np.zeros((0, d.x.shape[1])), np.zeros(0, bool))
        if not order_reason:
            order_effect = _effect(theta[0, d.gamma[0]], boot[ok, d.gamma[0]], level)
        if not self_reason and d.delta is not None:
            self_preference = _effect(theta[0, d.delta], boot[ok, d.delta], level)
    own: dict[str, int] = {}
    if own_a is not None and own_b is not None:
        mixed = mine & (own_a != own_b) & ~np.isnan(outcome) & (outcome != 0.5)
        own = {"decisive": int(mixed.sum()), "won": int((np.where(own_a, outcome == 1.0, outcome == 0.0) & mixed).sum())}
    longer, shorter, first = baselines(a_first[mine], out, words_a[mine], words_b[mine])
    return Reliability(
        verdicts=int(mine.sum()),
        valid=int((~np.isnan(out)).sum()),
        invalid=int(np.isnan(out).sum()),
        ties=int((out == 0.5).sum()),
        consistency=position_consistency(item[mine], a_first[mine], order[mine], out),
        first_shown=first_shown(item[mine], a_first[mine], out),
        order_effect=order_effect,
        self_preference=self_preference,
        longer_wins=longer,
        shorter_wins=shorter,
        first_wins=first,
        level=level,
        replicates=replicates,
        seed=seed,
        own_family=own,
    )
