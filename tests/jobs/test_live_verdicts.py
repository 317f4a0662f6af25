"""A run page's verdict list is live (issue 24, item 1): while the run works, the page polls for the verdicts stored
since it was drawn and puts them on top of its first page, newest first, each once; on another page, in another order
or under a filter a later verdict can change, it counts them and offers a reload instead. And run watchers sort,
filter and search it by latency, tokens, cost and answer, each verdict with its tokens and cost (issue 24, "Run
watchers")."""

from __future__ import annotations

import html
import re
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from arena.models import JudgeRun, OrderedJudgment
from jobs.services import judge_run_execute
from tests.clients import client_for

from .helpers import create_running

HTMX = {"HTTP_HX_REQUEST": "true"}


def _poller(page: str) -> str:
    """The opening tag of the list's poller."""
    return re.search(r'<div id="verdict-feed"[^>]*>', page).group(0)


def _next_poll(page: str) -> str:
    return html.unescape(re.search(r'hx-get="([^"]+)"', _poller(page)).group(1))


def _inserted(fragment: str) -> list[int]:
    """The ids of the judgments a poll puts on top of the list, in the order it puts them."""
    if 'hx-swap-oob="afterbegin:#judgment-list"' not in fragment:
        return []
    on_top = fragment.split('hx-swap-oob="afterbegin:#judgment-list"', 1)[1]
    return [int(i) for i in re.findall(r'<article class="card judgment" id="j(\d+)"', on_top)]


def _shown(page: str) -> list[int]:
    return [int(i) for i in re.findall(r'<article class="card judgment" id="j(\d+)"', page)]


@pytest.mark.django_db(transaction=True)
def test_new_judgments_come_on_top_of_the_first_page_once_and_the_polling_stops_when_the_run_settles(
    imported,  # noqa: ANN001
    fake_llm,  # noqa: ANN001
    researcher,  # noqa: ANN001
) -> None:
    run, _ = create_running(imported, fake_llm, select="sample:3")  # 6 ordered tasks, no verdict yet
    client = client_for(researcher)
    page = client.get(reverse("jobs:run", args=[run.pk])).content.decode()
    assert 'hx-trigger="every 2s"' in _poller(page) and 'data-after="0"' in _poller(page)
    assert '<p class="empty" id="judgment-empty">No judgments yet.</p>' in page and _shown(page) == []
    first_poll = _next_poll(page)
    assert "part=new" in first_poll and "after=0" in first_poll

    assert judge_run_execute(run_id=run.pk) == "completed"
    JudgeRun.objects.filter(pk=run.pk).update(status="running")  # as the page saw it: still under way
    newest_first = list(OrderedJudgment.objects.filter(run=run).order_by("-id").values_list("id", flat=True))
    assert len(newest_first) == 6

    fragment = client.get(first_poll, **HTMX).content.decode()
    assert _inserted(fragment) == newest_first
    assert '<p class="muted" id="judgment-count" hx-swap-oob="true">6 judgments.</p>' in fragment
    assert '<p class="empty" id="judgment-empty" hidden hx-swap-oob="true">' in fragment
    assert 'hx-trigger="every 2s"' in _poller(fragment) and f'data-after="{newest_first[0]}"' in _poller(fragment)
    # Each judgment comes with what the page shows of it: its prompt and raw answer.
    assert fragment.count("=== PROPOSAL A ===") == 6 and fragment.count("<summary>Raw answer</summary>") == 6

    # The next poll brings nothing twice.
    second_poll = _next_poll(fragment)
    assert _inserted(client.get(second_poll, **HTMX).content.decode()) == []

    # The run ends: the poll that sees it says so and stops polling.
    JudgeRun.objects.filter(pk=run.pk).update(status="completed")
    last = client.get(second_poll, **HTMX).content.decode()
    assert "hx-get" not in _poller(last) and "hx-trigger" not in _poller(last) and _inserted(last) == []
    page = client.get(reverse("jobs:run", args=[run.pk])).content.decode()
    assert _shown(page) == newest_first and "hx-trigger" not in _poller(page)


