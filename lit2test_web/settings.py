"""Settings for Lit2Test Web, read from the environment.

With no configuration the app runs on its embedded defaults (SQLite and Celery's
filesystem broker under ``var/``) so ``make demo`` needs nothing but Python.
``DATABASE_URL`` (PostgreSQL through psycopg 3) and ``CELERY_BROKER_URL`` (Redis)
switch it to real services that several workers on several machines can share.
"""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP

from lit2test_web.cache import read_through

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(environ.Env().str("LIT2TEST_VAR_DIR", default=str(BASE_DIR / "var")))

env = environ.Env()

DEBUG: bool = env.bool("DEBUG", default=False)

# SECRET_KEY comes from the environment, else from var/secret_key (which `make demo` writes once, so the
# demo's sessions survive restarts), else it is the public development key. With DEBUG off, the development
# key stops every process from starting (web server, Celery worker, management commands), except the few
# commands below that neither serve nor touch data, so that `check --deploy` can still report lit2test.E001.
# The tests' settings (tests/settings.py) put a random key in the environment before this module runs.
DEV_SECRET_KEY = "django-insecure-lit2test-dev-only-key-do-not-deploy-0123456789"
SECRET_KEY_FILE = VAR_DIR / "secret_key"
SECRET_KEY: str = (
    env.str("SECRET_KEY", default="")
    or (SECRET_KEY_FILE.read_text(encoding="utf-8").strip() if SECRET_KEY_FILE.is_file() else "")
    or DEV_SECRET_KEY
)
HARMLESS_COMMANDS = frozenset({"help", "version", "check", "compilemessages", "makemessages", "collectstatic", "findstatic"})


def _running_a_harmless_command(argv: list[str]) -> bool:
    """True for ``manage.py``/``django-admin``/``python -m django`` running one of HARMLESS_COMMANDS (or only help)."""
    program = Path(argv[0]).name if argv else ""
    if program not in ("manage.py", "django-admin") and not (program == "__main__.py" and Path(argv[0]).parent.name == "django"):
        return False
    command = argv[1] if len(argv) > 1 else "help"
    return command in HARMLESS_COMMANDS or command in ("-h", "--help", "--version")


class DevelopmentKeyWithoutDebug(RuntimeError):
    """Not ImproperlyConfigured, which manage.py swallows for the commands Django itself ships (runserver, shell)."""


if not DEBUG and SECRET_KEY == DEV_SECRET_KEY and not _running_a_harmless_command(sys.argv):
    raise DevelopmentKeyWithoutDebug(
        "SECRET_KEY is the public development key and DEBUG is off: refusing to start. Set the SECRET_KEY "
        "environment variable to a long random value (python -c 'import secrets; print(secrets.token_urlsafe(50))'), "
        "or set DEBUG=1 on a development machine."
    )

ALLOWED_HOSTS: list[str] = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS: list[str] = env.list("CSRF_TRUSTED_ORIGINS", default=[])
CSRF_FAILURE_VIEW = "lit2test_web.views.csrf_failure"  # the app's layout and language, and what to do

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "django_htmx",
    "axes",
    "lit2test_web",
    "arena",
    "jobs",
    "lit2test",
    "annotation",
    "controls",
    "hypoarena",
    "reconstruction",
    "intrinsic",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django_permissions_policy.PermissionsPolicyMiddleware",
    "lit2test_web.request_hygiene.NulInHeaderMiddleware",
    "lit2test_web.middleware.DatabaseBusyMiddleware",  # an exhausted connection pool answers 503, not 500
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "lit2test_web.middleware.ReaderTimeZoneMiddleware",  # times in the zone the reader's browser names
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "axes.middleware.AxesMiddleware",  # last, as django-axes asks: it turns a refused login into the lockout page
]

ROOT_URLCONF = "lit2test_web.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "django.template.context_processors.i18n",
            ],
        },
    },
]

WSGI_APPLICATION = "lit2test_web.wsgi.application"
ASGI_APPLICATION = "lit2test_web.asgi.application"


