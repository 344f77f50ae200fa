"""wisp.sdk's in-process MCP tools against the official SDK's.

The same tool functions are declared with each SDK's `@tool`, each set served by its own
SDK's server, and each server is sent the same JSON-RPC messages: the official one
through `SdkMcpBridge`, which is what its `Query` hands every `mcp_message` to, and
wisp's through `SdkMcpServer.handle`. The answers must be equal.
"""

# No `from __future__ import annotations`: the TypedDicts below need real annotations for
# NotRequired to count on Python 3.11.
import asyncio
import dataclasses
import inspect
import json
import subprocess
import sys
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, NotRequired, TypedDict

import pytest

from wisp.sdk import mcp as ours

official = pytest.importorskip("claude_agent_sdk")
bridge_module = pytest.importorskip("claude_agent_sdk._internal.sdk_mcp_bridge")

JSON = dict[str, Any]
INIT_PARAMS = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "wisp-test", "version": "1.0"},
}


class Point(TypedDict):
    x: int
    label: NotRequired[Annotated[str, "what to call it"]]


class Order(TypedDict):
    item: str
    at: Point
    tags: list[str]


async def _echo(args: JSON) -> JSON:
    return {"content": [{"type": "text", "text": json.dumps(args, sort_keys=True)}]}


async def _picture(args: JSON) -> JSON:
    return {
        "content": [
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png", "extra": 1},
            {"type": "text", "text": "a caption"},
        ]
    }


async def _refuse(args: JSON) -> JSON:
    return {"content": [{"type": "text", "text": "no"}], "is_error": True}


async def _explode(args: JSON) -> JSON:
    raise ValueError("the tool broke")


async def _silent_explode(args: JSON) -> JSON:
    raise RuntimeError


async def _links(args: JSON) -> JSON:
    return {
        "content": [
            {"type": "resource_link", "uri": "file:///a", "name": "a", "description": "the a"},
            {"type": "resource_link"},
            {"type": "resource", "resource": {"uri": "mem:x", "text": "inline text"}},
            {"type": "resource", "resource": {"uri": "mem:y", "blob": "AAAA"}},
            {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
        ]
    }


async def _empty(args: JSON) -> JSON:
    return {}


async def _nothing(args: JSON) -> Any:
    return None


async def _textless(args: JSON) -> JSON:
    return {"content": [{"type": "text"}]}


def _not_async(args: JSON) -> JSON:
    return {"content": []}


def declare(sdk: Any) -> list[Any]:
    """The same tools, declared with `sdk`'s `tool` and `ToolAnnotations`."""
    tool, notes = sdk.tool, sdk.ToolAnnotations
    return [
        tool("echo", "Echo the arguments", {
            "text": str, "count": int, "ratio": float, "flag": bool, "items": list,
            "meta": dict, "numbers": list[int], "maybe": int | None,
            "noted": Annotated[str, "a described argument"], "either": int | str,
        })(_echo),
        tool("point", "Takes a TypedDict", Point)(_echo),
        tool("order", "Nested TypedDicts", Order)(_echo),
        tool("schema", "Takes a JSON Schema", {
            "type": "object",
            "properties": {"q": {"type": "string", "minLength": 2}},
            "required": ["q"],
        })(_echo),
        tool("noargs", "No arguments", {})(_echo),
        tool("picture", "Returns an image", {},
             annotations=notes(readOnlyHint=True, title="Picture"))(_picture),
        tool("refuse", "Reports an error", {},
             annotations=notes(destructive_hint=True, openWorldHint=False))(_refuse),
        tool("explode", "Raises", {"x": str},
             annotations=notes(maxResultSizeChars=500_000, idempotentHint=True))(_explode),
        tool("silent", "Raises without a message", {})(_silent_explode),
        tool("links", "Resource content", {}, annotations=notes())(_links),
        tool("empty", "Returns {}", {})(_empty),
        tool("nothing", "Returns None", {})(_nothing),
        tool("textless", "A text block without text", {})(_textless),
        tool("sync", "Not a coroutine function", {})(_not_async),
    ]


Exchange = Callable[[list[JSON]], Awaitable[list[JSON | None]]]


def official_exchange(server_name: str = "tools", version: str = "2.0.0") -> Exchange:
    config = official.create_sdk_mcp_server(server_name, version, declare(official))

    async def run(messages: list[JSON]) -> list[JSON | None]:
        bridge = bridge_module.SdkMcpBridge(server_name, config["instance"])
        try:
            return [await bridge.handle(m) for m in messages]
        finally:
            await bridge.aclose()

    return run


def our_exchange(server_name: str = "tools", version: str = "2.0.0") -> Exchange:
    server = ours.create_sdk_mcp_server(server_name, version, declare(ours))["instance"]

    async def run(messages: list[JSON]) -> list[JSON | None]:
        return [await server.handle(m) for m in messages]

    return run


def both(messages: list[JSON]) -> tuple[list[JSON | None], list[JSON | None]]:
    """Each SDK's answers to the handshake followed by `messages`, handshake dropped."""
    handshake = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT_PARAMS},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]

    def answers(exchange: Exchange) -> list[JSON | None]:
        return asyncio.run(asyncio.wait_for(exchange(handshake + messages), 30))[2:]

    return answers(official_exchange()), answers(our_exchange())


