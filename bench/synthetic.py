"""Large Lit2Test-like data sets with KNOWN Bradley–Terry strengths, for the scale benchmarks.

Shape of the release (PROTOCOL.md §1): a context has ``models_per_context`` participants drawn from the
pool; all their pairs (6 for 4) are canonical pairs; each pair is judged in both presentation orders.
Here the verdicts come from a known model:

* true strengths θ ~ Normal(0, ``theta_sd``), centered (mean 0), the scale of the release's fits;
* an ordered verdict is TIE with probability ``tie_prob``; otherwise the model shown as A wins with
  probability σ(θ_A − θ_B + ``order_bias``) (a position bias for the A side, which the two orders cancel
  on average);
* with probability ``missing_prob`` an ordered verdict is missing (None), making its case incomplete.

The result is the ``cases`` frame that :func:`arena.stats.encode_cases` takes, plus the truth. Model names
are zero-padded (``m000``, ``m001``, …) so that the default (sorted) model order of ``encode_cases`` is the
index order of ``theta``. Everything is vectorised and seeded: equal arguments give equal data.

    from bench.synthetic import synthetic_cases
    data = synthetic_cases(n_contexts=50_000, n_models=20, seed=1)
    enc = encode_cases(data.cases)          # enc.models == data.models, data.theta is the truth
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

COLUMNS = ("case", "context", "batch", "model_1", "model_2", "original", "reverse", "shown_a_original")


@dataclass(frozen=True)
class SyntheticData:
    """A synthetic data set and the truth it was drawn from.

    Attributes:
        cases: the ``cases`` frame (columns :data:`COLUMNS`; ``shown_a_original`` is ``model_1``).
        models: model names, in the order of ``theta`` (also ``encode_cases``' default order).
        theta: true centered log-abilities, shape (n_models,).
        params: the arguments it was generated with.
    """

    cases: pd.DataFrame
    models: tuple[str, ...]
    theta: np.ndarray
    params: dict[str, Any] = field(default_factory=dict)


def synthetic_cases(
    n_contexts: int,
    n_models: int,
    *,
    models_per_context: int = 4,
    pairs_per_context: int | None = None,
    theta_sd: float = 1.0,
    theta: np.ndarray | None = None,
    order_bias: float = 0.0,
    tie_prob: float = 0.0,
    missing_prob: float = 0.0,
    n_batches: int = 5,
    seed: int = 0,
) -> SyntheticData:
    """Draw a synthetic Lit2Test-like data set.

    Preconditions:
        ``2 <= models_per_context <= n_models``; ``pairs_per_context`` (default: all
        ``m(m-1)/2`` pairs of the context's ``m`` models) at most that many; probabilities in [0, 1];
        ``theta`` (optional) fixes the true strengths instead of drawing them (it is centered here).
    Returns:
        :class:`SyntheticData` with ``n_contexts × pairs_per_context`` cases.
    """
    m = models_per_context
    if not 2 <= m <= n_models:
        raise ValueError("need 2 <= models_per_context <= n_models")
    all_pairs = m * (m - 1) // 2
    p_ctx = all_pairs if pairs_per_context is None else int(pairs_per_context)
    if not 1 <= p_ctx <= all_pairs:
        raise ValueError(f"pairs_per_context must be in [1, {all_pairs}]")
    rng = np.random.default_rng(seed)
    if theta is None:
        true = rng.normal(0.0, theta_sd, n_models)
    else:
        true = np.asarray(theta, dtype=np.float64)
        if true.shape != (n_models,):
            raise ValueError("theta must have shape (n_models,)")
    true = true - true.mean()

    # The context's participants: m distinct models (the first m of a random permutation per context).
    keys = rng.random((n_contexts, n_models))
    part = np.argpartition(keys, m - 1, axis=1)[:, :m] if m < n_models else np.argsort(keys, axis=1)
    ii, jj = np.triu_indices(m, 1)
    if p_ctx < all_pairs:
        pick = np.argsort(rng.random((n_contexts, all_pairs)), axis=1)[:, :p_ctx]
        ii, jj = ii[pick], jj[pick]
    else:
        ii = np.broadcast_to(ii, (n_contexts, all_pairs))
        jj = np.broadcast_to(jj, (n_contexts, all_pairs))
    rows = np.arange(n_contexts)[:, None]
    a = part[rows, ii].ravel()  # shown as A in the original order (model_1)
    b = part[rows, jj].ravel()
    n = len(a)
    # A random orientation, so model_1 is not always the lower index.
    flip = rng.random(n) < 0.5
    a, b = np.where(flip, b, a), np.where(flip, a, b)

    def verdict(first: np.ndarray, second: np.ndarray) -> np.ndarray:
        """Winner index (or -1 TIE, -2 missing) of one presentation order, ``first`` shown as A."""
        p_first = 1.0 / (1.0 + np.exp(-(true[first] - true[second] + order_bias)))
        out = np.where(rng.random(n) < p_first, first, second)
        out[rng.random(n) < tie_prob] = -1
        out[rng.random(n) < missing_prob] = -2
        return out

    orig = verdict(a, b)
    rev = verdict(b, a)

    width = max(3, len(str(n_models - 1)))
    names = np.array([f"m{k:0{width}d}" for k in range(n_models)] + [None, "TIE"], dtype=object)
    ctx = np.repeat(np.arange(n_contexts), p_ctx)
    ctx_names = np.array([f"ctx{c}" for c in range(n_contexts)], dtype=object)
    batch_names = np.array([f"batch{k}" for k in range(max(1, n_batches))], dtype=object)
    case_ids = pd.Series(np.arange(n)).astype(str).radd("case").to_numpy(dtype=object)
    cases = pd.DataFrame(
        {
            "case": case_ids,
            "context": ctx_names[ctx],
            "batch": batch_names[ctx % len(batch_names)],
            "model_1": names[a],
            "model_2": names[b],
            "original": names[orig],  # -1 -> "TIE", -2 -> None (the two extra names)
            "reverse": names[rev],
            "shown_a_original": names[a],
        },
        columns=list(COLUMNS),
    )
    params = {
        "n_contexts": n_contexts,
        "n_models": n_models,
        "models_per_context": m,
        "pairs_per_context": p_ctx,
        "theta_sd": theta_sd,
        "order_bias": order_bias,
        "tie_prob": tie_prob,
        "missing_prob": missing_prob,
        "seed": seed,
    }
    return SyntheticData(cases=cases, models=tuple(names[:n_models].tolist()), theta=true, params=params)


# ---------------------------------------------------------------- HypoArena (PROTOCOL.md §2)

HYPOARENA_VERDICTS = ("A>>B", "A>B", "A=B", "B>A", "B>>A")


@dataclass(frozen=True)
class SyntheticHypoArena:
    """Synthetic HypoArena ordered verdicts and the truth they were drawn from.

    Attributes:
        verdicts: frame with ``arena.stats.hypoarena.VERDICT_COLUMNS`` (one row per judged order).
        models, domains: names, sorted (model index order = ``theta`` columns).
        theta: true centered log-strengths per domain, shape (n_domains, n_models).
        nu: the Davidson tie parameter every order was drawn with.
        params: the arguments.
    """

    verdicts: pd.DataFrame
    models: tuple[str, ...]
    domains: tuple[str, ...]
    theta: np.ndarray
    nu: float
    params: dict[str, Any] = field(default_factory=dict)


def synthetic_hypoarena(
    n_domains: int,
    n_models: int,
    n_cases: int,
    *,
    theta_sd: float = 0.5,
    domain_sd: float = 0.2,
    nu: float = 0.6,
    strong_prob: float = 0.5,
    order_bias: float = 0.0,
    pairs_per_case: int | None = None,
    missing_prob: float = 0.0,
    seed: int = 0,
) -> SyntheticHypoArena:
    """Draw HypoArena verdicts from a Davidson model with known strengths.

    Every case of every domain judges ``pairs_per_case`` (default: all) pairs of models in both orders. An
    order's outcome for the shown A against B is drawn from Davidson with strengths θ_A + ``order_bias`` and θ_B
    and tie parameter ``nu``; a win is reported as ≫ with probability ``strong_prob`` (else >), a tie as A=B.
    Each order is dropped with probability ``missing_prob``. Domain strengths are a common θ ~ N(0, theta_sd)
    plus N(0, domain_sd) per domain, centered. Vectorised and seeded.
    """
    rng = np.random.default_rng(seed)
    base = rng.normal(0.0, theta_sd, n_models)
    theta = base[None, :] + rng.normal(0.0, domain_sd, (n_domains, n_models))
    theta -= theta.mean(axis=1, keepdims=True)
    ii, jj = np.triu_indices(n_models, 1)
    all_pairs = len(ii)
    p_case = all_pairs if pairs_per_case is None else int(pairs_per_case)
    n_match = n_domains * n_cases * p_case
    dom = np.repeat(np.arange(n_domains), n_cases * p_case)
    case = np.repeat(np.arange(n_domains * n_cases), p_case)
    if p_case < all_pairs:
        pick = np.argsort(rng.random((n_domains * n_cases, all_pairs)), axis=1)[:, :p_case].ravel()
    else:
        pick = np.tile(np.arange(all_pairs), n_domains * n_cases)
    a, b = ii[pick], jj[pick]
    flip = rng.random(n_match) < 0.5
    first, second = np.where(flip, b, a), np.where(flip, a, b)

    def order(shown_a: np.ndarray, shown_b: np.ndarray) -> np.ndarray:
        ta = theta[dom, shown_a] + order_bias
        tb = theta[dom, shown_b]
        pa, pb, pt = np.exp(ta), np.exp(tb), nu * np.exp((ta + tb) / 2)
        d = pa + pb + pt
        u = rng.random(n_match)
        strong = rng.random(n_match) < strong_prob
        return np.where(u < pa / d, np.where(strong, 0, 1), np.where(u < (pa + pt) / d, 2, np.where(strong, 4, 3)))

    v_orig = order(first, second)
    v_rev = order(second, first)
    keep_o = rng.random(n_match) >= missing_prob
    keep_r = rng.random(n_match) >= missing_prob
    width = max(2, len(str(n_models - 1)))
    models = np.array([f"model{k:0{width}d}" for k in range(n_models)], dtype=object)
    domains = np.array([f"domain{k}" for k in range(n_domains)], dtype=object)
    labels = np.array(HYPOARENA_VERDICTS, dtype=object)
    case_names = pd.Series(np.arange(n_domains * n_cases)).astype(str).radd("case").to_numpy(dtype=object)
    idx = np.concatenate([np.flatnonzero(keep_o), np.flatnonzero(keep_r)])
    n_o = int(keep_o.sum())
    verdicts = pd.DataFrame(
        {
            "domain": domains[dom[idx]],
            "case": case_names[case[idx]],
            "first": models[first[idx]],
            "second": models[second[idx]],
            "order": np.where(np.arange(len(idx)) < n_o, "original", "reverse").astype(object),
            "verdict": labels[np.concatenate([v_orig[keep_o], v_rev[keep_r]])],
        }
    )
    params = {
        "n_domains": n_domains,
        "n_models": n_models,
        "n_cases": n_cases,
        "theta_sd": theta_sd,
        "domain_sd": domain_sd,
        "nu": nu,
        "strong_prob": strong_prob,
        "order_bias": order_bias,
        "pairs_per_case": p_case,
        "missing_prob": missing_prob,
        "seed": seed,
    }
    return SyntheticHypoArena(verdicts, tuple(models.tolist()), tuple(domains.tolist()), theta, nu, params)
