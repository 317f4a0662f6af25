"""The dashboard shows every protocol's benchmarks as that protocol declares (issue 24, item 4): a table per protocol
with the columns its registration names (``ProtocolSpec.figures``), never another protocol's. A HypoArena benchmark
shows its cases and matches, not "0 contexts, 0 pairs"; an Intrinsic one its papers, candidates and scorers, not
"0 participants". The expected figures are those of the hand-made files each protocol's tests import."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from arena.models import Benchmark
from hypoarena.importing import hypoarena_import, import_files
from tests.clients import client_for
from tests.hypoarena import helpers as h
from tests.intrinsic import helpers as ih
from tests.reconstruction import helpers as rh
from tests.toy_protocol.test_toy_protocol import import_toy

pytestmark = pytest.mark.django_db


class _Tables(HTMLParser):
    """Every table of a page by id: its column headings and its body rows by their ``data-benchmark``, each row's
    cells' text (whitespace collapsed)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, dict[str, object]] = {}
        self.table: dict[str, object] | None = None
        self.row: list[str] | None = None
        self.cell: list[str] | None = None
        self.in_head = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "table":
            self.table = self.tables.setdefault(a.get("id", f"table-{len(self.tables)}"), {"headings": [], "rows": {}})
        elif tag == "thead":
            self.in_head = True
        elif tag == "tr" and self.table is not None:
            self.row = []
            if "data-benchmark" in a:
                self.table["rows"][a["data-benchmark"]] = self.row  # type: ignore[index]
        elif tag in ("td", "th") and self.row is not None:
            self.cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self.cell is not None and self.row is not None:
            self.row.append(" ".join("".join(self.cell).split()))
            self.cell = None
        elif tag == "thead" and self.table is not None and self.row is not None:
            self.table["headings"] = self.row
            self.in_head = False
        elif tag == "table":
            self.table = None

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)


def dashboard_tables(html: str) -> dict[str, dict[str, object]]:
    parser = _Tables()
    parser.feed(html)
    return parser.tables


def row(tables: dict[str, dict[str, object]], protocol: str, benchmark: Benchmark) -> dict[str, str]:
    """A benchmark's row in its protocol's table, as {column heading: cell}."""
    table = tables[f"table-{protocol}"]
    return dict(zip(table["headings"], table["rows"][str(benchmark.pk)], strict=True))  # type: ignore[arg-type, index]


@pytest.fixture
def every_protocol(tmp_path: Path, imported: Benchmark) -> dict[str, Benchmark]:
    """A benchmark of each installed protocol, from the hand-made files of its tests (Lit2Test: the release sample)."""
    from reconstruction.importing import import_files as reconstruction_files
    from reconstruction.importing import reconstruction_import

    return {
        "lit2test": imported,
        "hypoarena": hypoarena_import(name="arena-dash", files=import_files([h.folder(tmp_path / "h")])).benchmark,
        "reconstruction": reconstruction_import(
            name="recon-dash", files=reconstruction_files(rh.folder(tmp_path / "r"))
        ).benchmark,
        "intrinsic": ih.make_benchmark(tmp_path),
        "toy_protocol": import_toy(tmp_path),
    }


