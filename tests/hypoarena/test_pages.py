"""The HypoArena leaderboard and inter-judge pages, their agreement document, command and API (issue 12).

Two benchmarks: a tiny imported one (one domain, two cases, three models, two judges) whose win rates, consistency, rank
orders, rubric scores and agreement figures are worked out by hand below; and the seeded demo (on 4 cases a domain), whose
pages must print what the report documents say, and whose agreement ratings must equal each run's own leaderboard (two
independent fits: ``pooled_spearman_ci``'s point fits and ``hypoarena_leaderboard``'s). Few bootstrap replicates: the
bootstrap itself is tested in tests/stats.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from decimal import ROUND_HALF_UP, Decimal
from html.parser import HTMLParser
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from arena.models import Benchmark, JudgeRun
from hypoarena.demo import demo_build
from hypoarena.importing import hypoarena_import, import_files
from hypoarena.models import ArenaVerdict
from hypoarena.reports import arena_runs, hypoarena_agreement_report, hypoarena_report
from tests.clients import client_for

from . import helpers as h

pytestmark = pytest.mark.django_db

R = 20  # bootstrap replicates: enough for intervals to exist, few enough to stay fast


# --------------------------------------------------------------------------- reading the pages


class _Tables(HTMLParser):
    """Rows of every table of a page: ``{table id: [(tr attributes, [cell text, ...]), ...]}`` (whitespace collapsed)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[tuple[dict[str, str], list[str]]]] = {}
        self.stack: list[str] = []
        self.row: tuple[dict[str, str], list[str]] | None = None
        self.cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.stack.append(dict(attrs).get("id") or f"table-{len(self.tables)}")
            self.tables.setdefault(self.stack[-1], [])
        elif tag == "tr" and self.stack:
            self.row = ({k: v or "" for k, v in attrs}, [])
        elif tag in ("td", "th") and self.row is not None:
            self.cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self.cell is not None and self.row is not None:
            self.row[1].append(" ".join("".join(self.cell).split()))
            self.cell = None
        elif tag == "tr" and self.row is not None and self.stack:
            self.tables[self.stack[-1]].append(self.row)
            self.row = None
        elif tag == "table" and self.stack:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)


def tables(html: str) -> dict[str, list[tuple[dict[str, str], list[str]]]]:
    parser = _Tables()
    parser.feed(html)
    return parser.tables


def body_rows(html: str, table: str, key: str) -> dict[str, list[str]]:
    """The rows of a table that carry the ``key`` attribute (``data-model``, ``data-domain``), by its value."""
    return {attrs[key]: cells for attrs, cells in tables(html)[table] if key in attrs}


