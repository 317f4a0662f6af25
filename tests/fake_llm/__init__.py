"""Drive the fake OpenAI-compatible server (``server.py``) as a real separate process.

with FakeLLM.start() as llm:
    llm.script(mode="judge", judge={"policy": "always_a"}, failures=[{"attempts": [1], "status": 429}])
    client = openai.OpenAI(base_url=llm.base_url, api_key="test")
    ...
    llm.log()  # [{"t", "model", "messages", "status", "task", "attempt", "fault"}, ...]
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

SERVER = Path(__file__).resolve().parent / "server.py"

# 127.0.0.1 must never go through an HTTP proxy from the environment.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class FakeLLMError(RuntimeError):
    pass


class FakeLLM:
    def __init__(self, process: subprocess.Popen, port: int, workdir: str) -> None:
        self.process = process
        self.port = port
        self.root_url = f"http://127.0.0.1:{port}"
        self.base_url = f"{self.root_url}/v1"
        self.api_key = "test"
        self._workdir = workdir

    # ------------------------------------------------------------------ lifecycle
    @classmethod
    def start(cls, timeout: float = 10.0, *, verbose: bool = False) -> FakeLLM:
        workdir = tempfile.mkdtemp(prefix="fake-llm-")
        port_file = os.path.join(workdir, "port")
        stderr_path = os.path.join(workdir, "stderr")
        command = [sys.executable, str(SERVER), "--port", "0", "--port-file", port_file, "--parent-pid", str(os.getpid())]
        if verbose:
            command.append("--verbose")
        with open(stderr_path, "wb") as stderr:
            process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr)
        deadline = time.monotonic() + timeout
        port = None
        while time.monotonic() < deadline:
            if process.poll() is not None:
                break
            if port is None and os.path.exists(port_file):
                port = int(Path(port_file).read_text().strip())
            if port is not None:
                try:
                    with _OPENER.open(f"http://127.0.0.1:{port}/_health", timeout=1) as response:
                        if json.load(response).get("ok"):
                            return cls(process, port, workdir)
                except (OSError, ValueError):
                    pass
            time.sleep(0.02)
        if process.poll() is None:
            process.kill()
            process.wait()
        errors = Path(stderr_path).read_text(errors="replace")
        shutil.rmtree(workdir, ignore_errors=True)
        raise FakeLLMError(f"fake LLM server did not become healthy within {timeout}s (exit {process.returncode}):\n{errors}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self._workdir, ignore_errors=True)

    def __enter__(self) -> FakeLLM:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ control
    def _request(self, method: str, path: str, payload: Any = None) -> Any:
        data = None if payload is None else json.dumps(payload).encode()
        request = urllib.request.Request(
            self.root_url + path, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        try:
            with _OPENER.open(request, timeout=10) as response:
                return json.load(response)
        except urllib.error.HTTPError as exc:
            raise FakeLLMError(f"{method} {path} -> {exc.code}: {exc.read().decode(errors='replace')}") from exc

    def script(self, script: dict[str, Any] | None = None, /, **fields: Any) -> None:
        """Replace the script (missing keys take defaults) and reset attempt counters and the log."""
        self._request("POST", "/_script", {**(script or {}), **fields})

    def reset(self) -> None:
        self.script()

    def log(self) -> list[dict[str, Any]]:
        return self._request("GET", "/_log")

    def health(self) -> bool:
        try:
            return bool(self._request("GET", "/_health").get("ok"))
        except OSError:
            return False

    @property
    def env(self) -> dict[str, str]:
        """Environment variables pointing an OpenAI client at this server."""
        return {"OPENAI_BASE_URL": self.base_url, "OPENAI_API_KEY": self.api_key}

    def __repr__(self) -> str:
        return f"<FakeLLM {self.base_url} pid={self.process.pid}>"


__all__ = ["FakeLLM", "FakeLLMError", "SERVER"]