def test_each_protocol_has_its_own_table_with_its_own_figures(researcher, every_protocol: dict[str, Benchmark]) -> None:  # noqa: ANN001
    page = client_for(researcher).get(reverse("arena:dashboard")).content.decode()
    tables = dashboard_tables(page)
    assert {name for name in tables if name.startswith("table-")} >= {f"table-{p}" for p in every_protocol}

    # The release sample (tests/conftest.py): 200 contexts, 13 with text, 4 models, 1,200 canonical pairs, one run.
    assert row(tables, "lit2test", every_protocol["lit2test"]) == {
        "Benchmark": "lit2test v1",
        "Contexts": "200",
        "With text": "13",
        "Participants": "4",
        "Pairs": "1,200",
        "Judge runs": "1",
        "Generation runs": "0",
        "Canonical judge": "Gemini-3.1-Pro-Preview",
        "Pages": "Leaderboard · Export (.zip)",
    }
    # tests/hypoarena/helpers.py: cases c1, c2 (ops) and s1 (safety); Alpha, Beta and Ref submit to each; three
    # matches per case; the arena verdicts of judge-x "r1" and its rubric run "rub".
    cases = h.cases()
    assert row(tables, "hypoarena", every_protocol["hypoarena"]) == {
        "Benchmark": "arena-dash v1",
        "Domains": str(len({c["domain"] for c in cases})),
        "Cases": str(len(cases)),
        "Models": "3",
        "Submissions": str(len(h.submissions())),
        "Matches": str(3 * len(cases)),
        "Judge runs": "2",
        "Generation runs": "0",
        "Pages": "Leaderboard · Inter-judge agreement",
    }
    # tests/reconstruction/helpers.py: two seeds, one with too few references (not frozen); Alpha's and Beta's five
    # hypotheses each (Beta's fifth invalid, stored all the same); no runs.
    assert row(tables, "reconstruction", every_protocol["reconstruction"]) == {
        "Benchmark": "recon-dash v1",
        "Seed papers": str(len(rh.seeds())),
        "Frozen": "1",
        "Systems": "2",
        "Hypotheses": str(len(rh.hypotheses())),
        "Judge runs": "0",
        "Proposer runs": "0",
        "Swiss selections": "0",
        "Pages": "Open",
    }
    assert row(tables, "intrinsic", every_protocol["intrinsic"]) == {
        "Benchmark": f"{ih.BENCH} v1",
        "Papers": str(len(ih.PAPERS)),
        "Candidates": str(sum(len(p["texts"]) for p in ih.PAPERS)),
        "Scorers": "0",
        "Scoring runs": "0",
        "Judge runs": "0",
        "Pages": "Open",
    }
    assert row(tables, "toy_protocol", every_protocol["toy_protocol"]) == {
        "Benchmark": "toy-bench v1",
        "Items": "12",
        "Judge runs": "0",
        "Pages": "Toy report",
    }
    # Nothing Lit2Test-shaped outside Lit2Test's table.
    for protocol in ("hypoarena", "reconstruction", "intrinsic", "toy_protocol"):
        headings = tables[f"table-{protocol}"]["headings"]
        assert not {"Contexts", "With text", "Pairs", "Canonical judge"} & set(headings), protocol  # type: ignore[arg-type]


def test_a_protocol_without_benchmarks_is_named_with_its_import_command(researcher, imported: Benchmark) -> None:  # noqa: ANN001
    page = client_for(researcher).get(reverse("arena:dashboard")).content.decode()
    assert "table-lit2test" in page and "table-hypoarena" not in page
    empty = page[page.index('id="no-benchmark-yet"') :].split("</p>")[0]
    assert "HypoArena (<code>python manage.py import_hypoarena</code>)" in empty
    assert "Intrinsic scoring (<code>python manage.py import_intrinsic</code>)" in empty


def test_the_dashboard_asks_as_many_queries_for_one_benchmark_of_a_protocol_as_for_three(researcher, tmp_path: Path) -> None:  # noqa: ANN001
    client = client_for(researcher)
    hypoarena_import(name="arena-1", files=import_files([h.folder(tmp_path / "1")]))
    client.get(reverse("arena:dashboard"))  # sessions, caches and the like warmed up

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(reverse("arena:dashboard")).status_code == 200
        return len(captured)

    one = queries()
    for n in (2, 3):
        hypoarena_import(name=f"arena-{n}", files=import_files([h.folder(tmp_path / str(n))]))
    assert queries() == one  # one grouped query per column, whatever the number of benchmarks


def test_a_benchmark_of_a_protocol_no_installed_app_registers_is_listed_by_name(researcher, imported: Benchmark) -> None:  # noqa: ANN001
    Benchmark.objects.create(name="orphan", protocol="uninstalled")  # its app was removed after the import
    page = client_for(researcher).get(reverse("arena:dashboard")).content.decode()
    listed = page[page.index('id="unknown-benchmarks"') :].split("</ul>")[0]
    assert "orphan v1" in listed and "(uninstalled)" in listed and "table-uninstalled" not in page
