"""``manage.py leaderboard`` without ``--json``: readable tables and sentences, never a Python repr."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.core.management import call_command

from .test_leaderboard_page import undecided  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db

MINUS = "\u2212"
REPRS = re.compile(r"\[\{|\{'|\['|': |\bTrue\b|\bFalse\b|\bNone\b|cycles: \[")


def text(*args: str) -> str:
    out = StringIO()
    call_command("leaderboard", *args, stdout=out)
    return out.getvalue()


def test_the_release_prints_tables_with_real_minus_signs_and_separators(imported) -> None:  # noqa: ANN001
    out = text("lit2test", "--replicates", "200")
    assert not REPRS.search(out), REPRS.search(out)
    lines = out.splitlines()
    assert "Cases: 1,200 (950 order-stable, 250 order-sensitive)" in lines
    table = lines[lines.index("Table 1 (ordered fit, as the paper's Table 1 prints it)") + 1 :][:6]
    assert table[0].split() == ["rank", "model", "BT", "[95%", "CI]", "stable", "W–L–T", "order-sensitive"]
    assert table[2].split()[:3] == ["1", "GPT", "5.2"] and table[2].split()[3] == "1.27" and "424–49–127" in table[2]
    assert f"{MINUS}1.28 [" in table[5] and "61–439–100" in table[5]
    # The right edge of each figure column lines up (right-aligned).
    assert len({len(row) for row in table[2:6]}) == 1
    assert "Three fits (strength [95% CI])" in lines and any(line.startswith("GPT 5.2") and "1.87 [" in line for line in lines)
    assert any("252–148–0" in line for line in lines)  # ordered head-to-head
    assert "  acyclic and transitive" in lines and "  complete separation: none" in lines
    assert any(line.startswith("expansion40") and "GPT 5.2 > Claude-Sonnet-4.6 > GLM-5 > DeepSeek-V3.2" in line for line in lines)


def test_a_small_run_names_its_undecided_pair_and_separated_models(undecided) -> None:  # noqa: ANN001, F811
    out = text(str(undecided.pk), "--replicates", "100")
    assert not REPRS.search(out), REPRS.search(out)
    assert "  undecided: Alpha 1 – Gamma-3 (1–1 stable, 0 order-sensitive)" in out.splitlines()
    assert "  acyclic, not transitive (a chain of wins passes over an undecided pair)" in out.splitlines()
    assert "  complete separation: Alpha 1 won all 2 decided stable cases against Beta-2 (2–0)" in out.splitlines()
    assert "cycle:" not in out


def test_the_pseudo_count_prior_line_gives_its_share_and_verdict(imported) -> None:  # noqa: ANN001
    line = next(x for x in text("lit2test", "--replicates", "200").splitlines() if x.startswith("Pseudo-count prior"))
    # 12 cells x 0.5 = 6 against 2,400 ordered verdicts (hand count): 0.25%, printed with one decimal.
    assert line.startswith("Pseudo-count prior: 0.5 per cell, 0.2% of all counts; it moves the typical strength by ")
    assert line.endswith("; small against the intervals")
