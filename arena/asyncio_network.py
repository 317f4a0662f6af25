"""httpcore's network backend on asyncio's own streams, for the engine's calls to model endpoints (``jobs.providers``).

httpcore's default backend goes through anyio, which opens a cancel scope for every read and write and builds a table
of socket attributes for every look at a connection: a fifth of what a call cost a driver in the client (issue 25).
This one maps the same operations onto ``asyncio.open_connection`` with ``asyncio.timeout``, and raises httpcore's own
errors, so the pool above it behaves as before: a timeout is ``ReadTimeout`` / ``WriteTimeout`` / ``ConnectTimeout``,
a dropped connection ``ReadError`` / ``WriteError`` / ``ConnectError``. No Django: the shared core's plain Python.

A connection is closed as anyio closes it: aborted, never waiting for the peer. httpcore closes a stream after a
timeout in a block cancellation cannot reach, so a close that waits (for a TLS close_notify, up to 30 s, or for unsent
data a server never reads, for ever) would outlast the timeout it follows.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Iterable
from typing import Any

import httpcore

READ_LIMIT = 2**16  # asyncio.open_connection's default buffer limit


class CountingReader(asyncio.StreamReader):
    """asyncio's reader, counting what the connection received and noting its end: the stream compares that with what
    it handed on, to tell whether anything is waiting unread (``at_eof`` says False while bytes sit in the buffer,
    even after the server closed)."""

    received = 0
    ended = False

    def feed_data(self, data: bytes) -> None:
        self.received += len(data)
        super().feed_data(data)

    def feed_eof(self) -> None:
        self.ended = True
        super().feed_eof()


class AsyncioStream(httpcore.AsyncNetworkStream):
    """One connection: asyncio's reader and writer."""

    def __init__(self, reader: CountingReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.consumed = 0  # bytes handed to httpcore

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            async with asyncio.timeout(timeout):
                data = await self.reader.read(max_bytes)
                self.consumed += len(data)
                return data
        except TimeoutError:
            raise httpcore.ReadTimeout(f"no answer within {timeout} s") from None
        except OSError as exc:
            raise httpcore.ReadError(str(exc) or type(exc).__name__) from exc

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        try:
            async with asyncio.timeout(timeout):
                self.writer.write(buffer)
                await self.writer.drain()
        except TimeoutError:
            raise httpcore.WriteTimeout(f"could not send within {timeout} s") from None
        except OSError as exc:
            raise httpcore.WriteError(str(exc) or type(exc).__name__) from exc

    async def aclose(self) -> None:
        # Aborted (unsent data dropped, no TLS close_notify awaited), then one turn of the loop so the socket is
        # released: httpcore closes a connection only when it is done with it (an answer read, a timeout, an error).
        self.writer.transport.abort()
        await asyncio.sleep(0)

    async def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> AsyncioStream:
        try:
            async with asyncio.timeout(timeout):
                await self.writer.start_tls(ssl_context, server_hostname=server_hostname)
        except TimeoutError:
            await self.aclose()
            raise httpcore.ConnectTimeout(f"no TLS handshake within {timeout} s") from None
        except (OSError, ssl.SSLError) as exc:
            await self.aclose()
            raise httpcore.ConnectError(str(exc) or type(exc).__name__) from exc
        return self

    def get_extra_info(self, info: str) -> Any:  # noqa: ANN401
        if info == "is_readable":
            # What httpcore asks before reusing an idle connection: did the server send anything (a parting "408")
            # or close it (or drop it)? asyncio reads the socket as data comes, so the answer is in the reader: bytes
            # received and not read, or its end, not a poll of the socket.
            reader = self.reader
            return reader.ended or reader.received > self.consumed or self.writer.transport.is_closing()
        names = {"ssl_object": "ssl_object", "client_addr": "sockname", "server_addr": "peername", "socket": "socket"}
        return self.writer.get_extra_info(names[info]) if info in names else None


class AsyncioBackend(httpcore.AsyncNetworkBackend):
    """Pass as ``network_backend`` to an ``httpcore.AsyncConnectionPool`` used from an asyncio event loop."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> AsyncioStream:
        loop = asyncio.get_running_loop()
        reader = CountingReader(limit=READ_LIMIT, loop=loop)
        try:
            async with asyncio.timeout(timeout):
                # What asyncio.open_connection does, with the counting reader.
                transport, protocol = await loop.create_connection(
                    lambda: asyncio.StreamReaderProtocol(reader, loop=loop),
                    host,
                    port,
                    local_addr=(local_address, 0) if local_address else None,
                )
        except TimeoutError:
            raise httpcore.ConnectTimeout(f"could not connect within {timeout} s") from None
        except OSError as exc:
            raise httpcore.ConnectError(str(exc) or type(exc).__name__) from exc
        writer = asyncio.StreamWriter(transport, protocol, reader, loop)
        for option in socket_options or ():
            writer.get_extra_info("socket").setsockopt(*option)
        return AsyncioStream(reader, writer)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


def certifi_tls() -> ssl.SSLContext:
    """TLS as httpx sets it up by default (certifi's roots): made once and shared by every connection of a client's
    pools, since httpcore otherwise builds one (loading the roots, ~30 ms of CPU) for each new connection."""
    import httpx

    return httpx.create_ssl_context()


def connection_pool(
    *, tls: ssl.SSLContext | None, max_keepalive_connections: int, keepalive_expiry: float
) -> httpcore.AsyncConnectionPool:
    """An httpcore pool on this backend, its TLS connections made with ``tls`` (None: httpcore's default)."""
    return httpcore.AsyncConnectionPool(
        ssl_context=tls,
        max_connections=None,
        max_keepalive_connections=max_keepalive_connections,
        keepalive_expiry=keepalive_expiry,
        network_backend=AsyncioBackend(),
    )
