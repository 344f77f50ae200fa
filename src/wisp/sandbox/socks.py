"""The proxy's SOCKS5 front end (RFC 1928): CONNECT only, no authentication, names
resolved here (`socks5h://`) after the policy has admitted them.

Above: the proxy's connection dispatcher (a first byte of 5). Below: `Egress` and
`splice`.

Replies: 0x02 (not allowed by ruleset) for a refused host, 0x04 (host unreachable) when
it cannot be resolved, 0x05 (connection refused) when it cannot be connected to, 0x07
for BIND and UDP ASSOCIATE, 0x08 for an unknown address type. When the settings name
the user's own SOCKS proxy, the request goes to it unchanged once admitted, and its
reply comes back to the client.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress

from wisp.sandbox.egress import Egress, Refused, Streams, Unreachable, splice

__all__ = ["serve_socks"]

TIMEOUT = 30.0
_NO_AUTH = 0
_CONNECT = 1
NOT_ALLOWED = 0x02
HOST_UNREACHABLE = 0x04
CONNECTION_REFUSED = 0x05
COMMAND_UNSUPPORTED = 0x07
ADDRESS_UNSUPPORTED = 0x08


class SocksError(Exception):
    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


async def _greeting(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    count = (await reader.readexactly(1))[0]
    methods = await reader.readexactly(count)
    if _NO_AUTH not in methods:
        writer.write(b"\x05\xff")
        raise SocksError(0)  # no reply after 0xff: the client closes
    writer.write(b"\x05\x00")


async def _request(reader: asyncio.StreamReader) -> tuple[bytes, str, int]:
    """(the raw request, host, port)."""
    head = await reader.readexactly(4)
    if head[0] != 5 or head[1] != _CONNECT:
        raise SocksError(COMMAND_UNSUPPORTED)
    kind = head[3]
    if kind == 1:
        raw = await reader.readexactly(4)
        host = str(ipaddress.IPv4Address(raw))
    elif kind == 4:
        raw = await reader.readexactly(16)
        host = str(ipaddress.IPv6Address(raw))
    elif kind == 3:
        size = await reader.readexactly(1)
        raw = size + await reader.readexactly(size[0])
        host = raw[1:].decode("ascii")
    else:
        raise SocksError(ADDRESS_UNSUPPORTED)
    port = await reader.readexactly(2)
    return head + raw + port, host, int.from_bytes(port, "big")


def _reply(code: int) -> bytes:
    return bytes((5, code, 0, 1, 0, 0, 0, 0, 0, 0))


async def _upstream(egress: Egress, request: bytes, host: str, port: int) -> Streams:
    admission = egress.admit(host, port)
    if egress.socks_upstream is None:
        return await egress.open(admission, port)
    upstream = await egress.open_upstream(egress.socks_upstream)
    reader, writer = upstream
    writer.write(b"\x05\x01\x00")
    if await asyncio.wait_for(reader.readexactly(2), TIMEOUT) != b"\x05\x00":
        raise Unreachable(f"the configured SOCKS proxy on port {egress.socks_upstream} "
                          "wants authentication", connecting=True)
    writer.write(request)  # its reply goes to the client with the rest of the stream
    return upstream


async def serve_socks(client: Streams, egress: Egress) -> None:
    """The connection's first byte (5) has been read."""
    reader, writer = client
    try:
        await asyncio.wait_for(_greeting(reader, writer), TIMEOUT)
        request, host, port = await asyncio.wait_for(_request(reader), TIMEOUT)
        upstream = await _upstream(egress, request, host, port)
    except SocksError as exc:
        return await _close(writer, _reply(exc.code) if exc.code else b"")
    except Refused:
        return await _close(writer, _reply(NOT_ALLOWED))
    except Unreachable as exc:
        return await _close(writer, _reply(CONNECTION_REFUSED if exc.connecting
                                           else HOST_UNREACHABLE))
    except (asyncio.IncompleteReadError, TimeoutError, UnicodeError, ValueError):
        return await _close(writer, b"")
    if egress.socks_upstream is None:
        writer.write(_reply(0))
    await splice(client, upstream)


async def _close(writer: asyncio.StreamWriter, data: bytes) -> None:
    writer.write(data)
    with contextlib.suppress(Exception):
        await writer.drain()
    writer.close()