def call(name: str, arguments: Any = None, request_id: int = 7) -> JSON:
    params: JSON = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


# The handshake and listing ------------------------------------------------------------------


@pytest.mark.parametrize("version", ["2025-06-18", "2024-11-05", "2025-11-25", "1999-01-01"])
def test_initialize_matches(version):
    message = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {**INIT_PARAMS, "protocolVersion": version}}
    theirs = asyncio.run(official_exchange()([message]))
    mine = asyncio.run(our_exchange()([message]))
    assert mine == theirs
    assert mine[0] is not None and mine[0]["result"]["serverInfo"] == {
        "name": "tools", "version": "2.0.0"}


def test_tools_list_matches():
    theirs, mine = both([{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}])
    assert mine == theirs
    assert mine[0] is not None
    listed = {t["name"]: t for t in mine[0]["result"]["tools"]}
    assert listed["point"]["inputSchema"] == {
        "type": "object",
        "properties": {"x": {"type": "integer"},
                       "label": {"type": "string", "description": "what to call it"}},
        "required": ["x"],
    }
    assert listed["explode"]["_meta"] == {"anthropic/maxResultSizeChars": 500_000}
    assert listed["picture"]["annotations"] == {"readOnlyHint": True, "title": "Picture"}


def test_tools_list_with_a_cursor_matches():
    theirs, mine = both([{"jsonrpc": "2.0", "id": "l", "method": "tools/list",
                          "params": {"cursor": "anything"}}])
    assert mine == theirs


CALLS = {
    "echo-all-types": call("echo", {
        "text": "t", "count": 2, "ratio": 0.5, "flag": True, "items": [1, "a"],
        "meta": {"k": "v"}, "numbers": [1, 2], "maybe": 3, "noted": "n", "either": "s"}),
    "echo-wrong-type": call("echo", {
        "text": 5, "count": 2, "ratio": 0.5, "flag": True, "items": [], "meta": {},
        "numbers": [], "maybe": 1, "noted": "n", "either": 1}),
    "echo-missing-argument": call("echo", {"text": "t"}),
    "echo-null-optional": call("echo", {
        "text": "t", "count": 2, "ratio": 1, "flag": False, "items": [], "meta": {},
        "numbers": [], "maybe": None, "noted": "n", "either": 2}),
    "typeddict": call("point", {"x": 1}),
    "typeddict-invalid": call("point", {"label": "no x"}),
    "nested-typeddict": call("order", {"item": "i", "at": {"x": 1}, "tags": ["a"]}),
    "json-schema": call("schema", {"q": "ok"}),
    "json-schema-invalid": call("schema", {"q": "x"}),
    "no-arguments-key": call("noargs"),
    "image": call("picture", {}),
    "is-error": call("refuse", {}),
    "raises": call("explode", {"x": "1"}),
    "raises-without-message": call("silent", {}),
    "resources": call("links", {}),
    "empty-result": call("empty", {}),
    "none-result": call("nothing", {}),
    "text-without-text": call("textless", {}),
    "sync-handler": call("sync", {}),
    "unknown-tool": call("missing", {"a": 1}),
    "string-id": {**call("echo", {}), "id": "call-1"},
}


@pytest.mark.parametrize("message", list(CALLS.values()), ids=list(CALLS))
def test_tools_call_matches(message):
    theirs, mine = both([message])
    assert mine == theirs
    assert mine[0] is not None and "result" in mine[0]


def test_handler_exception_is_an_error_result():
    _, mine = both([call("explode", {"x": "1"})])
    assert mine[0] == {"jsonrpc": "2.0", "id": 7, "result": {
        "content": [{"type": "text", "text": "the tool broke"}], "isError": True}}


