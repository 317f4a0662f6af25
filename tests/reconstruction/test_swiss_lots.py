"""A Swiss tournament no vote decided says so (issue 22 item 8). When the candidates read the same once model names
are redacted, or no judge is of another family than both, no vote is cast, every candidate ends on 0 points and the
seeded lot picks the champion: the selection's bracket page, ``reconstruction_swiss --status`` and the report name
each such tournament, say why it had no vote, and mark its champion as drawn by lot, not judged.
"""

from __future__ import annotations

import html
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.urls import reverse

from arena.models import Benchmark
from reconstruction.importing import reconstruction_import
from reconstruction.models import Reference, SwissMatch, SwissSelection, SwissTournament, SwissVote
from reconstruction.swiss import lot_note, selection_create

from . import helpers as h
from .test_runs import five, swiss_rules

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("celery_in_process")]

SAME = (
    "no vote was cast (1 match whose two candidates read the same once model names are redacted, so no judge could "
    "tell them apart)"
)
RECUSED = "no vote was cast (1 match with no judge outside both candidates' model families)"


def alpha_and_beta(tmp_path: Path) -> Benchmark:
    """s1 frozen; five valid hypotheses each for Alpha and Beta. In slot 1 each says the same, but for its own name
    (redacted before any judge reads it); slots 2-5 differ, and J-delta's scripted rules prefer Alpha's."""
    reconstruction_import(
        name="recon-lots",
        files={
            "seeds": h.write(tmp_path / "seeds.jsonl", h.seeds()),
            "references": h.write(tmp_path / "references.jsonl", h.references()),
        },
    )
    benchmark = Benchmark.objects.get(name="recon-lots")
    cite = sorted(Reference.objects.filter(seed__external_id="s1", eligible=True).values_list("anon_id", flat=True))[:1]
    rows = []
    for model in ("Alpha", "Beta"):
        for k, item in enumerate(five(model, cite)["hypotheses"], start=1):
            if k == 1:
                item = {
                    "title": f"{model} reads the gradient as the stabiliser",
                    "summary": f"{model} holds that the strain gradient alone stabilises the cubic phase.",
                    "cites": cite,
                }
            rows.append(
                {
                    "seed_id": "s1",
                    "model": model,
                    "family": model.lower(),
                    "slot": k,
                    "title": item["title"],
                    "summary": item["summary"],
                    "cited": item["cites"],
                }
            )
    labels = [
        {"seed_id": "s1", "model": m, "slot": 1, "judge": "J-x", "judge_family": "x", "run_label": "m1", "label": "no_match"}
        for m in ("Alpha", "Beta")
    ]
    reconstruction_import(
        name="recon-lots",
        files={"hypotheses": h.write(tmp_path / "hypotheses.jsonl", rows), "labels": h.write(tmp_path / "labels.jsonl", labels)},
    )
    return benchmark


def select(benchmark: Benchmark, fake: Any, name: str, judge: str, family: str) -> SwissSelection:  # noqa: ANN401
    selection = selection_create(
        benchmark=benchmark,
        name=name,
        proposers=["Alpha", "Beta"],
        base_url=fake.base_url,
        timeout=5,
        judges=[{"model": judge, "family": family}],
    )
    assert selection.status == SwissSelection.Status.COMPLETED
    return selection


