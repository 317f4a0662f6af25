"""Test settings: production settings with what tests cannot use switched off, and the apps that exist only for the
tests (``tests.toy_protocol``: a protocol written against the public engine API, installed like any other)."""

import os as _os
import secrets as _secrets

# settings.py refuses to start on the public development key with DEBUG off, as tests run; they get a random
# key of their own, which the worker processes they start inherit. Only this test module does this.
if not _os.environ.get("SECRET_KEY"):
    _os.environ["SECRET_KEY"] = "lit2test-tests-" + _secrets.token_urlsafe(32)

from lit2test_web.settings import *  # noqa: E402, F403
from lit2test_web.settings import INSTALLED_APPS, STORAGES  # noqa: E402

INSTALLED_APPS = [*INSTALLED_APPS, "tests.toy_protocol"]

SECURE_SSL_REDIRECT = False
SESSION_COOKIE_SECURE = False
CSRF_COOKIE_SECURE = False
STORAGES = STORAGES | {"staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}
WHITENOISE_USE_FINDERS = True
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # speed; never in production


if not _os.environ.get("CACHE_URL"):
    # Tests share nothing through files; CI sets CACHE_URL to Redis to exercise the shared cache.
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "tests"}}

if not _os.environ.get("CELERY_BROKER_URL"):
    # Without a configured broker, enqueued tasks stay in this process; tests that need a
    # real worker run against Redis in CI.
    CELERY_BROKER_URL = "memory://"
    CELERY_BROKER_TRANSPORT_OPTIONS: dict = {}

_XDIST = _os.environ.get("PYTEST_XDIST_WORKER", "")  # "gw0", "gw1" ... under pytest-xdist (make test runs two)
if _XDIST.startswith("gw") and _XDIST[2:].isdigit():
    # Each pytest-xdist worker (and the Celery workers its tests start, which inherit the variable) has Redis
    # databases of its own, as it has a test database of its own (pytest-django's "_gw0" suffix): a test that
    # purges the broker or clears the cache never touches the other worker's. Redis has 16 databases: the
    # configured broker and cache databases (0 and 1 in CI: two adjacent ones) are left to the first worker, then
    # two per worker after them.
    import re as _re

    def _own_redis_db(url: str, offset: int) -> str:
        found = _re.search(r"/(\d+)$", url)
        if not url.startswith("redis") or found is None:
            return url
        db = int(found.group(1)) + offset
        if db > 15:  # Redis' default 16 databases
            raise RuntimeError(
                f"pytest-xdist worker {_XDIST} would use Redis database {db} for {url!r}: give the broker and the cache "
                "databases 0 and 1 (.ci/run does) and at most 7 workers (make test runs at most 4)"
            )
        return url[: found.start()] + f"/{db}"

    _offset = 2 * int(_XDIST[2:])
    CELERY_BROKER_URL = _own_redis_db(CELERY_BROKER_URL, _offset)  # noqa: F405
    _cache = dict(CACHES["default"])  # noqa: F405
    if isinstance(_cache.get("LOCATION"), str):
        _cache["LOCATION"] = _own_redis_db(_cache["LOCATION"], _offset)
    CACHES = {**CACHES, "default": _cache}  # noqa: F405

if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":  # noqa: F405
    # A file, not the in-memory shared cache: several threads (the run driver's database thread, the live
    # server) then wait for each other's locks as they would in the demo, instead of failing at once.
    import tempfile as _tempfile

    DATABASES["default"]["TEST"] = {"NAME": str(_os.path.join(_tempfile.gettempdir(), f"lit2test-test-{_os.getpid()}.sqlite3"))}  # noqa: F405

# A judge run that ends has its leaderboard stored by a worker (lit2test.tasks): in eager mode that would compute a
# 10,000-replicate leaderboard inside every test whose run ends. Off unless a test turns it on (tests/lit2test/
# test_stored_leaderboard.py); the environment variable reaches the workers a test starts.
LIT2TEST_STORE_LEADERBOARD_ON_CLOSE = _os.environ.get("LIT2TEST_STORE_LEADERBOARD_ON_CLOSE", "0") == "1"

# PostgreSQL's pool: a request waits up to 30 s for a connection in tests (production's default is 10 s). Four xdist
# workers share two cores with the fault tests' workers and servers; a test that posts one form three times at once
# while an in-process worker drives its run waited more than 10 s for a connection once, on a loaded machine, and
# failed on a PoolTimeout that has nothing to do with what it checks. Tests of the pool set their own timeout.
if "pool" in DATABASES["default"].get("OPTIONS", {}):  # noqa: F405
    DATABASES["default"]["OPTIONS"]["pool"] = {**DATABASES["default"]["OPTIONS"]["pool"], "timeout": 30.0}  # noqa: F405
