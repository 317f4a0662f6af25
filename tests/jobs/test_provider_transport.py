"""The chat provider's lean HTTP path (issue 25: httpcore's pool on asyncio's streams, no httpx client in between)
sends what the endpoint expects and reads what it answers, keeps connections alive across calls, and steps aside for
httpx where the environment names a proxy. Against the scripted fake endpoint; no database."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import socket
import ssl
import subprocess
import threading
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from jobs.engine import run_blocking
from jobs.providers import Completion, OpenAICompatibleProvider, PermanentError, TransientError, decoded_body

USER = "=== PROPOSAL A ===\n[hypothesis]\nünïcode — one\n\n=== PROPOSAL B ===\n[hypothesis]\ntwo\n=== END ===\n\nWhich?"
MESSAGES = [{"role": "system", "content": "judge"}, {"role": "user", "content": USER}]


def provider(base_url: str, **extra: object) -> OpenAICompatibleProvider:
    options = {"model": "judge-x", "api_key_env": None, "temperature": 0.0, "max_tokens": 50, "timeout": 5.0}
    return OpenAICompatibleProvider(base_url=base_url, **(options | extra))  # type: ignore[arg-type]


async def calls(p: OpenAICompatibleProvider, n: int) -> list:
    try:
        return [await p.complete(messages=MESSAGES) for _ in range(n)]
    finally:
        await p.close()


def test_calls_send_the_request_and_read_the_answer(fake_llm) -> None:  # noqa: ANN001
    fake_llm.script(judge={"policy": "always_a"})
    answers = run_blocking(lambda: calls(provider(fake_llm.base_url), 3))
    assert [a.text.count('"winner"') for a in answers] == [1, 1, 1]
    assert all(a.prompt_tokens and a.completion_tokens for a in answers)
    log = fake_llm.log()
    assert len(log) == 3
    assert {entry["model"] for entry in log} == {"judge-x"}
    assert log[0]["messages"] == MESSAGES


def test_a_server_error_is_transient_and_a_client_error_permanent(fake_llm) -> None:  # noqa: ANN001
    fake_llm.script(failures=[{"attempts": [1], "status": 503}])
    with pytest.raises(TransientError, match="HTTP 503"):
        run_blocking(lambda: calls(provider(fake_llm.base_url), 1))
    fake_llm.script(failures=[{"attempts": "all", "status": 400}])
    with pytest.raises(PermanentError, match="HTTP 400"):
        run_blocking(lambda: calls(provider(fake_llm.base_url), 1))


def test_a_closed_port_is_a_transient_connection_failure() -> None:
    with pytest.raises(TransientError, match="connection failed: ConnectError"):
        run_blocking(lambda: calls(provider("http://127.0.0.1:9/v1"), 1))


def test_a_proxy_the_environment_names_is_used(fake_llm, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    """httpx honoured HTTP_PROXY; so must the provider: here the proxy is a closed port, so the call cannot get through
    (without the proxy it would reach the fake endpoint)."""
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    with pytest.raises(TransientError, match="connection failed"):
        run_blocking(lambda: calls(provider(fake_llm.base_url), 1))
    assert fake_llm.log() == []


def test_a_compressed_answer_is_read() -> None:
    body = b'{"choices": []}'
    assert decoded_body(gzip.compress(body), "gzip") == body
    assert decoded_body(zlib.compress(body), "deflate") == body
    raw = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    assert decoded_body(raw.compress(body) + raw.flush(), "deflate") == body
    with pytest.raises(PermanentError, match="'br'"):
        decoded_body(body, "br")


# --- Small local servers for what the fake endpoint cannot do: hang, never read, part with a 408, compress badly. ---

BOUND = 5.0  # seconds a call with a 1 s timeout may take before it counts as hung (a bound against hangs, not a speed)
ANSWER = json.dumps({"choices": [{"message": {"content": "ok"}}], "usage": {"prompt_tokens": 1, "completion_tokens": 1}})


def response(status: int, body: bytes = ANSWER.encode(), *headers: str, close: bool = False) -> bytes:
    lines = [f"HTTP/1.1 {status} X", f"Content-Length: {len(body)}", *headers]
    lines += ["Connection: close"] if close else []
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def read_request(reader: asyncio.StreamReader) -> None:
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length"))
    await reader.readexactly(length)


@contextlib.asynccontextmanager
async def serving(
    handler: Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]], tls: ssl.SSLContext | None = None
) -> AsyncIterator[int]:
    """An asyncio server on 127.0.0.1 running ``handler`` for each connection; yields its port. On exit every
    connection still open is aborted (so a failing test cannot hang on them)."""
    writers: list[asyncio.StreamWriter] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writers.append(writer)
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            await handler(reader, writer)

    server = await asyncio.start_server(handle, "127.0.0.1", 0, ssl=tls)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
        for writer in writers:
            writer.transport.abort()
        await asyncio.sleep(0)


async def bounded(call: Awaitable[object], release: Callable[[], object], what: str) -> BaseException | object:
    """The call's result or exception, or a test failure if it has not ended within BOUND seconds; ``release`` then
    unblocks it (closes the server's side) so the failing test ends too."""
    task = asyncio.ensure_future(call)
    done, _ = await asyncio.wait({task}, timeout=BOUND)
    if not done:
        release()
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(task, 60)
        pytest.fail(f"{what}: the call had not ended {BOUND} s after its 1 s timeout (closing the connection waits)")
    return task.exception() or task.result()


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (openssl; the ``cryptography`` package is not installed) and its key."""
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        + ["-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", "/CN=127.0.0.1"]
        + ["-addext", "subjectAltName=IP:127.0.0.1"],
        check=True,
        capture_output=True,
    )
    return cert, key


@pytest.fixture
def direct_tls(tls_files: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """The test certificate, with the environment naming no proxy and no TLS roots of its own (either sends the calls
    through httpx, not the pools under test)."""
    for name in ("SSL_CERT_FILE", "SSL_CERT_DIR", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    return tls_files


def server_tls(tls_files: tuple[Path, Path]) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(*tls_files)
    return context


def trusting_provider(port: int, tls_files: tuple[Path, Path], **extra: object) -> OpenAICompatibleProvider:
    """A provider for the local TLS server: the test certificate added to the one TLS setup its pools share."""
    p = provider(f"https://127.0.0.1:{port}/v1", **extra)
    p.transport.tls.load_verify_locations(cafile=tls_files[0])
    return p


def test_a_tls_server_that_hangs_after_the_handshake_times_out_without_waiting_to_close(direct_tls) -> None:  # noqa: ANN001
    """A read timeout closes the connection; the close must not wait (up to 30 s) for the close_notify of a server
    that completed the TLS handshake and then stopped reading (a thread's blocking socket: asyncio's own server would
    answer the close_notify)."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    release = threading.Event()

    def hang() -> None:
        with contextlib.suppress(OSError):
            conn, _ = listener.accept()
            with server_tls(direct_tls).wrap_socket(conn, server_side=True):
                release.wait(60)

    thread = threading.Thread(target=hang, daemon=True)
    thread.start()

    async def scenario() -> object:
        p = trusting_provider(port, direct_tls, timeout=1.0)
        try:
            return await bounded(p.complete(messages=MESSAGES), release.set, "TLS server silent after handshake")
        finally:
            await p.close()

    try:
        outcome = run_blocking(scenario)
    finally:
        release.set()
        listener.close()
        thread.join(5)
    assert isinstance(outcome, TransientError) and "timed out" in str(outcome), outcome


def test_a_server_that_never_reads_a_large_body_is_a_write_timeout() -> None:
    """The body does not fit the socket buffers of a server that never reads; the write timeout closes the connection,
    and the close must drop the unsent data rather than wait for ever to flush it."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # the (never accepted) connection inherits it
    listener.bind(("127.0.0.1", 0))
    listener.listen()  # the kernel completes the handshake; nothing ever reads
    port = listener.getsockname()[1]
    big = [{"role": "user", "content": "x" * 8_000_000}]  # above the kernel's largest send buffer here (4 MiB)

    async def scenario() -> object:
        p = provider(f"http://127.0.0.1:{port}/v1", timeout=1.0)
        try:
            return await bounded(p.complete(messages=big), listener.close, "server never reading an 8 MB body")
        finally:
            await p.close()

    try:
        outcome = run_blocking(scenario)
    finally:
        listener.close()
    assert isinstance(outcome, TransientError) and "timed out" in str(outcome), outcome


def test_the_pools_share_one_tls_context(direct_tls) -> None:  # noqa: ANN001
    """Every new connection in every pool uses the transport's one context (httpcore otherwise builds one, loading
    certifi's roots, per connection): with the test certificate trusted only there, calls through both pools verify."""
    connections = 0

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        await read_request(reader)
        writer.write(response(200, close=True))
        await writer.drain()
        writer.close()

    async def scenario() -> list:
        async with serving(answer, server_tls(direct_tls)) as port:
            p = trusting_provider(port, direct_tls, connections=16)
            assert len(p.transport.pools) == 2, "the test needs two pools: connections=16 should make two of 8"
            return await calls(p, 3)

    assert [a.text for a in run_blocking(scenario)] == ["ok", "ok", "ok"]
    assert connections == 3


def test_an_idle_connection_the_server_closed_with_a_408_is_not_reused() -> None:
    """A server that times an idle keep-alive connection out may write a parting 408 before it closes: bytes waiting
    unread (or the end of the stream) mean the connection cannot carry another request, so the next call opens one."""
    connections = 0
    idle, parted = asyncio.Event(), asyncio.Event()

    async def answer_then_part(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        await read_request(reader)
        writer.write(response(200))
        await writer.drain()
        if connections == 1:
            await idle.wait()  # the client has read the answer: the connection sits idle in its pool
            writer.write(response(408, b"", close=True))
            await writer.drain()
            writer.close()
            parted.set()

    async def scenario() -> list:
        async with serving(answer_then_part) as port:
            p = provider(f"http://127.0.0.1:{port}/v1", connections=1)  # one pool: the second call would reuse
            try:
                first = await p.complete(messages=MESSAGES)
                idle.set()
                await parted.wait()
                await asyncio.sleep(0.05)  # a few turns of the loop: the 408 and the end reach the client's reader
                return [first, await p.complete(messages=MESSAGES)]
            finally:
                await p.close()

    assert [a.text for a in run_blocking(scenario)] == ["ok", "ok"]
    assert connections == 2


def answered(*answers: bytes, userinfo: str = "") -> list:
    """Each answer to one call, on a connection of its own: the outcome (a Completion or the exception raised).
    ``userinfo`` ("user:secret@") puts credentials in the URL, which sends the calls through httpx's clients."""

    async def scenario() -> list:
        queue = list(answers)

        async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await read_request(reader)
            writer.write(queue.pop(0))
            await writer.drain()
            writer.close()

        outcomes = []
        async with serving(answer) as port:
            p = provider(f"http://{userinfo}127.0.0.1:{port}/v1")
            try:
                for _ in answers:
                    try:
                        outcomes.append(await p.complete(messages=MESSAGES))
                    except Exception as exc:  # noqa: BLE001 - the outcome under test
                        outcomes.append(exc)
            finally:
                await p.close()
        return outcomes

    return run_blocking(scenario)


def test_a_server_error_is_retried_whatever_its_body_encoding() -> None:
    """The status is looked at before the body is decoded: a 503 or 429 whose body does not decode (or comes in an
    encoding this client does not read) is still transient."""
    outcomes = answered(
        response(503, b"not gzip at all", "Content-Encoding: gzip", close=True),
        response(429, b"\x00brotli?", "Content-Encoding: br", "Retry-After: 7", close=True),
    )
    assert [type(o) for o in outcomes] == [TransientError, TransientError], outcomes
    assert [str(o) for o in outcomes] == ["HTTP 503", "HTTP 429"]
    assert outcomes[1].retry_after == 7.0


def test_a_corrupt_compressed_answer_is_a_permanent_error_that_says_so() -> None:
    corrupt = gzip.compress(ANSWER.encode())[:-12] + b"garbage!"
    outcomes = answered(
        response(200, corrupt, "Content-Encoding: gzip", close=True),
        response(400, b"\x78\x9cnot deflate", "Content-Encoding: deflate", close=True),
    )
    assert [type(o) for o in outcomes] == [PermanentError, PermanentError], outcomes
    assert "HTTP 200 answer says Content-Encoding 'gzip' but does not decode" in str(outcomes[0])
    assert "HTTP 400 answer says Content-Encoding 'deflate' but does not decode" in str(outcomes[1])


def test_through_httpx_a_corrupt_compressed_answer_is_a_permanent_error_and_a_server_error_transient() -> None:
    """The httpx path (a proxy, credentials in the URL, own TLS roots) reads answers as the pool path does: one that
    does not decode as its Content-Encoding says fails the call with a reason naming the status and the encoding
    (httpx's DecodingError escaped as an unexpected error), and a 503 or 429 is retried whatever its body."""
    assert type(provider("http://user:secret@127.0.0.1:9/v1").transport).__name__ == "_HttpxTransport", (
        "credentials in the URL no longer send the calls through httpx: this test must reach httpx another way"
    )
    outcomes = answered(
        response(200, b"\x1f\x8b not gzip after its magic", "Content-Encoding: gzip", close=True),
        response(400, b"\x78\x9cnot deflate", "Content-Encoding: deflate", close=True),
        response(503, b"not gzip at all", "Content-Encoding: gzip", close=True),
        response(429, b"not deflate", "Content-Encoding: deflate", "Retry-After: 7", close=True),
        response(200, gzip.compress(ANSWER.encode()), "Content-Encoding: gzip", close=True),
        userinfo="user:secret@",
    )
    assert [type(o) for o in outcomes] == [PermanentError, PermanentError, TransientError, TransientError, Completion], outcomes
    assert "HTTP 200 answer says Content-Encoding 'gzip' but does not decode" in str(outcomes[0])
    assert "HTTP 400 answer says Content-Encoding 'deflate' but does not decode" in str(outcomes[1])
    assert [str(o) for o in outcomes[2:4]] == ["HTTP 503", "HTTP 429"]
    assert outcomes[3].retry_after == 7.0
    assert outcomes[4].text == "ok"
