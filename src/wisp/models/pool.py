"""Opening HTTP connections, and keeping idle HTTP/1.1 ones for the next request.

Above: `wisp.models.http.request` takes an idle connection here (or opens a new one) and a
response gives its connection back once its body was read to the end.
Below: `asyncio.open_connection` (plain TCP, or TLS with the default context and SNI).

Why a pool: against the real API, a new connection per model request costs every agent
turn a TCP and TLS handshake (~50-150 ms). asyncio streams are bound to the loop that
opened them, so a pool serves one loop at a time. On that loop a janitor task closes
connections idle too long, and closes them all when the loop shuts down: `asyncio.run`
cancels leftover tasks before closing its loop, so no socket is left for the garbage
collector to warn about ("unclosed transport", "Event loop is closed").
"""

from __future__ import annotations

import asyncio
import errno
import os
import socket
import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, NamedTuple

from wisp.errors import Unreachable
from wisp.models.proxy import proxy_for, tunnel

Key = tuple[str, str, int]  # (scheme, host, port)
Resolve = Callable[[str, int], Awaitable[str]]  # (host, port) → the address to connect to

MAX_IDLE_PER_KEY = 4
MAX_IDLE_SECONDS = 60.0
# Status and header lines are short; asyncio's 64 KiB line limit is ample and guards memory.
_HEAD_LIMIT = 64 * 1024
CONNECTION_ERRORS = (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError)


