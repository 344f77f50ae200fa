"""Bash in the editor's terminal (`terminal/*`), when the editor offers one: the command
runs there, the user sees it in the tool call, its output and exit code reach the model,
and a cancelled turn kills and releases it. (`wisp acp` only: Zed's adapter runs commands
in the CLI.)"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from tests.acp.conftest import Agent
from tests.acp.editor import Editor, connect
from tests.acp.test_acceptance import TIMEOUT, prompt
from wisp.testing import ScriptedServer, reply


def run(agent: Agent, editor: Editor, body: Any) -> None:
    async def main() -> None:
        async with connect(agent.command, editor, agent.env, agent.cwd, terminal=True) as (
                conn, _):
            made = await asyncio.wait_for(
                conn.new_session(cwd=str(agent.cwd), mcp_servers=[]), TIMEOUT)
            await body(conn, made.session_id)

    asyncio.run(main())


def test_a_command_runs_in_the_editors_terminal(native: Agent, server: ScriptedServer) -> None:
    server.script(reply.tool_use("Bash", {"command": "echo from-the-panel; touch t; exit 3"}),
                  reply.text("seen"))
    editor = Editor(answers=["allow_once"])

    async def body(conn: Any, sid: str) -> None:
        assert await prompt(conn, sid, "run it") == "end_turn"

    run(native, editor, body)
    [term] = editor.terminals.values()
    assert term.argv == ["bash", "-c", "echo from-the-panel; touch t; exit 3"]
    assert term.released and (native.cwd / "t").exists()
    shown = [c for u in editor.of("tool_call_update") for c in u.get("content") or []
             if c.get("type") == "terminal"]
    assert shown == [{"type": "terminal", "terminalId": "term-1"}]
    result = json.dumps(server.requests[-1].body)
    assert "from-the-panel" in result and "Exit code 3" in result


def test_a_cancel_kills_and_releases_the_editors_terminal(native: Agent,
                                                         server: ScriptedServer) -> None:
    server.script(reply.tool_use("Bash", {"command": "sleep 300"}), reply.text("after"))
    editor = Editor(answers=["allow_once"])

    async def body(conn: Any, sid: str) -> None:
        turn = asyncio.ensure_future(prompt(conn, sid, "wait"))
        while not editor.terminals:
            await asyncio.sleep(0.01)
        await conn.cancel(session_id=sid)
        assert await turn == "cancelled"
        editor.clear()
        assert await prompt(conn, sid, "again") == "end_turn"

    run(native, editor, body)
    [term] = editor.terminals.values()
    assert term.killed and term.released and term.proc.returncode is not None


def test_with_the_sandbox_on_commands_stay_in_it(native: Agent, server: ScriptedServer) -> None:
    """The editor's terminal is outside the OS sandbox: a command it must hold never goes
    there (it runs sandboxed here, or is refused where the sandbox cannot run)."""
    config = Path(native.env["WISP_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.json").write_text(json.dumps({"sandbox": {"enabled": True}}))
    server.script(reply.tool_use("Bash", {"command": "echo inside"}), reply.text("done"))
    editor = Editor(answers=["allow_once"])

    async def body(conn: Any, sid: str) -> None:
        assert await prompt(conn, sid, "run it") == "end_turn"

    run(native, editor, body)
    assert editor.terminals == {}
    assert [u for u in editor.of("tool_call_update") if u.get("status") in (
        "completed", "failed")]
