"""Signed-in clients for the named personas (tests/conftest.py): one way to sign in, shared by every test package."""

from __future__ import annotations

from django.test import Client


def client_for(user, **options: object) -> Client:  # noqa: ANN001
    client = Client(**options)  # type: ignore[arg-type]
    client.force_login(user)
    return client


def session_cookie(user) -> str:  # noqa: ANN001
    """The session cookie of ``user`` signed in, for clients outside Django's test client (httpx, Schemathesis)."""
    return client_for(user).cookies["sessionid"].value
