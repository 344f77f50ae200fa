"""`ClaudeSDKClient`: several turns in one session, and the controls between them."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.sdk_parity import summary as s
from tests.sdk_parity.harness import SANDBOX, Backend, scenario
from wisp.testing import reply


async def turn(client: Any, prompt: str) -> list[Any]:
    await client.query(prompt)
    return [m async for m in client.receive_response()]


@scenario()
async def two_turns(b: Backend) -> dict[str, Any]:
    b.server.script(reply.text("first"), reply.text("second"))
    async with b.sdk.ClaudeSDKClient(b.options()) as client:
        first = await turn(client, "one")
        second = await turn(client, "two")
    sessions = {m.session_id for m in s.results(first) + s.results(second)}
    return {
        "first": s.kinds(first),
        "second": s.kinds(second),
        "texts": [s.texts(first), s.texts(second)],
        "results": [s.the_result(first, b), s.the_result(second, b)],
        "one_session": len(sessions) == 1,
        "requests": s.requests(b),
    }


FULL = "a very slow answer " * 4


@scenario()
async def interrupt_then_turn(b: Backend) -> dict[str, Any]:
    b.server.script(reply.slow(FULL, delay_per_event=0.1, chunks=30),
                    reply.text("after the interrupt"))
    interrupted_after = None
    async with b.sdk.ClaudeSDKClient(b.options(include_partial_messages=True)) as client:
        await client.query("go slowly")
        first: list[Any] = []
        async for message in client.receive_response():
            first.append(message)
            deltas = [m for m in first if type(m).__name__ == "StreamEvent"
                      and m.event.get("type") == "content_block_delta"]
            if len(deltas) == 2 and interrupted_after is None:
                interrupted_after = len(deltas)
                await client.interrupt()
        second = await turn(client, "again")
    last = s.scrub(s.model_requests(b)[-1]["messages"], b)
    # What of the slow answer had arrived when the interrupt landed is timing: the
    # history keeps some prefix of it (at least the two deltas seen), compared as such.
    kept = last[1]["content"][0]
    if FULL.startswith(kept["text"]) and len(kept["text"]) >= len("a very"):
        kept["text"] = "<a prefix of the slow answer>"
    return {
        "interrupted_after_deltas": interrupted_after,
        # How many stream events arrive before the interrupt lands is timing: not compared.
        "first": s.kinds(first, stream_events=False),
        "first_result": {k: v for k, v in s.the_result(first, b).items()
                         if k in ("subtype", "is_error")},
        "second": s.kinds(second, stream_events=False),
        "second_texts": s.texts(second),
        "second_result": s.the_result(second, b),
        "requests": len(s.model_requests(b)),
        "second_request_messages": last,
    }


@scenario()
async def set_model(b: Backend) -> dict[str, Any]:
    b.server.script(reply.text("on the default"), reply.text("on haiku"),
                    reply.text("on sonnet"))
    async with b.sdk.ClaudeSDKClient(b.options(model="opus")) as client:
        first = await turn(client, "which model?")
        await client.set_model("haiku")
        second = await turn(client, "and now?")
        await client.set_model("claude-sonnet-5-5")
        third = await turn(client, "and now?")
    return {
        "texts": s.texts(first + second + third),
        "init_model": s.init_data(first, b, "model"),
        "request_models": [body.get("model") for body in s.model_requests(b)],
        "results": [s.the_result(t, b)["subtype"] for t in (first, second, third)],
    }


@scenario()
async def set_permission_mode(b: Backend) -> dict[str, Any]:
    target = b.cwd / "accepted.txt"
    for _ in range(2):
        b.server.script(
            reply.tool_use("Write", {"file_path": str(target), "content": "written\n"}),
            reply.text("done"))
    async with b.sdk.ClaudeSDKClient(b.options()) as client:
        before = await turn(client, "write")
        existed_before = target.exists()
        await client.set_permission_mode("acceptEdits")
        after = await turn(client, "write again")
    return {
        "before": s.the_result(before, b)["permission_denials"],
        "existed_before": existed_before,
        "after": s.the_result(after, b)["permission_denials"],
        "file": target.read_text(),
        "tool_results_sent": [r["is_error"] for r in s.tool_results_sent(b)],
    }


@scenario()
async def context_usage_and_mcp_status(b: Backend) -> dict[str, Any]:
    @b.sdk.tool("ping", "Answers pong", {})
    async def ping(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": "pong"}]}

    server = b.sdk.create_sdk_mcp_server("probe", version="1.0.0", tools=[ping])
    b.server.script(reply.text("hi"))
    async with b.sdk.ClaudeSDKClient(b.options(mcp_servers={"probe": server})) as client:
        messages = await turn(client, "hello")
        usage = await client.get_context_usage()
        status = await client.get_mcp_status()
    servers = status["mcpServers"]
    return {
        "kinds": s.kinds(messages),
        "usage_keys": sorted(usage),
        "usage_model": usage.get("model"),
        "status": [(x["name"], x["status"], x.get("serverInfo"),
                    sorted(t["name"] for t in x.get("tools") or []))
                   for x in servers],
        "tools_offered": s.requests(b, tools=True)[0]["tools"][-1:],
    }


def ok(text: str) -> dict[str, Any]:
    return {"subtype": "success", "is_error": False, "num_turns": 1, "result": text,
            "structured_output": None, "stop_reason": "end_turn", "permission_denials": [],
            "errors": []}


def test_two_turns(backend: Backend) -> None:
    assert backend.run(two_turns) == {
        "first": ["SystemMessage:init", "AssistantMessage", "ResultMessage"],
        "second": ["SystemMessage:init", "AssistantMessage", "ResultMessage"],
        "texts": [["first"], ["second"]],
        "results": [ok("first"), ok("second")],
        "one_session": True,
        "requests": [
            {"messages": [{"role": "user", "content": "one"}]},
            {"messages": [{"role": "user", "content": "one"},
                          {"role": "assistant", "content": [{"type": "text", "text": "first"}]},
                          {"role": "user", "content": "two"}]},
        ],
    }


def test_interrupt_then_turn(backend: Backend) -> None:
    assert backend.run(interrupt_then_turn) == {
        "interrupted_after_deltas": 2,
        "first": ["SystemMessage:init", "SystemMessage:status", "AssistantMessage",
                  "UserMessage", "ResultMessage"],
        "first_result": {"subtype": "error_during_execution", "is_error": True},
        "second": ["SystemMessage:init", "SystemMessage:status", "AssistantMessage",
                   "ResultMessage"],
        "second_texts": ["after the interrupt"],
        "second_result": ok("after the interrupt"),
        "requests": 2,
        "second_request_messages": [
            {"role": "user", "content": "go slowly"},
            {"role": "assistant",
             "content": [{"type": "text", "text": "<a prefix of the slow answer>"}]},
            {"role": "user", "content": [{"type": "text", "text": "[Request interrupted by user]"},
                                         {"type": "text", "text": "again"}]},
        ],
    }


def test_set_model(backend: Backend) -> None:
    assert backend.run(set_model) == {
        "texts": ["on the default", "on haiku", "on sonnet"],
        "init_model": {"model": "claude-opus-5-5"},
        "request_models": ["claude-opus-5-5", "claude-haiku-5-5", "claude-sonnet-5-5"],
        "results": ["success", "success", "success"],
    }


def test_set_permission_mode(backend: Backend) -> None:
    # default mode with nobody to ask denies the Write; after acceptEdits it runs.
    assert backend.run(set_permission_mode) == {
        "before": [{"tool_name": "Write",
                    "tool_input": {"file_path": "<cwd>/accepted.txt", "content": "written\n"}}],
        "existed_before": False,
        "after": [],
        "file": "written\n",
        "tool_results_sent": [True, False],
    }


def test_context_usage_and_mcp_status(backend: Backend) -> None:
    assert backend.run(context_usage_and_mcp_status) == {
        "kinds": ["SystemMessage:init", "AssistantMessage", "ResultMessage"],
        "usage_keys": ["agents", "autocompactSource", "categories", "estimated", "gridRows",
                       "isAutoCompactEnabled", "maxTokens", "mcpTools", "memoryFiles",
                       "model", "percentage", "rawMaxTokens", "totalTokens"],
        "usage_model": "claude-opus-5-5",
        "status": [("probe", "connected", {"name": "probe", "version": "1.0.0"}, ["ping"])],
        "tools_offered": ["mcp__probe__ping"],
    }


@scenario()
async def connect_with_prompt_and_server_info(b: Backend) -> dict[str, Any]:
    """connect(prompt) sends the first prompt; get_server_info is the initialize answer."""
    b.server.script(reply.text("answered at connect"), reply.text("then this"))
    client = b.sdk.ClaudeSDKClient(b.options())
    await client.connect("first, at connect")
    try:
        info = await client.get_server_info()
        first = [m async for m in client.receive_response()]
        second = await turn(client, "second")
    finally:
        await client.disconnect()
    return {
        "info_keys": sorted(info or {}),
        "texts": [s.texts(first), s.texts(second)],
        "prompts": [s.request(body, b)["messages"][-1] for body in s.model_requests(b)],
    }


@scenario()
async def client_error_result_does_not_raise(b: Backend) -> dict[str, Any]:
    """max_turns in a client: the turn ends with an error result, but the session (and
    its process) lives on, so nothing is raised and the next turn runs."""
    b.server.script(reply.tool_use("Bash", {"command": "echo one"}), reply.text("next turn"))
    async with b.sdk.ClaudeSDKClient(b.options(max_turns=1, allowed_tools=["Bash"])) as client:
        first = await turn(client, "loop")
        second = await turn(client, "again")
    return {
        "first": [s.kinds(first), s.the_result(first, b)["subtype"]],
        "second": [s.texts(second), s.the_result(second, b)["subtype"]],
    }


@scenario()
async def client_with_callbacks(b: Backend) -> dict[str, Any]:
    """Hooks and can_use_tool answered across two turns of one session."""
    prompts: list[str] = []
    asked: list[str] = []

    async def on_prompt(hook_input: dict[str, Any], tool_use_id: str | None,
                        context: Any) -> dict[str, Any]:
        prompts.append(hook_input["prompt"])
        return {}

    async def can_use_tool(name: str, tool_input: dict[str, Any], context: Any) -> Any:
        asked.append(tool_input["file_path"].rsplit("/", 1)[-1])
        return b.sdk.PermissionResultAllow()

    for name in ("a.txt", "b.txt"):
        b.server.script(reply.tool_use("Write", {"file_path": str(b.cwd / name),
                                                 "content": name}), reply.text(f"wrote {name}"))
    hooks = {"UserPromptSubmit": [b.sdk.HookMatcher(hooks=[on_prompt])]}
    async with b.sdk.ClaudeSDKClient(b.options(hooks=hooks, can_use_tool=can_use_tool)
                                     ) as client:
        first = await turn(client, "write a")
        second = await turn(client, "write b")
    return {
        "prompts": prompts,
        "asked": asked,
        "texts": [s.texts(first), s.texts(second)],
        "files": sorted(p.name for p in b.cwd.iterdir()),
    }


@scenario()
async def interrupt_during_tool(b: Backend) -> dict[str, Any]:
    """An interrupt while a Bash command runs kills the command (its shell is gone and its
    file never written) and the session takes the next turn. Each step waits on its
    condition with a deadline: the command's shell has started, then has ended."""
    late, pid_file = b.cwd / "late.txt", b.cwd / "shell.pid"
    command = f"echo $$ > {pid_file}; sleep 30; echo late > {late}"
    b.server.script(reply.tool_use("Bash", {"command": command}),
                    reply.text("after the interrupt"))
    loop = asyncio.get_running_loop()
    async with b.sdk.ClaudeSDKClient(b.options(permission_mode="bypassPermissions",
                                               extra_env=SANDBOX)) as client:
        await client.query("run the slow command")
        first: list[Any] = []
        async for message in client.receive_response():
            first.append(message)
            if type(message).__name__ == "AssistantMessage":
                await _until(lambda: pid_file.exists() and pid_file.read_text().strip() != "")
                interrupted_at = loop.time()
                await client.interrupt()
        ended_after = loop.time() - interrupted_at
        shell = int(pid_file.read_text())
        killed = await _until(lambda: not _running(shell))
        second = await turn(client, "again")
    return {
        "first": s.kinds(first),
        "first_conversation": s.conversation(first, b),
        "first_result": [s.the_result(first, b)[k] for k in ("subtype", "is_error")],
        # Far inside the command's 30 s, yet wide enough for a loaded machine.
        "ended_before_the_command_would_have": ended_after < 10.0,
        "shell_killed": killed,
        "late_file": late.exists(),
        "second": s.texts(second),
        "requests": len(s.model_requests(b)),
    }


