"""Issue 26 on the Lit2Test leaderboard: honest intervals (cluster-robust SEs, simultaneous rank sets, drop-k, the
simulated coverage of the 95% CIs, the prior's influence) and style control (``--style-control``, ``?style_control=``,
``?style=``). Every figure the page prints is the command's ``--json``; on a small synthetic benchmark whose judge
rewards long proposals the style-controlled ranking undoes the reward with the expected rank Δ signs."""

from __future__ import annotations

import json
import math
from io import StringIO
from pathlib import Path

import numpy as np
import pytest
from django.core.management import call_command
from django.urls import reverse

from arena.stats.folding import load_release_cases
from arena.stats.leaderboard import leaderboard_document
from lit2test.release import release_import
from tests.arena import builders
from tests.lit2test.test_leaderboard_readers import MINUS, command_json, page, parse, written

pytestmark = pytest.mark.django_db

STYLE = "length,citations,structure"


def fixed(value: float, digits: int) -> str:
    return f"{value:.{digits}f}".replace("-", MINUS)


@pytest.fixture
def styled(imported) -> dict:  # noqa: ANN001
    """The release's command JSON with style control (the page's 10,000 replicates, 1,000 for the style fit)."""
    return command_json(imported, "--style-control", STYLE)


def test_the_honest_intervals_and_the_style_table_on_the_page_are_the_commands_json(imported, rita_client, styled) -> None:  # noqa: ANN001
    doc = styled
    honest, style = doc["honest_intervals"], doc["style_control"]
    tables = parse(page(rita_client, imported, style=STYLE))
    head, *rows = tables.tables["honest-table"]
    assert [t for t, _ in head][2:6] == ["Cluster-robust SE", "Wald 95% CI", "Rank range", "Rank set (simultaneous 95%)"]
    for row, model in zip(rows, doc["models"], strict=True):
        cells = [t for t, _ in row]
        se = honest["sandwich"]["se"][model]
        lo, hi = honest["sandwich"]["ci"][model]
        set_lo, set_hi = honest["rank_sets"]["sets"][model]
        assert cells[0] == model
        assert cells[2] == f"±{written(se, 'log-ability')}"
        assert cells[3] == f"[{written(lo, 'log-ability')}, {written(hi, 'log-ability')}]"
        assert cells[5] == (f"{{{set_lo}}}" if set_lo == set_hi else f"{{{set_lo}, {set_hi}}}")
        assert cells[6] == f"{100 * honest['coverage']['bootstrap'][model]:.0f}%"
        assert cells[7] == f"{100 * honest['coverage']['sandwich'][model]:.0f}%"
    # Table 1 carries the same simultaneous sets in their own column, apart from the percentile rank range.
    table1 = tables.tables["table1"]
    at = [t for t, _ in table1[0]].index("Rank set (simultaneous 95%)")
    assert [r[at][0] for r in table1[1:]] == [r[5][0] for r in rows]

    head, *rows = tables.tables["style-table"]
    assert [t for t, _ in head][-1] == "Rank Δ"
    assert len(rows) == len(style["models"]) == 4
    for row, m in zip(rows, style["models"], strict=True):
        cells = [t for t, _ in row]
        delta = m["rank_delta"]
        assert cells[:2] == [str(m["rank"]), m["model"]]
        assert (
            cells[2]
            == f"{written(m['strength'], 'log-ability')} [{written(m['ci'][0], 'log-ability')}, {written(m['ci'][1], 'log-ability')}]"
        )
        assert cells[3:5] == [str(m["plain_rank"]), written(m["plain_strength"], "log-ability")]
        assert cells[5] == (f"+{delta}" if delta > 0 else str(delta).replace("-", MINUS))
    coefficients = tables.tables["style-coefficients"][1:]
    assert [r[0][0] for r in coefficients] == list(style["coefficients"]) == ["length", "citations", "structure"]
    for row, c in zip(coefficients, style["coefficients"].values(), strict=True):
        assert row[1][0] == f"{fixed(c['gamma'], 3)} [{fixed(c['ci'][0], 3)}, {fixed(c['ci'][1], 3)}]"
        assert row[2][0] == f"{fixed(c['gamma_raw'], 4)} [{fixed(c['ci_raw'][0], 4)}, {fixed(c['ci_raw'][1], 4)}]"
    body = page(rita_client, imported, style=STYLE)
    drop = honest["drop_k"]
    assert f"The top rank ({drop['top']}) holds when any {drop['holds_up_to']} context(s) are removed" in body
    assert f"Removing {drop['k']} contexts changes it ({drop['new_top']} leads)" in body
    assert f"Coverage, simulated: {honest['coverage']['simulations']} data sets" in body


