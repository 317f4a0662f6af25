"""The researcher leaderboard page: every part of the document in readable form, the three fits, rounding
against the printed Table 1, number formatting, diagnostics on a small run, and the Human WR evidence."""

from __future__ import annotations

import html
import re
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotation.models import Assignment
from annotation.services import assignment_submit
from lit2test.release import release_import
from tests.annotation.helpers import complete_values, make_study
from tests.arena import builders as b

pytestmark = pytest.mark.django_db

MINUS = "\u2212"


def page_text(client: Client, benchmark, **params: object) -> str:  # noqa: ANN001
    """The page as a reader sees it: tags dropped, entities decoded, white space collapsed."""
    response = client.get(reverse("lit2test:leaderboard", args=[benchmark.pk]), params)
    assert response.status_code == 200
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", response.content.decode())).split())


def section(client: Client, benchmark, element_id: str, **params: object) -> str:  # noqa: ANN001
    """The text of one element of the page, by id (its first closing tag of the same name ends it)."""
    body = client.get(reverse("lit2test:leaderboard", args=[benchmark.pk]), params).content.decode()
    match = re.search(rf'<(\w+)[^>]*\bid="{element_id}"', body)
    assert match, element_id
    tag = match.group(1)
    fragment = body[match.start() : body.index(f"</{tag}>", match.end()) + len(tag) + 3]
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def table_rows(client: Client, benchmark, element_id: str, **params: object) -> list[str]:  # noqa: ANN001
    """The text of each body row of a table, by the table's id."""
    body = client.get(reverse("lit2test:leaderboard", args=[benchmark.pk]), params).content.decode()
    start = body.index(f'id="{element_id}"')
    tbody = body[body.index("<tbody", start) : body.index("</tbody>", start)]
    return [" ".join(html.unescape(re.sub(r"<[^>]+>", " ", row)).split()) for row in tbody.split("<tr")[1:]]


# --------------------------------------------------------------------------- the release


def test_table_1_reads_like_the_paper_with_real_minus_signs_and_separators(imported, rita_client) -> None:  # noqa: ANN001
    table = section(rita_client, imported, "table1")
    # The ordered fit, two decimals: GPT 5.2 is 1.26505 (rounds to 1.27), GLM-5 and DeepSeek are negative.
    assert "1 GPT 5.2 1.27 [1.14, 1.40] 424–49–127" in table
    assert f"3 GLM-5 {MINUS}0.73 [{MINUS}0.86, {MINUS}0.61] 118–343–139" in table
    assert "-0.7" not in table  # no hyphen for a minus
    text = page_text(rita_client, imported)
    assert "10,000 bootstrap replicates" in text and "1,200 cases: 950 order-stable, 250 order-sensitive" in text


def test_three_decimals_show_the_digit_the_printed_table_rounds_away(imported, rita_client) -> None:  # noqa: ANN001
    table = section(rita_client, imported, "table1", digits=3)
    assert "GPT 5.2 1.265 [" in table and f"GLM-5 {MINUS}0.731 [" in table
    note = section(rita_client, imported, "rounding-note")
    assert "prints the ordered fit to two decimals" in note
    assert "GPT 5.2 strength 1.26505 1.27 1.26" in note  # unrounded, on the page, in the paper


@pytest.mark.parametrize(
    ("fit", "header", "gpt"),
    [
        ("ordered", "BT strength (ordered)", "1.27 ["),
        ("folded", "BT strength (folded)", "1.26 ["),
        ("stable", "BT strength (stable-only)", "1.87 ["),
    ],
)
def test_the_fit_selector_switches_table_1(imported, rita_client, fit: str, header: str, gpt: str) -> None:  # noqa: ANN001
    table = section(rita_client, imported, "table1", fit=fit)
    assert header in table and f"GPT 5.2 {gpt}" in table
    note = section(rita_client, imported, "fit-note", fit=fit)
    assert "Table 1 prints" in note or "the fit the paper’s Table 1 prints" in note


def test_all_three_fits_ordered_head_to_heads_and_rank_probabilities_are_shown(imported, rita_client) -> None:  # noqa: ANN001
    fits = section(rita_client, imported, "fits-table")
    assert "GPT 5.2 1.27 [1.14, 1.40] 1.26 [" in fits and " 1.87 [" in fits
    assert "Same ordering as the ordered fit yes yes yes" in fits
    ordered = section(rita_client, imported, "ordered-h2h")
    assert "GPT 5.2 — 252–148–0 347–53–0 376–24–0" in ordered  # two ordered verdicts per pair, 400 per model pair
    assert "DeepSeek-V3.2 24–376–0 45–355–0 153–247–0 —" in ordered
    ranks = section(rita_client, imported, "rank-probabilities")
    assert "Rank 1 Rank 2 Rank 3 Rank 4" in ranks and "GPT 5.2 1.0000 0.0000 0.0000 0.0000" in ranks
    # Top-1 in rank order (the document lists ties at 0 alphabetically).
    assert (
        section(rita_client, imported, "top1")
        == "Top-1: GPT 5.2 1.0000 · Claude-Sonnet-4.6 0.0000 · GLM-5 0.0000 · DeepSeek-V3.2 0.0000"
    )


def test_the_page_says_nothing_is_separated_or_cyclic_on_the_release(imported, rita_client) -> None:  # noqa: ANN001
    condorcet = section(rita_client, imported, "condorcet")
    assert "Condorcet winner: GPT 5.2" in condorcet and "Acyclic and transitive" in condorcet
    assert "Every compared pair is decided" in condorcet and "Cycles" not in condorcet
    assert "separation-warning" not in rita_client.get(reverse("lit2test:leaderboard", args=[imported.pk])).content.decode()


