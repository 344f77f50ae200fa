"""Python hook callbacks for the events the parity suite does not reach: the permission
path (PermissionRequest, Notification), tool failure, subagents, and the session's end;
in-process and through the `wisp` executable."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from wisp.sdk import (
    ClaudeSDKClient,
    HookMatcher,
    PermissionResultAllow,
    ResultMessage,
    query,
)
from wisp.testing import ScriptedServer, reply

EVENTS = ["PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest",
          "Notification", "SubagentStart", "SubagentStop", "Stop", "SessionStart",
          "SessionEnd", "UserPromptSubmit"]


def recording_hooks(seen: list[dict[str, Any]]) -> dict[str, list[HookMatcher]]:
    async def record(data: Any, tool_use_id: Any, context: Any) -> dict[str, Any]:
        seen.append(dict(data))
        return {}

    return {event: [HookMatcher(hooks=[record])] for event in EVENTS}


def names(seen: list[dict[str, Any]]) -> list[str]:
    return [str(event["hook_event_name"]) for event in seen]


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


def test_permission_path_and_tool_failure_fire_their_hooks(
        server: ScriptedServer, work: Path, make_options: Any) -> None:
    server.script(
        reply.tool_use("Write", {"file_path": str(work / "new.txt"), "content": "x"}),
        reply.tool_use("Read", {"file_path": str(work / "missing.txt")}),
        reply.text("done"),
    )
    seen: list[dict[str, Any]] = []

    async def allow(name: str, tool_input: dict[str, Any], context: Any) -> Any:
        return PermissionResultAllow()

    async def scenario() -> None:
        options = make_options(hooks=recording_hooks(seen), can_use_tool=allow)
        async with ClaudeSDKClient(options) as client:
            await client.query("write, then read a missing file")
            _ = [m async for m in client.receive_response()]

    run(scenario())
    fired = names(seen)
    for event in ("SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest",
                  "PostToolUse", "PostToolUseFailure", "Stop"):
        assert event in fired, f"{event} never fired: {fired}"
    assert "Notification" not in fired  # the host was asked instead of a person notified
    assert fired.index("PermissionRequest") < fired.index("PostToolUse")
    # SessionEnd comes after the SDK closed the session. In-process the callback is a
    # plain call and still runs; over a pipe, stdin is closed and nobody can answer.
    if make_options().cli_path is None:
        assert fired[-1] == "SessionEnd"
    else:
        assert "SessionEnd" not in fired
    [failure] = [e for e in seen if e["hook_event_name"] == "PostToolUseFailure"]
    assert failure["tool_name"] == "Read"
    [request] = [e for e in seen if e["hook_event_name"] == "PermissionRequest"]
    assert request["tool_name"] == "Write" and request["tool_input"]["content"] == "x"
    assert all(e["session_id"] == seen[0]["session_id"] for e in seen)
    assert (work / "new.txt").read_text() == "x"


def test_subagent_hooks_fire_around_a_task(server: ScriptedServer,
                                           make_options: Any) -> None:
    server.script(
        reply.tool_use("Task", {"description": "look around", "prompt": "list the folder",
                                "subagent_type": "general-purpose"}),
        reply.text("the subagent's answer"),
        reply.text("parent done"),
    )
    seen: list[dict[str, Any]] = []

    async def scenario() -> list[Any]:
        options = make_options(hooks=recording_hooks(seen),
                               permission_mode="bypassPermissions")
        return [m async for m in query(prompt="delegate", options=options)]

    messages = run(scenario())
    [result] = [m for m in messages if isinstance(m, ResultMessage)]
    assert result.result == "parent done"
    fired = names(seen)
    assert fired.index("SubagentStart") < fired.index("SubagentStop") < fired.index("Stop")
    [start] = [e for e in seen if e["hook_event_name"] == "SubagentStart"]
    assert start["agent_type"] == "general-purpose"


def test_a_call_nobody_can_approve_notifies(server: ScriptedServer, work: Path,
                                             make_options: Any) -> None:
    server.script(reply.tool_use("Write", {"file_path": str(work / "new.txt"), "content": "x"}),
                  reply.text("could not write"))
    seen: list[dict[str, Any]] = []

    async def scenario() -> None:
        options = make_options(hooks=recording_hooks(seen))
        _ = [m async for m in query(prompt="write", options=options)]

    run(scenario())
    [note] = [e for e in seen if e["hook_event_name"] == "Notification"]
    assert note["notification_type"] == "permission_prompt" and "Write" in note["message"]
    assert not (work / "new.txt").exists()
