"""HypoArena on codes (issue 25, item 5): the labels are hashed once, in ``debias``, and the fits and summaries work
on the codes. Two references, neither from the code under test: the string path built from the public pieces
(``debias`` → one frame per domain → ``encode_domain`` → draws and batched fits), which must give the same
replicates bit for bit, and counts taken with plain pandas on the ``debias`` frame.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from arena.stats.hypoarena import (
    VERDICT_COLUMNS,
    debias,
    draw_counts,
    encode_domain,
    fit_btd_pairs,
    hypoarena_bootstrap,
    hypoarena_leaderboard,
    pairs_from_features,
)

VERDICTS = ("A>>B", "A>B", "A=B", "B>A", "B>>A")


def _verdicts(models: list, domains: list, n_cases: int, seed: int) -> pd.DataFrame:
    """Random verdicts: domains listed in an order that is not their sorted order, case names repeated across
    domains, one model missing from the last domain, about a tenth of the matches judged in one order only."""
    rng = np.random.default_rng(seed)
    rows = []
    for di, dom in enumerate(domains):
        here = models[:-1] if di == len(domains) - 1 else models
        for c in range(n_cases):
            for i in range(len(here)):
                for j in range(i + 1, len(here)):
                    first, second = (here[i], here[j]) if rng.random() < 0.5 else (here[j], here[i])
                    for order in ("original", "reverse"):
                        if rng.random() < 0.05:
                            continue
                        rows.append((dom, f"case{c}", first, second, order, VERDICTS[rng.integers(5)]))
    return pd.DataFrame(rows, columns=VERDICT_COLUMNS).sample(frac=1.0, random_state=seed).reset_index(drop=True)


@pytest.fixture(scope="module")
def plain() -> pd.DataFrame:
    return _verdicts(["m3", "m0", "m2", "m1"], ["zeta", "alpha", "mid"], n_cases=12, seed=1)


@pytest.fixture(scope="module")
def mixed() -> pd.DataFrame:
    """Model labels of three types: pandas sorts the numbers by value (1, 2.5, 3, "b"), ``_sort_key`` by type name
    first (2.5, 1, 3, "b"), which is the order of every fit."""
    return _verdicts([3, "b", 1, 2.5], ["d2", "d1"], n_cases=9, seed=2)


def _sort_key(x: object) -> tuple[str, object]:
    """The documented order of models and domains: by type name, then value."""
    return (type(x).__name__, x)


def _string_path(verdicts: pd.DataFrame, replicates: int, seed: int) -> dict:
    """The domain bootstrap assembled from the public pieces, labels compared and hashed again per domain: one
    frame per domain, ``encode_domain``, the domain's own stream (``SeedSequence(seed).spawn``, sorted domain
    order), ``draw_counts``, the product and the warm-started batched fit."""
    matches = debias(verdicts)
    models = sorted(pd.unique(pd.concat([matches["first"], matches["second"]])), key=_sort_key)
    domains = sorted(pd.unique(matches["domain"]), key=_sort_key)
    streams = np.random.SeedSequence(seed).spawn(len(domains))
    fits, cases = [], []
    for d, stream in zip(domains, streams, strict=True):
        enc = encode_domain(d, matches[matches["domain"] == d], models)
        counts = draw_counts(np.random.default_rng(stream), replicates, len(enc.cases))
        arrs = pairs_from_features(enc, counts.astype(enc.contrib.dtype) @ enc.contrib)
        point = fit_btd_pairs(*[x[None, :] for x in enc.point], enc.k)
        fits.append((enc.models, fit_btd_pairs(*arrs, enc.k, init=point.theta[0], init_nu=point.nu[0], chord_data=enc.point)))
        cases.append(enc.cases)
    return {"models": models, "domain_names": domains, "cases": cases, "fits": fits}


@pytest.mark.parametrize("data", ["plain", "mixed"])
def test_bootstrap_on_codes_equals_the_string_path_bit_for_bit(data: str, request: pytest.FixtureRequest) -> None:
    verdicts = request.getfixturevalue(data)
    ref = _string_path(verdicts, replicates=64, seed=5)
    boot = hypoarena_bootstrap(verdicts, replicates=64, seed=5)
    assert boot.models == ref["models"], f"model order {boot.models} differs from the sorted labels {ref['models']}"
    assert boot.domains == ref["domain_names"]
    for di, (got, (models, want)) in enumerate(zip(boot.fits, ref["fits"], strict=True)):
        name = ref["domain_names"][di]
        assert list(boot.cases[di]) == list(ref["cases"][di]), f"domain {name!r}: case order differs"
        np.testing.assert_array_equal(got.models, models, err_msg=f"domain {name!r}: models differ")
        np.testing.assert_array_equal(got.theta, want.theta, err_msg=f"domain {name!r}: replicate θ differ")
        np.testing.assert_array_equal(got.nu, want.nu, err_msg=f"domain {name!r}: replicate ν differ")


@pytest.mark.parametrize("data", ["plain", "mixed"])
def test_leaderboard_counts_equal_pandas_counts(data: str, request: pytest.FixtureRequest) -> None:
    verdicts = request.getfixturevalue(data)
    doc = hypoarena_leaderboard(verdicts, replicates=20, seed=0)
    matches = debias(verdicts)
    for dom, block in doc["domains"].items():
        frame = matches[matches["domain"] == dom]
        per_model = pd.concat([frame["first"], frame["second"]]).value_counts()
        got = {m: e["matches"] for m, e in block["models"].items()}
        assert got == {m: int(per_model[m]) for m in got}, f"domain {dom!r}: matches per model"
        assert set(got) == set(per_model.index), f"domain {dom!r}: models {set(got)} vs {set(per_model.index)}"
        assert block["matches"] == len(frame)
        assert block["cases"] == frame["case"].nunique()
        two = frame[frame["orders"] == 2]
        assert block["two_order_matches"] == len(two)
        assert block["one_order_matches"] == len(frame) - len(two)
        assert block["consistency"] == pytest.approx(two["consistent"].astype(bool).mean(), abs=1e-15)
        assert block["conflict_share"] == pytest.approx(two["conflict"].astype(bool).mean(), abs=1e-15)
    per_model = pd.concat([matches["first"], matches["second"]]).value_counts()
    pooled = doc["pooled"]
    assert {m: e["matches"] for m, e in pooled["models"].items()} == {m: int(n) for m, n in per_model.items()}
    # Case names repeat across domains: a case is a (domain, case) pair.
    assert pooled["cases"] == len(matches[["domain", "case"]].drop_duplicates())
    assert pooled["matches"] == len(matches)
