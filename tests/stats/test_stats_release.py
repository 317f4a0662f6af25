"""Published Lit2Test figures reproduced from the real release data (corrected_folded_pairs.jsonl).

Data: ``$LIT2TEST_DATA`` or ``<repo>/../shared/data/lit2test``; the module is skipped when it is absent.
Published figures: PROTOCOL.md section 1 (paper Table 1), and the release's own result files
(``results/main/lit2test_corrected_gemini_main_results.md``, ``results/robustness/...``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from arena.stats import (
    encode_cases,
    leaderboard_document,
    load_release_cases,
    scheme_a,
    scheme_b,
    win_matrix,
)
from arena.stats.matrices import case_types


def data_dir() -> Path:
    env = os.environ.get("LIT2TEST_DATA")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "lit2test"


PAIRS = data_dir() / "corrected_folded_pairs.jsonl"
pytestmark = pytest.mark.skipif(not PAIRS.exists(), reason=f"release data not found at {PAIRS}")

GPT, CLAUDE, GLM, DS = "GPT 5.2", "Claude-Sonnet-4.6", "GLM-5", "DeepSeek-V3.2"
ORDER = [GPT, CLAUDE, GLM, DS]


@pytest.fixture(scope="module")
def cases() -> Any:
    return load_release_cases(PAIRS)


@pytest.fixture(scope="module")
def doc(cases: Any) -> dict[str, Any]:
    return leaderboard_document(cases, replicates=10_000, seed=0, pseudo_count=0.5)


def test_counts(doc: dict[str, Any]) -> None:
    assert doc["cases"] == {"total": 1200, "stable": 950, "sensitive": 250, "incomplete": 0}


def test_stable_wlt(doc: dict[str, Any]) -> None:
    assert doc["stable_wlt"] == {
        GPT: {"w": 424, "l": 49, "t": 127},
        CLAUDE: {"w": 347, "l": 119, "t": 134},
        GLM: {"w": 118, "l": 343, "t": 139},
        DS: {"w": 61, "l": 439, "t": 100},
    }


def test_folded_head_to_head(doc: dict[str, Any]) -> None:
    assert doc["head_to_head"] == [
        {"a": GPT, "b": CLAUDE, "a_wins": 90, "b_wins": 38, "sensitive": 72},
        {"a": GPT, "b": GLM, "a_wins": 154, "b_wins": 7, "sensitive": 39},
        {"a": GPT, "b": DS, "a_wins": 180, "b_wins": 4, "sensitive": 16},
        {"a": CLAUDE, "b": GLM, "a_wins": 143, "b_wins": 18, "sensitive": 39},
        {"a": CLAUDE, "b": DS, "a_wins": 166, "b_wins": 11, "sensitive": 23},
        {"a": GLM, "b": DS, "a_wins": 93, "b_wins": 46, "sensitive": 61},
    ]


def test_ordered_head_to_head(doc: dict[str, Any]) -> None:
    # Release results file, "Six model-pair ordered outcomes" (corrected).
    assert doc["ordered_head_to_head"] == [
        {"a": GPT, "b": CLAUDE, "a_wins": 252, "b_wins": 148, "ties": 0},
        {"a": GPT, "b": GLM, "a_wins": 347, "b_wins": 53, "ties": 0},
        {"a": GPT, "b": DS, "a_wins": 376, "b_wins": 24, "ties": 0},
        {"a": CLAUDE, "b": GLM, "a_wins": 325, "b_wins": 75, "ties": 0},
        {"a": CLAUDE, "b": DS, "a_wins": 355, "b_wins": 45, "ties": 0},
        {"a": GLM, "b": DS, "a_wins": 247, "b_wins": 153, "ties": 0},
    ]


def test_ordered_bt_point_estimates(doc: dict[str, Any]) -> None:
    bt = doc["bt"]["ordered"]
    assert doc["models"] == ORDER
    # The release's results file prints the corrected ordered abilities to 6 decimals:
    release = {GPT: 1.265050, CLAUDE: 0.742392, GLM: -0.731306, DS: -1.276136}
    for m, v in release.items():
        assert bt[m]["strength"] == pytest.approx(v, abs=5e-7)
    # Paper Table 1 (two decimals): 1.26, 0.74, −0.73, −1.28.
    assert round(bt[CLAUDE]["strength"], 2) == 0.74
    assert round(bt[GLM]["strength"], 2) == -0.73
    assert round(bt[DS]["strength"], 2) == -1.28
    # GPT 5.2: the converged MLE is 1.265050 (identical to the release's own 6-decimal figure), which rounds
    # to 1.27, yet the paper prints 1.26: the paper's value is 0.00005 past the rounding boundary (e.g. it
    # was rounded from 1.265 with round-half-even). We assert what the data gives, not the printed digit.
    assert 1.265 < bt[GPT]["strength"] < 1.2651


def test_ordered_bt_confidence_intervals(doc: dict[str, Any]) -> None:
    # Paper Table 1, 95% case-bootstrap percentile CIs (10,000 replicates, a different RNG stream): our
    # bounds must agree to the published 2 decimals up to rounding (±0.005) plus Monte Carlo error
    # (standard error of a 2.5% quantile with 10,000 replicates ≈ 0.002), hence 0.01.
    published = {GPT: (1.14, 1.40), CLAUDE: (0.62, 0.87), GLM: (-0.86, -0.61), DS: (-1.42, -1.15)}
    for m, (lo, hi) in published.items():
        ci = doc["bt"]["ordered"][m]["ci"]
        assert ci[0] == pytest.approx(lo, abs=0.01)
        assert ci[1] == pytest.approx(hi, abs=0.01)


def test_bootstrap_recovers_ordering(doc: dict[str, Any]) -> None:
    b = doc["bootstrap"]
    assert b["replicates"] == 10_000 and b["unit"] == "case"
    assert b["modal_ranking"] == ORDER
    assert b["modal_fraction"] == 1.0
    assert b["top1"][GPT] == 1.0


def test_condorcet(doc: dict[str, Any]) -> None:
    c = doc["condorcet"]
    assert c["beat_counts"] == {GPT: 3, CLAUDE: 2, GLM: 1, DS: 0}
    assert c["transitive"] and c["cycles"] == []
    assert c["winner"] == GPT


def test_no_complete_separation(doc: dict[str, Any]) -> None:
    assert doc["separation"] == []
    assert doc["diagnostic"]["strengths_diagnostic_only"] is False


def test_cluster_bootstrap_is_wider(doc: dict[str, Any]) -> None:
    # Release: context-cluster CIs wider by 11–27%. The release compared a folded fit without pseudo-count
    # (cluster) with the ordered pseudo-count-0.5 fit (case); we compare like with like (ordered, 0.5) and
    # get the same range roughly (about 11–25% with seed 0).
    cb = doc["cluster_bootstrap"]
    assert cb["replicates"] == 10_000 and cb["contexts"] == 200
    for m in ORDER:
        assert 1.05 < cb["width_ratio"][m] < 1.35
    assert cb["modal_fraction"] == 1.0


def test_tie_sensitivity_in_document(doc: dict[str, Any]) -> None:
    ts = doc["tie_sensitivity"]
    assert ts["scheme_a"]["ranking"] == ORDER
    assert ts["scheme_a"]["modal_fraction"] == 1.0
    sb = ts["scheme_b"]
    assert sb["ranking"] == ORDER
    assert [(d["a"], d["b"], d["a_wins"], d["b_wins"]) for d in sb["flipped"]] == [(GPT, CLAUDE, 90, 110), (GLM, DS, 93, 107)]


def test_tie_sensitivity_release_figures(cases: Any) -> None:
    # The release's tie-sensitivity report fitted both schemes without pseudo-count.
    enc = encode_cases(cases)
    a = scheme_a(enc, pseudo_count=0.0)
    assert a["ranking"] == ORDER
    for m, v in {GPT: 1.2709, CLAUDE: 0.7458, GLM: -0.7347, DS: -1.2821}.items():
        assert round(a["strengths"][m], 4) == v
    b = scheme_b(enc, ORDER, pseudo_count=0.0)
    for m, v in {GPT: 0.7221, CLAUDE: 0.6914, GLM: -0.5991, DS: -0.8144}.items():
        assert round(b["strengths"][m], 4) == v
    assert b["ranking"] == ORDER
    h2h = {(d["a"], d["b"]): (d["a_wins"], d["b_wins"]) for d in b["head_to_head"]}
    assert h2h == {
        (GPT, CLAUDE): (90, 110),
        (GPT, GLM): (154, 46),
        (GPT, DS): (180, 20),
        (CLAUDE, GLM): (143, 57),
        (CLAUDE, DS): (166, 34),
        (GLM, DS): (93, 107),
    }
    assert b["condorcet"]["beat_counts"] == {GPT: 2, CLAUDE: 3, GLM: 0, DS: 1}
    assert b["condorcet"]["winner"] == CLAUDE


def test_eighteen_case_types(cases: Any) -> None:
    enc = encode_cases(cases)
    assert case_types(enc).n_types == 18
    assert win_matrix(enc, "ordered").sum() == 2400


def test_batches(doc: dict[str, Any]) -> None:
    assert [b["batch"] for b in doc["batches"]] == ["expansion40", "fifth40", "fourth40", "next40", "third40"]
    assert all(b["cases"] == 240 for b in doc["batches"])


def _plain(obj: Any) -> None:
    """Every leaf is a plain JSON type (no numpy scalar)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            assert type(k) is str
            _plain(v)
    elif isinstance(obj, list):
        for v in obj:
            _plain(v)
    else:
        assert obj is None or type(obj) in (str, int, float, bool), type(obj)


def test_document_is_plain_json_and_deterministic(cases: Any, doc: dict[str, Any]) -> None:
    _plain(doc)
    assert json.loads(json.dumps(doc)) == doc
    again = leaderboard_document(cases, replicates=10_000, seed=0, pseudo_count=0.5)
    assert again == doc