def _database() -> dict:
    url = env.str("DATABASE_URL", default="")
    if not url:
        VAR_DIR.mkdir(parents=True, exist_ok=True)
        return {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": VAR_DIR / "db.sqlite3",
            # Demo workers and the web server write concurrently; wait instead of failing.
            "OPTIONS": {"timeout": 30, "transaction_mode": "IMMEDIATE"},
        }
    db = env.db_url_config(url)
    if db["ENGINE"] not in ("django.db.backends.postgresql", "django.db.backends.sqlite3"):
        raise ImproperlyConfigured(f"DATABASE_URL: unsupported engine {db['ENGINE']!r}; use postgres:// or sqlite://")
    db["CONN_HEALTH_CHECKS"] = True
    if db["ENGINE"] == "django.db.backends.sqlite3":
        db.setdefault("CONN_MAX_AGE", env.int("DB_CONN_MAX_AGE", default=60))
        return db
    if "CONN_MAX_AGE" in db or "DB_CONN_MAX_AGE" in env.ENVIRON:
        # Opting out of the pool: one connection per thread (ASGI: per request), closed after
        # CONN_MAX_AGE seconds (0: at the end of each request). Nothing bounds their number.
        db.setdefault("CONN_MAX_AGE", env.int("DB_CONN_MAX_AGE"))
        return db

    # Default: psycopg's connection pool, one per process. Persistent per-thread connections
    # (CONN_MAX_AGE > 0) were kept by every server thread and every ASGI request context until
    # PostgreSQL ran out of connections; a pool bounds them at DB_POOL_MAX_SIZE per process, and a
    # request that waits DB_POOL_TIMEOUT seconds for one gets a 503 (lit2test_web.middleware).
    def number(name: str, cast: type[int] | type[float], default: float) -> float:
        raw = env.str(name, default=str(default))
        try:
            return cast(raw)
        except ValueError:
            kind = "a whole number" if cast is int else "a number"
            raise ImproperlyConfigured(f"{name} must be {kind}, not {raw!r}") from None

    pool = {
        "min_size": number("DB_POOL_MIN_SIZE", int, 1),
        "max_size": number("DB_POOL_MAX_SIZE", int, 8),
        "timeout": number("DB_POOL_TIMEOUT", float, 10.0),
        "name": "lit2test",
    }
    if pool["max_size"] < 1:
        raise ImproperlyConfigured(f"DB_POOL_MAX_SIZE must be at least 1, not {pool['max_size']}")
    if not 0 <= pool["min_size"] <= pool["max_size"]:
        raise ImproperlyConfigured(
            f"DB_POOL_MIN_SIZE must be between 0 and DB_POOL_MAX_SIZE ({pool['max_size']}), not {pool['min_size']}"
        )
    if not 0 < pool["timeout"] < float("inf"):
        raise ImproperlyConfigured(f"DB_POOL_TIMEOUT must be a positive number of seconds, not {pool['timeout']}")
    db["CONN_MAX_AGE"] = 0  # Django returns the connection to the pool at the end of each request
    db.setdefault("OPTIONS", {})["pool"] = pool
    return db


DATABASES = {"default": _database()}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# Login throttling (django-axes). After LOGIN_FAILURE_LIMIT wrong passwords for one username from one IP
# address, that username cannot log in from that address, even with the right password, until
# LOGIN_COOLOFF_MINUTES have passed without another try (each try while locked starts the wait again) or an
# administrator clears it: `manage.py axes_reset` (everyone), `axes_reset_username NAME`, or deleting the row
# under "Access attempts" in the admin. The lock is on the pair: by username alone a stranger could lock a
# colleague out by typing their name; by address alone annotators behind one NAT would lock each other out.
# Behind a reverse proxy every request has the proxy's address, and the lock becomes per username (set
# AXES_IPWARE_* with django-ipware there). AxesStandaloneBackend only refuses locked logins; ModelBackend logs in.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_FAILURE_LIMIT: int = env.int("LOGIN_FAILURE_LIMIT", default=5)
_cooloff_minutes: int = env.int("LOGIN_COOLOFF_MINUTES", default=15)
if AXES_FAILURE_LIMIT < 1 or _cooloff_minutes < 1:
    raise ImproperlyConfigured(
        f"LOGIN_FAILURE_LIMIT ({AXES_FAILURE_LIMIT}) and LOGIN_COOLOFF_MINUTES ({_cooloff_minutes}) must be at least 1"
    )
