"""HTTP(S) proxies: a CONNECT tunnel to the API host, TLS inside it for https.

Honours `HTTPS_PROXY` / `HTTP_PROXY` (either case) and `NO_PROXY`, as curl and the official
SDKs do. Loopback hosts never go through a proxy. Only `http://` proxy URLs are supported;
credentials in the URL become `Proxy-Authorization: Basic`. The client never resolves the
API host itself when a proxy is used; the proxy does.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Mapping
from typing import Any, NamedTuple

from wisp.errors import ModelAPIError, Unreachable

LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})


class Proxy(NamedTuple):
    host: str
    port: int
    authorization: str | None


def _env(env: Mapping[str, str], name: str) -> str:
    return env.get(name) or env.get(name.lower()) or ""


def _bypassed(host: str, env: Mapping[str, str]) -> bool:
    if host in LOOPBACK:
        return True
    for raw in _env(env, "NO_PROXY").split(","):
        entry = raw.strip().lower().lstrip(".")
        if entry == "*" or (entry and (host == entry or host.endswith("." + entry))):
            return True
    return False


def proxy_for(scheme: str, host: str, env: Mapping[str, str]) -> Proxy | None:
    raw = _env(env, "HTTPS_PROXY" if scheme == "https" else "HTTP_PROXY")
    if not raw or _bypassed(host.lower(), env):
        return None
    from urllib.parse import unquote, urlsplit  # only when a proxy is configured

    parts = urlsplit(raw if "://" in raw else f"http://{raw}")
    if parts.scheme != "http" or not parts.hostname:
        raise ModelAPIError(f"Unsupported proxy URL {raw!r}: use http://host:port")
    auth = None
    if parts.username is not None:
        pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
        auth = "Basic " + base64.b64encode(pair.encode()).decode()
    return Proxy(parts.hostname, parts.port or 80, auth)


async def tunnel(proxy: Proxy, host: str, port: int, *, ssl: Any, limit: int
                 ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Opens a CONNECT tunnel through `proxy`; starts TLS inside it when `ssl` is given."""
    reader, writer = await asyncio.open_connection(proxy.host, proxy.port, limit=limit)
    head = f"CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n"
    if proxy.authorization:
        head += f"Proxy-Authorization: {proxy.authorization}\r\n"
    writer.write((head + "\r\n").encode("latin-1"))
    await writer.drain()
    status = (await reader.readline()).decode("latin-1").split()
    while (await reader.readline()).strip():
        pass  # the proxy's response headers carry nothing we need
    if len(status) < 2 or status[1] != "200":
        writer.close()
        answer = " ".join(status[1:]) or "no answer"
        refused = f"proxy {proxy.host}:{proxy.port} refused the tunnel to {host}:{port}"
        raise Unreachable(f"Connection error: {refused} ({answer})", cause="proxy",
                          reason=f"{refused} ({answer})")
    if ssl is not None:
        await writer.start_tls(ssl, server_hostname=host)
    return reader, writer
