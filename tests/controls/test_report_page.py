"""The Controls page (issue 11, "Report"): the diagnostic controls report of a controls run in tables and two plots,
for researchers only, with an empty state that says what to do, and the demo heuristic's runs as its demo content.

The demo runs here are recorded without running the replay (``execute=False``): inside a test's transaction its
launch never reaches a driver, so the replay stays ``running`` with no verdict, which is the page's "still running"
state. The replay itself goes through the engine in ``test_demo_controls.py``.
"""

from __future__ import annotations

import html
import re

import pytest
from django.test import Client
from django.urls import reverse

from arena import formatting
from arena.models import Benchmark, JudgeRun
from controls.demo import DEMO_JUDGE, HOLISTIC_LABEL, REPLAY_LABEL, STRUCTURED_LABEL, demo_controls_record
from controls.import_export import controls_import
from controls.models import ControlJudgment, ControlVariant
from controls.reports import controls_report
from controls.services import controls_generate
from tests.clients import client_for

from . import helpers as h

pytestmark = pytest.mark.django_db

DIMENSION_FIELD = {
    "grounding": "literature_gap",
    "hypothesis_specificity": "hypothesis",
    "minimality_feasibility": "minimal_test",
    "decisive_metric": "decisive_metric",
    "falsifiability": "falsifying_result",
}


@pytest.fixture
def demo(imported):  # noqa: ANN001, ANN201
    """Template variants of 2 cases (6 clear, 2 rendering, 2 falsifier_off, 2 naive) and the demo heuristic's runs."""
    controls_generate(benchmark=imported, kinds=["clear", "rendering", "falsifier_off", "naive"], contexts=2, seed=0)
    demo_controls_record(benchmark=imported, execute=False)
    return imported


def url(benchmark) -> str:  # noqa: ANN001
    return reverse("controls:report", args=[benchmark.pk])


