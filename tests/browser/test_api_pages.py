"""The API's pages in Chromium (issue 24, item 10): ``/api/`` opened in a browser and ``/api/docs/`` load as a
researcher without a single Content-Security-Policy violation (DRF's own page carried an inline ``<style>``), are
titled for people, and they and the 403 page an annotator meets are axe-core clean."""

from __future__ import annotations

import pytest
from django.urls import reverse

from .conftest import log_in
from .test_accessibility import violations
from .test_csp import Watch

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_api_pages_load_without_a_policy_violation_and_the_403_page_is_clean(page, researcher, annotator) -> None:  # noqa: ANN001
    watch = Watch(page)
    found: dict[str, list[str]] = {}
    log_in(page, "rita", "pw-rita")
    for url, title in [("/api/", "Every endpoint of the API"), (reverse("api-docs"), "API documentation")]:
        response = page.goto(url)
        page.wait_for_load_state("networkidle")
        assert response.status == 200, url
        assert page.title() == f"{title} · Lit2Test Web", url
        found[url] = violations(page)
    assert page.locator("#api-toc li").count() >= 12
    watch.assert_clean()

    page.click("form[action='/accounts/logout/'] button")
    page.wait_for_load_state("networkidle")
    log_in(page, "ann", "pw-ann")
    response = page.goto(reverse("arena:dashboard"))
    assert response.status == 403
    assert page.locator("#forbidden h1").inner_text() == "Not allowed"
    found["403 page"] = violations(page)
    assert not any(found.values()), "\n".join(f"{name}: {v}" for name, vs in found.items() for v in vs)
