"""Security hygiene: policy headers, templates the Content-Security-Policy can hold to, no start on the public
development key with DEBUG off, error pages that show nothing of the server, and a demo that runs like that.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from django.conf import settings
from django.test import Client

ROOT = Path(__file__).resolve().parent.parent
REFUSAL = "SECRET_KEY is the public development key and DEBUG is off: refusing to start"


# ------------------------------------------------------------------ headers


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/accounts/login/", "/guide/", "/dashboard/", "/static/css/app.css"])
def test_pages_carry_a_strict_content_security_policy_and_a_permissions_policy(path: str, annotator) -> None:  # noqa: ANN001
    client = Client()
    client.force_login(annotator)
    response = client.get(path)

    csp = response["Content-Security-Policy"]
    directives = dict(d.strip().split(" ", 1) for d in csp.split(";"))
    assert directives["script-src"] == "'self'" and directives["style-src"] == "'self'"
    assert directives["default-src"] == "'self'" and directives["object-src"] == "'none'"
    assert directives["frame-ancestors"] == "'none'" and directives["base-uri"] == "'none'"
    assert "unsafe" not in csp
    policy = response["Permissions-Policy"]
    for feature in ("camera", "microphone", "geolocation", "payment", "usb"):
        assert f"{feature}=()" in policy


TEMPLATE_DIRS = [ROOT / "templates", *sorted(ROOT.glob("*/templates"))]
FORBIDDEN = {
    "an inline <script>": re.compile(r"<script\b(?![^>]*\bsrc=)[^>]*>", re.I),
    "an inline <style>": re.compile(r"<style\b", re.I),
    "a style attribute": re.compile(r"<[a-z][^>]*\sstyle\s*=", re.I),
    "an inline event handler": re.compile(r"<[a-z][^>]*\son[a-z]+\s*=", re.I),
    "a javascript: URL": re.compile(r"javascript:", re.I),
    "htmx evaluation (hx-on, hx-vars, js: values)": re.compile(r"\bhx-on|\bhx-vars\b|\bhx-vals\s*=\s*['\"]\s*js:", re.I),
}


def test_no_template_needs_inline_script_style_or_eval() -> None:
    templates = [p for d in TEMPLATE_DIRS for p in d.rglob("*.html")]
    assert len(templates) > 15
    problems = [
        f"{path.relative_to(ROOT)}: {what}"
        for path in templates
        for what, pattern in FORBIDDEN.items()
        if pattern.search(path.read_text(encoding="utf-8"))
    ]
    assert not problems, "\n".join(problems)


# ------------------------------------------------------------------ no start on the development key


def run(command: list[str], tmp_path: Path, timeout: float = 90, **env: str) -> subprocess.CompletedProcess[str]:
    """``command`` in a clean environment: production settings, SQLite under ``tmp_path``, no SECRET_KEY, no DEBUG."""
    dropped = ("DEBUG", "SECRET_KEY", "DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL", "DJANGO_SETTINGS_MODULE")
    environment = {k: v for k, v in os.environ.items() if k not in dropped}
    environment |= {"DJANGO_SETTINGS_MODULE": "lit2test_web.settings", "LIT2TEST_VAR_DIR": str(tmp_path / "var")} | env
    return subprocess.run(command, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=timeout)


MANAGE = [sys.executable, "manage.py"]
CELERY = str(Path(sys.executable).parent / "celery")


@pytest.mark.parametrize(
    "command",
    [
        [*MANAGE, "runserver", "127.0.0.1:0", "--noreload"],
        [*MANAGE, "migrate"],
        [*MANAGE, "shell", "-c", "print('started')"],
        [*MANAGE, "import_lit2test", "."],
        [*MANAGE, "createsuperuser", "--noinput", "--username", "x"],
        [sys.executable, "-m", "django", "migrate"],
        [CELERY, "-A", "lit2test_web", "worker", "--pool=solo"],
        [sys.executable, "-c", "import lit2test_web.wsgi"],
        [sys.executable, "-c", "import lit2test_web.asgi"],
    ],
    ids=["runserver", "migrate", "shell", "import", "createsuperuser", "python-m-django", "celery-worker", "wsgi", "asgi"],
)
def test_nothing_starts_on_the_development_key_with_debug_off(command: list[str], tmp_path: Path) -> None:
    result = run(command, tmp_path, DEBUG="0")

    assert result.returncode != 0
    assert REFUSAL in result.stderr and "Set the SECRET_KEY environment variable" in result.stderr
    assert "started" not in result.stdout


def test_harmless_commands_still_run_so_the_deploy_check_can_say_what_is_wrong(tmp_path: Path) -> None:
    assert run([*MANAGE, "help"], tmp_path, DEBUG="0").returncode == 0
    check = run([*MANAGE, "check", "--deploy"], tmp_path, DEBUG="0")
    assert check.returncode != 0 and "lit2test.E001" in check.stderr


@pytest.mark.parametrize(
    ("env", "key_file"),
    [({"DEBUG": "1"}, False), ({"DEBUG": "0", "SECRET_KEY": "a-real-secret-" * 4}, False), ({"DEBUG": "0"}, True)],
    ids=["debug-on", "secret-key-set", "demo-key-file"],
)
def test_it_starts_with_debug_on_or_a_real_key(env: dict[str, str], key_file: bool, tmp_path: Path) -> None:
    if key_file:  # what `make demo` writes once
        (tmp_path / "var").mkdir()
        (tmp_path / "var" / "secret_key").write_text("demo-" + "k" * 50 + "\n")
    result = run(
        [*MANAGE, "shell", "-c", "from django.conf import settings; print('started', len(settings.SECRET_KEY))"], tmp_path, **env
    )

    assert result.returncode == 0, result.stderr
    last = result.stdout.strip().splitlines()[-1]  # after the shell's own "objects imported" line
    assert last.startswith("started ")
    if key_file:
        assert last == "started 55"


def test_the_tests_themselves_run_on_a_random_key() -> None:
    assert settings.SECRET_KEY != settings.DEV_SECRET_KEY and not settings.DEBUG


# ------------------------------------------------------------------ error pages


@pytest.mark.django_db
@pytest.mark.urls("tests.security_urls")
def test_a_server_error_shows_a_plain_page_with_nothing_of_the_server(annotator) -> None:  # noqa: ANN001
    client = Client(raise_request_exception=False)
    client.force_login(annotator)

    response = client.get("/boom/")

    html = response.content.decode()
    assert response.status_code == 500
    assert "Server error" in html
    for secret in ("Traceback", "postgres://", "DATABASES", "CELERY_BROKER_URL", "SECRET_KEY", "RuntimeError"):
        assert secret not in html


@pytest.mark.django_db
def test_a_missing_page_is_the_app_s_404_page(annotator) -> None:  # noqa: ANN001
    client = Client()
    client.force_login(annotator)

    response = client.get("/no/such/page/")

    assert response.status_code == 404
    assert "Page not found" in response.content.decode() and "Django tried these URL patterns" not in response.content.decode()


# ------------------------------------------------------------------ the demo


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening_addresses(port: int) -> set[str]:
    """Local addresses with a TCP socket listening on ``port`` (from /proc/net/tcp and tcp6)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if not Path(table).exists():
            continue
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.rsplit(":", 1)
            if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                found.add(address)
    return found


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """``scripts/demo.sh`` on its own port, database and static folder, without the release sample (faster)."""
    port = free_port()
    dropped = ("DEBUG", "SECRET_KEY", "DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL", "DJANGO_SETTINGS_MODULE", "DEMO_HOST")
    env = {k: v for k, v in os.environ.items() if k not in dropped} | {
        "DEMO_PORT": str(port),
        "LIT2TEST_VAR_DIR": str(tmp_path / "var"),
        "STATIC_ROOT": str(tmp_path / "static"),
        "LIT2TEST_DATA": str(tmp_path / "no-sample"),
    }
    log = (tmp_path / "demo.log").open("wb")
    process = subprocess.Popen(
        ["bash", "scripts/demo.sh"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            assert process.poll() is None, (tmp_path / "demo.log").read_text()
            try:
                httpx.get(base + "/accounts/login/", timeout=2)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, (tmp_path / "demo.log").read_text()
                time.sleep(0.5)
        yield base, tmp_path
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        finally:
            log.close()


def test_the_demo_runs_with_debug_off_on_loopback_only(demo: tuple[str, Path]) -> None:
    base, tmp_path = demo
    port = int(base.rsplit(":", 1)[1])
    assert listening_addresses(port) == {"0100007F"}  # 127.0.0.1, and nothing else
    key = tmp_path / "var" / "secret_key"
    assert len(key.read_text().strip()) >= 50 and key.stat().st_mode & 0o077 == 0

    with httpx.Client(base_url=base, timeout=10) as http:
        login = http.get("/accounts/login/")
        assert login.status_code == 200 and "script-src 'self'" in login.headers["content-security-policy"]
        stylesheet = re.search(r'href="(/static/css/app\.[0-9a-f]+\.css)"', login.text).group(1)  # hashed by collectstatic
        assert http.get(stylesheet).status_code == 200
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', login.text).group(1)
        logged_in = http.post(
            "/accounts/login/",
            data={"csrfmiddlewaretoken": token, "username": "annotator1", "password": "lit2test-demo"},
            headers={"Referer": base + "/accounts/login/"},
        )
        assert logged_in.status_code == 302 and "sessionid" in http.cookies
        missing = http.get("/annotate/item/no-such-token/")
        assert missing.status_code == 404 and "Page not found" in missing.text
        bad_host = http.get("/", headers={"Host": "attacker.example"})
        assert bad_host.status_code == 400
        for page in (missing.text, bad_host.text):
            assert "DEBUG = True" not in page and "Traceback" not in page and "sqlite" not in page.lower()
