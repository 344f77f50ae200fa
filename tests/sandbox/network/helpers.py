"""Helpers of the network jail's tests: a bubblewrap runner shaped like the sandbox's
(user, pid, IPC and network namespaces, read-only root, fresh /dev and /proc), a
recording resolver, and an HTTP upstream on 127.0.0.1."""

from __future__ import annotations

import os
import socket
import subprocess
import threading
from collections.abc import Sequence

from wisp.sandbox.network import NetworkJail

NAMESPACES = ("--new-session", "--die-with-parent", "--unshare-user", "--unshare-pid",
              "--unshare-ipc", "--cap-drop", "ALL", "--ro-bind", "/", "/", "--dev", "/dev",
              "--proc", "/proc")


class Jailer:
    """Runs a shell command in bubblewrap, with a network jail or with none (plain
    `--unshare-net`, the control case)."""

    def __init__(self, bwrap: str) -> None:
        self.bwrap = bwrap

    def argv(self, jail: NetworkJail | None, inner: list[str]) -> list[str]:
        if jail is None:
            return [self.bwrap, *NAMESPACES, "--unshare-net", "--", *inner]
        return [self.bwrap, *NAMESPACES, *jail.bwrap_args, "--", *jail.wrap(inner)]

    def run(self, jail: NetworkJail | None, command: str, *, argv: Sequence[str] = (),
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        inner = list(argv) if argv else ["bash", "-c", command]
        base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/tmp",
                "LANG": "C.UTF-8"}
        full = {**base, **(jail.env if jail is not None else {}), **(env or {})}
        return subprocess.run(self.argv(jail, inner), pass_fds=jail.pass_fds if jail else (),
                              env=full, capture_output=True, text=True, timeout=60,
                              check=False)


class Resolver:
    """A name → address table, standing in for DNS; every question is recorded."""

    def __init__(self, table: dict[str, str]) -> None:
        self.table = table
        self.asked: list[str] = []

    async def __call__(self, host: str, port: int) -> list[str]:
        self.asked.append(host)
        if host not in self.table:
            raise OSError(f"no such name: {host}")
        return [self.table[host]]


class Upstream:
    """A tiny HTTP/1.1 server on 127.0.0.1: answers `upstream saw <path>` (or, for
    /big/<n>, n bytes of a known pattern) and records each request head."""

    def __init__(self) -> None:
        self._server = socket.socket()
        self._server.bind(("127.0.0.1", 0))
        self._server.listen(64)
        self.port: int = self._server.getsockname()[1]
        self.heads: list[str] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._serve, daemon=True).start()

    def close(self) -> None:
        self._server.close()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                head += chunk
            text = head.decode("latin-1")
            with self._lock:
                self.heads.append(text)
            path = text.split(" ", 2)[1]
            body = pattern(int(path[5:])) if path.startswith("/big/") else \
                f"upstream saw {path}\n".encode()
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
                         % len(body) + body)


def pattern(size: int) -> bytes:
    """`size` bytes that change on every byte, so a lost or doubled chunk shows."""
    return bytes(i * 7 % 251 for i in range(size))


class UserSocksProxy:
    """Stands in for the user's own SOCKS5 proxy on 127.0.0.1: records each CONNECT
    target and answers the tunnelled HTTP request itself."""

    def __init__(self) -> None:
        self._server = socket.socket()
        self._server.bind(("127.0.0.1", 0))
        self._server.listen(16)
        self.port: int = self._server.getsockname()[1]
        self.targets: list[tuple[str, int]] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def close(self) -> None:
        self._server.close()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._session, args=(conn,), daemon=True).start()

    def _session(self, conn: socket.socket) -> None:
        with conn, conn.makefile("rb") as stream:
            greeting = stream.read(2)
            stream.read(greeting[1])
            conn.sendall(b"\x05\x00")
            head = stream.read(4)
            size = stream.read(1)[0] if head[3] == 3 else 4
            host = stream.read(size).decode()
            port = int.from_bytes(stream.read(2), "big")
            self.targets.append((host, port))
            conn.sendall(b"\x05\x00\x00\x01\x00\x00\x00\x00\x00\x00")
            while stream.readline() not in (b"\r\n", b""):
                pass
            body = f"user proxy reached {host}:{port}\n".encode()
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
                         % len(body) + body)
