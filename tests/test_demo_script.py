"""``scripts/demo.sh`` refuses an address it cannot serve on before it does anything, and says what to set.

It used to migrate, start a worker and print "running at http://127.0.0.1:8000/" before the web server
found the port taken. These runs stop at the first check, so they take a fraction of a second.
"""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def demo(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k not in ("DEMO_HOST", "DEMO_PORT")}
    environment |= {"LIT2TEST_VAR_DIR": str(tmp_path / "var")} | env
    return subprocess.run(["bash", "scripts/demo.sh"], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=60)


def test_a_busy_port_fails_first_and_names_the_variable_to_set(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = demo(tmp_path, DEMO_PORT=str(port))

    assert result.returncode == 1
    assert result.stdout == ""  # in particular, not "Lit2Test Web is running at ..."
    assert result.stderr.splitlines() == [
        f"Cannot start the demo: 127.0.0.1:{port} is not free (Address already in use); another demo or server may hold it.",
        f"Set DEMO_PORT to a free port, e.g. DEMO_PORT={port + 1} make demo",
    ]
    assert not (tmp_path / "var").exists()  # it stopped before migrating or writing anything


def test_a_port_that_is_not_a_number_is_refused(tmp_path: Path) -> None:
    result = demo(tmp_path, DEMO_PORT="80a")
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr.strip() == "DEMO_PORT must be a port number from 1 to 65535, not '80a'."
    assert not (tmp_path / "var").exists()


def test_demo_host_other_than_loopback_is_refused_not_ignored(tmp_path: Path) -> None:
    # The demo's accounts have a published password: it serves 127.0.0.1 only and says so to whoever asks for more.
    result = demo(tmp_path, DEMO_HOST="0.0.0.0", DEMO_PORT="8000")
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr.startswith("DEMO_HOST is no longer read: the demo listens on 127.0.0.1 only")
    assert not (tmp_path / "var").exists()