def test_the_release_reads_as_counted_by_hand(styled) -> None:  # noqa: ANN001
    honest, style = styled["honest_intervals"], styled["style_control"]
    # 1,200 complete cases in 200 contexts: 2,400 ordered judgments; the four models are far apart, so the
    # simultaneous sets are single ranks, and GPT 5.2 stays first whatever single context is removed.
    assert (honest["judgments"], honest["contexts"]) == (2400, 200)
    assert honest["rank_sets"]["sets"] == {m: [r, r] for r, m in enumerate(styled["models"], start=1)}
    assert honest["drop_k"]["top"] == "GPT 5.2" and honest["drop_k"]["lower_bound"] >= 2
    assert honest["coverage"]["simulations"] == 100 and not honest["warning"]
    # 13 of the 200 contexts carry text: 13 × 6 pairs × 2 orders = 156 judgments have both sides' proposals.
    assert style["judgments"] == {"used": 156, "total": 2400, "without_text": 2244, "contexts": 13}
    assert style["available"] and [c["unit"] for c in style["coefficients"].values()][0] == "word"


def test_the_text_report_prints_both_sections(imported, styled) -> None:  # noqa: ANN001
    out = StringIO()
    call_command("leaderboard", str(imported.pk), "--style-control", STYLE, stdout=out)
    lines = out.getvalue().splitlines()
    honest = lines.index("Honest intervals (ordered fit; 2,400 judgments in 200 contexts)")
    first = lines[honest + 3].split()
    se = styled["honest_intervals"]["sandwich"]["se"]["GPT 5.2"]
    assert first[:3] == ["1", "GPT", "5.2"] and f"±{se:.2f}" in first and "{1}" in first
    style_at = next(
        i for i, line in enumerate(lines) if line.startswith("Style control (length, citations, structure): 156 of 2,400")
    )
    rows = lines[style_at + 3 : style_at + 7]
    for row, m in zip(rows, styled["style_control"]["models"], strict=True):
        delta = m["rank_delta"]
        assert row.split()[-1] == (f"+{delta}" if delta > 0 else str(delta).replace("-", MINUS))
    assert any(line.startswith("  The top rank (GPT 5.2) holds when any") for line in lines)


def test_the_api_gives_the_commands_document_and_names_an_unknown_feature(imported, rita_client, styled) -> None:  # noqa: ANN001
    url = reverse("lit2test:api-leaderboard", args=[imported.pk])
    assert rita_client.get(url, {"style_control": STYLE}).json() == styled
    refused = rita_client.get(url, {"style_control": "length,colour"})
    assert refused.status_code == 400 and "colour" in refused.json()["style_control"][0]
    assert rita_client.get(url).json()["style_control"] is None


def test_on_the_1500_scale_standard_errors_are_rating_points(imported, styled) -> None:  # noqa: ANN001
    elo = command_json(imported, "--style-control", STYLE, "--scale", "elo")
    points = 400 / math.log(10)
    for model, se in styled["honest_intervals"]["sandwich"]["se"].items():
        assert elo["honest_intervals"]["sandwich"]["se"][model] == pytest.approx(se * points)
    first = styled["style_control"]["models"][0]
    assert elo["style_control"]["models"][0]["strength"] == pytest.approx(1500 + first["strength"] * points)
    assert elo["honest_intervals"]["rank_sets"] == styled["honest_intervals"]["rank_sets"]


def test_the_prior_warning_fires_when_the_pseudo_count_moves_strengths_by_more_than_their_se(release_dir: Path) -> None:
    cases = load_release_cases(release_dir / "corrected_folded_pairs.jsonl")
    # A pseudo-count of 20 wins each way per pair, against 400 ordered judgments a pair, pulls strengths of ±1.3
    # toward 0 by about a tenth of their size, far more than their SE of about 0.08; 0.5 moves them by ~0.006.
    strong = leaderboard_document(cases, replicates=50, pseudo_count=20.0)["honest_intervals"]
    assert strong["warning"] and strong["prior"]["flagged"]
    assert all(strong["prior"]["ratio"][m] > 1 for m in strong["prior"]["flagged"])
    weak = leaderboard_document(cases, replicates=50, pseudo_count=0.5)["honest_intervals"]
    assert not weak["warning"] and weak["prior"]["flagged"] == []