async def _until(condition: Callable[[], bool], timeout: float = 15.0) -> bool:
    """Whether `condition` came true within `timeout` seconds (polled)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True


def _running(pid: int) -> bool:
    """Alive and not a zombie (an in-process backend's child may wait to be reaped)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def test_connect_with_prompt_and_server_info(backend: Backend) -> None:
    assert backend.run(connect_with_prompt_and_server_info) == {
        "info_keys": ["account", "agents", "available_output_styles", "claude_code_version",
                      "commands", "current_permission_mode", "hook_on_failure_supported",
                      "hooks_applied", "models", "output_style", "pid", "session_state",
                      "wisp_version"],
        "texts": [["answered at connect"], ["then this"]],
        "prompts": [{"role": "user", "content": "first, at connect"},
                    {"role": "user", "content": "second"}],
    }


def test_client_error_result_does_not_raise(backend: Backend) -> None:
    assert backend.run(client_error_result_does_not_raise) == {
        "first": [["SystemMessage:init", "AssistantMessage", "UserMessage", "ResultMessage"],
                  "error_max_turns"],
        "second": [["next turn"], "success"],
    }


def test_client_with_callbacks(backend: Backend) -> None:
    assert backend.run(client_with_callbacks) == {
        "prompts": ["write a", "write b"],
        "asked": ["a.txt", "b.txt"],
        "texts": [["wrote a.txt"], ["wrote b.txt"]],
        "files": ["a.txt", "b.txt"],
    }


def test_interrupt_during_tool(backend: Backend) -> None:
    interrupted = ("The user interrupted this tool call while it was running, so it may have "
                   "run in part or not at all. Do not retry it; wait for the user's next "
                   "instruction.")
    assert backend.run(interrupt_during_tool) == {
        "first": ["SystemMessage:init", "AssistantMessage", "UserMessage", "UserMessage",
                  "ResultMessage"],
        "first_conversation": [
            ["assistant", [["tool_use", "Bash", {"command": (
                "echo $$ > <cwd>/shell.pid; sleep 30; echo late > <cwd>/late.txt")}]]],
            ["user", [["tool_result", interrupted, True]]],
            ["user", [["text", "[Request interrupted by user for tool use]"]]],
        ],
        "first_result": ["error_during_execution", True],
        "ended_before_the_command_would_have": True,
        "shell_killed": True,
        "late_file": False,  # the command was killed, not left to finish
        "second": ["after the interrupt"],
        "requests": 2,
    }
