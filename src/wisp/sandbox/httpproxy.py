"""The proxy's HTTP front end: `CONNECT host:port` tunnels and plain-HTTP requests in
absolute form (`GET http://host/path`).

Above: the proxy's connection dispatcher, which hands over every connection whose first
byte is not SOCKS5's. Below: `Egress` (policy, resolver, connections) and `splice`.

A refused host gets `403` with a body that names it and says how to allow it; a host
that cannot be reached `502`. A plain request is sent on in origin form with
`Connection: close`, so one client connection never carries a second request to
another host. When the settings name the user's own HTTP proxy, the request head goes
to it unchanged once the policy has admitted the host.
"""

from __future__ import annotations

import asyncio
import contextlib
from urllib.parse import urlsplit

from wisp.sandbox.egress import Egress, Refused, Streams, Unreachable, splice

__all__ = ["serve_http"]

HEAD_TIMEOUT = 30.0
_DROPPED = frozenset({"proxy-connection", "proxy-authorization", "keep-alive"})


class BadRequest(Exception):
    pass


class Request:
    """A parsed request head."""

    __slots__ = ("head", "headers", "host", "method", "path", "port")

    def __init__(self, head: bytes) -> None:
        self.head = head
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/"):
            raise BadRequest("malformed request line")
        self.method, target = parts[0], parts[1]
        self.headers = [line for line in lines[1:] if line]
        if self.method == "CONNECT":
            self.host, self.port = _authority(target)
            self.path = ""
        else:
            self.host, self.port, self.path = _absolute(target)


def _authority(target: str) -> tuple[str, int]:
    host, sep, port = target.rpartition(":")
    if not sep or not port.isdigit():
        raise BadRequest("CONNECT needs host:port")
    return host.removeprefix("[").removesuffix("]"), int(port)


def _absolute(target: str) -> tuple[str, int, str]:
    try:
        url = urlsplit(target)
        port = url.port or 80
    except ValueError as exc:
        raise BadRequest(str(exc)) from exc
    if url.scheme.lower() != "http" or not url.hostname:
        raise BadRequest("a proxy request needs an absolute http:// URL")
    path = url.path or "/"
    return url.hostname, port, path + (f"?{url.query}" if url.query else "")


async def serve_http(first: bytes, client: Streams, egress: Egress) -> None:
    reader, writer = client
    try:
        head = first + await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEAD_TIMEOUT)
        request = Request(head)
        admission = egress.admit(request.host, request.port)
        if egress.http_upstream is not None:
            upstream = await egress.open_upstream(egress.http_upstream)
            upstream[1].write(head)
        else:
            upstream = await egress.open(admission, request.port)
            _send_on(request, upstream[1], writer)
    except Refused as refused:
        return await _answer(writer, 403, "Forbidden", _refusal_text(refused))
    except Unreachable as exc:
        return await _answer(writer, 502, "Bad Gateway", f"wisp sandbox proxy: {exc}\n")
    except (BadRequest, asyncio.LimitOverrunError, asyncio.IncompleteReadError,
            TimeoutError, UnicodeError) as exc:
        return await _answer(writer, 400, "Bad Request", f"wisp sandbox proxy: {exc}\n")
    await splice(client, upstream)


def _send_on(request: Request, upstream: asyncio.StreamWriter,
             client: asyncio.StreamWriter) -> None:
    if request.method == "CONNECT":
        client.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        return
    lines = [f"{request.method} {request.path} HTTP/1.1"]
    upgrade = False
    for line in request.headers:
        name, _, value = line.partition(":")
        key = name.strip().lower()
        if key == "connection" and "upgrade" in value.lower():
            upgrade = True
        elif key in _DROPPED or key == "connection":
            continue
        lines.append(line)
    lines.append("Connection: upgrade" if upgrade else "Connection: close")
    if not any(line.lower().startswith("host:") for line in request.headers):
        lines.append(f"Host: {request.host}")
    upstream.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))


def _refusal_text(refused: Refused) -> str:
    host = refused.host
    return (f"wisp sandbox: the connection to {host} was refused: {refused.why}.\n"
            f"To allow it, add WebFetch(domain:{host}) to the permission allow rules or "
            f"{host} to sandbox.network.allowedDomains in the settings; a local address "
            "also needs sandbox.network.allowLocalBinding.\n")


async def _answer(writer: asyncio.StreamWriter, code: int, reason: str, body: str) -> None:
    data = body.encode("utf-8", "replace")
    writer.write(f"HTTP/1.1 {code} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n"
                 f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n"
                 .encode("ascii") + data)
    with contextlib.suppress(Exception):
        await writer.drain()
    writer.close()
