"""WebFetch's HTTP GET: each hop's host judged by `_address_guard`, direct connections pinned.

A direct connection goes to an address that was judged, never to a fresh lookup of the
name, so a DNS answer that changes between the check and the connect (DNS rebinding)
cannot steer the request inside; the Host header, TLS SNI and certificate check still use
the name. Through an HTTP(S) proxy the proxy resolves; the local answer is judged anyway.
Redirects are followed by hand, within the same site only, each hop judged afresh.

A socket timeout bounds each read, not the whole: a server sending a byte every few
seconds never trips it. A `Deadline` bounds the whole fetch (redirects included) by
shutting down the socket in use, which ends whatever read is blocked on it; the same
happens at once on `cancel` (the call was interrupted). A body over `max_bytes` is an
error, not a silent cut.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import socket
import ssl
import time
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

from wisp.errors import ModelAPIError
from wisp.models.proxy import Proxy, proxy_for
from wisp.tools._address_guard import AddrInfo, checked_addresses, host_port
from wisp.tools._deadline import Deadline

MAX_REDIRECTS = 10
_REDIRECTS = frozenset({301, 302, 303, 307, 308})


@dataclass
class Page:
    url: str
    status: int
    reason: str
    content_type: str
    charset: str
    body: bytes


class CrossHostRedirect(Exception):
    def __init__(self, target: str, status: int) -> None:
        super().__init__(target)
        self.target, self.status = target, status


class HTTPStatusError(Exception):
    def __init__(self, code: int, reason: str) -> None:
        super().__init__(f"HTTP {code} {reason}")
        self.code, self.reason = code, reason


class FetchFailed(Exception):
    """A failure with a message fit for the model as it stands."""


def same_site(a: str, b: str) -> bool:
    def bare(url: str) -> str:
        return (urlsplit(url).hostname or "").lower().removeprefix("www.")

    return bare(a) == bare(b)


def _connect_first(infos: list[AddrInfo], timeout: float) -> socket.socket:
    """A socket connected to the first of the judged addresses that answers."""
    last: OSError = OSError("no address to connect to")
    for family, kind, proto, _name, sockaddr in infos:
        sock = socket.socket(family, kind, proto)
        try:
            sock.settimeout(timeout)
            sock.connect(sockaddr)
            return sock
        except OSError as exc:
            sock.close()
            last = exc
    raise last


class _PinnedHTTP(http.client.HTTPConnection):
    """Dials the judged addresses instead of resolving `host` again."""

    def __init__(self, host: str, port: int, infos: list[AddrInfo], timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self.infos, self.pin_timeout = infos, timeout

    def connect(self) -> None:
        self.sock = _connect_first(self.infos, self.pin_timeout)


class _PinnedHTTPS(_PinnedHTTP):
    default_port = 443

    def __init__(self, host: str, port: int, infos: list[AddrInfo], timeout: float,
                 tls: ssl.SSLContext) -> None:
        super().__init__(host, port, infos, timeout)
        self.tls = tls

    def connect(self) -> None:
        super().connect()
        # SNI and the certificate check use the name, as if the name had been dialled.
        self.sock = self.tls.wrap_socket(self.sock, server_hostname=self.host)


Opened = tuple[http.client.HTTPConnection, str, dict[str, str]]


def _via_proxy(url: str, proxy: Proxy, timeout: float) -> Opened:
    """A connection to the proxy, the request target to send it and the headers it needs."""
    parts = urlsplit(url)
    auth = {"Proxy-Authorization": proxy.authorization} if proxy.authorization else {}
    if parts.scheme == "https":
        host, port = host_port(url)
        tunnel = http.client.HTTPSConnection(proxy.host, proxy.port, timeout=timeout,
                                             context=ssl.create_default_context())
        tunnel.set_tunnel(host, port, headers=auth)
        return tunnel, _path(url), {}
    # Plain http has no tunnel: the proxy gets the absolute URL, and its credentials ride
    # along with the request.
    conn = http.client.HTTPConnection(proxy.host, proxy.port, timeout=timeout)
    return conn, parts._replace(fragment="").geturl(), auth


def _path(url: str) -> str:
    parts = urlsplit(url)
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def _open(url: str, allowed: frozenset[str], env: Mapping[str, str], timeout: float
          ) -> Opened:
    """The connection for one hop, once its host has been judged."""
    host, port = host_port(url)
    scheme = urlsplit(url).scheme
    try:
        proxy = proxy_for(scheme, host, env)
    except ModelAPIError as exc:  # an unusable proxy URL: say so rather than go direct
        raise FetchFailed(f"WebFetch failed: {exc}") from None
    infos = checked_addresses(url, allowed, proxied=proxy is not None)
    if proxy is not None:
        return _via_proxy(url, proxy, timeout)
    if scheme == "https":
        tls = ssl.create_default_context()
        return _PinnedHTTPS(host, port, infos, timeout, tls), _path(url), {}
    return _PinnedHTTP(host, port, infos, timeout), _path(url), {}


def _get(url: str, allowed: frozenset[str], env: Mapping[str, str], *, timeout: float,
         headers: dict[str, str], max_bytes: int, deadline: Deadline
         ) -> tuple[Page, str | None]:
    """One request: the page, and where it redirects to (None when it does not)."""
    # A connect in progress has no socket to shut yet: its own timeout must end in time.
    timeout = max(0.05, min(timeout, deadline.ends_at - time.monotonic()))
    conn, target, extra = _open(url, allowed, env, timeout)
    deadline.watch(conn)
    try:
        conn.request("GET", target, headers={**headers, **extra})
        response = conn.getresponse()
        location = response.getheader("Location")
        if response.status in _REDIRECTS and location:
            return Page(url, response.status, response.reason, "", "utf-8", b""), location
        if not 200 <= response.status < 300:
            raise HTTPStatusError(response.status, response.reason)
        return Page(
            url=url,
            status=response.status,
            reason=response.reason or "",
            content_type=response.headers.get_content_type(),
            charset=response.headers.get_content_charset() or "utf-8",
            body=_body(response, url, max_bytes),
        ), None
    finally:
        conn.close()


def _body(response: http.client.HTTPResponse, url: str, max_bytes: int) -> bytes:
    """The whole body, or FetchFailed past `max_bytes` (said before reading any of it
    when the server declares its length)."""
    declared = response.getheader("Content-Length") or ""
    if declared.strip().isdigit() and int(declared) > max_bytes:
        raise FetchFailed(_too_large(url, max_bytes, f"{int(declared):,} bytes"))
    body = response.read(max_bytes + 1)
    if len(body) > max_bytes:
        raise FetchFailed(_too_large(url, max_bytes, "more"))
    return body


def _too_large(url: str, max_bytes: int, size: str) -> str:
    return (f"WebFetch failed: {url} sent {size}, more than the {max_bytes // (1 << 20)} MB "
            "a page may have")


def _next_hop(url: str, location: str, status: int, allowed: frozenset[str]) -> str:
    """The URL a redirect leads to, if it may be followed; raises otherwise."""
    target = urljoin(url, location)
    if urlsplit(target).scheme not in ("http", "https"):
        raise FetchFailed(f"WebFetch failed: {url} redirects to an unsupported URL {target}")
    if not same_site(url, target):
        # Another host needs its own permission decision: report it rather than follow,
        # but refuse outright an internal one (a resolver failure just reports it).
        with contextlib.suppress(OSError):
            checked_addresses(target, allowed)
        raise CrossHostRedirect(target, status)
    return target


def fetch(url: str, allowed: frozenset[str], *, timeout: float, headers: dict[str, str],
          max_bytes: int, deadline: Deadline, env: Mapping[str, str] | None = None) -> Page:
    """GETs `url`, following same-site redirects; every hop's host is judged first. Past
    the deadline (or once cancelled) it raises FetchFailed, whatever the read got."""
    env = os.environ if env is None else env
    started = time.monotonic()
    try:
        page = _follow(url, allowed, env, timeout=timeout, headers=headers,
                       max_bytes=max_bytes, deadline=deadline)
    except Exception:
        if not deadline.expired:
            raise
        page = None
    if deadline.expired:  # a shut socket can also look like a short, complete body
        took = time.monotonic() - started
        raise FetchFailed(f"WebFetch failed: {url} was still sending after {took:.0f}s; a "
                          f"fetch may take {deadline.seconds:g}s in all") from None
    assert page is not None
    return page


def _follow(url: str, allowed: frozenset[str], env: Mapping[str, str], *, timeout: float,
            headers: dict[str, str], max_bytes: int, deadline: Deadline) -> Page:
    for _hop in range(MAX_REDIRECTS + 1):
        page, location = _get(url, allowed, env, timeout=timeout, headers=headers,
                              max_bytes=max_bytes, deadline=deadline)
        if location is None:
            return page
        url = _next_hop(url, location, page.status, allowed)
    raise FetchFailed(f"WebFetch failed: more than {MAX_REDIRECTS} redirects from {url}")
