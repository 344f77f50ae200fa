"""Which hosts the egress proxy may connect to: names against the allow and deny lists,
then addresses against the local-address rule.

Above: the proxy's HTTP and SOCKS5 front ends, which ask `HostRules.admit` before any DNS
lookup and `HostRules.address_ok` after it. Below: `ipaddress` and `socket.inet_aton`.

The rule, in order:
1. The host is normalised: lower case, one trailing dot dropped. An IP literal in any
   spelling a C resolver accepts (`127.1`, `2130706433`, `0x7f.1`, `0177.0.0.1`,
   `[::ffff:127.0.0.1]`) becomes its canonical address, so a spelling cannot dodge a
   list entry or the address rule.
2. Denied entries first, then allowed ones: `example.com` matches that name only,
   `*.example.com` its subdomains only. Anything else is refused, with no DNS lookup.
3. Every address the name resolves to (or the literal itself) is classified. Public
   addresses pass. Link-local (169.254.169.254, the cloud metadata service), unspecified
   (0.0.0.0 reaches the host's loopback on Linux), multicast, broadcast and reserved
   ranges never pass. Loopback and private ranges (RFC 1918, CGNAT, ULA) pass only when
   `allowLocalBinding` is on and the host was admitted by an exact entry (`localhost`,
   an IP literal or a full name, never a wildcard): a sandboxed command never reaches a
   service on the host's loopback by default, nor through a public name whose DNS
   answer points inside (DNS rebinding). Addresses embedding an IPv4 one (mapped,
   compatible, 6to4, NAT64, Teredo) are judged by the embedded address, where the
   packets end.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = ["Admission", "HostRules", "address_class", "canonical_host"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
AddressClass = Literal["public", "local", "forbidden"]

_NAME = re.compile(r"[a-z0-9_-]+(\.[a-z0-9_-]+)*")
_NUMERIC = re.compile(r"[0-9a-fx.]+")
_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
_CGNAT = ipaddress.ip_network("100.64.0.0/10")


def _literal(host: str) -> IPAddress | None:
    """The address an IP literal denotes, however it is spelled; None for a name."""
    bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if ":" in bare:
        try:
            v6 = ipaddress.IPv6Address(bare)
        except ValueError:
            return None
        return v6.ipv4_mapped or v6  # the kernel connects a mapped address over IPv4
    # inet_aton is what a C resolver applies to numeric hosts (`127.1`, `0x7f.1`, octal)
    if _NUMERIC.fullmatch(bare) and any(c.isdigit() for c in bare):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(bare))
        except OSError:
            return None
    return None


def canonical_host(host: str) -> str | None:
    """The host as the lists are matched against, or None when it is no valid host."""
    host = host.strip().lower().removesuffix(".")
    address = _literal(host)
    if address is not None:
        return str(address)
    return host if _NAME.fullmatch(host) and len(host) <= 253 else None


def _embedded(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    packed = address.packed
    if any(address in net for net in _NAT64) or (packed[:12] == bytes(12)
                                                  and int(address) > 1):
        return ipaddress.IPv4Address(packed[12:])
    return None


def _own_class(address: IPAddress) -> AddressClass:
    if address.is_loopback:
        return "local"
    if (address.is_unspecified or address.is_link_local or address.is_multicast
            or address.is_reserved
            or (isinstance(address, ipaddress.IPv4Address)
                and (address.packed[0] == 0 or address == ipaddress.IPv4Address(
                    "255.255.255.255")))):
        return "forbidden"
    if (address.is_private or address in _CGNAT
            or (isinstance(address, ipaddress.IPv6Address) and address.is_site_local)):
        return "local"
    return "public" if address.is_global else "forbidden"


def address_class(address: IPAddress) -> AddressClass:
    """`public`, `local` (loopback and private) or `forbidden` (see the module doc)."""
    if isinstance(address, ipaddress.IPv6Address):
        inner = _embedded(address)
        if inner is not None:  # the packets end at the IPv4 address inside
            return _own_class(inner)
    return _own_class(address)


def _entry(pattern: str) -> tuple[bool, str] | None:
    """(is a wildcard, canonical host) of a list entry; None when it names no host."""
    pattern = pattern.strip().lower()
    if pattern.startswith("*."):
        rest = canonical_host(pattern[2:])
        return (True, rest) if rest is not None and _literal(rest) is None else None
    found = canonical_host(pattern)
    return (False, found) if found is not None else None


def _matches(entry: tuple[bool, str], host: str) -> bool:
    wildcard, name = entry
    return host.endswith("." + name) if wildcard else host == name


@dataclass(frozen=True)
class Admission:
    """A host the lists admitted: its canonical form, its literal address if it is one,
    and whether an exact entry admitted it (which the local-address rule asks)."""

    host: str
    literal: IPAddress | None
    exact: bool


class HostRules:
    """The allow and deny lists and `allowLocalBinding`, compiled once."""

    def __init__(self, allowed: Sequence[str], denied: Sequence[str],
                 *, allow_local: bool, any_public: bool = False) -> None:
        self._allowed = [e for e in map(_entry, allowed) if e is not None]
        self._denied = [e for e in map(_entry, denied) if e is not None]
        self._allow_local = allow_local
        self._any_public = any_public  # every name admitted, as a wildcard entry would be

    @property
    def allows_any(self) -> bool:
        return bool(self._allowed) or self._any_public

    def admit(self, host: str) -> Admission | None:
        """The host's admission by name alone, or None: refused, and never resolved."""
        canonical = canonical_host(host)
        if canonical is None or any(_matches(e, canonical) for e in self._denied):
            return None
        hits = [e for e in self._allowed if _matches(e, canonical)]
        if not hits and self._any_public:
            return Admission(canonical, _literal(canonical), exact=False)
        if not hits:
            return None
        return Admission(canonical, _literal(canonical),
                         exact=any(not wildcard for wildcard, _ in hits))

    def address_ok(self, admission: Admission, address: IPAddress) -> bool:
        """Whether the proxy may connect to `address` for this admitted host."""
        kind = address_class(address)
        if kind == "public":
            return True
        return kind == "local" and self._allow_local and admission.exact
