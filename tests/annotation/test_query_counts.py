"""The annotator's hot paths cost a fixed number of queries, however large the study (issue 10).

Pinned per request, as Django's test client counts them (transactions inside the test's own transaction
show as SAVEPOINT / RELEASE statements):

- start page: session, user, assignment (with study and label) = 3, and the first of the study in a process
  the annotator's item count (held per study from then on) = 4.
- Start (POST): the same 3 and the conditional update that starts the clock = 4.
- item page: the same 3 and the item with its proposals = 4; the first screen of a context in a process
  also reads the context and its papers (held per study from then on) = 6; a hidden control's also the benchmark's
  participants and judge names, to redact it as it is shown = 2 more.
- draft save: the same 3, then SAVEPOINT, the row lock, the update (which checks for a label), RELEASE = 7.
- submit: the same 3, SAVEPOINT, row lock, draft update, label insert, RELEASE, and the next item (one
  row) = 9.

The bound is checked for every item of a 13-context study (65 items) and of a 2-context one: a query per
paper, per item or per assignment (an N+1) would break it on the larger study, and the largest count seen
must be the same for both.
"""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Assignment
from annotation.services import assignment_open
from arena.blindness import participant_aliases_update
from arena.models import Participant

from .helpers import complete_values, make_study

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
START_PAGE, START, ITEM_COLD, ITEM_WARM, DRAFT, SUBMIT = 4, 4, 6, 4, 7, 9
CONTROL_ALIASES = 2  # a hidden control's page also reads the benchmark's participants and judge names
VERSION = re.compile(r'id="draft-version" name="draft_version" value="([^"]*)"')


def work_through(client: Client, study, annotator, django_assert_max_num_queries) -> dict[str, int]:  # noqa: ANN001
    """Every item of the annotator's study, as a person does it; the most queries each step took."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    most: dict[str, int] = {}

    def step(name: str, bound: int, call):  # noqa: ANN001, ANN202
        with CaptureQueriesContext(connection) as seen, django_assert_max_num_queries(bound):
            response = call()
        most[name] = max(most.get(name, 0), len(seen))
        return response

    for a in Assignment.objects.filter(study=study, annotator=annotator).order_by("position"):
        base = reverse("annotation:item", args=[a.token])
        assert step("start page", START_PAGE, lambda: client.get(base + "start")).status_code == 200  # noqa: B023
        assert step("start", START, lambda: client.post(base + "start")).status_code == 302  # noqa: B023
        # A hidden control is redacted as it is shown, with the benchmark's aliases (participants, judges): 2 more.
        extra, kind = (CONTROL_ALIASES, "control ") if a.item.is_control else (0, "")
        page = step(f"{kind}item page", ITEM_COLD + extra, lambda: client.get(base))  # noqa: B023
        assert page.status_code == 200
        again = step(f"{kind}item page again", ITEM_WARM + extra, lambda: client.get(base))  # noqa: B023
        assert again.status_code == 200
        version = VERSION.search(page.content.decode()).group(1)
        draft = {"screening": "coherent", "draft_version": version}
        saved = step("draft save", DRAFT, lambda: client.post(base + "draft", draft, **HTMX))  # noqa: B023
        assert saved.status_code == 200 and "Draft saved" in saved.content.decode()
        version = VERSION.search(saved.content.decode()).group(1)
        done = step("submit", SUBMIT, lambda: client.post(base + "submit", complete_values() | {"draft_version": version}))  # noqa: B023
        assert done.status_code == 302
    return most


def test_the_annotators_pages_cost_the_same_queries_in_a_study_of_65_items_as_in_one_of_13(
    imported,
    annotator,
    annotator2,
    ann_client,
    bob_client,
    django_assert_max_num_queries,  # noqa: ANN001
) -> None:
    small = make_study(imported, [annotator], n_contexts=2, n_naive_controls=1)
    large = make_study(imported, [annotator2], n_contexts=13, n_naive_controls=2, pairs_per_context=5, seed=8)
    assert (small.items.count(), large.items.count()) == (13, 65)
    small_counts = work_through(ann_client, small, annotator, django_assert_max_num_queries)
    large_counts = work_through(bob_client, large, annotator2, django_assert_max_num_queries)
    for counts in (small_counts, large_counts):  # bounded by the steps; which control is cold depends on the order
        assert counts.pop("control item page") <= ITEM_COLD + CONTROL_ALIASES
        assert counts.pop("control item page again") == ITEM_WARM + CONTROL_ALIASES
    assert (
        large_counts
        == small_counts
        == {
            "start page": START_PAGE,
            "start": START,
            "item page": ITEM_COLD,
            "item page again": ITEM_WARM,
            "draft save": DRAFT,
            "submit": SUBMIT,
        }
    )
    assert not Assignment.objects.filter(study=large, annotator=annotator2, label__isnull=True).exists()


def test_an_alias_edit_reaches_an_item_page_already_shown(imported, annotator, ann_client) -> None:  # noqa: ANN001
    # The proposals are read with every screen (only the context, its papers and the item count are held per
    # study): a researcher's new alias is redacted on the annotator's next load.
    study = make_study(imported, [annotator], n_contexts=13, n_naive_controls=0, pairs_per_context=1, seed=3)

    def proposals(token: str) -> str:  # the papers may cite ChatQA by name: only the proposals are redacted
        html = ann_client.get(reverse("annotation:item", args=[token])).content.decode()
        return html[html.index('<section class="ann-proposals"') :].split("</section>", 1)[0]

    shown = {}
    for a in Assignment.objects.filter(study=study, annotator=annotator):
        assignment_open(assignment=a)  # every item started (the views would take them in the annotator's order)
        shown[a.token] = proposals(a.token)
    naming = [token for token, html in shown.items() if "ChatQA" in html]
    assert naming  # the sample's proposals mention ChatQA (see tests/arena/test_blindness_import.py)
    participant_aliases_update(
        participant=Participant.objects.get(benchmark=imported, name="DeepSeek-V3.2"), text="ChatQA | proper"
    )
    for token in naming:
        html = proposals(token)
        assert "ChatQA" not in html and "[redacted]" in html