# --------------------------------------------------------------------------------- a judge that rewards length

MODELS = ("Alpha 1", "Beta-2", "Gamma-3")
#: Planted: true strengths, each model's typical proposal length (words), the judge's reward per word.
TRUE = {"Alpha 1": 0.8, "Beta-2": 0.0, "Gamma-3": -0.8}
WORDS = {"Alpha 1": 80, "Beta-2": 260, "Gamma-3": 80}
PER_WORD = 0.02


def _length_release(directory: Path, contexts: int = 60, seed: int = 3) -> Path:
    rng = np.random.default_rng(seed)
    ctx_rows, proposals, pairs = [], [], []
    for i in range(contexts):
        cid = f"ctx_{i:03d}__v1"
        ctx_rows.append(builders.context(cid, papers=1))
        words = {m: max(5, int(rng.normal(WORDS[m], 60))) for m in MODELS}
        proposals += [builders.proposal(cid, m, hypothesis=" ".join(["word"] * words[m])) for m in MODELS]
        for a, b in (("Alpha 1", "Beta-2"), ("Alpha 1", "Gamma-3"), ("Beta-2", "Gamma-3")):
            eta = TRUE[a] - TRUE[b] + PER_WORD * (words[a] - words[b])
            won = [a if u < 1 / (1 + math.exp(-eta)) else b for u in rng.random(2)]
            pairs.append(builders.folded(cid, a, b, *won))
    return builders.write(
        directory, {"contexts.jsonl": ctx_rows, "proposals.jsonl": proposals, "corrected_folded_pairs.jsonl": pairs}
    )


def test_a_judge_that_rewards_length_is_undone_by_style_control(tmp_path: Path) -> None:
    benchmark = release_import(directory=_length_release(tmp_path / "release")).benchmark
    out = StringIO()
    call_command(
        "leaderboard",
        str(benchmark.pk),
        "--json",
        "--replicates",
        "200",
        "--style-control",
        "length",
        "--style-replicates",
        "200",
        stdout=out,
    )
    doc = json.loads(out.getvalue())
    # Plain: Beta-2's long proposals win it the first place. Controlled for length, the planted order returns.
    assert doc["models"][0] == "Beta-2"
    style = doc["style_control"]
    assert [m["model"] for m in style["models"]] == ["Alpha 1", "Beta-2", "Gamma-3"]
    delta = {m["model"]: m["rank_delta"] for m in style["models"]}
    assert delta["Alpha 1"] > 0 and delta["Beta-2"] < 0
    length = style["coefficients"]["length"]
    assert length["ci_raw"][0] > 0 and length["ci_raw"][0] < PER_WORD < length["ci_raw"][1]
    assert style["judgments"]["used"] == style["judgments"]["total"] == 360


def test_with_one_context_the_honest_intervals_say_why_they_are_not_computed(tmp_path: Path, rita_client) -> None:  # noqa: ANN001
    files = builders.small_release()
    one = "ctx_001__v1"
    files = {name: [row for row in rows if row["context_id"] == one] for name, rows in files.items()}
    benchmark = release_import(directory=builders.write(tmp_path / "one", files)).benchmark
    doc = command_json(benchmark, "--replicates", "50")
    assert doc["honest_intervals"]["unavailable"] == "fewer than two contexts: no cluster-robust variance"
    assert doc["honest_intervals"]["sandwich"] is None and doc["honest_intervals"]["drop_k"] is None
    body = page(rita_client, benchmark)
    assert "Not computed: fewer than two contexts: no cluster-robust variance." in body and 'id="honest-table"' not in body
    out = StringIO()
    call_command("leaderboard", str(benchmark.pk), "--replicates", "50", stdout=out)
    assert "  Not computed: fewer than two contexts: no cluster-robust variance." in out.getvalue().splitlines()


def test_the_api_schema_names_the_style_features_the_statistics_know() -> None:
    from arena.stats.style_leaderboard import STYLE_FEATURES
    from lit2test.apis import STYLE_CHOICES

    assert STYLE_CHOICES.split("|") == list(STYLE_FEATURES)