# --------------------------------------------------------------------------- a small run: separation, an undecided pair


@pytest.fixture
def undecided(tmp_path: Path):  # noqa: ANN201
    """Three models; stable wins Alpha > Beta 2–0, Beta > Gamma 2–0, Alpha – Gamma 1–1: acyclic, not transitive,
    one undecided pair, two separated pairs."""
    files = b.small_release()
    pairs = files["corrected_folded_pairs.jsonl"]
    files["corrected_folded_pairs.jsonl"] = [
        b.folded(
            p["context_id"], "Alpha 1", "Gamma-3", *(("Alpha 1",) * 2 if p["context_id"] == "ctx_001__v1" else ("Gamma-3",) * 2)
        )
        if "Gamma" in p["pair_id"] and "Alpha" in p["pair_id"]
        else p
        for p in pairs
    ]
    return release_import(directory=b.write(tmp_path, files)).benchmark


def test_an_undecided_pair_is_listed_and_no_empty_cycle_list_is_printed(undecided, rita_client) -> None:  # noqa: ANN001
    condorcet = section(rita_client, undecided, "condorcet")
    assert (
        "Undecided pairs (equal stable wins, neither beats the other): Alpha 1 – Gamma-3 (1–1 stable, 0 order-sensitive)"
        in condorcet
    )
    assert "Acyclic (no model beats itself through a chain), but not transitive" in condorcet
    assert "Cycles" not in condorcet and "No Condorcet winner" in condorcet


def test_the_separation_warning_names_models_and_counts(undecided, rita_client) -> None:  # noqa: ANN001
    warning = section(rita_client, undecided, "separation-warning")
    assert "Complete separation: Alpha 1 won all 2 decided order-stable cases against Beta-2 (2–0)." in warning
    assert "Complete separation: Beta-2 won all 2 decided order-stable cases against Gamma-3 (2–0)." in warning
    for field in ("a_wins", "b_wins", " / b /"):
        assert field not in warning


# --------------------------------------------------------------------------- Human WR


def test_human_wr_shows_n_a_ci_and_its_formal_study(imported, annotator, annotator2, rita_client) -> None:  # noqa: ANN001
    study = make_study(imported, [annotator, annotator2], n_contexts=1, n_naive_controls=1)
    for assignment in Assignment.objects.filter(study=study):
        assignment_submit(assignment=assignment, values=complete_values("TIE", reason="both_weak"))
    # One context: each model is in 3 of its 6 real pairs, each labelled by 2 annotators, every label a TIE.
    assert "Human WR" in section(rita_client, imported, "table1")
    rows = table_rows(rita_client, imported, "table1")
    assert len(rows) == 4 and all(row.endswith(" 0.500 [0.50, 0.50] 6") for row in rows), rows
    note = section(rita_client, imported, "human-wr-note")
    assert f"formal study {study.name} (#{study.pk})" in note and "item bootstrap" in note and "not a Wilson interval" in note
    body = rita_client.get(reverse("lit2test:leaderboard", args=[imported.pk])).content.decode()
    assert f'href="{reverse("annotation:study", args=[study.pk])}"' in body
    api = rita_client.get(reverse("lit2test:api-leaderboard", args=[imported.pk]), {"replicates": 50}).json()
    assert api["human_win_rate_detail"]["study"]["id"] == study.pk
    assert api["human_win_rate_detail"]["models"]["GLM-5"] | {} == {"rate": 0.5, "n": 6, "items": 3, "ci": [0.5, 0.5]}


def test_the_page_keeps_the_fit_and_decimals_while_polling(imported, rita_client) -> None:  # noqa: ANN001
    from arena.models import JudgeRun

    JudgeRun.objects.filter(benchmark=imported).update(status="running")
    body = rita_client.get(reverse("lit2test:leaderboard", args=[imported.pk]), {"fit": "stable", "digits": "3"}).content.decode()
    assert re.search(r'hx-get="[^"]*fit=stable&amp;digits=3"', body)
    # An unknown fit or precision falls back to the printed ones.
    assert "BT strength (ordered)" in section(rita_client, imported, "table1", fit="nonsense", digits="9")


def test_a_run_without_a_complete_case_says_so(tmp_path: Path, rita_client) -> None:  # noqa: ANN001
    files = b.small_release()
    files["judgments.jsonl"] = [b.judgment("ctx_001__v1", "Alpha 1", "Beta-2", "original", "A")]  # one order only
    benchmark = release_import(directory=b.write(tmp_path, files)).benchmark
    run = benchmark.runs.get(judge_model="Judge-X")
    text = section(rita_client, benchmark, "insufficient", run=run.pk)
    assert (
        text
        == "Not enough judged cases to fit yet: at least two models and one complete case (both orders judged) are needed. 1 case still misses an order."
    )
    out = StringIO()
    call_command("leaderboard", str(benchmark.pk), "--run", str(run.pk), "--replicates", "10", stdout=out)
    assert "Not enough judged cases to fit yet" in out.getvalue() and "None" not in out.getvalue()


def test_the_pseudo_count_prior_is_stated_with_its_share_of_the_data(imported, rita_client) -> None:  # noqa: ANN001
    # Hand count: 4 models give 12 off-diagonal cells of 0.5 each (6) against 2,400 ordered verdicts: 0.25%.
    prior = section(rita_client, imported, "prior-weight")
    assert prior.startswith("Pseudo-count prior: 0.5 per cell, 0.2% of all counts; it moves the typical strength by ")
    assert "Small against the intervals." in prior and "Large" not in prior