@pytest.mark.django_db
def test_elsewhere_new_judgments_are_counted_with_a_reload_link_and_a_burst_past_the_cap_too(imported, researcher) -> None:  # noqa: ANN001
    """The imported run (2,400 judgments) read as if the page had been drawn before its newest ones."""
    run = JudgeRun.objects.get()
    client = client_for(researcher)
    url = reverse("jobs:run", args=[run.pk])
    newest_first = list(OrderedJudgment.objects.filter(run=run).order_by("-id").values_list("id", flat=True))
    page = client.get(url).content.decode()
    assert "hx-get" not in _poller(page) and _shown(page) == newest_first[:25]  # ended: nothing to poll for

    on_top = client.get(url, {"part": "new", "after": newest_first[3]}, **HTMX).content.decode()
    assert _inserted(on_top) == newest_first[:3] and 'id="new-verdicts"' not in on_top

    # Page 2, or another order: the three are counted, the list is left alone, and a link reloads it as it is.
    for params in ({"page": "2"}, {"sort": "slowest"}):
        fragment = client.get(url, params | {"part": "new", "after": newest_first[3]}, **HTMX).content.decode()
        assert _inserted(fragment) == [], params
        notice = re.search(r'<p class="warn" id="new-verdicts" role="status">(.*?)</p>', fragment, re.S).group(1)
        assert notice.startswith("3 new verdicts for this list since it was shown"), notice
        key, value = next(iter(params.items()))
        assert f'href="{url}?{key}={value}#judgments">reload the list</a>' in notice

    # A stability filter: a new judgment can move an older one into it, so it is counted too: the three newest
    # judgments whose pair is order-stable (both orders accepted, naming the same model), counted here.
    verdicts: dict[int, dict[str, int | None]] = {}
    for pair_id, order, winner_id in OrderedJudgment.objects.filter(run=run, status="accepted").values_list(
        "pair_id", "order", "winner_id"
    ):
        verdicts.setdefault(pair_id, {})[order] = winner_id
    stable = {p for p, v in verdicts.items() if len(v) == 2 and v["original"] is not None and v["original"] == v["reverse"]}
    expected = sum(OrderedJudgment.objects.get(pk=j).pair_id in stable for j in newest_first[:3])
    fragment = client.get(url, {"stability": "stable", "part": "new", "after": newest_first[3]}, **HTMX).content.decode()
    assert _inserted(fragment) == []
    if expected:
        assert f"{expected} new verdict" in fragment
    else:
        assert 'id="new-verdicts"' not in fragment

    # More than fifty at once (a tab left in the background): counted, not fifty-one articles swapped in.
    burst = client.get(url, {"part": "new", "after": newest_first[51]}, **HTMX).content.decode()
    assert _inserted(burst) == [] and "51 new verdicts for this list" in burst
    # A page's own request without htmx, or with a parameter that is not a number, is the page.
    assert _shown(client.get(url, {"part": "new", "after": "x"}, **HTMX).content.decode()) == newest_first[:25]


@pytest.mark.django_db(transaction=True)
def test_run_watchers_sort_filter_and_search_by_latency_tokens_cost_and_answer(imported, fake_llm, researcher) -> None:  # noqa: ANN001
    run, _ = create_running(
        imported, fake_llm, select="sample:2", price_per_1k_prompt=1.0, price_per_1k_completion=3.0
    )  # $1 per 1,000 tokens in, $3 per 1,000 out
    assert judge_run_execute(run_id=run.pk) == "completed"
    j0, j1, j2, j3 = OrderedJudgment.objects.filter(run=run).order_by("id").select_related("pair__context")
    # Latency, tokens in and out, and what they cost at the run's prices, worked out by hand.
    figures = {j0: (0.5, 100, 10), j1: (2.0, 50, 200), j2: (1.0, 400, 20), j3: (None, 10, 1)}
    for j, (latency, tokens_in, tokens_out) in figures.items():
        OrderedJudgment.objects.filter(pk=j.pk).update(
            latency_seconds=latency, prompt_tokens=tokens_in, completion_tokens=tokens_out
        )
    OrderedJudgment.objects.filter(pk=j3.pk).update(status="invalid", winner=None, is_tie=False, verdict=None)
    # cost: j0 0.1 + 0.03 = $0.13; j1 0.05 + 0.6 = $0.65; j2 0.4 + 0.06 = $0.46; j3 0.01 + 0.003 = $0.013
    client = client_for(researcher)
    url = reverse("jobs:run", args=[run.pk])

    def shown(**params: str) -> list[int]:
        return _shown(client.get(url, params).content.decode())

    assert shown() == [j3.pk, j2.pk, j1.pk, j0.pk]  # newest first
    assert shown(sort="oldest") == [j0.pk, j1.pk, j2.pk, j3.pk]
    assert shown(sort="slowest") == [j1.pk, j2.pk, j0.pk, j3.pk]  # no latency: last
    assert shown(sort="fastest") == [j0.pk, j2.pk, j1.pk, j3.pk]
    assert shown(sort="tokens") == [j2.pk, j1.pk, j0.pk, j3.pk]  # 420, 250, 110, 11
    assert shown(sort="cost") == [j1.pk, j2.pk, j0.pk, j3.pk]  # 0.65, 0.46, 0.13, 0.013
    assert shown(slower_than="0.9", sort="oldest") == [j1.pk, j2.pk]
    assert shown(more_tokens_than="200", sort="oldest") == [j1.pk, j2.pk]
    assert shown(costlier_than="0.5") == [j1.pk]
    assert shown(status="invalid") == [j3.pk] and shown(status="accepted", sort="oldest") == [j0.pk, j1.pk, j2.pk]
    assert shown(slower_than="soon") == shown()  # a value that is not a number does not filter
    said = dict(OrderedJudgment.objects.filter(run=run).values_list("pk", "verdict"))
    for verdict in ("A", "B"):
        assert shown(verdict=verdict) == [pk for pk in (j3.pk, j2.pk, j1.pk, j0.pk) if said[pk] == verdict], verdict

    # Search: a context's id finds the judgments of its pairs (and of any context whose texts name it).
    context = j0.pair.context
    expected = [
        j.pk
        for j in sorted(figures, key=lambda j: -j.pk)
        if context.external_id.lower()
        in " ".join(
            [j.pair.context.external_id, j.pair.context.field, j.pair.context.research_context, j.pair.context.open_problem]
        ).lower()
    ]
    assert j0.pk in expected and shown(q=context.external_id) == expected
    assert shown(q="no context or answer says this 7f3a") == []

    # Each judgment shows its latency, tokens and cost.
    page = client.get(url).content.decode()
    article = page[page.index(f'id="j{j1.pk}"') :].split("</article>")[0]
    assert '<span class="latency">2.00 s</span>' in article and '<span class="tokens">50 + 200 tokens</span>' in article
    assert '<span class="cost">$0.65000</span>' in article
    article = page[page.index(f'id="j{j3.pk}"') :].split("</article>")[0]
    assert 'class="latency"' not in article and '<span class="cost">$0.01300</span>' in article
    assert 'name="costlier_than"' in page and '<option value="cost">' in page