PROTOCOL = {
    "ping": {"jsonrpc": "2.0", "id": 3, "method": "ping"},
    "ping-with-params": {"jsonrpc": "2.0", "id": 3, "method": "ping", "params": {}},
    "unknown-method": {"jsonrpc": "2.0", "id": 4, "method": "no/such"},
    "resources-list": {"jsonrpc": "2.0", "id": 5, "method": "resources/list"},
    "prompts-list": {"jsonrpc": "2.0", "id": 6, "method": "prompts/list"},
    "notification": {"jsonrpc": "2.0", "method": "notifications/progress",
                     "params": {"progressToken": 1, "progress": 1}},
    "unknown-notification": {"jsonrpc": "2.0", "method": "notifications/whatever"},
    "a-response": {"jsonrpc": "2.0", "id": 9, "result": {}},
    "notification-method-with-id": {"jsonrpc": "2.0", "id": 8,
                                    "method": "notifications/initialized"},
    "call-without-name": {"jsonrpc": "2.0", "id": 10, "method": "tools/call",
                          "params": {"arguments": {}}},
    "call-without-params": {"jsonrpc": "2.0", "id": 11, "method": "tools/call"},
    "call-with-list-arguments": call("echo", [1, 2]),
    "initialize-without-version": {"jsonrpc": "2.0", "id": 12, "method": "initialize",
                                   "params": {"capabilities": {},
                                              "clientInfo": {"name": "c", "version": "1"}}},
    "initialize-again": {"jsonrpc": "2.0", "id": 13, "method": "initialize",
                         "params": INIT_PARAMS},
}


@pytest.mark.parametrize("message", list(PROTOCOL.values()), ids=list(PROTOCOL))
def test_protocol_answers_match(message):
    theirs, mine = both([message])
    assert mine == theirs


def test_cancelled_call_answers_request_cancelled():
    async def scenario(make: Callable[..., Any], sdk: Any, wrap: bool) -> JSON | None:
        started = asyncio.Event()

        async def wait_forever(args: JSON) -> JSON:
            started.set()
            await asyncio.Event().wait()
            return {"content": []}

        config = make("slow", tools=[sdk.tool("wait", "Never ends", {})(wait_forever)])
        server = config["instance"]
        handler = bridge_module.SdkMcpBridge("slow", server) if wrap else server
        await handler.handle({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                              "params": INIT_PARAMS})
        pending = asyncio.ensure_future(handler.handle(call("wait", {}, request_id=42)))
        await asyncio.wait_for(started.wait(), 10)
        note = await handler.handle({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                     "params": {"requestId": 42, "reason": "stop"}})
        assert note is None
        answer = await asyncio.wait_for(pending, 10)
        if wrap:
            await handler.aclose()
        return answer

    theirs = asyncio.run(scenario(official.create_sdk_mcp_server, official, True))
    mine = asyncio.run(scenario(ours.create_sdk_mcp_server, ours, False))
    assert mine == theirs == {"jsonrpc": "2.0", "id": 42,
                              "error": {"code": -32800, "message": "Request cancelled"}}


def test_calls_run_concurrently():
    async def scenario() -> list[JSON | None]:
        release = asyncio.Event()

        async def first(args: JSON) -> JSON:
            await release.wait()
            return {"content": [{"type": "text", "text": "first"}]}

        async def second(args: JSON) -> JSON:
            release.set()
            return {"content": [{"type": "text", "text": "second"}]}

        server = ours.SdkMcpServer("c", tools=[ours.tool("a", "", {})(first),
                                               ours.tool("b", "", {})(second)])
        return list(await asyncio.wait_for(asyncio.gather(
            server.handle(call("a", {}, 1)), server.handle(call("b", {}, 2))), 10))

    answers = asyncio.run(scenario())
    assert [a["result"]["content"][0]["text"] for a in answers if a] == ["first", "second"]


def test_connections_keep_request_ids_apart():
    async def scenario() -> tuple[Any, ...]:
        started = asyncio.Event()
        release = asyncio.Event()

        async def wait(args: JSON) -> JSON:
            started.set()
            await release.wait()
            return {"content": [{"type": "text", "text": "finished"}]}

        server = ours.SdkMcpServer("s", tools=[ours.tool("wait", "", {})(wait)])
        first, second = server.connect(), server.connect()
        a = asyncio.ensure_future(first.handle(call("wait", {}, request_id=1)))
        b = asyncio.ensure_future(second.handle(call("wait", {}, request_id=1)))
        # On the shared connection two sessions' calls may carry the same id too.
        c = asyncio.ensure_future(server.handle(call("wait", {}, request_id=1)))
        d = asyncio.ensure_future(server.handle(call("wait", {}, request_id=1)))
        await asyncio.wait_for(started.wait(), 10)
        await first.handle({"jsonrpc": "2.0", "method": "notifications/cancelled",
                            "params": {"requestId": 1}})
        cancelled = await asyncio.wait_for(a, 10)
        release.set()
        return cancelled, *(await asyncio.wait_for(asyncio.gather(b, c, d), 10))

    cancelled, *finished = asyncio.run(scenario())
    assert cancelled["error"]["code"] == -32800
    assert [f["result"]["content"][0]["text"] for f in finished] == ["finished"] * 3


