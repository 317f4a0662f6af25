"""A researcher adds an annotator in the browser; the annotator sets a password through the link and logs in."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from tests.conftest import _user

from .conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_researcher_invites_an_annotator_who_sets_a_password_and_logs_in(page) -> None:  # noqa: ANN001
    _user("rita", staff=True)
    log_in(page, "rita", "pw-rita")
    page.click("#nav-annotators")
    assert page.locator("h1").inner_text() == "Annotators"
    page.fill("#annotator-form input[name=username]", "carla")
    with page.expect_navigation():
        page.click("#annotator-form button[type=submit]")
    assert "Annotator carla created" in page.locator(".messages").inner_text()
    assert page.locator("#status").inner_text() == "invited: no password yet"
    link = page.locator("#set-password-link").input_value()
    assert link.startswith(page.url.split("/dashboard/")[0] + "/accounts/set-password/")
    with page.expect_navigation():
        page.click("form[action='/accounts/logout/'] button")

    page.goto(link)
    assert page.locator("h1").inner_text() == "Set your password"
    assert "annotator account carla" in page.locator("main").inner_text()
    page.fill("input[name=new_password1]", "a-long-fresh-passphrase-42")
    page.fill("input[name=new_password2]", "a-long-fresh-passphrase-42")
    with page.expect_navigation():
        page.click("main button[type=submit]")
    assert page.url.endswith("/accounts/login/")
    assert "Your password is set." in page.locator(".messages").inner_text()

    log_in(page, "carla", "a-long-fresh-passphrase-42")
    assert page.locator(".who").inner_text() == "carla"
    assert get_user_model().objects.get(username="carla").last_login is not None

    # The researcher sees the annotator as active now, and can deactivate them from the list.
    with page.expect_navigation():
        page.click("form[action='/accounts/logout/'] button")
    log_in(page, "rita", "pw-rita")
    page.goto("/dashboard/annotators/")
    row = page.locator("tr[data-annotator=carla]")
    assert "active" in row.inner_text() and "invited" not in row.inner_text()
    with page.expect_navigation():
        row.locator("button", has_text="Deactivate").click()
    assert "deactivated" in page.locator("tr[data-annotator=carla]").inner_text()
    assert not get_user_model().objects.get(username="carla").is_active
