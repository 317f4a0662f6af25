"""hypoarena_leaderboard --json and /api/benchmarks/<id>/hypoarena/ give one document, read from the stored verdicts
(win rates and consistency checked by hand against helpers.py's lines). Few replicates: these tiny, separated data are
the statistics' slow case, and the bootstrap itself is tested in tests/stats."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from arena.models import Benchmark, JudgeRun
from hypoarena.importing import hypoarena_import, import_files
from tests.clients import client_for

from . import helpers as h

pytestmark = pytest.mark.django_db


@pytest.fixture
def benchmark(tmp_path: Path) -> Benchmark:
    return hypoarena_import(name="arena-x", files=import_files([h.folder(tmp_path)])).benchmark


def command(*args: str) -> str:
    out = StringIO()
    call_command("hypoarena_leaderboard", *args, stdout=out)
    return out.getvalue()


def test_the_command_and_the_api_give_the_same_document_with_hand_checked_figures(researcher, benchmark) -> None:  # noqa: ANN001
    document = json.loads(command("arena-x", "--replicates", "2", "--seed", "3", "--json"))
    api = client_for(researcher).get(reverse("hypoarena:api-leaderboard", args=[benchmark.pk]), {"replicates": 2, "seed": 3})
    assert api.status_code == 200 and api.json() == document
    run = JudgeRun.objects.get(label="r1")
    assert document["run"] == {"id": run.pk, "judge": "judge-x", "label": "r1", "provider": "recorded", "status": "completed"}
    assert document["reference_models"] == ["Ref"] and document["singleton_domains"] == ["safety"]
    pooled = document["leaderboard"]["pooled"]
    # c1 Alpha–Beta: A>B (Alpha .75) and, reversed, B>>A (Alpha 1) → Alpha .875, a consistent two-order match;
    # c1 Ref–Alpha: A=B → .5 each; s1 Ref–Beta, reverse only: A>>B with Beta as A → Beta 1, Ref 0.
    wr = {m: e["wr"] for m, e in pooled["models"].items()}
    assert wr == pytest.approx({"Alpha": (0.875 + 0.5) / 2, "Beta": (0.125 + 1.0) / 2, "Ref": (0.5 + 0.0) / 2})
    assert (pooled["matches"], pooled["two_order_matches"], pooled["one_order_matches"], pooled["consistency"]) == (3, 1, 2, 1.0)
    assert document["rubric"]["run"]["label"] == "rub"
    assert document["rubric"]["domains"]["safety"]["models"]["Ref"]["mean_s"] == pytest.approx(
        (2 + 3 + 4) / 3
    )  # S = q_1 when singleton


def test_the_table_marks_the_reference_and_names_the_run(benchmark) -> None:  # noqa: ANN001
    out = command("arena-x", "--replicates", "1")
    assert out.splitlines()[0] == f"arena-x v1, run {JudgeRun.objects.get(label='r1').pk} (judge-x, r1)"
    assert "Ref *" in out and "* the source-derived Reference" in out


def test_errors_name_the_protocol_and_the_runs(researcher, annotator, benchmark) -> None:  # noqa: ANN001
    lit = Benchmark.objects.create(name="lit")
    with pytest.raises(
        CommandError, match=f"lit v1 is a Lit2Test benchmark; for its leaderboard run: python manage.py leaderboard {lit.pk}"
    ):
        command("lit")
    rubric = JudgeRun.objects.get(label="rub")
    with pytest.raises(
        CommandError, match=rf"run {rubric.pk} is not an arena run of arena-x v1; its arena runs are: \d+ \(judge-x, r1\)"
    ):
        command("arena-x", "--run", str(rubric.pk))
    client = client_for(researcher)
    url = reverse("hypoarena:api-leaderboard", args=[lit.pk])
    assert client.get(url).json() == {
        "detail": f"lit v1 is a Lit2Test benchmark, not a HypoArena one; its leaderboard is at /api/benchmarks/{lit.pk}/leaderboard/"
    }
    url = reverse("hypoarena:api-leaderboard", args=[benchmark.pk])
    assert client.get(url, {"run": rubric.pk}).status_code == 404
    assert client.get(url, {"replicates": 10**9}).status_code == 400
    assert client_for(annotator).get(url).status_code == 403
