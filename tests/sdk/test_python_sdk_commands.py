"""The official Python Agent SDK drives slash commands in prompts (/compact, /clear, a
custom command, `get_server_info()`'s commands) and file checkpoints (`rewind_files`)
through the real `wisp` process."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from wisp.testing import ScriptedServer, reply

sdk = pytest.importorskip(
    "claude_agent_sdk", reason="claude-agent-sdk is not installed (bash scripts/install-sdk-deps)"
)
from claude_agent_sdk import (  # noqa: E402
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    ConversationResetMessage,
    HookMatcher,
    ResultMessage,
    SystemMessage,
    TextBlock,
    UserMessage,
)

T = TypeVar("T")


def run(coro: Awaitable[T], timeout: float = 90) -> T:
    return asyncio.run(asyncio.wait_for(coro, timeout))  # type: ignore[arg-type]


def options(cli: str, work: Path, env: dict[str, str], **kwargs: Any) -> ClaudeAgentOptions:
    config = Path(env["HOME"]) / ".claude"
    extra = {"CLAUDE_CONFIG_DIR": str(config), **kwargs.pop("extra_env", {})}
    return ClaudeAgentOptions(cli_path=cli, cwd=str(work), env={**env, **extra}, **kwargs)


async def turn(client: ClaudeSDKClient, prompt: str) -> list[Any]:
    await client.query(prompt)
    return [m async for m in client.receive_response()]


def result_of(messages: list[Any]) -> ResultMessage:
    [result] = [m for m in messages if isinstance(m, ResultMessage)]
    return result


def test_compact_clear_and_a_custom_command(server: ScriptedServer, cli: str, work: Path,
                                            env: dict[str, str]) -> None:
    server.default = reply.echo()
    (work / ".claude" / "commands").mkdir(parents=True)
    (work / ".claude" / "commands" / "greet.md").write_text(
        "---\ndescription: Greets someone\nargument-hint: <name>\n---\n"
        "Say hello to $ARGUMENTS please.\n")
    user_commands = Path(env["HOME"]) / ".claude" / "commands"
    user_commands.mkdir(parents=True)
    (user_commands / "mine.md").write_text("User command with $ARGUMENTS\n")
    pre_compact: list[dict[str, Any]] = []

    async def on_pre_compact(data: Any, tool_use_id: Any, context: Any) -> dict[str, Any]:
        pre_compact.append(dict(data))
        return {}

    opts = options(cli, work, env,
                   hooks={"PreCompact": [HookMatcher(hooks=[on_pre_compact])]})

    async def scenario() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        async with ClaudeSDKClient(opts) as client:
            info = await client.get_server_info()
            assert info is not None
            seen["commands"] = {c["name"]: c for c in info["commands"]}
            seen["first"] = await turn(client, "remember 42")
            seen["compact"] = await turn(client, "/compact keep it short")
            seen["greet"] = await turn(client, "/greet Ann")
            seen["mine"] = await turn(client, "/mine x y")
            seen["clear"] = await turn(client, "/clear")
            seen["after"] = await turn(client, "after clear")
        return seen

    seen = run(scenario())
    commands = seen["commands"]
    assert commands["greet"] == {"name": "greet", "description": "Greets someone (project)",
                                 "argumentHint": "<name>"}
    assert commands["mine"]["description"] == "User command with $ARGUMENTS (user)"
    assert commands["compact"]["builtin"] is True
    assert commands["clear"]["aliases"] == ["reset", "new"]
    init = next(m for m in seen["first"] if isinstance(m, SystemMessage)
                and m.subtype == "init")
    assert {"greet", "mine", "clear", "compact"} <= set(init.data["slash_commands"])

    # /compact: a boundary, no model reply, an empty successful result.
    compact = seen["compact"]
    [boundary] = [m for m in compact if isinstance(m, SystemMessage)
                  and m.subtype == "compact_boundary"]
    assert boundary.data["compact_metadata"]["trigger"] == "manual"
    assert not [m for m in compact if isinstance(m, AssistantMessage)]
    result = result_of(compact)
    assert (result.subtype, result.result, result.is_error, result.num_turns) == (
        "success", "", False, 0)
    assert [(h["trigger"], h["custom_instructions"]) for h in pre_compact] == [
        ("manual", "keep it short")]
    requests = [r.body for r in server.requests if r.body and r.body.get("tools")]
    assert "keep it short" in str(requests[1]["messages"][-1])  # the summary request

    # A custom command reaches the model expanded.
    def answer(messages: list[Any]) -> str:
        return "".join(b.text for m in messages if isinstance(m, AssistantMessage)
                       for b in m.content if isinstance(b, TextBlock))

    assert answer(seen["greet"]) == "echo: Say hello to Ann please."
    assert answer(seen["mine"]) == "echo: User command with x y"
    after_compact = requests[2]["messages"]
    assert "remember 42" not in str(after_compact)  # the summary replaced it

    # /clear: a reset, then a new session with nothing of the old one.
    old_session = result_of(seen["mine"]).session_id
    [reset] = [m for m in seen["clear"] if isinstance(m, ConversationResetMessage)]
    assert reset.session_id == old_session
    new_session = result_of(seen["clear"]).session_id
    assert new_session != old_session
    assert result_of(seen["after"]).session_id == new_session
    assert requests[-1]["messages"] == [{"role": "user", "content": "after clear"}]


def test_rewind_files_restores_a_write_and_deletes_a_new_file(
        server: ScriptedServer, cli: str, work: Path, env: dict[str, str]) -> None:
    a, b = work / "a.txt", work / "b.txt"
    server.script(
        reply.tool_use("Write", {"file_path": str(a), "content": "one\n"}),
        reply.text("wrote a"),
        reply.tool_use("Write", {"file_path": str(a), "content": "two\n"}),
        reply.tool_use("Write", {"file_path": str(b), "content": "new\n"}),
        reply.text("changed a, made b"))
    opts = options(cli, work, env, enable_file_checkpointing=True,
                   permission_mode="acceptEdits",
                   extra_args={"replay-user-messages": None})

    def prompt_uuid(messages: list[Any], text: str) -> str:
        [echo] = [m for m in messages if isinstance(m, UserMessage) and m.content == text]
        assert echo.uuid
        return echo.uuid

    async def scenario() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        async with ClaudeSDKClient(opts) as client:
            first = prompt_uuid(await turn(client, "write a"), "write a")
            second = prompt_uuid(await turn(client, "change things"), "change things")
            assert (a.read_text(), b.read_text()) == ("two\n", "new\n")
            # The Python SDK's rewind_files() has no dry_run; its control channel carries
            # the request the TypeScript SDK's rewindFiles(id, {dryRun: true}) sends.
            query = client._query
            assert query is not None
            seen["dry run"] = await query._send_control_request(
                {"subtype": "rewind_files", "user_message_id": second, "dry_run": True})
            seen["after dry run"] = (a.read_text(), b.exists())
            await client.rewind_files(second)
            seen["at second"] = (a.read_text(), b.exists())
            await client.rewind_files(first)
            seen["at first"] = (a.exists(), b.exists())
            with pytest.raises(Exception, match="No file checkpoint found for this message"):
                await client.rewind_files("00000000-0000-4000-8000-000000000000")
        return seen

    seen = run(scenario())
    assert seen["dry run"] == {"canRewind": True, "filesChanged": [str(a), str(b)],
                               "insertions": 1, "deletions": 2}
    assert seen["after dry run"] == ("two\n", True)
    assert seen["at second"] == ("one\n", False)
    assert seen["at first"] == (False, False)


def test_rewind_files_without_checkpointing_is_an_error(
        server: ScriptedServer, cli: str, work: Path, env: dict[str, str]) -> None:
    server.script(reply.text("hi"))

    async def scenario() -> None:
        async with ClaudeSDKClient(options(cli, work, env)) as client:
            await turn(client, "hi")
            with pytest.raises(Exception, match="File rewinding is not enabled"):
                await client.rewind_files("00000000-0000-4000-8000-000000000000")

    run(scenario())
