"""The researchers' annotators page: add and invite annotators with a set-password link, activate and
deactivate them, follow their progress; and the annotator's set-password page."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.models import Assignment
from annotation.services import assignment_submit
from arena.permissions import ANNOTATORS_GROUP

from .helpers import client_for, complete_values, make_study

pytestmark = pytest.mark.django_db

LIST = reverse("annotation:annotators")
NEW_PASSWORD = "a-long-fresh-passphrase-42"


def detail(user) -> str:  # noqa: ANN001
    return reverse("annotation:annotator", args=[user.pk])


def link_in(html: str) -> str:
    return re.search(r'<input type="text" readonly value="([^"]+)" id="set-password-link"', html).group(1)


def log_in(client: Client, username: str, password: str):  # noqa: ANN201
    return client.post(reverse("login"), {"username": username, "password": password}, REMOTE_ADDR="198.51.100.4")


def set_password_through(link: str, password: str = NEW_PASSWORD) -> Client:
    """Follow a set-password link as the annotator would, in a fresh browser; returns that client."""
    client = Client()
    path = link.removeprefix("http://testserver")
    page = client.get(path, follow=True)
    assert page.status_code == 200 and 'name="new_password1"' in page.content.decode()
    response = client.post(page.redirect_chain[-1][0], {"new_password1": password, "new_password2": password})
    assert response.status_code == 302 and response["Location"] == reverse("login")
    return client


# --------------------------------------------------------------------------- who may open it


ENDPOINTS = [
    ("get", lambda u: LIST),
    ("post", lambda u: LIST),
    ("get", lambda u: detail(u)),
    ("post", lambda u: reverse("annotation:annotator-link", args=[u.pk])),
    ("post", lambda u: reverse("annotation:annotator-active", args=[u.pk])),
]


@pytest.mark.parametrize(("method", "url"), ENDPOINTS)
def test_only_researchers_reach_the_annotators_pages(annotator, annotator2, outsider, method, url) -> None:  # noqa: ANN001
    target = url(annotator2)
    anonymous = getattr(Client(), method)(target, {"username": "x", "active": "0"})
    assert anonymous.status_code == 302 and anonymous["Location"].startswith(reverse("login"))
    for user in (annotator, outsider):
        assert getattr(client_for(user), method)(target, {"username": "x", "active": "0"}).status_code == 403
    annotator2.refresh_from_db()
    assert annotator2.is_active and not get_user_model().objects.filter(username="x").exists()


@pytest.mark.parametrize(
    ("method", "url"),
    [
        ("put", lambda u: LIST),
        ("post", lambda u: detail(u)),
        ("get", lambda u: reverse("annotation:annotator-link", args=[u.pk])),
        ("get", lambda u: reverse("annotation:annotator-active", args=[u.pk])),
    ],
)
def test_the_annotators_pages_refuse_wrong_methods(rita_client, annotator, method, url) -> None:  # noqa: ANN001
    assert getattr(rita_client, method)(url(annotator)).status_code == 405


def test_researchers_and_outsiders_are_not_managed_here(rita_client, researcher, outsider) -> None:  # noqa: ANN001
    for user in (researcher, outsider):
        assert rita_client.get(detail(user)).status_code == 404
        assert rita_client.post(reverse("annotation:annotator-link", args=[user.pk])).status_code == 404
        assert rita_client.post(reverse("annotation:annotator-active", args=[user.pk]), {"active": "0"}).status_code == 404
        user.refresh_from_db()
        assert user.is_active


# --------------------------------------------------------------------------- adding and inviting


def test_a_researcher_adds_an_annotator_who_sets_a_password_and_logs_in(rita_client) -> None:  # noqa: ANN001
    response = rita_client.post(LIST, {"username": "carla", "email": "carla@example.org"})
    carla = get_user_model().objects.get(username="carla")
    assert response.status_code == 302 and response["Location"] == detail(carla)
    assert carla.is_active and not carla.is_staff and not carla.has_usable_password()
    assert list(carla.groups.values_list("name", flat=True)) == [ANNOTATORS_GROUP]
    page = rita_client.get(detail(carla)).content.decode()
    assert "Annotator carla created. Pass on the set-password link below." in page and "invited: no password yet" in page
    link = link_in(page)
    assert link.startswith("http://testserver/accounts/set-password/")

    annotator_browser = set_password_through(link)
    carla.refresh_from_db()
    assert carla.check_password(NEW_PASSWORD)
    assert "Your password is set." in annotator_browser.get(reverse("login")).content.decode()
    assert log_in(annotator_browser, "carla", NEW_PASSWORD).status_code == 302
    assert annotator_browser.get(reverse("annotation:home")).context["user"].get_username() == "carla"
    # The link worked once: used again, it is refused.
    again = Client().get(link.removeprefix("http://testserver"), follow=True).content.decode()
    assert "This link is no longer valid" in again and 'name="new_password1"' not in again
    # Once the password is set, the page no longer shows an invitation.
    assert 'id="set-password-link"' not in rita_client.get(detail(carla)).content.decode()


@pytest.fixture
def study_benchmark(db) -> None:  # noqa: ANN001
    """The study form is shown only when a benchmark of a protocol with canonical pairs exists."""
    from arena.models import Benchmark

    Benchmark.objects.create(name="l2t-for-studies", protocol="lit2test")


@pytest.mark.usefixtures("study_benchmark")
def test_the_new_annotator_is_offered_in_the_study_form(rita_client) -> None:  # noqa: ANN001
    rita_client.post(LIST, {"username": "carla"})
    carla = get_user_model().objects.get(username="carla")
    assert f'name="annotators" value="{carla.pk}"' in rita_client.get(reverse("annotation:studies")).content.decode()


@pytest.mark.parametrize(
    ("username", "message"),
    [("ANN", "the username &#x27;ANN&#x27; is taken"), ("no spaces", "Enter a valid username."), ("", "This field is required.")],
)
def test_a_taken_or_invalid_username_is_refused(rita_client, annotator, username, message) -> None:  # noqa: ANN001
    before = get_user_model().objects.count()
    response = rita_client.post(LIST, {"username": username})
    assert response.status_code == 200 and message in response.content.decode()
    assert get_user_model().objects.count() == before


def test_a_new_link_for_an_annotator_with_a_password_resets_it(rita_client, annotator) -> None:  # noqa: ANN001
    page = rita_client.get(detail(annotator)).content.decode()
    assert 'id="set-password-link"' not in page and "Make a set-password link" in page  # a link only on request
    response = rita_client.post(reverse("annotation:annotator-link", args=[annotator.pk]))
    assert response.status_code == 200 and "New set-password link" in response.content.decode()
    set_password_through(link_in(response.content.decode()))
    annotator.refresh_from_db()
    assert annotator.check_password(NEW_PASSWORD) and not annotator.check_password("pw-ann")


def test_the_set_password_page_speaks_chinese(rita_client) -> None:  # noqa: ANN001
    rita_client.post(LIST, {"username": "carla"})
    link = link_in(rita_client.get(detail(get_user_model().objects.get(username="carla"))).content.decode())
    client = Client()
    client.cookies["django_language"] = "zh-hans"
    html = client.get(link.removeprefix("http://testserver"), follow=True).content.decode()
    assert "设置密码" in html and "请为你的标注员账号 carla 设置密码。" in html
    assert "Set your password" not in html
    bad = client.get("/accounts/set-password/MQ/nonsense-token/", follow=True).content.decode()
    assert "此链接已失效" in bad


# --------------------------------------------------------------------------- activating and deactivating


@pytest.mark.usefixtures("study_benchmark")
def test_a_deactivated_annotator_cannot_log_in_and_their_session_ends(rita_client, annotator) -> None:  # noqa: ANN001
    session = client_for(annotator)
    assert session.get(reverse("annotation:home")).status_code == 200
    response = rita_client.post(reverse("annotation:annotator-active", args=[annotator.pk]), {"active": "0"})
    assert response.status_code == 302 and response["Location"] == LIST
    annotator.refresh_from_db()
    assert not annotator.is_active
    assert "ann deactivated: they can no longer log in." in rita_client.get(LIST).content.decode()

    kept = session.get(reverse("annotation:home"))
    assert kept.status_code == 302 and kept["Location"].startswith(reverse("login"))
    refused = log_in(Client(), "ann", "pw-ann")
    assert refused.status_code == 200 and refused.context["form"].errors
    # Not offered for a new study, and no set-password link for them.
    assert f'name="annotators" value="{annotator.pk}"' not in rita_client.get(reverse("annotation:studies")).content.decode()
    no_link = rita_client.post(reverse("annotation:annotator-link", args=[annotator.pk]), follow=True).content.decode()
    assert "ann is deactivated: activate them first." in no_link and 'id="set-password-link"' not in no_link

    rita_client.post(reverse("annotation:annotator-active", args=[annotator.pk]), {"active": "1"})
    assert log_in(Client(), "ann", "pw-ann").status_code == 302
    assert f'name="annotators" value="{annotator.pk}"' in rita_client.get(reverse("annotation:studies")).content.decode()


def test_a_pending_link_stops_working_when_the_annotator_is_deactivated(rita_client) -> None:  # noqa: ANN001
    rita_client.post(LIST, {"username": "carla"})
    carla = get_user_model().objects.get(username="carla")
    link = link_in(rita_client.get(detail(carla)).content.decode())
    rita_client.post(reverse("annotation:annotator-active", args=[carla.pk]), {"active": "0"})
    html = Client().get(link.removeprefix("http://testserver"), follow=True).content.decode()
    assert "This link is no longer valid" in html and 'name="new_password1"' not in html


# --------------------------------------------------------------------------- progress


def test_the_list_shows_each_annotators_progress_per_study(imported, rita_client, annotator, annotator2) -> None:  # noqa: ANN001
    study = make_study(imported, [annotator, annotator2], n_contexts=2, n_naive_controls=1, name="Pilot")
    mine = list(Assignment.objects.filter(study=study, annotator=annotator).order_by("position"))
    for a in mine[:3]:
        assignment_submit(assignment=a, values=complete_values())
    html = rita_client.get(LIST).content.decode()
    ann_row = re.search(r'<tr data-annotator="ann">.*?</tr>', html, re.S).group(0)
    bob_row = re.search(r'<tr data-annotator="bob">.*?</tr>', html, re.S).group(0)
    assert 'Pilot</a> (formal): <span class="num">3 / 13</span>' in ann_row
    assert 'Pilot</a> (formal): <span class="num">0 / 13</span>' in bob_row
    page = rita_client.get(detail(annotator)).content.decode()
    assert re.search(r"Pilot</a></td><td>formal</td><td class=\"num\">3</td><td class=\"num\">13</td>", page)


def test_the_list_takes_the_same_number_of_queries_for_more_annotators(imported, rita_client, annotator, annotator2) -> None:  # noqa: ANN001
    make_study(imported, [annotator, annotator2], n_contexts=1, n_naive_controls=0)
    with CaptureQueriesContext(connection) as two:
        assert rita_client.get(LIST).status_code == 200
    for name in ("carla", "dan", "eve"):
        rita_client.post(LIST, {"username": name})
    make_study(imported, list(get_user_model().objects.filter(groups__name=ANNOTATORS_GROUP)), n_contexts=1, n_naive_controls=0)
    with CaptureQueriesContext(connection) as five:
        html = rita_client.get(LIST).content.decode()
    assert html.count("<tr data-annotator=") == 5
    assert len(five.captured_queries) == len(two.captured_queries)
