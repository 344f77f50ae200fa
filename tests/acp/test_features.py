"""What an editor relies on beyond the acceptance list, through both paths where both
offer it: modes, model switching, closing a session, thinking and plans streamed, images
and embedded context in a prompt, the editor's MCP servers, and the slash commands
listed, sessions listed and forked."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, image_block, text_block
from acp.schema import EmbeddedResourceContentBlock, McpServerStdio, TextResourceContents

from tests.acp.conftest import Agent
from tests.acp.editor import Editor, connect
from tests.acp.test_acceptance import TIMEOUT, prompt, run
from wisp.testing import ScriptedServer, reply

CALC = Path(__file__).parents[1] / "mcp" / "calc_server.py"
PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJ"
       "RU5ErkJggg==")


def model_bodies(server: ScriptedServer) -> list[dict[str, Any]]:
    return [r.body for r in server.requests
            if r.path.partition("?")[0].endswith("/messages") and r.body]


def test_accept_edits_mode_writes_without_asking(agent: Agent, server: ScriptedServer) -> None:
    target = agent.cwd / "made.txt"
    server.script(reply.tool_use("Write", {"file_path": str(target), "content": "x\n"}),
                  reply.text("made"))
    editor = Editor()  # would reject if asked

    async def body(conn: Any, sid: str) -> None:
        await asyncio.wait_for(conn.set_session_mode(session_id=sid, mode_id="acceptEdits"),
                               TIMEOUT)
        assert await prompt(conn, sid, "make it") == "end_turn"

    run(agent, editor, body)
    assert editor.permission_requests == []
    assert target.read_text() == "x\n"


def test_the_model_option_switches_the_model(agent: Agent, server: ScriptedServer) -> None:
    server.script(reply.text("small"))
    editor = Editor()

    async def body(conn: Any, sid: str) -> None:
        answer = await asyncio.wait_for(conn.set_config_option(
            config_id="model", session_id=sid, value="haiku"), TIMEOUT)
        model = next(o for o in answer.config_options if o.id == "model")
        assert model.current_value == "haiku"
        assert await prompt(conn, sid, "hi") == "end_turn"

    run(agent, editor, body)
    assert "haiku" in model_bodies(server)[-1]["model"]


def test_a_closed_session_takes_no_more_prompts(agent: Agent, server: ScriptedServer) -> None:
    editor = Editor()

    async def body(conn: Any, sid: str) -> None:
        await asyncio.wait_for(conn.close_session(session_id=sid), TIMEOUT)
        with pytest.raises(RequestError):
            await prompt(conn, sid, "still there?")

    run(agent, editor, body)


def test_thinking_and_a_plan_stream_to_the_editor(agent: Agent, server: ScriptedServer) -> None:
    todos = [{"content": "Read the code", "status": "completed", "activeForm": "Reading"},
             {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing"}]
    server.script(reply.message([
        {"type": "thinking", "thinking": "Let me plan this.", "signature": "sig_1"},
        {"type": "tool_use", "name": "TodoWrite", "input": {"todos": todos}}],
        stop_reason="tool_use"), reply.text("planned"))
    editor = Editor()

    async def body(conn: Any, sid: str) -> None:
        assert await prompt(conn, sid, "plan it") == "end_turn"

    run(agent, editor, body)
    assert editor.text("agent_thought_chunk") == "Let me plan this."
    [plan, *_] = editor.of("plan")
    assert [(e["content"], e["status"]) for e in plan["entries"]] == [
        ("Read the code", "completed"), ("Fix the bug", "in_progress")]


def test_images_and_embedded_context_reach_the_model(agent: Agent,
                                                      server: ScriptedServer) -> None:
    server.script(reply.text("seen"))
    editor = Editor()
    context = EmbeddedResourceContentBlock(type="resource", resource=TextResourceContents(
        uri="file:///work/notes.md", text="the embedded note", mime_type="text/markdown"))

    async def body(conn: Any, sid: str) -> None:
        answer = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[
            text_block("look"), image_block(PNG, "image/png"), context]), TIMEOUT)
        assert answer.stop_reason == "end_turn"

    run(agent, editor, body)
    sent = json.dumps(model_bodies(server)[-1]["messages"][-1])
    assert PNG in sent and '"media_type": "image/png"' in sent
    assert "the embedded note" in sent and "file:///work/notes.md" in sent


def test_the_editors_mcp_servers_are_offered_and_called(agent: Agent,
                                                         server: ScriptedServer) -> None:
    server.script(reply.tool_use("mcp__calc__add", {"a": 2, "b": 40}), reply.text("42"))
    editor = Editor(answers=["allow_once"])
    calc = McpServerStdio(name="calc", command=sys.executable, args=[str(CALC)], env=[])

    async def main() -> None:
        async with connect(agent.command, editor, agent.env, agent.cwd) as (conn, _):
            made = await asyncio.wait_for(
                conn.new_session(cwd=str(agent.cwd), mcp_servers=[calc]), TIMEOUT)
            assert await prompt(conn, made.session_id, "add") == "end_turn"

    asyncio.run(main())
    first = model_bodies(server)[0]
    assert "mcp__calc__add" in [t["name"] for t in first["tools"]]
    results = [u for u in editor.of("tool_call_update") if u.get("status") == "completed"]
    assert any("42" in json.dumps(u.get("content")) for u in results)


def test_custom_commands_and_skills_are_listed(agent: Agent) -> None:
    commands = agent.cwd / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "greet.md").write_text(
        "---\ndescription: Say hello\n---\nSay hello to $ARGUMENTS\n")
    editor = Editor()
    listed = asyncio.Event()
    editor.on_update = lambda u: listed.set() if u.get(
        "sessionUpdate") == "available_commands_update" else None

    async def body(conn: Any, sid: str) -> None:
        await asyncio.wait_for(listed.wait(), TIMEOUT)

    run(agent, editor, body)
    [update, *_] = editor.of("available_commands_update")
    names = {c["name"] for c in update["availableCommands"]}
    assert "greet" in names and "compact" in names


def test_sessions_are_listed_and_forked(agent: Agent, server: ScriptedServer) -> None:
    server.script(reply.text("first"), reply.text("forked"))
    editor = Editor()

    async def body(conn: Any, sid: str) -> None:
        assert await prompt(conn, sid, "one") == "end_turn"
        listed = await asyncio.wait_for(conn.list_sessions(cwd=str(agent.cwd)), TIMEOUT)
        assert sid in [s.session_id for s in listed.sessions]
        fork = await asyncio.wait_for(conn.fork_session(session_id=sid, cwd=str(agent.cwd),
                                                        mcp_servers=[]), TIMEOUT)
        assert fork.session_id != sid
        assert await prompt(conn, fork.session_id, "two") == "end_turn"

    run(agent, editor, body)
    # The fork carried the first conversation to the model.
    assert "one" in json.dumps(model_bodies(server)[-1]["messages"])