# The Python API -------------------------------------------------------------------------------


def test_direct_api_agrees_with_json_rpc():
    server = ours.create_sdk_mcp_server("tools", "2.0.0", declare(ours))["instance"]
    _, mine = both([{"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                    call("picture", {}), call("missing", {})])
    assert mine[0] is not None and mine[1] is not None and mine[2] is not None
    assert server.list_tools() == mine[0]["result"]["tools"]
    assert asyncio.run(server.call_tool("picture", {})) == mine[1]["result"]
    assert asyncio.run(server.call_tool("missing", {})) == mine[2]["result"]
    assert asyncio.run(server.call_tool("noargs")) == {
        "content": [{"type": "text", "text": "{}"}], "isError": False}
    assert list(server.tools) == [t.name for t in declare(ours)]
    assert server.tools["echo"].description == "Echo the arguments"


def test_server_config_shape():
    config = ours.create_sdk_mcp_server("calc")
    theirs = official.create_sdk_mcp_server("calc")
    assert set(config) == set(theirs) == {"type", "name", "instance"}
    assert (config["type"], config["name"]) == (theirs["type"], theirs["name"])
    server = config["instance"]
    assert isinstance(server, ours.SdkMcpServer)
    assert (server.name, server.version, server.tools, server.list_tools()) == (
        "calc", "1.0.0", {}, [])


def test_tool_returns_the_same_record():
    mine, theirs = declare(ours)[0], declare(official)[0]
    names = [f.name for f in dataclasses.fields(ours.SdkMcpTool)]
    assert names == [f.name for f in dataclasses.fields(official.SdkMcpTool)]
    for name in ("name", "description", "input_schema", "handler", "annotations"):
        assert getattr(mine, name) == getattr(theirs, name)


@pytest.mark.parametrize("name", ["tool", "create_sdk_mcp_server"])
def test_signatures_match(name):
    def shape(fn: Any) -> list[tuple[str, Any, Any]]:
        return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]

    assert shape(getattr(ours, name)) == shape(getattr(official, name))


def test_annotations_take_both_spellings():
    camel = ours.ToolAnnotations(readOnlyHint=True, destructiveHint=False, title="T")
    snake = ours.ToolAnnotations(read_only_hint=True, destructive_hint=False, title="T")
    assert camel == snake
    assert camel.read_only_hint is True and snake.readOnlyHint is True
    assert camel.to_wire() == {"title": "T", "readOnlyHint": True, "destructiveHint": False}
    both_given = ours.ToolAnnotations(readOnlyHint=False, read_only_hint=True)
    assert both_given.readOnlyHint is False
    sized = ours.ToolAnnotations(max_result_size_chars=10, unknown="kept")
    assert sized.maxResultSizeChars == 10 and sized.extra == {"unknown": "kept"}
    assert sized.to_wire() == {}


def test_mcp_annotations_and_mappings_are_accepted():
    mcp_types = pytest.importorskip("mcp.types")
    from_mcp = ours.tool("a", "", {}, annotations=mcp_types.ToolAnnotations(readOnlyHint=True))
    from_mapping = ours.tool("b", "", {}, annotations={"open_world_hint": True,
                                                      "maxResultSizeChars": 5})  # type: ignore[arg-type]
    server = ours.SdkMcpServer("s", tools=[from_mcp(_echo), from_mapping(_echo)])
    listed = server.list_tools()
    assert listed[0]["annotations"] == {"readOnlyHint": True}
    assert listed[1]["annotations"] == {"openWorldHint": True}
    assert listed[1]["_meta"] == {"anthropic/maxResultSizeChars": 5}


def test_a_bad_schema_is_an_error_result_like_the_official():
    bad = {"type": "object", "properties": {"a": {"type": 5}}}
    message = call("bad", {"a": 1})
    mine = asyncio.run(ours.SdkMcpServer("s", tools=[ours.tool("bad", "", bad)(_echo)])
                       .handle(message))
    config = official.create_sdk_mcp_server("s", tools=[official.tool("bad", "", bad)(_echo)])

    async def theirs() -> JSON | None:
        bridge = bridge_module.SdkMcpBridge("s", config["instance"])
        try:
            await bridge.handle({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                 "params": INIT_PARAMS})
            return await bridge.handle(message)
        finally:
            await bridge.aclose()

    assert mine == asyncio.run(theirs())
    assert mine is not None and mine["result"]["isError"] is True


def test_imports_neither_mcp_nor_the_official_sdk():
    code = (
        "import sys, wisp.sdk.mcp, wisp.sdk.sessions\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'claude_agent_sdk'))\n"
        "assert not bad, bad\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False, timeout=60)
    assert proc.returncode == 0, proc.stderr