def whole(x: float) -> str:
    """A rating as the page writes it: a whole number, halves rounded up (Django's ``floatformat:0``)."""
    return str(Decimal(repr(x)).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def rating(x: float, ci: list[float]) -> str:
    return f"{whole(x)} [{whole(ci[0])}, {whole(ci[1])}]"


def fixed(x: float | None, digits: int) -> str:
    return "—" if x is None else f"{x:,.{digits}f}".replace("-", "\u2212")


# --------------------------------------------------------------------------- the tiny benchmark

MODELS = ("Alpha", "Beta", "Gamma")
#: Per judge, case and (first, second) match: (original verdict, reverse verdict). In the original order first is shown as
#: A; in the reverse order second is. The debiased share of first is the mean of both orders' shares for it.
VERDICTS: dict[str, dict[tuple[str, str, str], tuple[str, str]]] = {
    "j1": {
        ("c1", "Alpha", "Beta"): ("A>B", "B>A"),  # .75, .75 → .75, consistent
        ("c1", "Alpha", "Gamma"): ("A>>B", "A=B"),  # 1, .5 → .75, inconsistent (a win against a tie)
        ("c1", "Beta", "Gamma"): ("A=B", "B>A"),  # .5, .75 → .625, inconsistent
        ("c2", "Alpha", "Beta"): ("A=B", "A>B"),  # .5, .25 → .375, inconsistent
        ("c2", "Alpha", "Gamma"): ("A>B", "B>>A"),  # .75, 1 → .875, consistent
        ("c2", "Beta", "Gamma"): ("B>A", "A>B"),  # .25, .25 → .25, consistent
    },
    "j2": {
        ("c1", "Alpha", "Beta"): ("A>B", "A=B"),  # .75, .5 → .625, inconsistent
        ("c1", "Alpha", "Gamma"): ("A>B", "B>A"),  # .75, .75 → .75, consistent
        ("c1", "Beta", "Gamma"): ("B>A", "A>B"),  # .25, .25 → .25, consistent
        ("c2", "Alpha", "Beta"): ("A>B", "B>A"),  # .75, .75 → .75, consistent
        ("c2", "Alpha", "Gamma"): ("A=B", "A=B"),  # .5, .5 → .5, consistent (two exact ties)
        ("c2", "Beta", "Gamma"): ("A=B", "A>B"),  # .5, .25 → .375, inconsistent
    },
}
#: Mean debiased shares by hand (each model plays 4 matches; the three sum to 1.5).
WR = {
    "j1": {
        "Alpha": (0.75 + 0.75 + 0.375 + 0.875) / 4,
        "Beta": (0.25 + 0.625 + 0.625 + 0.25) / 4,
        "Gamma": (0.25 + 0.375 + 0.125 + 0.75) / 4,
    },
    "j2": {
        "Alpha": (0.625 + 0.75 + 0.75 + 0.5) / 4,
        "Beta": (0.375 + 0.25 + 0.25 + 0.375) / 4,
        "Gamma": (0.25 + 0.75 + 0.5 + 0.625) / 4,
    },
}
CONSISTENT = {"j1": 3, "j2": 4}  # of 6 two-order matches
# Every pair meets once a case, so the Davidson scores (wins + ties/2) order the ratings: the WR order.
ORDER = {"j1": ["Alpha", "Beta", "Gamma"], "j2": ["Alpha", "Gamma", "Beta"]}
# Ranks (1, 2, 3) against (1, 3, 2): Σd² = 2, ρ = 1 − 6·2/(3·(9 − 1)) = 0.5; one discordant pair of three, τ = (2 − 1)/3;
# |Δrank| = (0 + 1 + 1)/3; the top 5 of 3 models is all of them. Forward verdicts pick the same outcome in 2 of 6 matches
# (c1 Alpha–Beta: A both; c1 Alpha–Gamma: A both; the rest differ: tie/B, tie/A, A/tie, B/tie).
SPEARMAN, KENDALL, RANK_SHIFT, AGREE, SHARED = 0.5, 1 / 3, 2 / 3, 2, 6
#: Rubric scores of c1's submissions (K = 1 in a multi-pair domain: S = (q + (b + u)/2)/2).
RUBRIC = {"Alpha": ((4, 4, 4), 4, 2), "Beta": ((5, 5, 5), 5, 5), "Gamma": ((3, 3, 3), 1, 1)}
RUBRIC_S = {"Alpha": (4 + 3) / 2, "Beta": (5 + 5) / 2, "Gamma": (3 + 1) / 2}  # rubric ranks Beta 1, Alpha 2, Gamma 3


def tiny_files(tmp: Path, judges: tuple[str, ...] = ("j1", "j2"), rubric: bool = True) -> dict[str, Path]:
    verdict_lines = []
    for judge in judges:
        for (case, first, second), (original, backward) in VERDICTS[judge].items():
            verdict_lines.append(h.verdict(case, first, second, "original", original, judge=f"judge-{judge}", run_label=judge))
            verdict_lines.append(h.verdict(case, second, first, "reverse", backward, judge=f"judge-{judge}", run_label=judge))
    rubric_lines = [
        {
            "case_id": "c1",
            "model": m,
            "judge": "judge-r",
            "run_label": "rub",
            "pairs": [{"g": g, "l": ll, "j": j}],
            "b": b,
            "d": None,
            "u": u,
        }
        for m, ((g, ll, j), b, u) in RUBRIC.items()
    ]
    cases = [{"case_id": c, "domain": "ops", "context": f"Context {c}."} for c in ("c1", "c2")]
    submissions = [
        {"case_id": c, "model": m, "pairs": [h.pair(1)]} | ({"reference": True} if m == "Gamma" else {})
        for c in ("c1", "c2")
        for m in MODELS
    ]
    folder = h.folder(tmp, cases=cases, submissions=submissions, verdicts=verdict_lines, rubric=rubric_lines if rubric else [])
    return import_files([folder])


@pytest.fixture
def tiny(tmp_path: Path) -> Benchmark:
    return hypoarena_import(name="tiny", files=tiny_files(tmp_path)).benchmark


def runs_of(benchmark: Benchmark) -> dict[str, JudgeRun]:
    return {r.label: r for r in benchmark.runs.all()}


def leaderboard_url(benchmark: Benchmark) -> str:
    return reverse("hypoarena:leaderboard", args=[benchmark.pk])


def agreement_url(benchmark: Benchmark) -> str:
    return reverse("hypoarena:agreement", args=[benchmark.pk])


# --------------------------------------------------------------------------- access


@pytest.mark.parametrize("name", ["hypoarena:leaderboard", "hypoarena:agreement"])
def test_the_pages_are_for_researchers_only_and_read_only(client, researcher, annotator, tiny, name: str) -> None:  # noqa: ANN001
    url = reverse(name, args=[tiny.pk])
    response = client.get(url)
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    assert client_for(annotator).get(url).status_code == 403
    assert client_for(researcher).post(url).status_code == 405


@pytest.mark.parametrize("name", ["hypoarena:leaderboard", "hypoarena:agreement"])
def test_a_lit2test_benchmark_or_an_unknown_run_is_a_404(researcher, tiny, name: str) -> None:  # noqa: ANN001
    client = client_for(researcher)
    lit = Benchmark.objects.create(name="lit")
    assert client.get(reverse(name, args=[lit.pk])).status_code == 404
    rubric = runs_of(tiny)["rub"]
    param = "run" if name == "hypoarena:leaderboard" else "run_a"
    assert client.get(reverse(name, args=[tiny.pk]), {param: rubric.pk}).status_code == 404
    assert client.get(reverse(name, args=[tiny.pk]), {param: "x"}).status_code == 404


# --------------------------------------------------------------------------- empty states


def test_without_an_arena_run_both_pages_say_how_to_import_verdicts(researcher, tmp_path: Path) -> None:  # noqa: ANN001
    benchmark = hypoarena_import(name="bare", files=tiny_files(tmp_path, judges=(), rubric=False)).benchmark
    client = client_for(researcher)
    for url in (leaderboard_url(benchmark), agreement_url(benchmark)):
        html = client.get(url).content.decode()
        assert 'data-state="no-runs"' in html and "No arena run yet" in html
        assert "python manage.py import_hypoarena bare@1 FOLDER" in html and "demo_hypoarena" in html
        assert 'id="board"' not in html and 'id="agreement"' not in html


def test_with_one_arena_run_the_agreement_page_asks_for_a_second_and_the_leaderboard_shows_it(researcher, tmp_path: Path) -> None:  # noqa: ANN001
    benchmark = hypoarena_import(name="one", files=tiny_files(tmp_path, judges=("j1",), rubric=False)).benchmark
    client = client_for(researcher)
    html = client.get(agreement_url(benchmark)).content.decode()
    assert 'data-state="one-run"' in html and "a second judge's verdicts" in html
    html = client.get(leaderboard_url(benchmark), {"replicates": R}).content.decode()
    assert 'id="hypoarena-table"' in html and 'id="rubric-empty"' in html  # no rubric run: the page says how to add one


def test_a_run_without_accepted_verdicts_names_itself(researcher, tmp_path: Path) -> None:  # noqa: ANN001
    lines = [h.verdict("c1", "Alpha", "Beta", "original", None, status="invalid", raw="?", run_label="broken")]
    files = tiny_files(tmp_path, judges=("j1",), rubric=False)
    files["verdicts"] = h.write(
        tmp_path / "more" / "verdicts.jsonl", [*Path(files["verdicts"]).read_text().splitlines(), *map(json.dumps, lines)]
    )
    benchmark = hypoarena_import(name="broken", files=files).benchmark
    broken = runs_of(benchmark)["broken"]
    html = client_for(researcher).get(leaderboard_url(benchmark), {"run": broken.pk}).content.decode()
    assert f"run {broken.pk} (judge-x, broken) has no accepted verdict yet" in html and 'id="hypoarena-table"' not in html
    html = client_for(researcher).get(agreement_url(benchmark), {"run_a": broken.pk}).content.decode()
    assert f"run A ({broken.pk}: judge-x, broken) has no accepted verdict yet" in html


def test_the_same_run_twice_shows_the_pickers_and_says_to_pick_two(researcher, tiny) -> None:  # noqa: ANN001
    j1 = runs_of(tiny)["j1"]
    html = client_for(researcher).get(agreement_url(tiny), {"run_a": j1.pk, "run_b": j1.pk}).content.decode()
    assert f"run A and run B are both run {j1.pk}; pick two different arena runs of tiny v1" in html
    assert 'id="run-a-select"' in html and 'id="agreement-table"' not in html


def test_bad_options_are_named_and_the_defaults_shown(researcher, tiny, settings) -> None:  # noqa: ANN001
    settings.LIT2TEST_LEADERBOARD_MAX_REPLICATES = R
    html = client_for(researcher).get(leaderboard_url(tiny), {"replicates": "many", "seed": "-1"}).content.decode()
    assert f"replicates must be a whole number from 1 to {R}, not &#x27;many&#x27;; showing {R}." in html
    assert "seed must be a whole number from 0 to 4,294,967,295, not &#x27;-1&#x27;; showing 0." in html
    assert f"{R} case-bootstrap replicates (seed 0)" in html


# --------------------------------------------------------------------------- hand-computed figures


def test_the_leaderboard_of_the_tiny_benchmark_shows_the_hand_computed_figures(researcher, tiny) -> None:  # noqa: ANN001
    runs = runs_of(tiny)
    client = client_for(researcher)
    for judge in ("j1", "j2"):
        html = client.get(leaderboard_url(tiny), {"run": runs[judge].pk, "replicates": R, "seed": 1}).content.decode()
        rows = body_rows(html, "hypoarena-table", "data-model")
        assert list(rows) == ORDER[judge]
        for rank, model in enumerate(ORDER[judge], start=1):
            cells = rows[model]
            assert cells[0].split(" [")[0] == str(rank)
            assert cells[5].startswith(f"{WR[judge][model]:.3f} [")  # Rank, Model, ops, Avg, Pooled, WR
        foot = {
            cells[0]: cells[1:]
            for _attrs, cells in tables(html)["hypoarena-table"]
            if cells and cells[0].startswith("Consistency")
        }
        (consistency,) = foot.values()
        assert consistency[0] == f"{100 * CONSISTENT[judge] / 6:.1f}% of 6"
        assert html.count('class="reference-row"') == 1  # the Reference's row is marked, with its badge
        assert re.search(r'data-model="Gamma" class="reference-row">.*?>Reference</span>', html, re.S)
    # The first rubric run beside the arena ranks of judge 1: S, rubric rank, Δ = rubric rank − arena rank.
    html = client.get(leaderboard_url(tiny), {"run": runs["j1"].pk, "replicates": R}).content.decode()
    rows = body_rows(html, "hypoarena-table", "data-model")
    expected = {"Alpha": (RUBRIC_S["Alpha"], 2, +1), "Beta": (RUBRIC_S["Beta"], 1, -1), "Gamma": (RUBRIC_S["Gamma"], 3, 0)}
    for model, (s, rubric_rank, delta) in expected.items():
        sign = "+" if delta > 0 else ""
        assert rows[model][-3:] == [f"{s:.2f}", f"{rubric_rank:.1f}", f"{sign}{fixed(float(delta), 1)}"], model


def test_the_agreement_of_the_tiny_benchmark_matches_the_hand_computed_figures(researcher, tiny) -> None:  # noqa: ANN001
    runs = runs_of(tiny)
    html = client_for(researcher).get(agreement_url(tiny), {"replicates": R}).content.decode()
    assert f'data-run-a="{runs["j1"].pk}" data-run-b="{runs["j2"].pk}"' in html  # the first two arena runs by default
    rows = body_rows(html, "agreement-table", "data-domain")
    assert set(rows) == {"ops", "pooled"}
    for name in ("ops", "pooled"):
        cells = rows[name]
        assert cells[1].split(" [")[0] == f"{SPEARMAN:.3f}" and cells[2] == f"{KENDALL:.3f}"
        # Top-5 overlap as the paper prints it, a count: the domain has 3 models, all in both judges' top lists.
        assert cells[3] == f"{RANK_SHIFT:.2f}" and cells[4] == "3" and cells[5] == "3"
        assert cells[6] == f"{100 * AGREE / SHARED:.1f}%" and cells[7] == f"{AGREE} / {SHARED}"
    assert re.match(r"0\.500 \[[−\d.]+, [−\d.]+\]$", rows["pooled"][1])  # the pooled ρ with its bootstrap interval
    ratings = body_rows(html, "ratings-table", "data-model")
    assert list(ratings) == ["Alpha", "Beta", "Gamma"]  # judge A's rank order
    assert [r[1].split("(")[1] for r in ratings.values()] == ["1)", "2)", "3)"]
    assert [r[2].split("(")[1] for r in ratings.values()] == ["1)", "3)", "2)"]
    assert [r[3] for r in ratings.values()] == ["0", "1", "1"]
    confusion = {cells[0]: cells[1:] for _a, cells in tables(html)["confusion-table"][1:]}
    # j1 forward outcomes A, A, tie, tie, A, B against j2's A, A, B, A, tie, tie.
    assert confusion == {"shown-A wins": ["2", "0", "1"], "shown-B wins": ["0", "0", "1"], "tie": ["1", "1", "0"]}


def test_the_agreement_command_and_api_give_one_document_with_the_hand_computed_figures(researcher, tiny) -> None:  # noqa: ANN001
    runs = runs_of(tiny)
    out = StringIO()
    call_command(
        "hypoarena_agreement",
        "tiny",
        "--run-a",
        str(runs["j2"].pk),
        "--run-b",
        str(runs["j1"].pk),
        "--replicates",
        "5",
        "--seed",
        "2",
        "--json",
        stdout=out,
    )
    document = json.loads(out.getvalue())
    url = reverse("hypoarena:api-agreement", args=[tiny.pk])
    api = client_for(researcher).get(url, {"run_a": runs["j2"].pk, "run_b": runs["j1"].pk, "replicates": 5, "seed": 2})
    assert api.status_code == 200 and api.json() == document
    assert (document["run_a"]["label"], document["run_b"]["label"]) == ("j2", "j1")
    pooled = document["agreement"]["pooled"]
    assert pooled["spearman"] == pytest.approx(SPEARMAN) and pooled["kendall"] == pytest.approx(KENDALL)
    assert pooled["rank_shift"] == pytest.approx(RANK_SHIFT) and pooled["cells"] == 3
    # The top-5 overlap is a count (all 3 models of the one domain), its share a second field; the method says so.
    assert (pooled["top_k_overlap"], pooled["top_k_overlap_share"]) == (3.0, 1.0)
    ops = document["agreement"]["domains"]["ops"]
    assert (ops["top_k_overlap"], ops["top_k_overlap_share"], ops["k"]) == (3, 1.0, 3)
    assert document["method"]["top_k_overlap"].startswith("count |top-k(A) ∩ top-k(B)|")
    assert "not a share" in document["method"]["top_k_overlap"]
    assert document["method"]["top_k_overlap_share"].startswith("the count / k")
    assert document["pairwise"]["pooled"]["agree"] == AGREE and document["pairwise"]["pooled"]["shared"] == SHARED
    boot = document["pooled_spearman"]
    assert boot["spearman"] == pytest.approx(SPEARMAN) and boot["replicates"] == 5 and boot["seed"] == 2
    assert boot["ci"][0] <= boot["ci"][1]
    assert document["reference_models"] == ["Gamma"]
    assert [m for m, e in sorted(document["ratings"]["ops"].items(), key=lambda x: x[1]["rank_b"])] == ORDER["j1"]
    # The text table names both runs and prints the same figures.
    out = StringIO()
    call_command("hypoarena_agreement", "tiny", "--replicates", "3", stdout=out)
    text = out.getvalue()
    assert text.splitlines()[0] == f"tiny v1: run A {runs['j1'].pk} (judge-j1, j1) vs run B {runs['j2'].pk} (judge-j2, j2)"
    assert re.search(r"^pooled\s+0\.500\s+0\.333\s+0\.67\s+3\s+0\.333 \(2/6\)$", text, re.M)


def test_the_agreement_command_and_api_errors_say_what_to_do(researcher, annotator, tiny, tmp_path: Path) -> None:  # noqa: ANN001
    runs = runs_of(tiny)
    lit = Benchmark.objects.create(name="lit")
    with pytest.raises(CommandError, match="lit v1 is a Lit2Test benchmark; two of its runs are compared on their run page"):
        call_command("hypoarena_agreement", "lit")
    with pytest.raises(CommandError, match=rf"run {runs['rub'].pk} is not an arena run of tiny v1; its arena runs are: "):
        call_command("hypoarena_agreement", "tiny", "--run-b", str(runs["rub"].pk))
    with pytest.raises(CommandError, match=f"run A and run B are both run {runs['j1'].pk}"):
        call_command("hypoarena_agreement", "tiny", "--run-a", str(runs["j1"].pk), "--run-b", str(runs["j1"].pk))
    one = hypoarena_import(name="one", files=tiny_files(tmp_path / "one", judges=("j1",), rubric=False)).benchmark
    with pytest.raises(CommandError, match="one v1 has 1 arena run; inter-judge agreement needs two"):
        call_command("hypoarena_agreement", "one")
    client = client_for(researcher)
    url = reverse("hypoarena:api-agreement", args=[tiny.pk])
    same = client.get(url, {"run_a": runs["j1"].pk, "run_b": runs["j1"].pk})
    assert same.status_code == 404 and same.json() == {
        "detail": f"run A and run B are both run {runs['j1'].pk}; pick two different arena runs of tiny v1"
    }
    assert client.get(url, {"run_a": runs["rub"].pk}).status_code == 404
    assert client.get(url, {"replicates": 0}).status_code == 400
    assert client.get(reverse("hypoarena:api-agreement", args=[one.pk])).status_code == 404
    assert (
        client.get(reverse("hypoarena:api-agreement", args=[lit.pk]))
        .json()["detail"]
        .startswith("lit v1 is a Lit2Test benchmark, not a HypoArena one; two of its runs' agreement is at /api/runs/")
    )
    assert client_for(annotator).get(url).status_code == 403
    # Given one run only, the other is the first arena run that is not it.
    document = client.get(url, {"run_a": runs["j2"].pk, "replicates": 2}).json()
    assert (document["run_a"]["id"], document["run_b"]["id"]) == (runs["j2"].pk, runs["j1"].pk)


# --------------------------------------------------------------------------- the demo: the page prints the documents


@pytest.fixture
def demo() -> Benchmark:
    demo_build(cases_per_domain=4, name="demo-small")
    return Benchmark.objects.get(name="demo-small")


def test_the_demo_leaderboard_page_prints_the_report_document(researcher, demo) -> None:  # noqa: ANN001
    client = client_for(researcher)
    for run in arena_runs(benchmark=demo):
        doc = hypoarena_report(benchmark=demo, run=run, replicates=R, seed=4)
        html = client.get(leaderboard_url(demo), {"run": run.pk, "replicates": R, "seed": 4}).content.decode()
        assert f'data-run="{run.pk}"' in html
        board = doc["leaderboard"]
        domains = list(board["domains"])
        assert domains == ["biomedical", "it_operations", "safety_investigation"]
        pooled = board["pooled"]["models"]
        rows = body_rows(html, "hypoarena-table", "data-model")
        assert list(rows) == sorted(pooled, key=lambda m: pooled[m]["rank"])
        for model, cells in rows.items():
            p = pooled[model]
            assert cells[0] == f"{p['rank']} [{p['rank_ci'][0]}, {p['rank_ci'][1]}]"
            assert cells[1] == model + (" Reference" if model == "Reference" else "")
            assert cells[2:5] == [
                rating(board["domains"][d]["models"][model]["rating"], board["domains"][d]["models"][model]["ci"])
                for d in domains
            ]
            assert (
                cells[5]
                == f"{rating(p['avg_domain_rating'], p['avg_domain_ci'])} rank {p['avg_domain_rank']} [{p['avg_domain_rank_ci'][0]}, {p['avg_domain_rank_ci'][1]}]"
            )
            assert cells[6] == rating(p["rating"], p["ci"])
            assert cells[7] == f"{p['wr']:.3f} [{p['wr_ci'][0]:.3f}, {p['wr_ci'][1]:.3f}]"
            r = doc["rubric"]["pooled"]["models"][model]
            assert cells[8:10] == [f"{r['mean_s']:.2f}", f"{r['rubric_rank']:.1f}"]
        foot = {cells[0]: cells[1:] for _a, cells in tables(html)["hypoarena-table"] if cells and not _a.get("data-model")}
        blocks = [*(board["domains"][d] for d in domains), board["pooled"]]
        nu = foot["Tie parameter ν [95%]"]
        assert [c for c in nu if c] == [f"{b['nu']:.2f} [{b['nu_ci'][0]:.2f}, {b['nu_ci'][1]:.2f}]" for b in blocks]
        consistency = foot["Consistency (both orders agree)"]
        assert [c for c in consistency if c] == [f"{100 * b['consistency']:.1f}% of {b['two_order_matches']}" for b in blocks]
        modal = body_rows(html, "modal-table", "data-fit")
        # Domains by their labels (the demo's slugs), the pooled row as it was.
        labels = {"biomedical": "Biomedical", "it_operations": "IT operations", "safety_investigation": "Safety investigation"}
        assert modal == {
            str(name): [labels.get(name, name), " > ".join(b["modal_ranking"]), f"{100 * b['modal_fraction']:.1f}%"]
            for name, b in zip([*domains, "pooled"], blocks, strict=True)
        }
        # One plot per domain and one of the pooled fit, a point per model.
        assert html.count('class="interval-point"') == len(blocks) * len(pooled)


def test_the_demo_agreement_page_prints_the_document_whose_ratings_are_each_runs_leaderboard(researcher, demo) -> None:  # noqa: ANN001
    run_a, run_b = arena_runs(benchmark=demo)
    doc = hypoarena_agreement_report(benchmark=demo, run_a=run_a, run_b=run_b, replicates=R, seed=0)
    html = client_for(researcher).get(agreement_url(demo), {"replicates": R}).content.decode()
    rows = body_rows(html, "agreement-table", "data-domain")
    for name, block in [*doc["agreement"]["domains"].items(), ("pooled", doc["agreement"]["pooled"])]:
        p = doc["pairwise"]["pooled"] if name == "pooled" else doc["pairwise"]["domains"][name]
        cells = rows[name]
        assert cells[1].split(" [")[0] == f"{block['spearman']:.3f}" and cells[2] == f"{block['kendall']:.3f}"
        assert cells[3] == f"{block['rank_shift']:.2f}" and cells[4] == f"{block['top_k_overlap']:g}"  # a count
        assert cells[6:] == [f"{100 * p['agreement']:.1f}%", f"{p['agree']:,} / {p['shared']:,}"]
    boot = doc["pooled_spearman"]
    assert f'<strong id="pooled-spearman">{boot["spearman"]:.3f}</strong>' in html
    assert f'<span id="pooled-spearman-ci">[{boot["ci"][0]:.3f}, {boot["ci"][1]:.3f}]</span>' in html
    # Each judge's ratings are its own leaderboard's (a separate fit of the same verdicts).
    for key, run in (("rating_a", run_a), ("rating_b", run_b)):
        board = hypoarena_report(benchmark=demo, run=run, replicates=1, seed=0)["leaderboard"]["domains"]
        for domain, by_model in doc["ratings"].items():
            for model, entry in by_model.items():
                assert entry[key] == pytest.approx(board[domain]["models"][model]["rating"], abs=1e-6)
    table = body_rows(html, "ratings-table", "data-model")
    for model, cells in table.items():
        for i, domain in enumerate(doc["ratings"]):
            e = doc["ratings"][domain][model]
            assert cells[1 + 3 * i].startswith(whole(e["rating_a"]) + " (") and cells[2 + 3 * i].startswith(
                whole(e["rating_b"]) + " ("
            )
    # Pairwise agreement counted here from the stored rows: forward verdicts of both runs on the same match.
    outcome = {"A>>B": "A", "A>B": "A", "A=B": "tie", "B>A": "B", "B>>A": "B"}
    forward = {
        run.pk: dict(ArenaVerdict.objects.filter(run=run, order="original", status="accepted").values_list("match_id", "verdict"))
        for run in (run_a, run_b)
    }
    shared = forward[run_a.pk].keys() & forward[run_b.pk].keys()
    agree = Counter(outcome[forward[run_a.pk][m]] == outcome[forward[run_b.pk][m]] for m in shared)
    assert rows["pooled"][7] == f"{agree[True]:,} / {len(shared):,}"


def test_a_new_verdict_changes_the_cached_leaderboard(researcher, tmp_path: Path) -> None:  # noqa: ANN001
    benchmark = hypoarena_import(name="grow", files=tiny_files(tmp_path, judges=("j1",), rubric=False)).benchmark
    client = client_for(researcher)
    run = runs_of(benchmark)["j1"]
    before = client.get(leaderboard_url(benchmark), {"replicates": R}).content.decode()
    assert "12 matches" not in before and "6 matches in 2 cases" in before
    # j2's verdicts under j1's label would contradict it; a third case with its own matches adds verdicts to run j1.
    extra = [{"case_id": "c3", "domain": "ops", "context": "Context c3."}]
    subs = [{"case_id": "c3", "model": m, "pairs": [h.pair(1)]} | ({"reference": True} if m == "Gamma" else {}) for m in MODELS]
    lines = [
        h.verdict("c3", a, b, order, v, judge="judge-j1", run_label="j1")
        for a, b, v in (("Alpha", "Beta", "A>B"), ("Alpha", "Gamma", "A=B"), ("Beta", "Gamma", "B>A"))
        for order in ("original",)
    ]
    folder = h.folder(tmp_path / "more", cases=extra, submissions=subs, verdicts=lines, rubric=[])
    hypoarena_import(name="grow", files=import_files([folder]))
    assert ArenaVerdict.objects.filter(run=run).count() == 15
    after = client.get(leaderboard_url(benchmark), {"replicates": R}).content.decode()
    assert "9 matches in 3 cases (6 judged in both orders)" in after


# --------------------------------------------------------------------------- links


def test_the_dashboard_and_the_benchmark_page_link_both_pages(researcher, tiny) -> None:  # noqa: ANN001
    client = client_for(researcher)
    dashboard = client.get(reverse("arena:dashboard")).content.decode()
    row = dashboard[dashboard.index("tiny v1") :].split("</tr>")[0]
    assert f'href="{leaderboard_url(tiny)}"' in row and f'href="{agreement_url(tiny)}"' in row
    page = client.get(reverse("hypoarena:benchmark", args=[tiny.pk])).content.decode()
    assert f'href="{leaderboard_url(tiny)}"' in page and f'href="{agreement_url(tiny)}"' in page
    board = client.get(leaderboard_url(tiny), {"replicates": R}).content.decode()
    api = reverse("hypoarena:api-leaderboard", args=[tiny.pk])
    assert f'href="{api}?run={runs_of(tiny)["j1"].pk}&amp;replicates={R}&amp;seed=0"' in board


def test_an_htmx_poll_gets_the_fragment_and_a_run_row_links_its_leaderboard(researcher, tiny) -> None:  # noqa: ANN001
    client = client_for(researcher)
    runs = runs_of(tiny)
    fragment = client.get(
        leaderboard_url(tiny), {"run": runs["j2"].pk, "replicates": R}, headers={"HX-Request": "true"}
    ).content.decode()
    assert fragment.lstrip().startswith(f'<div id="board" data-run="{runs["j2"].pk}"') and "<html" not in fragment
    fragment = client.get(agreement_url(tiny), {"replicates": R}, headers={"HX-Request": "true"}).content.decode()
    assert fragment.lstrip().startswith('<div id="agreement"') and "<html" not in fragment
    page = client.get(reverse("hypoarena:benchmark", args=[tiny.pk])).content.decode()
    assert page.count('class="run-leaderboard-link"') == 2  # the two arena runs, not the rubric run
    assert f'href="{leaderboard_url(tiny)}?run={runs["j2"].pk}"' in page


def test_a_model_without_matches_in_a_domain_has_a_dash_there(researcher, tmp_path: Path) -> None:  # noqa: ANN001
    # helpers.py's lines: in the singleton domain "safety" only Beta and Ref meet, so Alpha has no rating there.
    benchmark = hypoarena_import(name="gaps", files=import_files([h.folder(tmp_path)])).benchmark
    html = client_for(researcher).get(leaderboard_url(benchmark), {"replicates": 2}).content.decode()
    head = [cells for _a, cells in tables(html)["hypoarena-table"]][0]
    assert head[2:4] == ["Ops", "Safety (K = 1)"]  # the domains' labels
    rows = body_rows(html, "hypoarena-table", "data-model")
    assert rows["Alpha"][3] == "—" and rows["Beta"][3] != "—" and rows["Ref"][3] != "—"
