"""Login throttling (django-axes): repeated wrong passwords lock that username from that address.

Policy (settings ``AXES_*``): after ``AXES_FAILURE_LIMIT`` failures for one username from one IP address,
that username cannot log in from that address, even with the right password, until the cool-off has
passed or an administrator clears it (``manage.py axes_reset`` or the admin's "Access attempts"). The lock
is per username *and* address, so a stranger cannot lock a colleague out by typing their name, and one
address guessing many names is locked per name.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

pytestmark = pytest.mark.django_db

LOGIN = "/accounts/login/"


def attempt(client: Client, username: str, password: str, *, ip: str = "203.0.113.7"):  # noqa: ANN201
    return client.post(LOGIN, {"username": username, "password": password}, REMOTE_ADDR=ip)


def logged_in_as(client: Client) -> str | None:
    response = client.get(reverse("annotation:home"))
    return response.context["user"].get_username() if response.status_code == 200 else None


def hammer(username: str, *, times: int = 100, ip: str = "203.0.113.7") -> Client:
    client = Client()
    for _ in range(times):
        assert attempt(client, username, "wrong password", ip=ip).status_code in (200, 429)
    return client


def test_a_wrong_password_is_answered_by_the_form(annotator) -> None:  # noqa: ANN001
    response = attempt(Client(), "ann", "wrong")
    assert response.status_code == 200 and response.context["form"].errors


def test_the_right_password_after_100_wrong_ones_is_refused(annotator) -> None:  # noqa: ANN001
    client = hammer("ann")

    response = attempt(client, "ann", "pw-ann")

    assert response.status_code == 429
    assert "Too many failed log-in attempts" in response.content.decode()
    assert logged_in_as(client) is None


def test_the_lock_starts_at_the_failure_limit(annotator) -> None:  # noqa: ANN001
    limit = settings.AXES_FAILURE_LIMIT
    client = Client()
    for _ in range(limit - 1):
        assert attempt(client, "ann", "wrong").status_code == 200
    assert attempt(client, "ann", "pw-ann").status_code == 302  # one below the limit: still allowed
    client = hammer("ann", times=limit)
    assert attempt(client, "ann", "pw-ann").status_code == 429


def test_axes_reset_clears_the_lock(annotator) -> None:  # noqa: ANN001
    client = hammer("ann")
    assert attempt(client, "ann", "pw-ann").status_code == 429

    call_command("axes_reset", verbosity=0)

    assert attempt(client, "ann", "pw-ann").status_code == 302
    assert logged_in_as(client) == "ann"


def test_an_administrator_clears_the_lock_in_the_admin(annotator) -> None:  # noqa: ANN001
    client = hammer("ann")
    assert attempt(client, "ann", "pw-ann").status_code == 429
    admin = get_user_model().objects.create_superuser("root", password="pw-root")
    admin_client = Client()
    admin_client.force_login(admin)
    attempts = admin_client.get(reverse("admin:axes_accessattempt_changelist"))
    assert attempts.status_code == 200 and "ann" in attempts.content.decode()

    lock = AccessAttempt.objects.get(username="ann")
    deleted = admin_client.post(reverse("admin:axes_accessattempt_delete", args=[lock.pk]), {"post": "yes"})

    assert deleted.status_code == 302 and not AccessAttempt.objects.exists()
    assert attempt(client, "ann", "pw-ann").status_code == 302


def test_the_lock_is_per_username_and_address(annotator, annotator2) -> None:  # noqa: ANN001
    hammer("ann", ip="203.0.113.7")

    assert attempt(Client(), "ann", "pw-ann", ip="198.51.100.20").status_code == 302  # ann from her own desk
    assert attempt(Client(), "bob", "pw-bob", ip="203.0.113.7").status_code == 302  # a colleague behind the same address


def test_the_lock_lifts_after_the_cool_off(annotator, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    client = hammer("ann", times=settings.AXES_FAILURE_LIMIT)
    assert attempt(client, "ann", "pw-ann").status_code == 429
    assert settings.AXES_COOLOFF_TIME >= timedelta(minutes=5)

    AccessAttempt.objects.update(
        attempt_time=AccessAttempt.objects.get().attempt_time - settings.AXES_COOLOFF_TIME - timedelta(seconds=1)
    )

    assert attempt(client, "ann", "pw-ann").status_code == 302


def test_the_lockout_page_is_in_chinese_for_a_chinese_reader(annotator) -> None:  # noqa: ANN001
    client = hammer("ann", times=settings.AXES_FAILURE_LIMIT)
    client.cookies["django_language"] = "zh-hans"

    html = attempt(client, "ann", "pw-ann").content.decode()

    assert '<html lang="zh-hans">' in html and "登录失败次数过多" in html


def test_a_nul_in_the_log_in_form_is_a_form_error_not_a_500(annotator) -> None:  # noqa: ANN001
    client = Client(raise_request_exception=False)
    for data in (
        {"username": "ann\x00", "password": "x"},
        {"username": "ann", "password": "x\x00"},
        {"username": "ann", "password": "wrong", "extra": "\x00"},
    ):
        response = client.post(LOGIN, data)
        assert response.status_code == 200 and response.context["form"].errors
    # django-axes records each failure with the query string and the user agent (PostgreSQL stores no NUL)
    response = client.post(LOGIN + "?next=/%00", {"username": "ann", "password": "wrong"}, HTTP_USER_AGENT="bot" + "x" * 600)
    assert response.status_code == 200 and response.context["form"].errors


def test_a_nul_in_a_header_is_a_400_naming_the_header(annotator) -> None:  # noqa: ANN001
    client = Client(raise_request_exception=False)

    response = client.post(LOGIN, {"username": "ann", "password": "wrong"}, HTTP_USER_AGENT="bot\x00")

    assert response.status_code == 400
    assert response.content.decode() == "Bad request: the User-Agent header contains a NUL character.\n"
    assert client.get(LOGIN, HTTP_ACCEPT_LANGUAGE="zh\x00").status_code == 400
