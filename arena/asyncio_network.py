"""httpcore's network backend on asyncio's own streams, for the engine's calls to model endpoints (``jobs.providers``).

httpcore's default backend goes through anyio, which opens a cancel scope for every read and write and builds a table
of socket attributes for every look at a connection: a fifth of what a call cost a driver in the client (issue 25).
This one maps the same operations onto ``asyncio.open_connection`` with ``asyncio.timeout``, and raises httpcore's own
errors, so the pool above it behaves as before: a timeout is ``ReadTimeout`` / ``WriteTimeout`` / ``ConnectTimeout``,
a dropped connection ``ReadError`` / ``WriteError`` / ``ConnectError``. No Django: the shared core's plain Python.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Iterable
from typing import Any

import httpcore


class AsyncioStream(httpcore.AsyncNetworkStream):
    """One connection: asyncio's reader and writer."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            async with asyncio.timeout(timeout):
                return await self.reader.read(max_bytes)
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
        self.writer.close()
        try:
            await self.writer.wait_closed()
        except (OSError, ssl.SSLError):  # closing a connection the peer dropped
            pass

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
            # What httpcore asks before reusing an idle connection: did the server close it (or drop it)? asyncio reads
            # the socket as data comes, so the answer is the reader's end of file, not a poll of the socket.
            return self.reader.at_eof() or self.writer.transport.is_closing()
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
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_connection(
                    host, port, local_addr=(local_address, 0) if local_address else None
                )
        except TimeoutError:
            raise httpcore.ConnectTimeout(f"could not connect within {timeout} s") from None
        except OSError as exc:
            raise httpcore.ConnectError(str(exc) or type(exc).__name__) from exc
        for option in socket_options or ():
            writer.get_extra_info("socket").setsockopt(*option)
        return AsyncioStream(reader, writer)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)
