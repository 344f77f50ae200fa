"""MCP servers wisp starts itself: a child process speaking newline-delimited JSON-RPC 2.0
on stdin/stdout (MCP's stdio transport).

Lifecycle. The child gets its own session, so its pid is its process group and one killpg
reaches what it spawned. It is registered in SERVICE_PROCESSES before the first await: an
interrupt (which kills tool processes) leaves it alone, since servers live for the
session, but `end_all_processes()` kills it however wisp exits. A normal close first
closes its stdin (the spec's polite shutdown), then kills what is left of the group.

Failure. stderr is drained into a bounded tail, which is what explains a crash. When
stdout closes the server is gone: waiting requests fail with its exit status and that
tail, its status becomes "failed", and a later tool call gets an is_error result.

As in tools/_bash_exec: Popen + connect_*_pipe rather than asyncio's subprocess API, so
the pid is registered before any await and nothing waits on pipe closure, which a
grandchild could hold open forever.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from wisp.errors import McpError
from wisp.mcp.client import DEFAULT_STARTUP_MS, DEFAULT_TOOL_MS, JSON, McpServer, timeout_s
from wisp.mcp.jsonrpc import RpcChannel, ServerRequest
from wisp.processes import SERVICE_PROCESSES, kill_group
from wisp.tools._bash_exec import wait_for_exit
from wisp.tools.reaper import become_subreaper

CLOSE_GRACE_S = 0.5  # after its stdin closes, how long a server may take to exit itself
STDERR_GRACE_S = 0.2  # after stdout closes, how long the rest of stderr may take
REAP_WAIT_S = 5.0
TAIL_BYTES = 4096
MAX_LINE_BYTES = 64 * 1024 * 1024  # a longer message means a broken server


class StdioMcpServer(McpServer):
    def __init__(self, name: str, command: str, args: list[str], env: dict[str, str], *,
                 cwd: Path | None = None, environ: Mapping[str, str] | None = None) -> None:
        super().__init__(name, "stdio")
        environ = os.environ if environ is None else environ
        self.command, self.args, self.env, self.cwd = command, args, env, cwd
        self.environ = environ  # the session's environment: the server's base env
        self.startup_timeout = timeout_s(environ, "MCP_TIMEOUT", DEFAULT_STARTUP_MS)
        self.tool_timeout = timeout_s(environ, "MCP_TOOL_TIMEOUT", DEFAULT_TOOL_MS)
        self._child: _Child | None = None

    async def open(self) -> None:
        await self.close()
        self._child = await _Child.start(self)

    async def exchange(self, message: JSON, timeout: float | None) -> JSON:
        return await self._live().channel.request(message, timeout)

    async def send_notification(self, message: JSON) -> None:
        self._live().channel.notify(message)

    async def close(self) -> None:
        child, self._child = self._child, None
        if child is not None:
            await child.close()

    def config_entry(self) -> JSON:
        # No env: it may hold secrets, and the host that sent it knows it already.
        return {"type": "stdio", "command": self.command, "args": self.args}

    def _live(self) -> _Child:
        if self._child is None:
            raise McpError(f"MCP server {self.name} is not running")
        return self._child

    def exited(self, child: _Child, error: McpError) -> None:
        # During the handshake the failed request itself reports the error.
        if child is self._child and self.status == "connected":
            self.status, self.error = "failed", str(error)


class _Child:
    """One running server process and the JSON-RPC channel over its pipes."""

    def __init__(self, name: str, proc: subprocess.Popen[bytes],
                 on_notification: Callable[[str, Any], None],
                 on_exit: Callable[[_Child, McpError], None],
                 on_request: ServerRequest | None = None) -> None:
        self.name = name
        self.proc = proc
        self.channel = RpcChannel(self._write, on_notification, on_request)
        self._on_exit = on_exit
        self._stdin: asyncio.WriteTransport | None = None
        self._transports: list[asyncio.BaseTransport] = []
        self._tail = _Tail()
        self._note: str | None = None
        self._closing = False
        self._ended: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._finisher: asyncio.Task[None] | None = None

    @classmethod
    async def start(cls, server: StdioMcpServer) -> _Child:
        become_subreaper()  # what the server leaves running in the background stays ours
        try:
            proc = subprocess.Popen(
                [server.command, *server.args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, cwd=server.cwd, env={**server.environ, **server.env},
                start_new_session=True)
        except OSError as exc:
            raise McpError(f"could not start {server.command}: {exc.strerror or exc}") from None
        SERVICE_PROCESSES.add(proc.pid)  # before any await: every exit path can reach it
        child = cls(server.name, proc, server.notified, server.exited, server.requested)
        try:
            await child._attach()
        except BaseException:
            kill_group(proc.pid)
            child._dispose()
            raise
        return child

    async def _attach(self) -> None:
        loop = asyncio.get_running_loop()
        proc = self.proc
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        lines = _Lines(self.channel.feed, self.channel.garbled, self._stdout_closed)
        out, _ = await loop.connect_read_pipe(lambda: lines, proc.stdout)
        self._transports.append(out)
        err, _ = await loop.connect_read_pipe(lambda: self._tail, proc.stderr)
        self._transports.append(err)
        stdin, _ = await loop.connect_write_pipe(asyncio.Protocol, proc.stdin)
        self._transports.append(stdin)
        self._stdin = stdin

    def _write(self, message: JSON) -> None:
        stdin = self._stdin
        if stdin is None or stdin.is_closing():
            raise McpError(str(self.channel.failure or f"MCP server {self.name} is not running"))
        line = json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n"
        stdin.write(line.encode("utf-8"))

    def _stdout_closed(self, note: str | None) -> None:
        self._note = note
        if self._finisher is None:
            self._finisher = asyncio.ensure_future(self._finish())

    async def _finish(self) -> None:
        """stdout closed: the server is gone (or can't talk any more). Fail what waits,
        tell the owner, then make sure the group is dead and reaped."""
        # A crash writes its traceback to stderr just before exiting: let it arrive.
        await asyncio.wait([self._tail.closed], timeout=STDERR_GRACE_S)
        await wait_for_exit(self.proc, None, STDERR_GRACE_S)  # and its exit status
        error = McpError(self._exit_message(self.proc.poll()))
        self.channel.fail(error)
        if not self._closing:
            self._on_exit(self, error)
        kill_group(self.proc.pid)  # what is left of the group, and so of the stderr pipe
        await wait_for_exit(self.proc, None, REAP_WAIT_S)
        SERVICE_PROCESSES.discard(self.proc.pid)
        self._dispose()
        if not self._ended.done():
            self._ended.set_result(None)

    def _exit_message(self, code: int | None) -> str:
        if self._note is not None:
            how = self._note
        elif code is None:
            how = "closed its output"
        elif code < 0:
            how = f"was killed by signal {-code}"
        else:
            how = f"exited with code {code}"
        tail = self._tail.text()
        return f"MCP server {self.name} {how}" + (f": {tail}" if tail else "")

    async def close(self) -> None:
        if not self._closing:
            self._closing = True
            self.channel.fail(McpError(f"MCP server {self.name} was closed"))
            if self._stdin is not None:
                self._stdin.close()  # EOF on stdin: the spec's request to exit
        done, _ = await asyncio.wait([self._ended], timeout=CLOSE_GRACE_S)
        if not done:
            kill_group(self.proc.pid)  # it did not take the hint
            await asyncio.wait([self._ended], timeout=REAP_WAIT_S)

    def _dispose(self) -> None:
        for transport in self._transports:
            transport.close()
        for raw in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if raw is not None:
                with contextlib.suppress(OSError):  # closed by its transport already
                    raw.close()


class _Lines(asyncio.Protocol):
    """Splits stdout into messages, one JSON value per line. A line that does not parse
    goes to `on_garbled`, which fails the request it answers (a stray print in a server
    is ignored there)."""

    def __init__(self, on_message: Callable[[Any], None],
                 on_garbled: Callable[[bytes, str], None],
                 on_close: Callable[[str | None], None]) -> None:
        self._on_message = on_message
        self._on_garbled = on_garbled
        self._on_close = on_close
        self._buffer = bytearray()
        self._transport: asyncio.BaseTransport | None = None
        self._note: str | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport

    def data_received(self, data: bytes) -> None:
        start = len(self._buffer)
        self._buffer += data
        # Search only the new bytes: a large message arrives in many chunks.
        newline = self._buffer.find(b"\n", start)
        while newline >= 0:
            line = bytes(self._buffer[:newline])
            del self._buffer[: newline + 1]
            self._parse(line)
            newline = self._buffer.find(b"\n")
        if len(self._buffer) > MAX_LINE_BYTES and self._transport is not None:
            self._note = f"sent a message larger than {MAX_LINE_BYTES >> 20} MiB"
            self._buffer.clear()
            self._transport.close()

    def _parse(self, line: bytes) -> None:
        if not line.strip():
            return
        try:
            message = json.loads(line)
        except ValueError:
            self._on_garbled(line, "not valid JSON")
            return
        except RecursionError:
            self._on_garbled(line, "JSON nested too deeply")
            return
        self._on_message(message)

    def connection_lost(self, exc: Exception | None) -> None:
        self._on_close(self._note)


class _Tail(asyncio.Protocol):
    """The last few KB of stderr, read continuously so the server never blocks on a
    full pipe."""

    def __init__(self) -> None:
        self._data = bytearray()
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        self._data += data
        if len(self._data) > 2 * TAIL_BYTES:
            del self._data[:-TAIL_BYTES]

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)

    def text(self) -> str:
        """The last lines, which is where an error (a traceback's last line) is."""
        decoded = self._data[-TAIL_BYTES:].decode("utf-8", "replace")
        lines = [line.strip() for line in decoded.splitlines() if line.strip()]
        return "\n".join(lines[-5:])[-1000:]
