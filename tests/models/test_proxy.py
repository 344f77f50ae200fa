"""Model requests go through an HTTP CONNECT proxy when HTTP(S)_PROXY says so."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Iterator

import pytest

from wisp.testing import reply


class ConnectProxy:
    """A tiny CONNECT proxy on 127.0.0.1 that records each tunnel request and sends every
    tunnel to one upstream, whatever host was asked for (so no name is ever resolved)."""

    def __init__(self, upstream: tuple[str, int], refuse: bool = False) -> None:
        self.upstream = upstream
        self.refuse = refuse
        self.requests: list[str] = []
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(client,), daemon=True).start()

    def _handle(self, client: socket.socket) -> None:
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = client.recv(4096)
            if not chunk:
                return
            head += chunk
        self.requests.append(head.decode("latin-1"))
        if self.refuse:
            client.sendall(b"HTTP/1.1 403 Forbidden\r\n\r\n")
            client.close()
            return
        upstream = socket.create_connection(self.upstream)
        client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        for a, b in ((client, upstream), (upstream, client)):
            threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def proxy(server) -> Iterator[ConnectProxy]:
    host, port = server.url.removeprefix("http://").split(":")
    p = ConnectProxy((host, int(port)))
    yield p
    p.close()


def test_requests_tunnel_through_the_proxy(wisp, server, proxy):
    server.script(reply.text("via proxy"))
    port = server.url.rsplit(":", 1)[1]
    env = {"ANTHROPIC_BASE_URL": f"http://api.wisp-test.invalid:{port}",
           "HTTP_PROXY": f"http://user:s3cret@127.0.0.1:{proxy.port}"}
    run = wisp("-p", "x", "--output-format", "json", env=env)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["result"] == "via proxy"
    assert proxy.requests[0].startswith(f"CONNECT api.wisp-test.invalid:{port} HTTP/1.1")
    assert "Proxy-Authorization: Basic dXNlcjpzM2NyZXQ=" in proxy.requests[0]


def test_no_proxy_and_loopback_bypass_the_proxy(wisp, server, proxy):
    server.script(reply.text("direct"))
    run = wisp("-p", "x", env={"HTTP_PROXY": f"http://127.0.0.1:{proxy.port}"})
    assert run.stdout == "direct\n"
    assert proxy.requests == []  # the base URL is 127.0.0.1: never proxied


def test_a_refused_tunnel_is_a_clear_connection_error(wisp, server):
    host, port = server.url.removeprefix("http://").split(":")
    refusing = ConnectProxy((host, int(port)), refuse=True)
    try:
        env = {"ANTHROPIC_BASE_URL": f"http://api.wisp-test.invalid:{port}",
               "HTTP_PROXY": f"http://127.0.0.1:{refusing.port}", "CLAUDE_CODE_MAX_RETRIES": "0"}
        run = wisp("-p", "x", "--output-format", "json", env=env)
    finally:
        refusing.close()
    assert run.returncode == 1
    assert "refused the tunnel" in json.loads(run.stdout)["result"]
