"""The researchers' review pages of control variants (issue 11: "review, edit and reject variants on a page before
they are judged"): who may open them, the list's filters and pages, and decisions and edits through the form."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse
from django.utils.html import escape

from controls.models import ControlVariant
from controls.services import controls_generate
from tests.clients import client_for

from .helpers import SIX, TARGET_FIELD

pytestmark = pytest.mark.django_db


@pytest.fixture
def made(imported):  # noqa: ANN001, ANN201
    """Two cases of template variants: 6 clear, 2 rendering, 2 falsifier_off (all stored approved)."""
    controls_generate(benchmark=imported, kinds=["clear", "rendering", "falsifier_off"], contexts=2, seed=5)
    return imported


def listed(html: str) -> list[tuple[str, str, str]]:
    """(control id, kind, status) of each row of the list."""
    return re.findall(r'<tr data-control="([^"]+)" data-kind="([^"]+)" data-status="([^"]+)">', html)


def field_errors(html: str, name: str) -> str:
    """The text of the error list rendered in the row of field ``name``."""
    row = re.search(rf'<tr data-field="{name}"[^>]*>(.*?)</tr>', html, re.S).group(1)
    found = re.search(r'<ul class="errorlist"[^>]*>(.*?)</ul>', row, re.S)
    return re.sub(r"<[^>]+>", "", found.group(1)) if found else ""


def form_data(variant: ControlVariant, action: str, **edits: str) -> dict[str, str]:
    """What the browser posts: every textarea as shown (with the browser's CRLF line ends), and the button."""
    if variant.kind == "rendering":
        data = {"prose": variant.prose.replace("\n", "\r\n")}
    else:
        data = {name: variant.content[name].replace("\n", "\r\n") for name in SIX}
    return data | edits | {"action": action}


# ------------------------------------------------------------------ who may open them


def test_only_researchers_open_the_pages_others_get_what_other_dashboard_pages_give(
    made, researcher, annotator, outsider
) -> None:  # noqa: ANN001
    variant = ControlVariant.objects.first()
    urls = [reverse("controls:list", args=[made.pk]), reverse("controls:variant", args=[variant.pk])]
    for url in urls:
        assert client_for(researcher).get(url).status_code == 200, url
        for user in (annotator, outsider):
            assert client_for(user).get(url).status_code == 403, (url, user)
            assert client_for(user).get(reverse("arena:benchmark", args=[made.pk])).status_code == 403  # the same as there
        anonymous = Client().get(url)
        assert anonymous.status_code == 302 and anonymous["Location"] == f"{reverse('login')}?next={url}"
    # A decision is a researcher's only: nothing changes for the others.
    for client in (client_for(annotator), Client()):
        response = client.post(urls[1], {"action": "reject"})
        assert response.status_code in (302, 403)
    variant.refresh_from_db()
    assert variant.status == "approved" and variant.reviewed_at is None


def test_wrong_methods_are_refused(made, rita_client) -> None:  # noqa: ANN001
    variant = ControlVariant.objects.first()
    assert rita_client.post(reverse("controls:list", args=[made.pk])).status_code == 405
    assert rita_client.put(reverse("controls:variant", args=[variant.pk])).status_code == 405
    assert rita_client.delete(reverse("controls:variant", args=[variant.pk])).status_code == 405
    assert ControlVariant.objects.filter(pk=variant.pk).exists()


def test_an_unknown_or_deleted_variant_or_benchmark_is_404(made, rita_client) -> None:  # noqa: ANN001
    variant = ControlVariant.objects.first()
    url = reverse("controls:variant", args=[variant.pk])
    variant.delete()  # a stale link: the page was opened before the variant went away
    assert rita_client.get(url).status_code == 404
    assert rita_client.post(url, {"action": "approve"}).status_code == 404
    assert rita_client.get(reverse("controls:variant", args=[10**9])).status_code == 404
    assert rita_client.get(reverse("controls:list", args=[10**9])).status_code == 404


def test_the_benchmark_page_links_the_list(made, rita_client) -> None:  # noqa: ANN001
    html = rita_client.get(reverse("arena:benchmark", args=[made.pk])).content.decode()
    assert f'href="{reverse("controls:list", args=[made.pk])}"' in html


# ------------------------------------------------------------------ the list


def test_the_list_shows_every_status_and_filters_by_kind_and_status(made, rita_client) -> None:  # noqa: ANN001
    url = reverse("controls:list", args=[made.pk])
    rendering = ControlVariant.objects.filter(kind="rendering").order_by("control_id")
    rendering.filter(pk=rendering[0].pk).update(status="rejected")
    ControlVariant.objects.filter(kind="clear", target="grounding").update(status="draft")

    rows = listed(rita_client.get(url).content.decode())
    assert len(rows) == 10 and [r[0] for r in rows] == sorted(r[0] for r in rows)
    assert sorted({r[1] for r in rows}) == ["clear", "falsifier_off", "rendering"]

    assert {r[1] for r in listed(rita_client.get(url, {"kind": "clear"}).content.decode())} == {"clear"}
    assert len(listed(rita_client.get(url, {"kind": "clear"}).content.decode())) == 6
    drafts = listed(rita_client.get(url, {"status": "draft"}).content.decode())
    assert sorted(r[0] for r in drafts) == sorted(
        ControlVariant.objects.filter(target="grounding").values_list("control_id", flat=True)
    )
    both = listed(rita_client.get(url, {"kind": "rendering", "status": "rejected"}).content.decode())
    assert both == [(rendering[0].control_id, "rendering", "rejected")]
    assert listed(rita_client.get(url, {"kind": "naive"}).content.decode()) == []

    html = rita_client.get(url, {"kind": "no-such-kind"}).content.decode()
    assert "Select a valid choice" in html and len(listed(html)) == 10  # reported, not applied
    row = re.search(r'<tr data-control="[^"]+__clear__decisive_metric".*?</tr>', html, re.S).group(0)
    assert "decisive_metric" in row and "deterministic template: clear-decisive-metric v1" in row


def test_the_list_is_paginated_beyond_fifty(imported, rita_client) -> None:  # noqa: ANN001
    controls_generate(benchmark=imported, kinds=["clear", "rendering", "falsifier_off", "naive"], contexts=9, seed=0)
    assert ControlVariant.objects.count() == 54
    url = reverse("controls:list", args=[imported.pk])
    first, second = rita_client.get(url).content.decode(), rita_client.get(url, {"page": 2}).content.decode()
    assert len(listed(first)) == 50 and len(listed(second)) == 4
    assert "page 1 of 2" in first and "?page=2" in first
    assert {r[0] for r in listed(first)}.isdisjoint(r[0] for r in listed(second))
    kept = rita_client.get(url, {"status": "approved"}).content.decode()  # the pager's links keep the filters
    assert len(listed(kept)) == 50 and "?status=approved&amp;page=2" in kept
    clear = listed(rita_client.get(url, {"kind": "clear", "page": 2}).content.decode())  # 27: one page, the last one shown
    assert len(clear) == 27 and {r[1] for r in clear} == {"clear"}


# ------------------------------------------------------------------ the detail page and decisions


def test_the_detail_page_shows_source_beside_variant_with_the_changed_field_marked(made, rita_client) -> None:  # noqa: ANN001
    variant = ControlVariant.objects.filter(kind="clear", target="decisive_metric").first()
    html = rita_client.get(reverse("controls:variant", args=[variant.pk])).content.decode()
    changed = re.findall(r'<tr data-field="([a-z_]+)" class="changed">', html)
    assert changed == ["decisive_metric"]
    assert len(re.findall(r"<textarea ", html)) == 6 and 'name="csrfmiddlewaretoken"' in html
    assert 'value="approve"' in html and 'value="reject"' in html
    row = re.search(r'<tr data-field="hypothesis".*?</tr>', html, re.S).group(0)
    assert row.count(escape(variant.source.content["hypothesis"])) == 2  # the source's cell and the variant's textarea

    prose = ControlVariant.objects.filter(kind="rendering").first()
    html = rita_client.get(reverse("controls:variant", args=[prose.pk])).content.decode()
    assert len(re.findall(r"<textarea ", html)) == 1 and 'name="prose"' in html and 'class="changed"' not in html


def test_approve_and_reject_change_the_status_and_redirect_with_a_message(made, rita_client) -> None:  # noqa: ANN001
    variant = ControlVariant.objects.filter(kind="falsifier_off").first()
    url = reverse("controls:variant", args=[variant.pk])
    stored = dict(variant.content)

    response = rita_client.post(url, form_data(variant, "reject", hypothesis="typed, then rejected"))
    assert response.status_code == 302 and response["Location"] == url
    variant.refresh_from_db()
    assert variant.status == "rejected" and variant.reviewed_at is not None and variant.content == stored  # reject keeps the text
    page = rita_client.get(url).content.decode()
    assert "rejected: no judge run includes it" in page

    response = rita_client.post(url, form_data(variant, "approve"), follow=True)
    variant.refresh_from_db()
    assert variant.status == "approved" and variant.content == stored  # CRLF round trip is no edit
    assert "approved: judge runs with controls include it" in response.content.decode()
    assert "with your edits" not in response.content.decode()


def test_a_valid_edit_of_the_target_field_is_saved(made, rita_client) -> None:  # noqa: ANN001
    variant = ControlVariant.objects.filter(kind="clear", target="grounding").first()
    ControlVariant.objects.filter(pk=variant.pk).update(status="draft")
    url = reverse("controls:variant", args=[variant.pk])
    sharper = "No prior work exists on this,\r\nso nothing needs citing."

    response = rita_client.post(url, form_data(variant, "approve", literature_gap=sharper), follow=True)

    assert response.redirect_chain == [(url, 302)]
    assert "approved with your edits" in response.content.decode()
    stored = ControlVariant.objects.get(pk=variant.pk)
    assert stored.status == "approved"
    assert stored.content == variant.content | {"literature_gap": "No prior work exists on this,\nso nothing needs citing."}


def test_an_edited_prose_rendering_is_saved(made, rita_client) -> None:  # noqa: ANN001
    variant = ControlVariant.objects.filter(kind="rendering").first()
    url = reverse("controls:variant", args=[variant.pk])
    rita_client.post(url, form_data(variant, "approve", prose=variant.prose + "\n\nIn short, that is the plan."))
    assert ControlVariant.objects.get(pk=variant.pk).prose.endswith("that is the plan.")
    response = rita_client.post(url, form_data(variant, "approve", prose="   "))
    assert response.status_code == 200 and "empty" in response.content.decode()
    assert ControlVariant.objects.get(pk=variant.pk).prose.endswith("that is the plan.")


@pytest.mark.parametrize(("target", "other"), [("falsifiability", "hypothesis"), ("grounding", "decisive_metric")])
def test_an_edit_off_the_target_is_refused_beside_its_field_and_nothing_is_stored(
    made, rita_client, target: str, other: str
) -> None:  # noqa: ANN001
    variant = ControlVariant.objects.filter(kind="clear", target=target).first()
    ControlVariant.objects.filter(pk=variant.pk).update(status="draft")
    before = ControlVariant.objects.get(pk=variant.pk)
    url = reverse("controls:variant", args=[variant.pk])
    changed = TARGET_FIELD[target]

    response = rita_client.post(url, form_data(variant, "approve", **{other: "A different text.", changed: "A new defect."}))

    html = response.content.decode()
    assert response.status_code == 200  # the page again, not a redirect
    assert field_errors(html, other) == f"differs from the source proposal; a clear variant changes only {changed}"
    assert all(field_errors(html, name) == "" for name in SIX if name != other)
    assert "A different text." in html  # what was typed stays in the form
    after = ControlVariant.objects.get(pk=variant.pk)
    assert (after.content, after.status, after.reviewed_at) == (before.content, "draft", None)


def test_an_edit_that_restores_the_source_text_of_the_target_is_refused(made, rita_client) -> None:  # noqa: ANN001
    variant = ControlVariant.objects.filter(kind="clear", target="decisive_metric").first()
    url = reverse("controls:variant", args=[variant.pk])
    html = rita_client.post(
        url, form_data(variant, "approve", decisive_metric=variant.source.content["decisive_metric"])
    ).content.decode()
    assert "must change its target field" in field_errors(html, "decisive_metric")
    assert ControlVariant.objects.get(pk=variant.pk).content == variant.content


def test_a_post_without_a_known_action_changes_nothing(made, rita_client) -> None:  # noqa: ANN001
    variant = ControlVariant.objects.first()
    url = reverse("controls:variant", args=[variant.pk])
    for data in ({}, {"action": "delete"}):
        response = rita_client.post(url, data)
        html = response.content.decode()
        assert response.status_code == 200 and ("Select a valid choice" in html or "This field is required" in html)
    assert ControlVariant.objects.get(pk=variant.pk).reviewed_at is None
