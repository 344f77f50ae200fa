"""The JSON-RPC channel every MCP transport shares (stdio, legacy SSE) fails a request
whose reply arrived unreadable, instead of leaving it to wait for its timeout."""

from __future__ import annotations

import asyncio

import pytest

from wisp.mcp.jsonrpc import RpcChannel, top_level_id

DEEP = b"[" * 100_000 + b"]" * 100_000


@pytest.mark.parametrize("raw, found", [
    (b'{"jsonrpc":"2.0","id":7,"result":' + DEEP + b"}", 7),
    (b'{"result":' + DEEP + b',"id":"k-1"}', "k-1"),  # named after the deep part
    (b'{"result":{"id":1,"t":"\\"id\\":2"},"id" : 3}', 3),  # only the top level counts
    (b'{"jsonrpc":"2.0","id":4,"result":{content: oops}}', 4),
    (DEEP, None),
    (b'{"id": true}', None),
    (b'{"id": [1]}', None),
    (b'{"a": 1', None),
])
def test_the_id_is_read_from_the_top_level_only(raw, found):
    assert top_level_id(raw) == found


def channel_with(*keys: int) -> tuple[RpcChannel, list[asyncio.Task[dict]]]:
    channel = RpcChannel(lambda message: None, lambda method, params: None)
    calls = [asyncio.ensure_future(channel.request(
        {"jsonrpc": "2.0", "id": key, "method": "tools/call"}, 30)) for key in keys]
    return channel, calls


async def outcomes(calls: list[asyncio.Task[dict]]) -> list[str]:
    done, _ = await asyncio.wait(calls, timeout=1)
    return [str(c.exception()) if c in done else "waiting" for c in calls]


def test_a_reply_naming_its_id_fails_that_call_alone():
    async def main() -> list[str]:
        channel, calls = channel_with(1, 2)
        await asyncio.sleep(0)
        channel.garbled(b'{"jsonrpc":"2.0","id":2,"result":' + DEEP + b"}",
                        "JSON nested too deeply")
        channel.feed({"jsonrpc": "2.0", "id": 1, "result": {"ok": True}})
        await asyncio.wait(calls, timeout=1)
        return [str(calls[0].result()), str(calls[1].exception())]

    first, second = asyncio.run(main())
    assert first == "{'jsonrpc': '2.0', 'id': 1, 'result': {'ok': True}}"
    assert second.startswith("the server sent a reply that cannot be read (JSON nested too "
                             "deeply, 200,")


def test_a_reply_with_no_id_fails_every_waiting_call():
    async def main() -> tuple[list[str], dict]:
        channel, calls = channel_with(1, 2)
        await asyncio.sleep(0)
        channel.garbled(DEEP, "JSON nested too deeply")
        failed = await outcomes(calls)
        # The channel itself goes on: a later request is answered as usual.
        later = asyncio.ensure_future(channel.request(
            {"jsonrpc": "2.0", "id": 3, "method": "ping"}, 5))
        await asyncio.sleep(0)
        channel.feed({"jsonrpc": "2.0", "id": 3, "result": {}})
        return failed, await later

    failed, later = asyncio.run(main())
    assert all(f.startswith("the server sent a reply that cannot be read") for f in failed)
    assert later == {"jsonrpc": "2.0", "id": 3, "result": {}}


def test_a_stray_print_is_not_a_reply():
    async def main() -> list[str]:
        channel, calls = channel_with(1)
        await asyncio.sleep(0)
        channel.garbled(b"Server starting, please wait...", "not valid JSON")
        return await outcomes(calls)

    assert asyncio.run(main()) == ["waiting"]


def test_an_unknown_id_fails_the_waiting_calls():
    async def main() -> list[str]:
        channel, calls = channel_with(1)
        await asyncio.sleep(0)
        channel.garbled(b'{"id":99,"result":{x}}', "not valid JSON")
        return await outcomes(calls)

    [failed] = asyncio.run(main())
    assert "cannot be read (not valid JSON" in failed
