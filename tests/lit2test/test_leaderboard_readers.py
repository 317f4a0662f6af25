"""What leaderboard readers expect (issue 24, "Leaderboard readers (Chatbot Arena)"): in Table 1 each model's rank range
over the bootstrap replicates and its number of comparisons; a switch between the log-ability and the 1500 scale (page,
``--scale``, API); a "last updated" line; a heat map of the comparisons per pair. Every number the page prints is the
command's ``--json``, on either scale."""

from __future__ import annotations

import json
import math
from html.parser import HTMLParser
from io import StringIO

import pytest
from django.core.management import call_command
from django.db.models import Max
from django.test import Client
from django.urls import reverse

from arena.models import JudgeRun, OrderedJudgment
from tests.clients import client_for

pytestmark = pytest.mark.django_db

MINUS = "\u2212"


class _Tables(HTMLParser):
    """Each table's rows by the table's id: the text of every header and data cell, and each cell's attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[tuple[str, dict[str, str]]]]] = {}
        self.times: list[tuple[dict[str, str], str]] = []
        self._table: str | None = None
        self._cell: list[str] | None = None
        self._attrs: dict[str, str] = {}
        self._time: dict[str, str] | None = None
        self._time_text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {k: v or "" for k, v in attrs}
        if tag == "table" and "id" in found:
            self._table = found["id"]
            self.tables[self._table] = []
        elif tag == "tr" and self._table:
            self.tables[self._table].append([])
        elif tag in ("td", "th") and self._table:
            self._cell, self._attrs = [], found
        elif tag == "time":
            self._time, self._time_text = found, []

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._table = None
        elif tag in ("td", "th") and self._table and self._cell is not None:
            self.tables[self._table][-1].append((" ".join("".join(self._cell).split()), self._attrs))
            self._cell = None
        elif tag == "time" and self._time is not None:
            self.times.append((self._time, "".join(self._time_text)))
            self._time = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data if not self._cell or data.startswith(" ") else " " + data)
        if self._time is not None:
            self._time_text.append(data)


def parse(body: str) -> _Tables:
    parser = _Tables()
    parser.feed(body)
    return parser


def page(client: Client, benchmark, **params: object) -> str:  # noqa: ANN001
    response = client.get(reverse("lit2test:leaderboard", args=[benchmark.pk]), params)
    assert response.status_code == 200, response.status_code
    return response.content.decode()


def command_json(benchmark, *args: str) -> dict:  # noqa: ANN001
    out = StringIO()
    call_command("leaderboard", str(benchmark.pk), "--json", *args, stdout=out)
    return json.loads(out.getvalue())


def written(value: float, scale: str) -> str:
    """A strength as a reader expects it printed: two decimals with a real minus sign, or a whole rating point."""
    text = f"{value:.0f}" if scale == "elo" else f"{value:.2f}"
    return text.replace("-", MINUS)


def columns(rows: list[list[tuple[str, dict[str, str]]]]) -> list[str]:
    return [text for text, _ in rows[0]]


@pytest.fixture
def board(imported) -> dict[str, dict]:  # noqa: ANN001
    """The command's JSON on both scales (the release's canonical run, the page's 10,000 replicates)."""
    return {scale: command_json(imported, "--scale", scale) for scale in ("log-ability", "elo")}


@pytest.mark.parametrize("scale", ["log-ability", "elo"])
def test_every_figure_of_table_1_and_of_the_comparisons_map_is_the_commands_json(
    imported, rita_client, board, scale: str
) -> None:  # noqa: ANN001
    doc = board[scale]
    tables = parse(page(rita_client, imported, scale=scale))
    head, *rows = tables.tables["table1"]
    names = [text for text, _ in head]
    strength_at, range_at, judgments_at = 2, names.index("Rank range"), names.index("Judgments")
    assert len(rows) == len(doc["models"]) == 4
    for row, model in zip(rows, doc["models"], strict=True):
        cells = [text for text, _ in row]
        assert cells[1] == model
        fit = doc["bt"]["ordered"][model]
        assert (
            cells[strength_at]
            == f"{written(fit['strength'], scale)} [{written(fit['ci'][0], scale)}, {written(fit['ci'][1], scale)}]"
        )
        lo, hi = doc["bootstrap"]["rank_intervals"][model]
        assert cells[range_at] == f"{lo}–{hi}"
        assert cells[judgments_at] == f"{doc['comparisons']['models'][model]:,}"

    head, *rows = tables.tables["comparisons-map"]
    assert columns([head]) == ["Model", *(f"vs {m}" for m in doc["models"]), "All"]
    pairs = {}
    for p in doc["comparisons"]["pairs"]:
        pairs[(p["a"], p["b"])] = (p["judgments"], p["a_share"])
        pairs[(p["b"], p["a"])] = (p["judgments"], 1 - p["a_share"])
    for row, model in zip(rows, doc["models"], strict=True):
        assert row[0][0] == model and row[0][1].get("scope") == "row"
        for (text, attrs), other in zip(row[1:-1], doc["models"], strict=True):
            if other == model:
                assert text == "—"
                continue
            n, share = pairs[(model, other)]
            assert text == f"{n:,} wins {share:.2f}", (model, other)
            assert attrs["data-judgments"] == str(n)
        assert row[-1][0] == f"{doc['comparisons']['models'][model]:,}"


