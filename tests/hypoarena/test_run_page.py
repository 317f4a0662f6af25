"""The run page of a HypoArena run (arena verdicts, rubric answers) lists what each answer judged, through the
judging task kind's own models: the shared run page is not Lit2Test's pairs only."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from arena.models import JudgeRun
from hypoarena.models import ArenaVerdict

pytestmark = pytest.mark.django_db


def test_an_arena_run_and_a_rubric_run_have_run_pages(client, researcher) -> None:  # noqa: ANN001
    call_command("demo_hypoarena", "--cases", "2", stdout=StringIO())
    client.force_login(researcher)
    arena = JudgeRun.objects.filter(subjects="hypoarena").first()
    rubric = JudgeRun.objects.filter(subjects="hypoarena_rubric").first()
    assert arena is not None and rubric is not None
    page = client.get(f"/dashboard/runs/{arena.pk}/")
    html = page.content.decode()
    assert page.status_code == 200
    n = ArenaVerdict.objects.filter(run=arena).count()
    assert f"{n} answer" in html and n > 0
    one = ArenaVerdict.objects.filter(run=arena, status="accepted").order_by("match_id", "order").first()
    assert f"accepted: {one.verdict}".replace(">", "&gt;") in html
    assert "Leaderboard of this run" not in html
    page = client.get(f"/dashboard/runs/{rubric.pk}/")
    assert page.status_code == 200 and "HypoArena rubric scores" in page.content.decode()