class URL(NamedTuple):
    scheme: str
    host: str
    port: int
    target: str  # path and query, as sent on the request line

    @property
    def authority(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.scheme == "https" else 80
        return host if self.port == default else f"{host}:{self.port}"

    @property
    def key(self) -> Key:
        return (self.scheme, self.host, self.port)


def parse_url(url: str) -> URL:
    """Split an absolute http(s) URL. Hand-rolled: urllib.parse is not needed for this."""
    scheme, sep, rest = url.partition("://")
    scheme = scheme.lower()
    if not sep or scheme not in ("http", "https"):
        raise ValueError(f"Unsupported URL (need http:// or https://): {url!r}")
    slash = [i for i in (rest.find("/"), rest.find("?")) if i >= 0]
    cut = min(slash) if slash else len(rest)
    authority, target = rest[:cut].rpartition("@")[2], rest[cut:] or "/"
    if target.startswith("?"):
        target = "/" + target
    target = target.partition("#")[0]
    host, port = authority, 443 if scheme == "https" else 80
    if authority.startswith("["):
        host, _, tail = authority[1:].partition("]")
        if tail.startswith(":") and tail[1:]:
            port = int(tail[1:])
    elif ":" in authority:
        host, _, port_text = authority.rpartition(":")
        port = int(port_text) if port_text else port
    if not host:
        raise ValueError(f"URL has no host: {url!r}")
    return URL(scheme, host, port, target)



class Connection:
    """One open socket as a pair of asyncio streams."""

    def __init__(
        self, key: Key, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        self.key = key
        self.reader = reader
        self.writer = writer
        self.idle_since = 0.0

    def alive(self) -> bool:
        # EOF or an error seen while idle means the server closed (or reset) the connection.
        reader = self.reader
        closing = self.writer.transport.is_closing()
        return not (closing or reader.at_eof() or reader.exception() is not None)

    def abort(self) -> None:
        """Drop the socket at once: no flushing, no TLS close_notify."""
        self.writer.transport.abort()

    async def close(self, *, abort: bool = False) -> None:
        if abort:
            self.abort()
        else:
            self.writer.transport.close()
        try:
            async with asyncio.timeout(1.0):
                await self.writer.wait_closed()
        except (OSError, TimeoutError):
            pass


class ConnectionPool:
    """Idle connections by (scheme, host, port), newest last; for one event loop at a time."""

    def __init__(
        self, max_per_key: int = MAX_IDLE_PER_KEY, max_idle: float = MAX_IDLE_SECONDS,
        environ: Mapping[str, str] | None = None, resolve: Resolve | None = None,
    ) -> None:
        # Where HTTPS_PROXY / NO_PROXY are read: the session's environment overlay.
        self.environ: Mapping[str, str] = os.environ if environ is None else environ
        # Picks (and may refuse) the address a new direct connection goes to.
        self.resolve = resolve
        self.max_per_key = max_per_key
        self.max_idle = max_idle
        # Where a connection was ever opened: a failure to reach one of these again is
        # likelier to pass than a wrong address (`Unreachable.reached_before`).
        self.reached: set[Key] = set()
        self._idle: dict[Key, list[Connection]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._janitor: asyncio.Task[None] | None = None

    def idle_count(self) -> int:
        """Idle connections that still look open (closed ones are dropped when next taken)."""
        return sum(conn.alive() for stack in self._idle.values() for conn in stack)

    def take(self, key: Key) -> Connection | None:
        """An idle connection that still looks open, or None. Stale ones are dropped."""
        self._bind()
        stack = self._idle.get(key, [])
        oldest = time.monotonic() - self.max_idle
        while stack:
            conn = stack.pop()  # the most recently used is the likeliest to still be open
            if conn.idle_since >= oldest and conn.alive():
                return conn
            conn.abort()
        return None

    def put(self, conn: Connection) -> None:
        """Keep a connection whose last response was read to its end."""
        self._bind()
        if not conn.alive():
            conn.abort()
            return
        conn.idle_since = time.monotonic()
        stack = self._idle.setdefault(conn.key, [])
        stack.append(conn)
        while len(stack) > self.max_per_key:
            stack.pop(0).abort()
        if stack and (self._janitor is None or self._janitor.done()):
            self._janitor = asyncio.get_running_loop().create_task(
                self._watch(), name="wisp-http-pool"
            )

    async def aclose(self) -> None:
        """Close every idle connection now (connections in use are their owners' to close)."""
        self._bind()
        janitor, self._janitor = self._janitor, None
        if janitor is not None and not janitor.done():
            janitor.cancel()
        await self._close_idle()

    def _bind(self) -> None:
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            # Another loop's sockets cannot be used or closed from this one. A loop run by
            # asyncio.run had its janitor close them already; otherwise they are let go.
            self._idle, self._loop, self._janitor = {}, loop, None

    async def _watch(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while self._loop is loop and (stamps := self._idle_stamps()):
                await asyncio.sleep(max(0.0, min(stamps) + self.max_idle - time.monotonic()))
                self._expire()
        except asyncio.CancelledError:
            if self._loop is loop:  # the loop (or the pool) is shutting down
                await self._close_idle()
            raise

    def _idle_stamps(self) -> list[float]:
        return [conn.idle_since for stack in self._idle.values() for conn in stack]

    def _expire(self) -> None:
        oldest = time.monotonic() - self.max_idle
        for key, stack in list(self._idle.items()):
            keep = [conn for conn in stack if conn.idle_since >= oldest]
            for conn in stack:
                if conn.idle_since < oldest:
                    conn.abort()
            self._idle[key] = keep

    async def _close_idle(self) -> None:
        idle = [conn for stack in self._idle.values() for conn in stack]
        self._idle = {}
        await asyncio.gather(*(conn.close(abort=True) for conn in idle))


async def open_connection(key: Key, connect_timeout: float,
                          environ: Mapping[str, str] | None = None,
                          resolve: Resolve | None = None) -> Connection:
    """A new connection; failures are `Unreachable` (retryable, status None). Proxy
    settings come from `environ` (the session's overlay), else the process environment.
    `resolve` chooses the address a direct connection goes to (TLS still names the host); what it
    raises is not caught."""
    scheme, host, port = key
    kwargs: dict[str, Any] = {"limit": _HEAD_LIMIT}
    if scheme == "https":
        kwargs.update(ssl=_ssl_context(), server_hostname=host)
    where = f"{host}:{port}"
    proxy = proxy_for(scheme, host, os.environ if environ is None else environ)
    try:
        async with asyncio.timeout(connect_timeout):
            if proxy is not None:
                reader, writer = await tunnel(proxy, host, port, ssl=kwargs.get("ssl"),
                                              limit=_HEAD_LIMIT)
            else:
                address = await resolve(host, port) if resolve is not None else host
                reader, writer = await asyncio.open_connection(address, port, **kwargs)
    except TimeoutError:
        raise Unreachable(f"Connection error: timed out connecting to {where}",
                          cause="proxy" if proxy else "timeout",
                          reason=f"no answer within {connect_timeout:g}s") from None
    except CONNECTION_ERRORS as exc:
        raise Unreachable(f"Connection error: could not connect to {where} ({describe(exc)})",
                          cause=failure_cause(exc, proxy is not None),
                          reason=_reason(exc)) from None
    return Connection(key, reader, writer)


def _reason(exc: BaseException) -> str:
    """`describe` as the middle of a sentence: lower case, without OpenSSL's source line."""
    text = describe(exc).partition(" (_ssl.c:")[0]
    return text[:1].lower() + text[1:]


def failure_cause(exc: BaseException, proxied: bool) -> str:
    """What kind of connection failure `exc` is (see `Unreachable.cause`)."""
    ssl = sys.modules.get("ssl")  # loaded only if an https connection was attempted
    if ssl is not None and isinstance(exc, ssl.SSLError):
        return "tls"
    if proxied:
        return "proxy"  # the proxy is what could not be reached
    if isinstance(exc, socket.gaierror):
        return "dns"
    if isinstance(exc, ConnectionRefusedError):
        return "refused"
    if isinstance(exc, OSError) and exc.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH):
        return "network"
    return "other"


_SSL_CONTEXT: Any = None


def _ssl_context() -> Any:
    # Imported lazily: plain-http runs (the local fake server) never pay for TLS setup,
    # and loading the CA bundle (~10 ms) happens once per process.
    global _SSL_CONTEXT
    if _SSL_CONTEXT is None:
        import ssl

        _SSL_CONTEXT = ssl.create_default_context()
    return _SSL_CONTEXT


def describe(exc: BaseException) -> str:
    """A short reason for a connection failure, for `Connection error: ...` messages."""
    if isinstance(exc, asyncio.IncompleteReadError):
        return "connection closed by the server"
    if isinstance(exc, asyncio.LimitOverrunError):
        return "response head too large"
    if isinstance(exc, OSError) and exc.errno and exc.errno > 0:
        strerror = str(exc.strerror or "")
        # asyncio words refusals as "Connect call failed ('127.0.0.1', 1)"; the errno's own
        # text ("Connection refused") says more. SSL errors keep their message.
        if not strerror or strerror.startswith("Connect call failed"):
            return os.strerror(exc.errno)
        return strerror
    if isinstance(exc, OSError) and exc.strerror:
        return str(exc.strerror)  # e.g. getaddrinfo's "Name or service not known"
    return str(exc) or type(exc).__name__
