"""The session's filtering proxy: one Unix socket in a private folder, served by an
asyncio loop on a daemon thread of wisp's process (no process, no TCP port on the host).

Above: `NetworkGate`, which starts it the first time a command needs egress and stops it
at close. Below: the HTTP and SOCKS5 front ends, told apart by the first byte a client
sends (5 opens SOCKS5; an HTTP method never starts with that byte).

The socket is reached only through the bridge inside each sandbox, which sees it bound
at a fixed path; its folder is 0700, so no other user of the host reaches it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading

from wisp.sandbox.egress import Egress
from wisp.sandbox.httpproxy import serve_http
from wisp.sandbox.socks import serve_socks

__all__ = ["ProxyServer"]

FIRST_BYTE_TIMEOUT = 30.0


class ProxyServer:
    """Listens on `path` until `stop()`; `start()` returns once it listens."""

    def __init__(self, egress: Egress, path: str) -> None:
        self.egress = egress
        self.path = path
        self._ready = threading.Event()
        self._failure: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._run, name="wisp-egress-proxy",
                                        daemon=True)

    def start(self, timeout: float = 10.0) -> None:
        self._thread.start()
        if not self._ready.wait(timeout):
            raise OSError(f"the egress proxy did not start within {timeout} s")
        if self._failure is not None:
            raise OSError(f"the egress proxy could not start: {self._failure}")

    def stop(self) -> None:
        """Closes the socket and every connection; idempotent."""
        loop, stopping = self._loop, self._stopping
        if loop is not None and stopping is not None and self._thread.is_alive():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(stopping.set)
            self._thread.join(5.0)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._serve())
        except BaseException as exc:  # reported to start(); the thread must not die loudly
            self._failure = exc
        finally:
            self._ready.set()
            loop.close()

    async def _serve(self) -> None:
        self._stopping = asyncio.Event()
        connections: set[asyncio.Task[None]] = set()

        async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            task = asyncio.current_task()
            assert task is not None
            connections.add(task)
            try:
                await self._handle(reader, writer)
            finally:
                connections.discard(task)

        server = await asyncio.start_unix_server(accept, path=self.path)
        self._ready.set()
        await self._stopping.wait()
        server.close()
        for task in list(connections):
            task.cancel()
        await asyncio.gather(*connections, return_exceptions=True)

    async def _handle(self, reader: asyncio.StreamReader,
                      writer: asyncio.StreamWriter) -> None:
        try:
            first = await asyncio.wait_for(reader.readexactly(1), FIRST_BYTE_TIMEOUT)
            if first == b"\x05":
                await serve_socks((reader, writer), self.egress)
            else:
                await serve_http(first, (reader, writer), self.egress)
        except (asyncio.IncompleteReadError, TimeoutError, ConnectionError):
            pass  # the client went away or never spoke
        finally:
            writer.close()
