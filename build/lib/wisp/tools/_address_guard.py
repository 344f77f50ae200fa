"""Which hosts WebFetch may contact: public ones, and internal ones an allow rule names.

A model steered by a page or a prompt must not reach what trusts the local network: a dev
server, a router's admin page, the cloud metadata service that hands out credentials. The
judgement is made on the *resolved* address, never on how the host is spelled, because
`2130706433`, `0x7f.1`, `127.1`, `[::ffff:127.0.0.1]` and `localhost` all reach 127.0.0.1.
Every address a name resolves to is judged; one internal answer refuses the whole name.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any
from urllib.parse import urlsplit

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
# One getaddrinfo entry: (family, type, proto, canonname, sockaddr).
AddrInfo = tuple[Any, ...]

METADATA_ADDRESSES = frozenset(
    {ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")}
)
METADATA_NAMES = frozenset({"metadata.google.internal"})
_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_PRIVATE = tuple(
    ipaddress.ip_network(n)
    # fec0::/10 (deprecated site-local) is private in practice, yet `is_global` says not.
    for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7", "fec0::/10")
)
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


class AddressRefused(Exception):
    """A URL whose host is internal and not named by a `WebFetch(domain:…)` allow rule."""

    def __init__(self, url: str, host: str, detail: str) -> None:
        super().__init__(
            f"WebFetch refused {url}: {detail}. "
            f"Allow it with a WebFetch(domain:{host}) rule."
        )
        self.url, self.host = url, host


def embedded_ipv4(ip: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 form carries (mapped, 6to4, NAT64, IPv4-compatible): the
    packet ends up there, so that is the address to judge."""
    if isinstance(ip, ipaddress.IPv4Address):
        return None
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip in _NAT64 or 1 < int(ip) <= 0xFFFFFFFF:  # ::a.b.c.d, deprecated but routable
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def address_class(ip: IPAddress) -> str | None:
    """The internal class of `ip` ("loopback", "private", …), or None when it is public."""
    if ip in METADATA_ADDRESSES:
        return "cloud metadata"
    inner = embedded_ipv4(ip)
    if inner is not None:
        return address_class(inner)
    checks = (
        ("unspecified", ip.is_unspecified),
        ("loopback", ip.is_loopback),
        ("link-local", ip.is_link_local),
        ("multicast", ip.is_multicast),
        ("shared (carrier-grade NAT)", ip in _CGNAT),
        ("private", any(ip in net for net in _PRIVATE)),
        ("reserved", ip.is_reserved),
        # Documentation, benchmarking, 0.0.0.0/8, 192.0.0.0/29…: never a public server.
        ("special-purpose", not ip.is_global),
    )
    return next((name for name, hit in checks if hit), None)


def _article(kind: str) -> str:
    return "an" if kind[0] in "aeiou" else "a"


def _special_name(name: str) -> str | None:
    """Names that are internal whatever DNS says (RFC 6761 localhost; metadata services)."""
    bare = name.rstrip(".")
    if bare == "localhost" or bare.endswith(".localhost"):
        return "loopback"
    if bare in METADATA_NAMES:
        return "cloud metadata"
    return None


def resolve(host: str, port: int) -> list[AddrInfo]:
    """getaddrinfo, kept apart so tests can stand in a resolver of their own."""
    return socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)


def _literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _detail(host: str, ip: IPAddress, kind: str) -> str:
    literal = _literal(host.split("%", 1)[0])
    if literal is None:
        return f"{host} resolves to {ip}, {_article(kind)} {kind} address"
    inner = embedded_ipv4(literal)
    carried = f" (it carries the IPv4 address {inner})" if inner is not None else ""
    return f"{host} is {_article(kind)} {kind} address{carried}"


def _sockaddr_ip(info: AddrInfo) -> IPAddress:
    # An IPv6 link-local answer may carry a zone ("fe80::1%eth0"); the class ignores it.
    return ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])


def host_port(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    return (parts.hostname or "").lower(), parts.port or (443 if parts.scheme == "https" else 80)


def _refuse_by_spelling(url: str, host: str) -> None:
    """What is internal before any lookup: special names, and address literals (with a
    zone, `fe80::1%25eth0`, the resolver may fail, and through a proxy that would let the
    literal go on unjudged)."""
    special = _special_name(host)
    if special is not None:
        raise AddressRefused(url, host, f"{host} is {_article(special)} {special} host")
    literal = _literal(host.split("%", 1)[0])
    kind = address_class(literal) if literal is not None else None
    if literal is not None and kind is not None:
        raise AddressRefused(url, host, _detail(host, literal, kind))


def checked_addresses(url: str, allowed: frozenset[str], *, proxied: bool = False
                      ) -> list[AddrInfo]:
    """Resolves the URL's host and returns its addresses, every one of them judged: raises
    AddressRefused when the host is internal and `allowed` does not name it exactly.

    Through a proxy the proxy resolves, but the local answer is judged all the same. A name
    that does not resolve here then goes on to the proxy (proxy-only DNS is common), and
    the empty list says so; without a proxy the resolver's error propagates."""
    host, port = host_port(url)
    if not host:  # getaddrinfo("") may mean this machine on some platforms
        raise socket.gaierror(socket.EAI_NONAME, f"{url} names no host")
    exempt = host in allowed
    if not exempt:
        _refuse_by_spelling(url, host)
    try:
        infos = resolve(host, port)
    except socket.gaierror:
        if proxied:
            return []
        raise
    if not exempt:
        for info in infos:
            ip = _sockaddr_ip(info)
            kind = address_class(ip)
            if kind is not None:
                raise AddressRefused(url, host, _detail(host, ip, kind))
    return infos
