"""Where the service may send requests on a client's behalf: webhook deliveries go only to
public addresses, so an API key cannot turn the server into a probe of its own network
(cloud metadata at 169.254.169.254, the database, admin ports on loopback).

Two checks, both needed:
- when an endpoint is registered, a host written as an address is judged at once, in
  every spelling the system resolver accepts (`127.1`, `2130706433`, `0x7f000001`,
  `[::ffff:127.0.0.1]`), and `localhost` names are refused;
- when a delivery is sent, the host name is resolved and every address it resolves to
  must be public; the connection then goes to the address that was checked (not to the
  name again), so a DNS answer that changes in between cannot redirect it.

`WISP_SERVE_WEBHOOK_ALLOW_PRIVATE=1` lifts both, for deployments whose receivers live on
a private network (and for the tests, whose receivers are on 127.0.0.1).
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import socket
from collections.abc import Mapping

ALLOW_PRIVATE = "WISP_SERVE_WEBHOOK_ALLOW_PRIVATE"
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class EgressRefused(ValueError):
    """A destination that is not a public address."""


def private_allowed(env: Mapping[str, str] | None = None) -> bool:
    return (os.environ if env is None else env).get(ALLOW_PRIVATE) == "1"


def literal_address(host: str) -> Address | None:
    """The address a host written as one stands for, as the resolver would read it
    (inet_aton's short and numeric IPv4 forms included); None for a name."""
    bare = host.strip("[]")
    try:
        return _unmapped(ipaddress.ip_address(bare))
    except ValueError:
        pass
    try:
        return ipaddress.IPv4Address(socket.inet_aton(bare))
    except OSError:
        return None


def refuse_private_literal(host: str) -> None:
    """At registration: a non-public address, or a localhost name, is refused."""
    name = host.strip("[]").rstrip(".").lower()
    if name == "localhost" or name.endswith(".localhost"):
        raise EgressRefused(f"{host} is this machine: {_RULE}")
    address = literal_address(host)
    if address is not None and not is_public(address):
        raise EgressRefused(f"{host} is not a public address: {_RULE}")


async def public_address(host: str, port: int) -> str:
    """At delivery: the address to connect to, once every address `host` resolves to is
    known to be public."""
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise EgressRefused(f"{host} does not resolve ({exc.strerror})") from None
    addresses = [_unmapped(ipaddress.ip_address(info[4][0])) for info in infos]
    for address in addresses:
        if not is_public(address):
            raise EgressRefused(f"{host} resolves to {address}, not a public address: "
                                f"{_RULE}")
    if not addresses:
        raise EgressRefused(f"{host} does not resolve")
    return str(addresses[0])


def is_public(address: Address) -> bool:
    """A unicast address on the public internet (`is_global` alone lets multicast by)."""
    return address.is_global and not (address.is_multicast or address.is_reserved
                                      or address.is_unspecified)


def _unmapped(address: Address) -> Address:
    """An IPv4-mapped IPv6 address (::ffff:a.b.c.d) judged as the IPv4 one it carries."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


_RULE = (f"webhooks are delivered only to public addresses ({ALLOW_PRIVATE}=1 on the "
         "server allows private ones)")