@pytest.mark.django_db
def test_an_unpriced_run_offers_no_cost_filter_or_order(imported, researcher) -> None:  # noqa: ANN001
    page = client_for(researcher).get(reverse("jobs:run", args=[JudgeRun.objects.get().pk])).content.decode()
    assert 'name="costlier_than"' not in page and '<option value="cost">' not in page and 'class="cost"' not in page
    assert 'name="slower_than"' in page and 'name="more_tokens_than"' in page and 'name="q"' in page


@pytest.mark.django_db
def test_the_page_of_another_kind_of_judge_run_is_live_too(researcher) -> None:  # noqa: ANN001
    """HypoArena's arena verdicts, on the engine's generic run page: new rows come on top of its table."""
    from hypoarena.models import ArenaVerdict

    call_command("demo_hypoarena", "--cases", "2", stdout=StringIO())
    run = JudgeRun.objects.filter(subjects="hypoarena").first()
    client = client_for(researcher)
    url = reverse("jobs:run", args=[run.pk])
    newest_first = list(ArenaVerdict.objects.filter(run=run).order_by("-id"))
    assert len(newest_first) > 3
    page = client.get(url).content.decode()
    assert '<tbody id="judgment-list">' in page and f'data-after="{newest_first[0].pk}"' in _poller(page)
    fragment = client.get(url, {"part": "new", "after": newest_first[3].pk}, **HTMX).content.decode()
    # Rows out of band inside a <template>: the only way an HTML parser keeps a <tr> outside a table.
    on_top = re.search(r'<template><tbody hx-swap-oob="afterbegin:#judgment-list">(.*?)</tbody></template>', fragment, re.S)
    rows = re.findall(r'<tr data-status="(\w+)">', on_top.group(1))
    assert rows == [v.status for v in newest_first[:3]]
    assert f'id="judgment-count" hx-swap-oob="true">{len(newest_first)} answers.' in fragment
    # Searched by what was judged (the match's public id), filtered by what the judge said.
    one = next(v for v in newest_first if v.status == "accepted")
    page = client.get(url, {"q": one.match.public_id}).content.decode()
    expected = ArenaVerdict.objects.filter(run=run, match__public_id__icontains=one.match.public_id).count()
    assert page.count('<tr data-status="') == expected >= 1 and f'id="judgment-count">{expected} answer' in page
    page = client.get(url, {"verdict": one.verdict}).content.decode()
    expected = ArenaVerdict.objects.filter(run=run, verdict=one.verdict).count()
    assert f'id="judgment-count">{expected} answer' in page and page.count(
        f"accepted: {one.verdict}".replace(">", "&gt;")
    ) == min(25, expected)
