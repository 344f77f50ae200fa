"""In-process MCP tools (`tool` + `create_sdk_mcp_server`): offered to the model with
their schemas, called with the model's input, and their results and failures sent back."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tests.sdk_parity import summary as s
from tests.sdk_parity.harness import Backend, scenario
from wisp.testing import reply

NAMES = ["mcp__calc__add", "mcp__calc__shout", "mcp__calc__refuse", "mcp__calc__boom"]


def calc_server(b: Backend, calls: list[Any]) -> Any:
    tool = b.sdk.tool

    @tool("add", "Add two numbers", {"a": int, "b": int})
    async def add(args: dict[str, Any]) -> dict[str, Any]:
        calls.append(["add", args])
        return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}

    @tool("shout", "Upper-cases a text", {"type": "object",
                                          "properties": {"text": {"type": "string"}},
                                          "required": ["text"]})
    async def shout(args: dict[str, Any]) -> dict[str, Any]:
        calls.append(["shout", args])
        return {"content": [{"type": "text", "text": args["text"].upper()},
                            {"type": "text", "text": "(shouted)"}]}

    @tool("refuse", "Always fails politely", {})
    async def refuse(args: dict[str, Any]) -> dict[str, Any]:
        calls.append(["refuse", args])
        return {"content": [{"type": "text", "text": "cannot do that"}], "is_error": True}

    @tool("boom", "Raises", {"why": str})
    async def boom(args: dict[str, Any]) -> dict[str, Any]:
        calls.append(["boom", args])
        raise ValueError(f"boom because {args['why']}")

    return b.sdk.create_sdk_mcp_server("calc", version="2.0.0",
                                       tools=[add, shout, refuse, boom])


@scenario()
async def sdk_mcp_tools(b: Backend) -> dict[str, Any]:
    calls: list[Any] = []
    server = calc_server(b, calls)
    b.server.script(
        reply.tool_uses([("mcp__calc__add", {"a": 20, "b": 22}),
                         ("mcp__calc__shout", {"text": "hi"})]),
        reply.tool_use("mcp__calc__refuse", {}),
        reply.tool_use("mcp__calc__boom", {"why": "testing"}),
        reply.text("all done"))
    messages, raised = await b.query("use the tools", mcp_servers={"calc": server},
                                     allowed_tools=NAMES)
    first = s.model_requests(b)[0]
    offered = {t["name"]: t for t in first.get("tools") or []}
    return {
        "raised": raised,
        "init": s.init_data(messages, b, "mcp_servers"),
        "init_tools": [t for t in messages[0].data["tools"] if t.startswith("mcp__")],
        "offered": {name: {"description": offered[name].get("description"),
                           "input_schema": offered[name].get("input_schema")}
                    for name in NAMES if name in offered},
        # The first two run side by side: which starts first is not a contract.
        "calls": sorted(calls, key=repr),
        "tool_results_sent": s.tool_results_sent(b),
        "conversation": s.conversation(messages, b),
        "result": s.the_result(messages, b),
    }


@scenario()
async def sdk_mcp_tool_needs_permission(b: Backend) -> dict[str, Any]:
    """Not in allowed_tools and nobody to ask: the tool is not called."""
    calls: list[Any] = []
    server = calc_server(b, calls)
    b.server.script(reply.tool_use("mcp__calc__add", {"a": 1, "b": 2}), reply.text("ok"))
    messages, raised = await b.query("add", mcp_servers={"calc": server})
    return {
        "raised": raised,
        "calls": calls,
        "denials": s.the_result(messages, b)["permission_denials"],
        "tool_results_sent": s.tool_results_sent(b),
    }


def text(value: str) -> dict[str, str]:
    return {"type": "text", "text": value}


def test_sdk_mcp_tools(backend: Backend) -> None:
    def schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
        return {"type": "object", "properties": properties, "required": required}

    assert backend.run(sdk_mcp_tools) == {
        "raised": None,
        "init": {"mcp_servers": [{"name": "calc", "status": "connected", "source": "sdk"}]},
        "init_tools": NAMES,
        "offered": {
            "mcp__calc__add": {"description": "Add two numbers", "input_schema": schema(
                {"a": {"type": "integer"}, "b": {"type": "integer"}}, ["a", "b"])},
            "mcp__calc__shout": {"description": "Upper-cases a text", "input_schema": schema(
                {"text": {"type": "string"}}, ["text"])},
            "mcp__calc__refuse": {"description": "Always fails politely",
                                  "input_schema": schema({}, [])},
            "mcp__calc__boom": {"description": "Raises", "input_schema": schema(
                {"why": {"type": "string"}}, ["why"])},
        },
        "calls": [["add", {"a": 20, "b": 22}], ["boom", {"why": "testing"}], ["refuse", {}],
                  ["shout", {"text": "hi"}]],
        "tool_results_sent": [
            {"content": [text("42")], "is_error": False},
            {"content": [text("HI"), text("(shouted)")], "is_error": False},
            {"content": [text("cannot do that")], "is_error": True},
            # A tool that raises: the run goes on, the model gets the error as the result.
            {"content": [text("boom because testing")], "is_error": True},
        ],
        "conversation": [
            ["assistant", [["tool_use", "mcp__calc__add", {"a": 20, "b": 22}]]],
            ["assistant", [["tool_use", "mcp__calc__shout", {"text": "hi"}]]],
            ["user", [["tool_result", [text("42")], False]]],
            ["user", [["tool_result", [text("HI"), text("(shouted)")], False]]],
            ["assistant", [["tool_use", "mcp__calc__refuse", {}]]],
            ["user", [["tool_result", [text("cannot do that")], True]]],
            ["assistant", [["tool_use", "mcp__calc__boom", {"why": "testing"}]]],
            ["user", [["tool_result", [text("boom because testing")], True]]],
            ["assistant", [["text", "all done"]]],
        ],
        "result": {"subtype": "success", "is_error": False, "num_turns": 4,
                   "result": "all done", "structured_output": None, "stop_reason": "end_turn",
                   "permission_denials": [], "errors": []},
    }


def test_sdk_mcp_tool_needs_permission(backend: Backend) -> None:
    assert backend.run(sdk_mcp_tool_needs_permission) == {
        "raised": None,
        "calls": [],
        "denials": [{"tool_name": "mcp__calc__add", "tool_input": {"a": 1, "b": 2}}],
        "tool_results_sent": [{
            "content": "Permission to use mcp__calc__add (mcp__calc__add) has not been "
                       "granted. Allow it with --allowedTools mcp__calc__add, a settings rule, "
                       "or --permission-mode.",
            "is_error": True}],
    }


RAW_SERVER = Path(__file__).resolve().parent.parent / "mcp" / "raw_server.py"


@scenario()
async def external_and_sdk_servers(b: Backend) -> dict[str, Any]:
    """A stdio MCP server (a separate process) next to an in-process one."""
    calls: list[Any] = []
    servers = {"raw": {"type": "stdio", "command": sys.executable, "args": [str(RAW_SERVER)]},
               "calc": calc_server(b, calls)}
    b.server.script(reply.tool_use("mcp__raw__echo", {"text": "over stdio"}),
                    reply.tool_use("mcp__calc__add", {"a": 1, "b": 2}),
                    reply.text("both servers answered"))
    messages, raised = await b.query("use both", mcp_servers=servers,
                                     allowed_tools=["mcp__calc__add", "mcp__raw__echo"])
    return {
        "raised": raised,
        "init": sorted((x["name"], x["status"]) for x in messages[0].data["mcp_servers"]),
        "calls": calls,
        "tool_results_sent": s.tool_results_sent(b),
        "result": s.the_result(messages, b)["subtype"],
    }


def test_external_and_sdk_servers(backend: Backend) -> None:
    assert backend.run(external_and_sdk_servers) == {
        "raised": None,
        "init": [("calc", "connected"), ("raw", "connected")],
        "calls": [["add", {"a": 1, "b": 2}]],
        "tool_results_sent": [
            {"content": [text("over stdio")], "is_error": False},
            {"content": [text("3")], "is_error": False},
        ],
        "result": "success",
    }