AXES_COOLOFF_TIME = timedelta(minutes=_cooloff_minutes)
AXES_RESET_ON_SUCCESS = True  # a successful login forgets earlier typos
AXES_LOCKOUT_TEMPLATE = "registration/lockout.html"
AXES_HTTP_RESPONSE_CODE = 429
AXES_VERBOSE = False  # no start-up line from every process; failures and lockouts are still logged

LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env.str("STATIC_ROOT", default=str(BASE_DIR / "staticfiles")))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": env.str(
            "STATICFILES_BACKEND",
            default="django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage",
        )
    },
}
MEDIA_ROOT = VAR_DIR / "media"
DATA_UPLOAD_MAX_MEMORY_SIZE = 50 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024

# Production hardening; each switch can be turned off for a plain-HTTP intranet deploy.
if not DEBUG:
    SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
    SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=True)
    CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=True)
    SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=3600)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True)
    SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=False)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
# Content-Security-Policy: the app's own scripts and styles only (htmx is served from static/vendor/). No
# inline script, style or event handler and no eval: pages keep their behaviour in static/*.js, keyed on
# data-* attributes, and base.html tells htmx not to inject its indicator style or evaluate anything.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF],
    "connect-src": [CSP.SELF],
    "font-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.NONE],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}
# Permissions-Policy (django-permissions-policy): no page here needs a device or a powerful feature.
PERMISSIONS_POLICY: dict[str, list[str]] = {
    feature: []
    for feature in (
        "accelerometer", "autoplay", "camera", "display-capture", "encrypted-media", "geolocation", "gyroscope",
        "hid", "idle-detection", "local-fonts", "magnetometer", "microphone", "midi", "payment", "publickey-credentials-get",
        "screen-wake-lock", "serial", "usb", "window-management", "xr-spatial-tracking",
    )
}  # fmt: skip

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["rest_framework.authentication.SessionAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # An API URL opened in a browser: the site's own page, titled from the OpenAPI schema (lit2test_web/api_renderers.py).
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer", "lit2test_web.api_renderers.BrowsableApiRenderer"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "arena.apis.exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Lit2Test Web API",
    "VERSION": "1.0.0",
    "SERVE_PERMISSIONS": ["arena.permissions.IsResearcher"],  # the API is the researchers'
}

# Celery: a serverless filesystem broker by default; Redis (or any kombu URL) in production.
CELERY_BROKER_URL: str = env.str("CELERY_BROKER_URL", default="filesystem://localhost/")
CELERY_BROKER_TRANSPORT_OPTIONS: dict = {}
if CELERY_BROKER_URL.startswith("filesystem://"):
    # The default names a host although the filesystem transport has no server: with a bare "filesystem://"
    # kombu logs "No hostname was supplied. Reverting to default 'localhost'" on every launch and worker start.
    _queue_dir = VAR_DIR / "celery-broker"
    for sub in ("queue", "processed", "control"):
        (_queue_dir / sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_queue_dir / "queue"),
        "data_folder_out": str(_queue_dir / "queue"),
        "data_folder_processed": str(_queue_dir / "processed"),
        "control_folder": str(_queue_dir / "control"),  # not ./control in the working directory
        "store_processed": False,
        # The filesystem transport polls; a short interval keeps launches snappy in the demo.
        "polling_interval": 0.1,
    }