def status(benchmark: Benchmark, selection: SwissSelection) -> tuple[dict[str, Any], str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("reconstruction_swiss", str(benchmark.pk), "--status", str(selection.pk), stdout=out, stderr=err)
    return json.loads(out.getvalue()), err.getvalue()


def text(response: Any) -> str:  # noqa: ANN401
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", response.content.decode())).split())


def test_a_tournament_of_candidates_that_read_the_same_says_its_champion_was_drawn_by_lot(
    tmp_path: Path,
    fake_llm: Any,
    rita_client: Any,  # noqa: ANN401
) -> None:
    benchmark = alpha_and_beta(tmp_path)
    fake_llm.script(replies=swiss_rules("J-delta"))
    selection = select(benchmark, fake_llm, "Sel", "J-delta", "delta")
    slot_1 = SwissTournament.objects.get(selection=selection, slot=1)
    [twin] = SwissMatch.objects.filter(tournament=slot_1, b__isnull=False)
    assert not SwissVote.objects.filter(match=twin).exists()  # never sent to the judge
    assert SwissVote.objects.filter(match__tournament__selection=selection, status="accepted").count() == 4 * 2
    assert slot_1.tie_break["decided_by"] == "lot"

    summary, err = status(benchmark, selection)
    assert summary["drawn_by_lot"] == [{"seed": "s1", "slot": 1, "votes": 0, "why": f"champion drawn by lot: {SAME}"}]
    assert err.strip() == f"Swiss selection {selection.pk}, seed s1 slot 1: champion drawn by lot: {SAME}"

    page = text(rita_client.get(reverse("reconstruction:bracket", args=[benchmark.pk, selection.pk])))
    assert "Champions drawn by lot (1)" in page
    assert f"Seed s1 , slot 1: champion drawn by lot: {SAME}." in page
    assert "no vote: the match whose two candidates read the same once model names are redacted" in page
    assert page.count("(champion drawn by lot") == 1  # slot 1's champion line; slots 2-5 were decided by the votes

    out = io.StringIO()
    call_command("reconstruction_report", str(benchmark.pk), "--json", "--replicates", "50", stdout=out)
    [entry] = json.loads(out.getvalue())["selections"]
    assert (entry["system"], entry["status"], entry["tournaments"], entry["champions"]) == ("Sel", "completed", 5, 5)
    assert entry["drawn_by_lot"] == [{"seed": "s1", "slot": 1, "votes": 0, "why": f"champion drawn by lot: {SAME}"}]
    out = io.StringIO()
    call_command("reconstruction_report", str(benchmark.pk), "--replicates", "50", stdout=out)
    assert "Sel: 1 of 5 champions drawn by lot, not judged (seed s1 slot 1)" in out.getvalue()
    results = text(rita_client.get(reverse("reconstruction:results", args=[benchmark.pk])))
    assert "Sel: 1 of its 5 champions were drawn by lot, not judged ( brackets ): seed s1 slot 1 (no vote cast)." in results


def test_a_selection_whose_only_judge_is_recused_everywhere_says_every_champion_was_drawn_by_lot(
    tmp_path: Path,
    fake_llm: Any,  # noqa: ANN401
) -> None:
    benchmark = alpha_and_beta(tmp_path)
    fake_llm.script(replies=swiss_rules("J-alpha"))
    selection = select(benchmark, fake_llm, "Sel-A", "J-alpha", "alpha")
    assert not SwissVote.objects.exists() and not fake_llm.log()

    summary, err = status(benchmark, selection)
    assert summary["drawn_by_lot"] == [
        {"seed": "s1", "slot": k, "votes": 0, "why": f"champion drawn by lot: {RECUSED}"} for k in range(1, 6)
    ]
    assert len(err.strip().splitlines()) == 5


@pytest.mark.parametrize(
    ("tie_break", "note"),
    [
        ({"decided_by": "points", "tied_on_points": [7], "votes": 4}, ""),
        ({"decided_by": "buchholz", "tied_on_points": [7, 8], "votes": 8}, ""),
        (
            {"decided_by": "lot", "tied_on_points": [7, 8], "votes": 8},
            "champion drawn by lot among 2 candidates tied on points, head-to-head and Buchholz",
        ),
        (
            {
                "decided_by": "lot",
                "tied_on_points": [7, 8, 9],
                "votes": 0,
                "unjudged": {"same_text": [1, 2], "recused": [], "no_valid_vote": [3]},
            },
            "champion drawn by lot: no vote was cast (2 matches whose two candidates read the same once model names are "
            "redacted, so no judge could tell them apart; 1 match with no valid answer from any judge)",
        ),
        # Finished before votes were recorded: the lot is said, its cause is not guessed.
        (
            {"decided_by": "lot", "tied_on_points": [7, 8]},
            "champion drawn by lot among 2 candidates tied on points, head-to-head and Buchholz",
        ),
    ],
)
def test_the_lot_note_says_when_and_why_the_lot_picked_the_champion(tie_break: dict[str, Any], note: str) -> None:
    assert lot_note(SwissTournament(tie_break=tie_break)) == note