def text(fragment: str) -> str:
    """What a reader sees of some HTML: tags dropped, entities decoded, white space collapsed."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def element(body: str, element_id: str) -> str:
    """An element of the page by id, up to the first closing tag of its name."""
    match = re.search(rf'<(\w+)[^>]*\bid="{element_id}"', body)
    assert match, element_id
    tag = match.group(1)
    return body[match.start() : body.index(f"</{tag}>", match.end()) + len(tag) + 3]


def row(body: str, table_id: str, dimension: str) -> list[str]:
    """The cells of a table's row for one dimension, as text."""
    table = element(body, table_id)
    found = re.search(rf'<tr data-dimension="{dimension}">(.*?)</tr>', table, re.S)
    assert found, (table_id, dimension)
    return [text(c) for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", found.group(1), re.S)]


def keyed(body: str, table_id: str) -> dict[str, str]:
    """A two-column table's values by their ``data-key``."""
    return {k: text(v) for k, v in re.findall(r'<td class="num" data-key="([a-z_]+)">(.*?)</td>', element(body, table_id), re.S)}


def words(value: str) -> int:
    return len(value.split())


def by_hand_winner(clean: int, variant: int) -> str:
    """The demo heuristic as its docstring states it: more words win, a tie within 2% of the larger count."""
    if abs(clean - variant) <= 0.02 * max(clean, variant):
        return "tie"
    return "clean" if clean > variant else "variant"


def run(label: str) -> JudgeRun:
    return JudgeRun.objects.get(label=label, judge_model=DEMO_JUDGE)


# --------------------------------------------------------------------------- who may open it


def test_only_researchers_open_it_and_only_with_get(demo, researcher, annotator, outsider) -> None:  # noqa: ANN001
    page = url(demo)
    anonymous = Client().get(page)
    assert anonymous.status_code == 302 and anonymous["Location"].startswith(reverse("login"))
    for user in (annotator, outsider):
        assert client_for(user).get(page).status_code == 403
    assert client_for(researcher).get(page).status_code == 200
    assert client_for(researcher).post(page).status_code == 405
    assert client_for(researcher).get(reverse("controls:report", args=[demo.pk + 999])).status_code == 404


# --------------------------------------------------------------------------- empty states


def test_without_variants_it_says_how_to_make_them(imported, rita_client) -> None:  # noqa: ANN001
    body = rita_client.get(url(imported)).content.decode()
    state = element(body, "empty-state")
    assert 'data-state="no-variants"' in state
    assert "generate_controls lit2test --kinds clear,rendering,falsifier_off,naive" in text(state)
    assert "import_controls" in state and reverse("controls:list", args=[imported.pk]) in state
    assert 'id="report"' not in body and "<svg" not in body


def test_with_drafts_only_it_sends_the_researcher_to_review_them(imported, rita_client) -> None:  # noqa: ANN001
    controls_generate(benchmark=imported, kinds=["clear"], contexts=1, seed=0)
    ControlVariant.objects.update(status=ControlVariant.Status.DRAFT)
    state = element(rita_client.get(url(imported)).content.decode(), "empty-state")
    assert 'data-state="no-approved"' in state
    assert "3 variants, none approved" in text(state)


def test_with_variants_but_no_run_it_gives_the_command_and_the_launch_form(imported, rita_client) -> None:  # noqa: ANN001
    controls_generate(benchmark=imported, kinds=["clear", "naive"], contexts=1, seed=0)
    state = element(rita_client.get(url(imported)).content.decode(), "empty-state")
    assert 'data-state="no-runs"' in state
    assert "4 approved variants wait for a judge" in text(state)
    assert "run_judge lit2test --pairs controls --model MODEL --base-url URL" in text(state)
    assert f'href="{reverse("jobs:run-new")}?benchmark={imported.pk}"' in state
    assert "Pairs set to controls" in text(state)


def test_a_running_run_shows_its_progress_and_polls(demo, rita_client) -> None:  # noqa: ANN001
    replay = run(REPLAY_LABEL)
    assert replay.status == JudgeRun.Status.RUNNING  # launched, never driven inside the test's transaction
    body = rita_client.get(url(demo), {"run": replay.pk}).content.decode()
    report = element(body, "report")
    assert f'hx-get="{url(demo)}?run={replay.pk}' in report and 'hx-trigger="every 5s"' in report
    assert "0 of 24 ordered comparisons judged" in text(element(body, "run-progress"))
    assert f"run {replay.pk} has no accepted control verdicts yet" in text(element(body, "report-problem"))
    # The fragment htmx asks for is the report alone.
    fragment = rita_client.get(url(demo), {"run": replay.pk}, headers={"HX-Request": "true"}).content.decode()
    assert fragment.lstrip().startswith('<div id="report"') and "<html" not in fragment
    # A finished run's page does not poll.
    assert "hx-get" not in element(rita_client.get(url(demo)).content.decode(), "report")


# --------------------------------------------------------------------------- the report


def test_it_shows_the_numbers_of_the_report_document(demo, rita_client) -> None:  # noqa: ANN001
    holistic, structured = run(HOLISTIC_LABEL), run(STRUCTURED_LABEL)
    body = rita_client.get(url(demo)).content.decode()  # defaults: the completed holistic run, the structured one beside
    assert f'data-run="{holistic.pk}"' in body and f'data-structured="{structured.pk}"' in body
    doc = controls_report(benchmark=demo, run=holistic, structured_run=structured, replicates=2000, seed=0)

    for target, section in doc["clear"].items():
        cells = row(body, "clear-table", target)
        assert cells[1:5] == [
            f"{section['clean_wins']} / {section['ordered']}",
            str(section["variant_wins"]),
            str(section["ties"]),
            str(section["cases"]),
        ]
        drop, drift = section["target_drop"], section["nontarget_drift"]
        assert cells[6] == f"{formatting.number(drop['mean'], 2)} {formatting.interval(drop['ci'], 2)}"
        assert cells[7] == f"{formatting.number(drift['mean'], 2)} {formatting.interval(drift['ci'], 2)}"
    rendering = keyed(body, "rendering-table")
    assert {k: int(v) for k, v in rendering.items()} == {k: v for k, v in doc["rendering"].items() if k in rendering}
    falsifier = keyed(body, "falsifier-table")
    assert falsifier["filled_wins"] == str(doc["falsifier"]["filled_wins"])
    assert (
        falsifier["preference"]
        == f"{formatting.number(doc['falsifier']['preference']['value'], 3)} {formatting.interval(doc['falsifier']['preference']['ci'], 3)}"
    )
    naive = keyed(body, "naive-table")
    assert naive["real_wins"] == f"{doc['naive']['real_wins']} / {doc['naive']['ordered']}"
    agreement = doc["dimension_audit"]["agreement_counts"]
    assert f"({agreement['agree']} of {agreement['compared']} ordered comparisons)" in text(element(body, "audit-agreement"))
    for dimension, mean in doc["dimension_audit"]["mean_scores"].items():
        assert row(body, "audit-table", dimension)[1] == formatting.number(mean, 2)
    # The demo is labelled as what it is, on the page itself.
    note = text(element(body, "demo-note"))
    assert "not made by a language model" in note and "fails the rendering control by design" in note
    # Plot (a) has one point per dimension with a target drop (clear only: the demo has no subtle variants); (b) none.
    plot = element(body, "drop-plot")
    assert plot.count('<g class="interval-point"') == 3 and "<title" in plot and "<desc" in plot
    assert 'class="zero-line"' in plot
    assert 'id="adjusted-plot"' not in body and "No sham-adjusted preference to plot" in body
    assert "No subtle or sham verdicts in this run" in body


def test_its_figures_match_the_heuristic_worked_by_hand(demo, rita_client) -> None:  # noqa: ANN001
    """Two variants' verdicts and the figures they make, from the word counts of their texts."""
    body = rita_client.get(url(demo)).content.decode()
    rendering = list(ControlVariant.objects.filter(benchmark=demo, kind="rendering").select_related("source"))
    assert len(rendering) == 2
    prose_wins = 0
    for variant in rendering:
        source_words = sum(words(variant.source.content[f]) for f in h.SIX)
        winner = by_hand_winner(source_words, words(variant.prose))
        prose_wins += winner == "variant"
        assert set(ControlJudgment.objects.filter(run=run(HOLISTIC_LABEL), variant=variant).values_list("winner", flat=True)) == {
            winner
        }
    assert prose_wins == 2  # prose is longer than its six fields: the heuristic fails the rendering control
    assert keyed(body, "rendering-table")["prose_preferred"] == "2" and keyed(body, "rendering-table")["flips"] == "2"

    # The decisive-metric drop: the score of the real field minus the score of the fixed defect, averaged over the cases.
    clear = list(ControlVariant.objects.filter(benchmark=demo, kind="clear", target="decisive_metric").select_related("source"))
    drops = [
        min(4, words(v.source.content["decisive_metric"]) // 8) - min(4, words(v.content["decisive_metric"]) // 8) for v in clear
    ]
    assert len(drops) == 2
    cells = row(body, "clear-table", "decisive_metric")
    assert cells[6].startswith(formatting.number(sum(drops) / 2, 2) + " [")
    # Only the target field changed, so every other dimension scores the same on both sides: no drift at all.
    assert cells[7] == "0.00 [0.00, 0.00]"


def test_the_pickers_choose_the_runs_and_the_bootstrap(demo, rita_client) -> None:  # noqa: ANN001
    holistic, structured = run(HOLISTIC_LABEL), run(STRUCTURED_LABEL)
    body = rita_client.get(url(demo), {"run": holistic.pk, "structured": "none"}).content.decode()
    assert row(body, "clear-table", "grounding")[6] == "needs a structured run"
    assert "needs a holistic run and a structured run" in text(element(body, "audit-agreement"))
    assert 'id="drop-plot"' not in body and 'id="drop-plot-empty"' in body
    # A structured run alone reads its own scores.
    body = rita_client.get(url(demo), {"run": structured.pk}).content.decode()
    assert f'data-run="{structured.pk}"' in body and 'data-structured=""' in body
    assert row(body, "clear-table", "grounding")[6] != "needs a structured run"
    # Unknown runs are a 404; a holistic run is not a structured run.
    assert rita_client.get(url(demo), {"run": 999999}).status_code == 404
    assert rita_client.get(url(demo), {"run": structured.pk, "structured": holistic.pk}).status_code == 404
    # A bad bootstrap option is named, and the default is used.
    body = rita_client.get(url(demo), {"replicates": "lots", "seed": "-1"}).content.decode()
    assert "replicates must be a whole number from 100 to 20,000, not 'lots'; showing 2,000." in text(body)
    assert "seed must be a whole number" in text(body)
    body = rita_client.get(url(demo), {"replicates": 300, "seed": 4}).content.decode()
    assert "300 case-bootstrap replicates (seed 4)" in text(element(body, "run-summary"))


def test_new_verdicts_change_the_page_at_once(demo, rita_client) -> None:  # noqa: ANN001
    """The report is cached by the runs' verdicts: deleting some (or adding) shows on the next request."""
    holistic = run(HOLISTIC_LABEL)
    before = keyed(rita_client.get(url(demo)).content.decode(), "naive-table")
    assert before["real_wins"].endswith("/ 4")
    naive = ControlVariant.objects.filter(benchmark=demo, kind="naive").first()
    ControlJudgment.objects.filter(run=holistic, variant=naive).delete()
    after = keyed(rita_client.get(url(demo)).content.decode(), "naive-table")
    assert after["real_wins"].endswith("/ 2") and after["pairs"] == "1"


def test_subtle_and_sham_verdicts_fill_the_subtle_table_and_plot_b(imported, rita_client, tmp_path) -> None:  # noqa: ANN001
    """Imported subtle and sham variants judged by the heuristic: the helper's one-sentence rewrites are much shorter
    than the fields they replace, so the clean proposal wins every subtle and every sham comparison: the sham gate
    fails (it moved the judge), and the adjusted preference is 1 − 1 = 0."""
    source = h.sources(imported, 1)[0]
    controls_import(
        benchmark=imported,
        path=h.write(tmp_path / "c.jsonl", [h.line(source, k, t) for k in ("subtle", "sham") for t in h.TARGET_FIELD]),
    )
    ControlVariant.objects.update(status=ControlVariant.Status.APPROVED)
    demo_controls_record(benchmark=imported, execute=False)
    body = rita_client.get(url(imported)).content.decode()
    for target in h.TARGET_FIELD:
        cells = row(body, "subtle-table", target)
        assert cells[1:6] == ["FAIL", "2 – 0 – 0 of 2", "1.000 of 2", "1.000", "0.000 [0.000, 0.000]"], target
    plot = element(body, "adjusted-plot")
    assert plot.count('<g class="interval-point"') == 3
    assert element(body, "drop-plot").count('<g class="interval-point"') == 3  # subtle drops only: no clear variants


# --------------------------------------------------------------------------- links


def test_the_leaderboard_and_the_benchmark_link_here_and_it_links_the_variants(demo, rita_client) -> None:  # noqa: ANN001
    page = url(demo)
    for origin in (reverse("lit2test:leaderboard", args=[demo.pk]), reverse("arena:benchmark", args=[demo.pk])):
        assert f'href="{page}"' in rita_client.get(origin).content.decode(), origin
    benchmark_page = rita_client.get(reverse("arena:benchmark", args=[demo.pk])).content.decode()
    assert f'href="{page}?run={run(HOLISTIC_LABEL).pk}"' in benchmark_page  # a controls run opens here, not in the leaderboard
    body = rita_client.get(page).content.decode()
    assert f'href="{reverse("controls:list", args=[demo.pk])}" id="variants-link"' in body
    assert reverse("controls:api-report", args=[demo.pk]) in element(body, "json-link")


# --------------------------------------------------------------------------- the plots' geometry (arena.charts.interval_plot)


def test_interval_plot_places_points_whiskers_and_zero_on_one_axis() -> None:
    from arena.charts import interval_plot

    # Plot width 1000 − 200 − 30 = 770 units for the domain [−1, 1]: x(v) = 200 + (v + 1) / 2 × 770.
    plot = interval_plot(
        [
            ("a", "clear", 0.5, [0.0, 1.0]),
            ("b", "clear", None, None),
            ("c", "subtle", -1.0, None),
            ("d", "subtle", 2.0, [1.5, 3.0]),
        ],
        domain=(-1.0, 1.0),
        width=1000,
        left=200,
    )
    assert plot is not None and plot.zero_x == 585.0
    assert [(p.label, p.x, p.lo, p.hi) for p in plot.points] == [
        ("a", 777.5, 585.0, 970.0),
        ("c", 200.0, 200.0, 200.0),
        ("d", 970.0, 970.0, 970.0),
    ]
    assert [p.text for p in plot.points] == [
        "0.50 [0.00, 1.00]",
        "\u22121.00 (no CI)",
        "2.00 [1.50, 3.00]",
    ]  # the value is printed, the mark is clipped
    assert [(s, shape) for s, shape, _, _ in plot.legend] == [("clear", "circle"), ("subtle", "square")]
    assert [label for _, label in plot.ticks][0] == "\u22121.0" and [label for _, label in plot.ticks][-1] == "1.0"
    assert interval_plot([("a", "clear", None, None)]) is None


def test_controls_pages_name_another_protocols_benchmark(client, researcher) -> None:  # noqa: ANN001
    other = Benchmark.objects.create(name="arena-x", version="1", protocol="hypoarena")
    client.force_login(researcher)
    for url in (f"/dashboard/benchmarks/{other.pk}/controls/", f"/dashboard/benchmarks/{other.pk}/controls/report/"):
        page = client.get(url)
        assert page.status_code == 404 and "HypoArena" in page.content.decode(), url
    answer = client.get(f"/api/benchmarks/{other.pk}/controls/")
    assert answer.status_code == 404 and "HypoArena" in answer.json()["detail"]