CELERY_TASK_IGNORE_RESULT = True
# Run drivers are acknowledged when taken: the database holds each run's state and the workers'
# watchdog relaunches abandoned runs (see jobs/tasks.py for why late acks did more harm than good).
CELERY_TASK_ACKS_LATE = False
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# A worker outlives broker restarts: it reconnects for as long as it takes, at start-up too.
CELERY_BROKER_CONNECTION_RETRY = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False  # drivers keep working while the broker is away
# Publishing (a launch) gives up after about ten seconds; the run then says so and the watchdog launches it later.
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 4, "interval_start": 0.5, "interval_step": 1.0, "interval_max": 4.0}

# Runs: claims last LIT2TEST_LEASE_SECONDS unless the driver's heartbeat (every LIT2TEST_HEARTBEAT_SECONDS)
# renews them; a driver silent for LIT2TEST_DRIVER_STALE_SECONDS is taken for dead and its work is taken over;
# every LIT2TEST_WATCHDOG_SECONDS each worker relaunches running runs that nobody works on; a driver rides out
# a database outage of up to LIT2TEST_DB_PATIENCE_SECONDS.
LIT2TEST_LEASE_SECONDS: float = env.float("LIT2TEST_LEASE_SECONDS", default=60.0)
LIT2TEST_HEARTBEAT_SECONDS: float = env.float("LIT2TEST_HEARTBEAT_SECONDS", default=5.0)
LIT2TEST_DRIVER_STALE_SECONDS: float = env.float("LIT2TEST_DRIVER_STALE_SECONDS", default=30.0)
LIT2TEST_WATCHDOG_SECONDS: float = env.float("LIT2TEST_WATCHDOG_SECONDS", default=15.0)
LIT2TEST_RELAUNCH_BACKOFF_SECONDS: float = env.float("LIT2TEST_RELAUNCH_BACKOFF_SECONDS", default=120.0)
LIT2TEST_DB_PATIENCE_SECONDS: float = env.float("LIT2TEST_DB_PATIENCE_SECONDS", default=300.0)
if not LIT2TEST_HEARTBEAT_SECONDS * 2 < LIT2TEST_DRIVER_STALE_SECONDS:
    raise ImproperlyConfigured("LIT2TEST_DRIVER_STALE_SECONDS must be more than twice LIT2TEST_HEARTBEAT_SECONDS")
# A judge run that ends has its leaderboard computed by a worker and stored (cache and database), so that its first
# reader does not wait for the bootstraps (lit2test.tasks).
LIT2TEST_STORE_LEADERBOARD_ON_CLOSE: bool = env.bool("LIT2TEST_STORE_LEADERBOARD_ON_CLOSE", default=True)
CELERY_TASK_ALWAYS_EAGER: bool = env.bool("CELERY_TASK_ALWAYS_EAGER", default=False)
CELERY_TASK_EAGER_PROPAGATES = True

# A cache shared by the web server and the workers (files by default, Redis via CACHE_URL),
# so expensive leaderboard bootstraps are computed once per data version.
# Read through: while Redis cannot be reached, pages are computed without it (lit2test_web.cache).
CACHES = {"default": read_through(env.cache_url("CACHE_URL", default=f"filecache://{VAR_DIR / 'cache'}"))}

# Environment variables a run may name for its endpoint's API key (never SECRET_KEY, DATABASE_URL, ...).
LIT2TEST_API_KEY_ENV_PATTERN: str = env.str("LIT2TEST_API_KEY_ENV_PATTERN", default=r"[A-Z][A-Z0-9_]*_API_KEY")

LIT2TEST_DATA: str = env.str("LIT2TEST_DATA", default=str(BASE_DIR.parent / "shared" / "data" / "lit2test"))

# The most bootstrap replicates one leaderboard API request may ask for (the default is 10,000).
LIT2TEST_LEADERBOARD_MAX_REPLICATES: int = env.int("LIT2TEST_LEADERBOARD_MAX_REPLICATES", default=20_000)
if LIT2TEST_LEADERBOARD_MAX_REPLICATES < 1:
    raise ImproperlyConfigured(
        f"LIT2TEST_LEADERBOARD_MAX_REPLICATES must be at least 1, not {LIT2TEST_LEADERBOARD_MAX_REPLICATES}"
    )

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}
