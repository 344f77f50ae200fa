"""`query()`: a string prompt, a stream of user messages, and turns that use tools."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from tests.sdk_parity import summary as s
from tests.sdk_parity.harness import SANDBOX, Backend, scenario
from wisp.testing import reply

DEFAULT_TOOLS = ["Bash", "Edit", "ExitPlanMode", "Glob", "Grep", "Read", "TodoWrite",
                 "WebFetch", "Write", "Task"]


def user(text: str) -> dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": text},
            "parent_tool_use_id": None, "session_id": ""}


@scenario()
async def string_prompt(b: Backend) -> dict[str, Any]:
    b.server.script(reply.text("hello from the model"))
    messages, raised = await b.query("say hi")
    return {
        "kinds": s.kinds(messages),
        "raised": raised,
        "init": s.init_data(messages, b, "cwd", "model", "permissionMode", "tools",
                            "mcp_servers", "agents", "output_style"),
        "conversation": s.conversation(messages, b),
        "result": s.the_result(messages, b),
        "requests": s.requests(b, tools=True, system=True, model=True),
    }


def test_string_prompt(backend: Backend) -> None:
    assert backend.run(string_prompt) == {
        "kinds": ["SystemMessage:init", "AssistantMessage", "ResultMessage"],
        "raised": None,
        "init": {"cwd": "<cwd>", "model": "claude-opus-5-5", "permissionMode": "default",
                 "tools": DEFAULT_TOOLS, "mcp_servers": [], "agents": [],
                 "output_style": "default"},
        "conversation": [["assistant", [["text", "hello from the model"]]]],
        "result": {"subtype": "success", "is_error": False, "num_turns": 1,
                   "result": "hello from the model", "structured_output": None,
                   "stop_reason": "end_turn", "permission_denials": [], "errors": []},
        "requests": [{"messages": [{"role": "user", "content": "say hi"}],
                      "tools": DEFAULT_TOOLS, "system": None, "model": "claude-opus-5-5"}],
    }


async def two_prompts() -> Any:
    yield user("first question")
    yield user("second question")


@scenario()
async def streamed_prompts(b: Backend) -> dict[str, Any]:
    b.server.script(reply.text("first answer"), reply.text("second answer"))
    messages, raised = await b.query(two_prompts())
    return {
        "kinds": s.kinds(messages),
        "raised": raised,
        "texts": s.texts(messages),
        "results": [s.result(r, b) for r in s.results(messages)],
        "requests": s.requests(b),
    }


@scenario()
async def bash_tool(b: Backend) -> dict[str, Any]:
    b.server.script(
        reply.tool_use("Bash", {"command": "echo made > made.txt && cat made.txt && pwd"}),
        reply.text("the command ran"))
    messages, raised = await b.query("run it", permission_mode="bypassPermissions",
                                     extra_env=SANDBOX)
    return {
        "kinds": s.kinds(messages),
        "raised": raised,
        "conversation": s.conversation(messages, b),
        "result": s.the_result(messages, b),
        "file": (b.cwd / "made.txt").read_text(),
        "requests": s.requests(b),
    }


@scenario()
async def write_then_read(b: Backend) -> dict[str, Any]:
    target = b.cwd / "notes.txt"
    b.server.script(
        reply.tool_use("Write", {"file_path": str(target), "content": "alpha\nbeta\n"}),
        reply.tool_use("Read", {"file_path": str(target)}),
        reply.text("read it back"))
    messages, raised = await b.query("write and read", permission_mode="acceptEdits")
    return {
        "kinds": s.kinds(messages),
        "raised": raised,
        "conversation": s.conversation(messages, b),
        "result": s.the_result(messages, b),
        "file": target.read_text(),
        "tool_results_sent": s.tool_results_sent(b),
    }


@scenario()
async def allowed_tools_only(b: Backend) -> dict[str, Any]:
    """Bash is allowed by rule; Write is not, and with nobody to ask it is denied."""
    target = b.cwd / "never.txt"
    b.server.script(
        reply.tool_use("Bash", {"command": "echo allowed"}),
        reply.tool_use("Write", {"file_path": str(target), "content": "x"}),
        reply.text("done"))
    messages, raised = await b.query("go", allowed_tools=["Bash(echo:*)"])
    return {
        "kinds": s.kinds(messages),
        "raised": raised,
        "conversation": s.conversation(messages, b),
        "result": s.the_result(messages, b),
        "file_exists": target.exists(),
        "tool_results_sent": s.tool_results_sent(b),
    }


def success(result: str, num_turns: int = 1, **extra: Any) -> dict[str, Any]:
    return {"subtype": "success", "is_error": False, "num_turns": num_turns, "result": result,
            "structured_output": None, "stop_reason": "end_turn", "permission_denials": [],
            "errors": [], **extra}


def test_streamed_prompts(backend: Backend) -> None:
    # Each streamed user message is a turn of its own, with its own init and result.
    assert backend.run(streamed_prompts) == {
        "kinds": ["SystemMessage:init", "AssistantMessage", "ResultMessage"] * 2,
        "raised": None,
        "texts": ["first answer", "second answer"],
        "results": [success("first answer"), success("second answer")],
        "requests": [
            {"messages": [{"role": "user", "content": "first question"}]},
            {"messages": [{"role": "user", "content": "first question"},
                          {"role": "assistant",
                           "content": [{"type": "text", "text": "first answer"}]},
                          {"role": "user", "content": "second question"}]},
        ],
    }


def test_bash_tool(backend: Backend) -> None:
    command = "echo made > made.txt && cat made.txt && pwd"
    tool_use = {"type": "tool_use", "id": "<toolu>", "name": "Bash",
                "input": {"command": command}}
    assert backend.run(bash_tool) == {
        "kinds": ["SystemMessage:init", "AssistantMessage", "UserMessage", "AssistantMessage",
                  "ResultMessage"],
        "raised": None,
        "conversation": [["assistant", [["tool_use", "Bash", {"command": command}]]],
                         ["user", [["tool_result", "made\n<cwd>", False]]],
                         ["assistant", [["text", "the command ran"]]]],
        "result": success("the command ran", 2),
        "file": "made\n",  # ran in the session's cwd
        "requests": [
            {"messages": [{"role": "user", "content": "run it"}]},
            {"messages": [{"role": "user", "content": "run it"},
                          {"role": "assistant", "content": [tool_use]},
                          {"role": "user", "content": [
                              {"tool_use_id": "<toolu>", "type": "tool_result",
                               "content": "made\n<cwd>", "is_error": False}]}]},
        ],
    }


def test_write_then_read(backend: Backend) -> None:
    created = "File created successfully at: <cwd>/notes.txt"
    read = "     1\talpha\n     2\tbeta"
    assert backend.run(write_then_read) == {
        "kinds": ["SystemMessage:init", *["AssistantMessage", "UserMessage"] * 2,
                  "AssistantMessage", "ResultMessage"],
        "raised": None,
        "conversation": [
            ["assistant", [["tool_use", "Write",
                            {"file_path": "<cwd>/notes.txt", "content": "alpha\nbeta\n"}]]],
            ["user", [["tool_result", created, False]]],
            ["assistant", [["tool_use", "Read", {"file_path": "<cwd>/notes.txt"}]]],
            ["user", [["tool_result", read, False]]],
            ["assistant", [["text", "read it back"]]],
        ],
        "result": success("read it back", 3),
        "file": "alpha\nbeta\n",
        "tool_results_sent": [{"content": created, "is_error": False},
                              {"content": read, "is_error": False}],
    }


def test_allowed_tools_only(backend: Backend) -> None:
    denied = ("Permission to use Write (<cwd>/never.txt) has not been granted. Allow it with "
              "--allowedTools Write, a settings rule, or --permission-mode.")
    write_input = {"file_path": "<cwd>/never.txt", "content": "x"}
    assert backend.run(allowed_tools_only) == {
        "kinds": ["SystemMessage:init", "AssistantMessage", "UserMessage", "AssistantMessage",
                  "SystemMessage:permission_denied", "UserMessage", "AssistantMessage",
                  "ResultMessage"],
        "raised": None,
        "conversation": [
            ["assistant", [["tool_use", "Bash", {"command": "echo allowed"}]]],
            ["user", [["tool_result", "allowed", False]]],
            ["assistant", [["tool_use", "Write", write_input]]],
            ["user", [["tool_result", denied, True]]],
            ["assistant", [["text", "done"]]],
        ],
        "result": success("done", 3, permission_denials=[
            {"tool_name": "Write", "tool_input": write_input}]),
        "file_exists": False,
        "tool_results_sent": [{"content": "allowed", "is_error": False},
                              {"content": denied, "is_error": True}],
    }


@scenario()
async def tools_and_disallowed_tools(b: Backend) -> dict[str, Any]:
    offered = {}
    for name, kwargs in (
        ("list", {"tools": ["Read", "Bash", "Glob"]}),
        ("list_minus_disallowed", {"tools": ["Read", "Bash", "Glob"],
                                   "disallowed_tools": ["Bash"]}),
        ("none", {"tools": []}),
        ("preset", {"tools": {"type": "preset", "preset": "claude_code"}}),
        ("default_minus_disallowed", {"disallowed_tools": ["Write", "Edit"]}),
    ):
        b.server.script(reply.text(name))
        messages, raised = await b.query("hi", **kwargs)
        assert raised is None and s.texts(messages) == [name], (name, raised)
        offered[name] = {"request": s.requests(b, tools=True)[-1]["tools"],
                         "init": s.init_data(messages, b, "tools")["tools"]}
    return offered


def test_tools_and_disallowed_tools(backend: Backend) -> None:
    def both(tools: list[str]) -> dict[str, list[str]]:
        return {"request": tools, "init": tools}

    assert backend.run(tools_and_disallowed_tools) == {
        "list": both(["Bash", "Glob", "Read"]),
        "list_minus_disallowed": both(["Glob", "Read"]),
        "none": both([]),
        "preset": both(DEFAULT_TOOLS),
        "default_minus_disallowed": both(
            ["Bash", "ExitPlanMode", "Glob", "Grep", "Read", "TodoWrite", "WebFetch",
             "Task"]),
    }


@scenario()
async def streamed_prompts_with_sdk_tool(b: Backend) -> dict[str, Any]:
    """Each streamed prompt's turn calls an in-process MCP tool: the SDK must keep the
    agent's input open until the last turn's tool call is answered."""
    counted: list[int] = []

    @b.sdk.tool("count", "Counts calls", {})
    async def count(args: dict[str, Any]) -> dict[str, Any]:
        counted.append(len(counted) + 1)
        return {"content": [{"type": "text", "text": f"call {len(counted)}"}]}

    server = b.sdk.create_sdk_mcp_server("counter", tools=[count])
    for _ in range(2):
        b.server.script(reply.tool_use("mcp__counter__count", {}), reply.text("counted"))
    messages, raised = await b.query(two_prompts(), mcp_servers={"counter": server},
                                     allowed_tools=["mcp__counter__count"])
    return {
        "raised": raised,
        "counted": counted,
        "results": [s.result(r, b)["subtype"] for r in s.results(messages)],
        "tool_results_sent": s.tool_results_sent(b),
    }


def test_streamed_prompts_with_sdk_tool(backend: Backend) -> None:
    assert backend.run(streamed_prompts_with_sdk_tool) == {
        "raised": None,
        "counted": [1, 2],
        "results": ["success", "success"],
        "tool_results_sent": [{"content": [{"type": "text", "text": "call 1"}], "is_error": False},
                              {"content": [{"type": "text", "text": "call 2"}], "is_error": False}],
    }


@scenario()
async def env_overlay(b: Backend) -> dict[str, Any]:
    """options.env is laid over this process's environment for the session only: the
    tools see both, and os.environ is left alone (the harness checks that)."""
    os.environ["PARITY_INHERITED"] = "inherited"
    try:
        b.server.script(
            reply.tool_use("Bash", {"command": 'echo "$PARITY_SET|$PARITY_INHERITED|$HOME"'}),
            reply.text("done"))
        messages, raised = await b.query("env", allowed_tools=["Bash"],
                                         extra_env={"PARITY_SET": "from options"})
    finally:
        del os.environ["PARITY_INHERITED"]
    return {
        "raised": raised,
        "texts": s.texts(messages),
        "tool_results_sent": s.tool_results_sent(b),
        "leaked": "PARITY_SET" in os.environ,
    }


def test_env_overlay(backend: Backend) -> None:
    assert backend.run(env_overlay) == {
        "raised": None,
        "texts": ["done"],
        "tool_results_sent": [{"content": "from options|inherited|<home>", "is_error": False}],
        "leaked": False,
    }


@scenario()
async def api_error(b: Backend) -> dict[str, Any]:
    """The API refuses the request (400, not retried): an error result, then the SDK
    raises ResultError (the CLI exits non-zero after an error result)."""
    b.server.script(reply.error(400, "prompt is too long"))
    messages, raised = await b.query("hi")
    [result] = s.results(messages)
    return {
        "kinds": s.kinds(messages),
        "raised": raised,
        "result": {**s.result(result, b), "api_error_status": result.api_error_status},
        "requests": len(s.model_requests(b)),
    }


def test_api_error(backend: Backend) -> None:
    summary = backend.run(api_error)
    assert summary == {
        "kinds": ["SystemMessage:init", "AssistantMessage", "ResultMessage"],
        "raised": "ResultError",
        "result": summary["result"] | {"is_error": True, "api_error_status": 400},
        "requests": 1,
    }
    assert "prompt is too long" in str(summary["result"]["result"])


@scenario()
async def empty_prompt_stream(b: Backend) -> dict[str, Any]:
    async def nothing() -> Any:
        return
        yield  # an async generator that yields nothing

    messages, raised = await b.query(nothing())
    return {"kinds": s.kinds(messages), "raised": raised, "requests": len(s.model_requests(b))}


def test_empty_prompt_stream(backend: Backend) -> None:
    assert backend.run(empty_prompt_stream) == {"kinds": [], "raised": None, "requests": 0}


@scenario()
async def leave_early(b: Backend) -> dict[str, Any]:
    """Closing query() mid-turn stops the run promptly; the next query works."""
    b.server.script(reply.slow("a slow answer " * 8, delay_per_event=0.25, chunks=40),
                    reply.text("next run"))
    loop = asyncio.get_running_loop()
    stream = b.sdk.query(prompt="slow", options=b.options(include_partial_messages=True))
    seen = []
    async for message in stream:
        seen.append(s.kind(message))
        if seen[-1] == "StreamEvent" and message.event.get("type") == "content_block_delta":
            break
    started = loop.time()
    await stream.aclose()
    took = loop.time() - started
    messages, raised = await b.query("again")
    return {
        "seen_until": seen[-1],
        # The answer has ~10 s to go: well inside that, yet wide for a loaded machine.
        "closed_promptly": took < 5,
        "next": [s.texts(messages), raised],
    }


def test_leave_early(backend: Backend) -> None:
    assert backend.run(leave_early) == {
        "seen_until": "StreamEvent",
        "closed_promptly": True,
        "next": [["next run"], None],
    }


@scenario()
async def concurrent_sessions(b: Backend) -> dict[str, Any]:
    """Two sessions at once in one event loop, each with its own cwd and env: neither
    sees the other's (in-process, both run in this very process)."""

    def answer(body: dict[str, Any]) -> reply.Reply:
        last = body["messages"][-1]["content"]
        if isinstance(last, list) and last and last[0].get("type") == "tool_result":
            return reply.text(f"saw: {last[0]['content']}")
        return reply.tool_use("Bash", {"command": 'sleep 0.3; echo "$WHO in $(pwd)"'})

    b.server.default = reply.dynamic(answer)
    folders = {}
    for who in ("alpha", "beta"):
        folders[who] = b.root / who
        folders[who].mkdir()

    async def one(who: str) -> Any:
        options = b.options(allowed_tools=["Bash"], extra_env={"WHO": who},
                            cwd=str(folders[who]))
        return [m async for m in b.sdk.query(prompt=f"I am {who}", options=options)]

    alpha, beta = await asyncio.gather(one("alpha"), one("beta"))
    return {"alpha": s.scrub(s.texts(alpha), b), "beta": s.scrub(s.texts(beta), b),
            "requests": len(s.model_requests(b))}


def test_concurrent_sessions(backend: Backend) -> None:
    assert backend.run(concurrent_sessions) == {
        "alpha": ["saw: alpha in <root>/alpha"],
        "beta": ["saw: beta in <root>/beta"],
        "requests": 4,
    }
