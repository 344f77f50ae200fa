"""What the proxy's front ends ask before a byte leaves: may this host be reached, and a
connection to it (or to the user's own proxy).

Above: the HTTP (`httpproxy`) and SOCKS5 (`socks`) front ends, which turn `Refused` and
`Unreachable` into their protocol's answer. Below: `HostRules` (the policy) and the
resolver, which is asked only for names the lists admitted.

A refusal is reported through `on_violation(host)` once, where it is decided, so the
session can tell the model and the user what was blocked.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Sequence

from wisp.sandbox.hosts import Admission, HostRules, canonical_host

__all__ = ["CONNECT_TIMEOUT", "Egress", "Refused", "Resolver", "Streams", "Unreachable",
           "splice", "system_resolver"]

Resolver = Callable[[str, int], Awaitable[Sequence[str]]]
Streams = tuple[asyncio.StreamReader, asyncio.StreamWriter]
CONNECT_TIMEOUT = 30.0


class Refused(Exception):
    """The policy refuses the host (already reported)."""

    def __init__(self, host: str, why: str) -> None:
        super().__init__(f"{host}: {why}")
        self.host = host
        self.why = why


class Unreachable(Exception):
    """An admitted host that could not be resolved (`connecting` false) or connected to."""

    def __init__(self, message: str, *, connecting: bool) -> None:
        super().__init__(message)
        self.connecting = connecting


async def system_resolver(host: str, port: int) -> Sequence[str]:
    """The addresses of `host`, by the system's resolver."""
    infos = await asyncio.get_running_loop().getaddrinfo(
        host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    return [str(info[4][0]) for info in infos]


class Egress:
    """The policy, the resolver, and the user's own proxies (ports on the host's loopback)
    when the settings name them."""

    def __init__(self, rules: HostRules, on_violation: Callable[[str], None], *,
                 resolver: Resolver = system_resolver, http_upstream: int | None = None,
                 socks_upstream: int | None = None) -> None:
        self.rules = rules
        self._on_violation = on_violation
        self._resolver = resolver
        self.http_upstream = http_upstream
        self.socks_upstream = socks_upstream

    def refuse(self, host: str, why: str) -> Refused:
        """Reports the refusal and returns the exception to raise. The host is reported
        in its canonical form (`127.0.0.1` for `2130706433`), as the lists match it."""
        host = canonical_host(host) or host
        with contextlib.suppress(Exception):  # a broken callback must not stop the proxy
            self._on_violation(host)
        return Refused(host, why)

    def admit(self, host: str, port: int) -> Admission:
        """The host's admission by name (no DNS lookup happens before it)."""
        admission = self.rules.admit(host) if 0 < port < 65536 else None
        if admission is None:
            raise self.refuse(host, "not in the sandbox's allowed network domains")
        if admission.literal is not None and not self.rules.address_ok(admission,
                                                                        admission.literal):
            raise self.refuse(host, "a local or reserved address")
        return admission

    async def open(self, admission: Admission, port: int) -> Streams:
        """A connection to the first acceptable address of the admitted host: the address
        checked is the address connected to, so a second DNS answer cannot differ."""
        addresses = await self._addresses(admission, port)
        last: Exception | None = None
        for address in addresses:
            try:
                return await asyncio.wait_for(asyncio.open_connection(address, port),
                                              CONNECT_TIMEOUT)
            except (OSError, TimeoutError) as exc:
                last = exc
        raise Unreachable(f"{admission.host}:{port}: {last}", connecting=True)

    async def _addresses(self, admission: Admission, port: int) -> list[str]:
        if admission.literal is not None:
            return [str(admission.literal)]
        try:
            found = await asyncio.wait_for(self._resolver(admission.host, port),
                                           CONNECT_TIMEOUT)
        except (OSError, TimeoutError) as exc:
            raise Unreachable(f"{admission.host}: {exc}", connecting=False) from exc
        try:
            parsed = [ipaddress.ip_address(a.split("%", 1)[0]) for a in found]
        except ValueError as exc:
            raise Unreachable(f"{admission.host}: {exc}", connecting=False) from exc
        good = [str(a) for a in parsed if self.rules.address_ok(admission, a)]
        if parsed and not good:
            raise self.refuse(admission.host,
                              f"resolves to a local or reserved address ({parsed[0]})")
        if not good:
            raise Unreachable(f"{admission.host}: no address", connecting=False)
        return good

    async def open_upstream(self, port: int) -> Streams:
        """A connection to the user's own proxy on the host's loopback."""
        try:
            return await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port),
                                          CONNECT_TIMEOUT)
        except (OSError, TimeoutError) as exc:
            raise Unreachable(f"the configured proxy on 127.0.0.1:{port}: {exc}",
                              connecting=True) from exc


async def splice(client: Streams, upstream: Streams) -> None:
    """Copies both ways until both sides have finished, then closes both."""
    await asyncio.gather(_pump(client[0], upstream[1]), _pump(upstream[0], client[1]),
                         return_exceptions=True)
    for _, writer in (client, upstream):
        writer.close()
        with contextlib.suppress(Exception):
            await writer.wait_closed()


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    finally:
        with contextlib.suppress(Exception):  # the peer may be gone already
            if writer.can_write_eof():
                writer.write_eof()
