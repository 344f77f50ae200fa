"""Why a server could not listen, in one line: a busy port names itself and the way out
(`--port 0`), rather than a traceback from deep inside the event loop or socketserver.
Shared by `wisp serve` and `python -m wisp.testing.server`."""

from __future__ import annotations

import errno
import socket

_CANNOT_BIND = (errno.EADDRINUSE, errno.EACCES, errno.EADDRNOTAVAIL)


def listen_failure(program: str, host: str, port: int, exc: OSError) -> str | None:
    """The line to print for a failed bind, or None when `exc` is not one."""
    if exc.errno == errno.EADDRINUSE:
        return f"{program}: port {port} on {host} is in use; try --port 0 for a free one"
    if exc.errno in _CANNOT_BIND:
        return f"{program}: cannot listen on {host}:{port}: {exc.strerror}"
    return None


def bind_error(host: str, port: int) -> OSError | None:
    """Binds `host:port` and lets go: the error a server starting now would get, found
    before it opens anything else. SO_REUSEADDR as servers set it, so a port left in
    TIME_WAIT by a previous run is not reported busy. Port 0 is always free."""
    if port == 0:
        return None
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)
    except OSError:
        return None  # an unknown host: the server's own start reports it
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            return exc
    return None
