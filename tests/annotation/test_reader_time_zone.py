"""Times an annotator reads are in their own time zone (an annotator review of 2026-12-06: "Draft saved 01:38:33"
read at 09:38 in Shanghai looked eight hours old). The browser names its zone in the ``tz`` cookie (static/js/app.js)."""

from __future__ import annotations

import re
import zoneinfo

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Assignment

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def saved_time(html: str) -> str:
    return re.search(r"Draft saved (\d\d:\d\d:\d\d)", html).group(1)


@pytest.mark.parametrize(
    ("cookie", "zone"),
    [
        ("Asia/Shanghai", "Asia/Shanghai"),
        ("America/St_Johns", "America/St_Johns"),  # a half-hour offset
        ("../../etc/passwd", "UTC"),  # not a zone: ignored, never an error
        ("Mars/Olympus_Mons", "UTC"),
        ("", "UTC"),
    ],
)
def test_the_draft_saved_time_is_in_the_zone_the_browser_names(
    study, annotator, ann_client: Client, cookie: str, zone: str
) -> None:  # noqa: ANN001
    item = Assignment.objects.filter(study=study, annotator=annotator).order_by("position").first()
    ann_client.post(reverse("annotation:item-start", args=[item.token]))
    ann_client.cookies["tz"] = cookie
    answer = ann_client.post(reverse("annotation:item-draft", args=[item.token]), {"screening": "partly"}, **HTMX)
    item.refresh_from_db()
    expected = item.draft_saved_at.astimezone(zoneinfo.ZoneInfo(zone)).strftime("%H:%M:%S")
    assert saved_time(answer.content.decode()) == expected
    page = ann_client.get(reverse("annotation:item", args=[item.token])).content.decode()
    assert saved_time(page) == expected