def test_the_release_reads_as_counted_by_hand(imported, rita_client, board) -> None:  # noqa: ANN001
    # The release's 1,200 cases are 200 per pair of its 4 models, each judged in both orders: 400 judgments a pair, and
    # each model is in 3 pairs, 600 cases (424–49–127 for GPT 5.2), 1,200 judgments.
    doc = board["log-ability"]
    assert doc["comparisons"]["unit"] == "ordered judgment"
    assert doc["comparisons"]["models"] == dict.fromkeys(doc["models"], 1200)
    assert {p["judgments"] for p in doc["comparisons"]["pairs"]} == {400} and len(doc["comparisons"]["pairs"]) == 6
    # GPT 5.2 won 252 and lost 148 of its 400 ordered judgments against Claude-Sonnet-4.6 (no TIE): 0.63.
    first = next(p for p in doc["comparisons"]["pairs"] if {p["a"], p["b"]} == {"GPT 5.2", "Claude-Sonnet-4.6"})
    assert (first["a"], first["a_share"]) == ("GPT 5.2", 0.63)
    # GPT 5.2 is first in every replicate (its rank probabilities are 1, 0, 0, 0), DeepSeek last.
    assert doc["bootstrap"]["rank_intervals"]["GPT 5.2"] == [1, 1]
    assert doc["bootstrap"]["rank_intervals"]["DeepSeek-V3.2"] == [4, 4]
    # On the 1500 scale GPT 5.2's 1.26505 is 1500 + 400 · 1.26505 / ln 10 = 1719.76.
    elo = board["elo"]
    assert elo["scale"]["name"] == "elo" and doc["scale"]["name"] == "log-ability"
    assert elo["bt"]["ordered"]["GPT 5.2"]["strength"] == pytest.approx(1500 + 400 * 1.26505 / math.log(10), abs=0.01)
    assert elo["bootstrap"]["rank_intervals"] == doc["bootstrap"]["rank_intervals"]
    table = parse(page(rita_client, imported, scale="elo")).tables["table1"]
    assert table[0][2][0].startswith("Rating, 1500 scale (ordered)")
    assert table[1][2][0].startswith("1720 [") and table[1][1][0] == "GPT 5.2"


def test_the_last_updated_line_is_the_newest_stored_verdict(imported, rita_client, board) -> None:  # noqa: ANN001
    run = JudgeRun.objects.get(benchmark=imported)
    newest = OrderedJudgment.objects.filter(run=run, status="accepted").aggregate(t=Max("created_at"))["t"]
    assert board["log-ability"]["last_updated"] == {"judgment_stored_at": newest.isoformat(), "runs": [run.pk]}
    body = page(rita_client, imported)
    times = parse(body).times
    assert [attrs["datetime"] for attrs, _ in times] == [newest.isoformat()]
    assert f"(run #{run.pk})" in body.split('id="last-updated"')[1].split("</p>")[0]
    # A new verdict moves it (the run's change counter is the cache key).
    judgment = OrderedJudgment.objects.filter(run=run, status="accepted").order_by("pk").first()
    OrderedJudgment.objects.filter(pk=judgment.pk).delete()
    judgment.pk = None
    judgment.save()
    later = command_json(imported, "--replicates", "20")["last_updated"]["judgment_stored_at"]
    assert later == judgment.created_at.isoformat() and later > newest.isoformat()


