"""A server that sends slowly, or too much, cannot hold `wisp -p` or flood it.

Before: WebFetch had a timeout per read only, so a server sending a byte every 8 s kept
`-p` running until it was killed, and a body past 2 MB was silently cut. Now the whole
fetch has a deadline (60 s; WISP_WEBFETCH_DEADLINE_S), a body over 10 MB is an error,
and a signal ends wisp at once even mid-fetch.

The hostile server listens on 127.0.0.1 only; WebFetch reaches it through the
`WebFetch(domain:127.0.0.1)` allow rule, the one way it may contact a loopback address.
"""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from tests.robustness.helpers import STREAM, model_requests
from wisp.testing import reply

ALLOW = ("--allowedTools", "WebFetch(domain:127.0.0.1)")
HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"


class HostileServer:
    """Accepts on 127.0.0.1 and answers every connection with `behave(conn, stop)`, each
    in its own thread; `stop` is set when the test ends, so no answer outlives it."""

    def __init__(self, behave: Callable[[socket.socket, threading.Event], None]) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.1)
        self.behave = behave
        self.stop = threading.Event()
        self.threads: list[threading.Thread] = []
        self.accepted = 0
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}/page"

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.accepted += 1
            worker = threading.Thread(target=self._answer, args=(conn,), daemon=True)
            worker.start()
            self.threads.append(worker)

    def _answer(self, conn: socket.socket) -> None:
        # OSError: the client hung up, which is what a deadline does.
        with conn, contextlib.suppress(OSError):
            conn.recv(65536)  # the request
            self.behave(conn, self.stop)

    def close(self) -> None:
        self.stop.set()
        self.listener.close()
        self.thread.join(5)
        for worker in self.threads:
            worker.join(5)


def drip(head: bytes, every: float, sent: list[bytes] | None = None,
         ) -> Callable[[socket.socket, threading.Event], None]:
    """Sends `head`, then one byte each `every` seconds, forever (each also appended to
    `sent`, for a test to wait on)."""

    def behave(conn: socket.socket, stop: threading.Event) -> None:
        conn.sendall(head)
        while not stop.wait(every):
            conn.sendall(b"x")
            if sent is not None:
                sent.append(b"x")

    return behave


def drip_headers(every: float) -> Callable[[socket.socket, threading.Event], None]:
    """The status line itself, one byte at a time."""

    def behave(conn: socket.socket, stop: threading.Event) -> None:
        for byte in HEAD:
            if stop.wait(every):
                return
            conn.sendall(bytes([byte]))

    return behave


def flood(declared: bool) -> Callable[[socket.socket, threading.Event], None]:
    """11 MB of body, its length declared or not (then the end of the body is the close)."""
    size = 11 * 1024 * 1024

    def behave(conn: socket.socket, stop: threading.Event) -> None:
        length = f"Content-Length: {size}\r\n".encode() if declared else b"Connection: close\r\n"
        conn.sendall(HEAD + length + b"\r\n")
        chunk = b"y" * 65536
        for _ in range(size // len(chunk)):
            if stop.is_set():
                return
            conn.sendall(chunk)

    return behave


@pytest.fixture
def hostile() -> Iterator[Callable[..., HostileServer]]:
    servers: list[HostileServer] = []

    def start(behave: Callable[[socket.socket, threading.Event], None]) -> HostileServer:
        servers.append(HostileServer(behave))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def fetched(server) -> dict:
    """The tool_result of the one WebFetch, as the model got it."""
    return model_requests(server)[1]["messages"][-1]["content"][0]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("how", ["body", "headers"])
def test_a_slow_drip_ends_at_the_deadline_with_a_clear_error(wisp, server, hostile, how):
    behave = drip(HEAD + b"\r\n", 8.0) if how == "body" else drip_headers(1.0)
    site = hostile(behave)
    server.script(reply.tool_use("WebFetch", {"url": site.url, "prompt": "read it"}),
                  reply.text("gave up"))
    started = time.monotonic()
    run = wisp("-p", "fetch", *STREAM, *ALLOW, env={"WISP_WEBFETCH_DEADLINE_S": "2"},
               timeout=30)
    took = time.monotonic() - started
    assert run.returncode == 0, run.stderr[-2000:]
    assert took < 10, took
    block = fetched(server)
    assert block["is_error"] is True
    expected = f"WebFetch failed: {site.url} was still sending after "
    assert block["content"].startswith(expected), block
    assert block["content"].endswith("a fetch may take 2s in all")
    assert run.result["result"] == "gave up"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("declared", [True, False], ids=["declared", "undeclared"])
def test_a_body_over_10_mb_is_an_error(wisp, server, hostile, declared):
    site = hostile(flood(declared))
    server.script(reply.tool_use("WebFetch", {"url": site.url, "prompt": "read it"}),
                  reply.text("too big"))
    run = wisp("-p", "fetch", *STREAM, *ALLOW, timeout=30)
    assert run.returncode == 0, run.stderr[-2000:]
    block = fetched(server)
    assert block["is_error"] is True
    size = f"{11 * 1024 * 1024:,} bytes" if declared else "more"
    assert block["content"] == (f"WebFetch failed: {site.url} sent {size}, more than the "
                                "10 MB a page may have")
    assert max(len(json.dumps(r.body)) for r in server.requests) < 200_000


@pytest.mark.timeout(60)
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_ends_wisp_at_once_mid_fetch(wisp, server, hostile, sig):
    sent: list[bytes] = []
    site = hostile(drip(HEAD + b"\r\n", 0.2, sent))
    server.script(reply.tool_use("WebFetch", {"url": site.url, "prompt": "read it"}),
                  reply.text("never"))
    proc = wisp.spawn("-p", "fetch", *STREAM, *ALLOW)  # the default deadline: 60 s
    try:
        deadline = time.monotonic() + 15
        # A few body bytes in: a read is under way.
        while len(sent) < 3 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert site.accepted == 1 and len(sent) >= 3
        sent = time.monotonic()
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=10)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    # Far inside the fetch's 60 s deadline, yet wide enough for a loaded 2-core machine
    # (bench/ holds the tight numbers).
    assert took < 5.0, f"{took:.2f}s\n{err[-2000:]}"
    result = json.loads(out.strip().splitlines()[-1])
    assert result["type"] == "result" and result["subtype"] == "error_during_execution"
