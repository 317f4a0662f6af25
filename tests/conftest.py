"""Shared fixtures: the release sample, and named personas (a researcher, two annotators, an outsider)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
RELEASE_DIR = Path(os.environ.get("LIT2TEST_DATA", ROOT.parent / "shared" / "data" / "lit2test"))


@pytest.fixture(scope="session")
def release_dir() -> Path:
    if not (RELEASE_DIR / "corrected_folded_pairs.jsonl").is_file():
        if os.environ.get("CI"):
            pytest.fail(f"the release sample is missing at {RELEASE_DIR}")
        pytest.skip(f"release sample not found at {RELEASE_DIR} (set LIT2TEST_DATA)")
    return RELEASE_DIR


@pytest.fixture
def imported(db, release_dir: Path):  # noqa: ANN001, ANN201
    from lit2test.release import release_import

    return release_import(directory=release_dir).benchmark


@pytest.fixture(scope="module")
def sample_once(django_db_setup, django_db_blocker, release_dir: Path, request: pytest.FixtureRequest) -> Iterator[Any]:  # noqa: ANN001
    """The release sample imported once for a module's read-only tests (committed, deleted at the module's end): the
    import costs seconds, a test that only reads it need not pay them again."""
    from lit2test.release import release_import

    with django_db_blocker.unblock():
        name = f"{request.module.__name__.rsplit('.', 1)[-1]}-sample"
        benchmark = release_import(directory=release_dir, benchmark_name=name).benchmark
    yield benchmark
    with django_db_blocker.unblock():
        benchmark.delete()


def _user(username: str, *, staff: bool = False, annotator: bool = False):  # noqa: ANN202
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    from arena.permissions import ANNOTATORS_GROUP

    user = get_user_model().objects.create_user(username=username, password="pw-" + username, is_staff=staff)
    if annotator:
        user.groups.add(Group.objects.get_or_create(name=ANNOTATORS_GROUP)[0])
    return user


@pytest.fixture
def researcher(db):  # noqa: ANN001, ANN201
    return _user("rita", staff=True)


@pytest.fixture
def annotator(db):  # noqa: ANN001, ANN201
    return _user("ann", annotator=True)


@pytest.fixture
def annotator2(db):  # noqa: ANN001, ANN201
    return _user("bob", annotator=True)


@pytest.fixture
def outsider(db):  # noqa: ANN001, ANN201
    return _user("olga")


@pytest.fixture
def rita_client(researcher):  # noqa: ANN001, ANN201
    """The researcher, signed in."""
    from tests.clients import client_for

    return client_for(researcher)


@pytest.fixture
def celery_in_process(request: pytest.FixtureRequest) -> Iterator[None]:
    """A launch runs its driver in this process (Celery's own eager mode); a test marked ``services`` keeps the real
    worker and broker."""
    if request.node.get_closest_marker("services"):
        yield
        return
    from lit2test_web.celery import app

    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    try:
        yield
    finally:
        app.conf.task_always_eager = previous


@pytest.fixture(autouse=True)
def _default_language() -> Iterator[None]:
    """A page rendered in Chinese leaves that language active in this thread (Django's translations are
    thread-local and LocaleMiddleware does not undo them): every test starts in the default language."""
    from django.utils import translation

    translation.activate("en")
    yield
    translation.activate("en")


@pytest.fixture(autouse=True, scope="session")
def _required_services() -> None:
    """In CI the real services must be there: a skipped PostgreSQL test would hide a regression."""
    if os.environ.get("LIT2TEST_REQUIRE_SERVICES"):
        from django.conf import settings

        engine = settings.DATABASES["default"]["ENGINE"]
        assert engine == "django.db.backends.postgresql", f"LIT2TEST_REQUIRE_SERVICES is set but the database is {engine}"
        assert settings.CELERY_BROKER_URL.startswith("redis://"), "LIT2TEST_REQUIRE_SERVICES is set but the broker is not Redis"


@pytest.fixture
def celery_worker(transactional_db, tmp_path: Path) -> Iterator[Callable[[], Any]]:  # noqa: ANN001
    """Starts real Celery workers (``tests.workers.SessionWorker``: the tests' settings and apps, this session's
    database and broker) on demand; each is stopped (its process group killed) before the database is flushed.
    Skips (fails in CI) without PostgreSQL and Redis."""
    from tests.workers import SessionWorker, require_services

    require_services()
    from lit2test_web.celery import app

    app.control.purge()  # messages other tests may have left on the broker
    workers: list[SessionWorker] = []

    def start() -> SessionWorker:
        worker = SessionWorker(tmp_path / f"worker-{len(workers)}.log")
        workers.append(worker)
        worker.wait_ready()
        return worker

    yield start
    for worker in workers:
        worker.stop()


from tests.fake_llm.fixtures import fake_llm, fake_llm_server  # noqa: E402, F401