def test_the_scale_switch_is_a_pair_of_links_keeping_the_other_choices(imported, rita_client) -> None:  # noqa: ANN001
    body = page(rita_client, imported, fit="stable", digits="3", scale="elo")
    switch = body.split('id="scale-switch"')[1].split("</nav>")[0]
    assert '<nav class="scale-switch" id="scale-switch" aria-label="Rating scale">' in body
    links = {
        part.split('data-scale="')[1].split('"')[0]: part.split('href="')[1].split('"')[0] for part in switch.split("<a ")[1:]
    }
    assert set(links) == {"log-ability", "elo"}
    for scale, href in links.items():
        assert "fit=stable" in href and "digits=3" in href and f"scale={scale}" in href
    assert 'data-scale="elo" aria-current="true"' in switch and 'data-scale="log-ability" aria-current' not in switch
    # The form's selectors keep the scale, and so does the live board's poll.
    assert '<input type="hidden" name="scale" value="elo">' in body
    # Three decimals of log-ability are one of rating: the 1500 scale gives one decimal then.
    assert parse(body).tables["table1"][1][2][0].split(" [")[0].count(".") == 1
    # An unknown scale is the default one.
    assert 'data-scale="log-ability"' in page(rita_client, imported, scale="kelvin").split('id="board"')[1][:400]


def test_the_api_answers_on_the_scale_asked_and_refuses_another(imported, rita_client, board) -> None:  # noqa: ANN001
    url = reverse("lit2test:api-leaderboard", args=[imported.pk])
    assert rita_client.get(url, {"scale": "elo"}).json() == board["elo"]
    assert rita_client.get(url).json() == board["log-ability"]
    refused = rita_client.get(url, {"scale": "kelvin"})
    assert refused.status_code == 400 and "scale" in refused.json()


def test_the_text_report_prints_rank_ranges_comparisons_the_scale_and_the_last_update(imported, board) -> None:  # noqa: ANN001
    out = StringIO()
    call_command("leaderboard", str(imported.pk), "--scale", "elo", stdout=out)
    lines = out.getvalue().splitlines()
    assert any(line.startswith("Scale: Elo-style rating 1500") for line in lines)
    stored = board["elo"]["last_updated"]["judgment_stored_at"]
    assert f"Last updated: newest verdict stored {stored} (run #{board['elo']['run']['id']})" in lines
    ranges = lines.index("Rank ranges (95% of the case-bootstrap replicates) and comparisons (ordered judgments)")
    assert lines[ranges + 3].split() == ["1", "GPT", "5.2", "1–1", "1,200"]
    table = lines[lines.index("Table 1 (ordered fit, as the paper's Table 1 prints it)") + 1 :][:3]
    assert table[0].split()[2:5] == ["rating", "[95%", "CI]"] and table[2].split()[3] == "1720"


def test_the_comparisons_map_reads_the_document_and_queries_nothing(django_assert_num_queries) -> None:  # noqa: ANN001
    from lit2test.views import comparison_map

    # Forty models, every pair compared: the map is read from the document alone, whatever the number of cells.
    models = [f"M{i:02d}" for i in range(40)]
    pairs = [
        {"a": a, "b": b, "judgments": 2 * (i + j), "a_wins": i + j, "b_wins": i + j, "ties": 0, "a_share": 0.5}
        for i, a in enumerate(models)
        for j, b in enumerate(models)
        if i < j
    ]
    doc = {"models": models, "comparisons": {"unit": "ordered judgment", "models": dict.fromkeys(models, 0), "pairs": pairs}}
    with django_assert_num_queries(0):
        shown = comparison_map(doc)
    assert len(shown["rows"]) == 40 and all(len(r["cells"]) == 40 for r in shown["rows"])
    # The largest pair (M38–M39, 2 × 77 judgments) is the darkest shade, a pair with none the lightest.
    assert shown["largest"] == 154
    assert shown["rows"][39]["cells"][38] == {"model": "M38", "judgments": 154, "share": 0.5, "shade": 9}
    assert shown["rows"][0]["cells"][1]["shade"] == 0 and shown["rows"][0]["cells"][1]["judgments"] == 2


def test_only_researchers_see_the_scales(imported, annotator, client) -> None:  # noqa: ANN001
    url = reverse("lit2test:leaderboard", args=[imported.pk])
    assert client_for(annotator).get(url, {"scale": "elo"}).status_code == 403
    assert client.get(url, {"scale": "elo"}).status_code == 302
    assert client_for(annotator).get(reverse("lit2test:api-leaderboard", args=[imported.pk]), {"scale": "elo"}).status_code == 403
