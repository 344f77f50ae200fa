"""`Runtime.run_until_quiet` in one process, against the scripted Messages API server: the
prompt's turn, then the turn a background command's end wakes, each as it ends; and an
interrupt while it waits for background work ends the loop at once, with no further turn
(the command itself goes on until the session ends)."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.runtime.sinks import Events
from tests.waits import until
from wisp.engine.outcome import Success
from wisp.runtime.config import RuntimeConfig
from wisp.runtime.quiet import QuietTurn
from wisp.runtime.runtime import Runtime
from wisp.testing import ScriptedServer, reply

WAITING = "while [ ! -e go ]; do sleep 0.02; done; echo finished-here"


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    made = ScriptedServer(
        reply.tool_use("Bash", {"command": WAITING, "description": "wait for go",
                                "run_in_background": True}),
        reply.text("started it"), reply.text("it finished"))
    yield made
    made.close()


def _open(server: ScriptedServer, tmp_path: Path) -> Runtime:
    home = tmp_path / "home"
    home.mkdir()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
           "WISP_CONFIG_DIR": str(home / ".wisp"), "ANTHROPIC_BASE_URL": server.url,
           "ANTHROPIC_API_KEY": "sk-test", "CLAUDE_CODE_MAX_RETRIES": "0"}
    return Runtime.open(RuntimeConfig(cwd=tmp_path, env=env, allowed_tools=("Bash",)),
                        Events())


def test_the_prompts_turn_then_the_turn_its_background_command_wakes(
        server: ScriptedServer, tmp_path: Path) -> None:
    async def main() -> list[QuietTurn]:
        runtime = _open(server, tmp_path)
        seen: list[QuietTurn] = []
        try:
            async for turn in runtime.run_until_quiet("start it"):
                seen.append(turn)
                (tmp_path / "go").touch()  # after the prompt's turn: the command ends
        finally:
            await runtime.aclose()
        return seen

    first, woken = asyncio.run(asyncio.wait_for(main(), 60))
    assert first == QuietTurn(Success("started it"), woken=False, more=True,
                              agents_running=False)
    assert woken == QuietTurn(Success("it finished"), woken=True, more=False,
                              agents_running=False)
    notice = json.dumps(server.requests[-1].body["messages"][-1])
    assert "<task-notification>" in notice and "<status>completed</status>" in notice


def test_an_interrupt_ends_the_wait_for_background_work(server: ScriptedServer,
                                                        tmp_path: Path) -> None:
    async def main() -> Runtime:
        runtime = _open(server, tmp_path)
        turns = runtime.run_until_quiet("start it")
        first = await anext(turns)
        assert first.more and runtime.tasks.busy()
        waiting = asyncio.ensure_future(anext(turns))
        asyncio.get_running_loop().call_soon(runtime.interrupt)
        with pytest.raises(StopAsyncIteration):
            await asyncio.wait_for(waiting, 10)  # at once, though the command still runs
        assert runtime.tasks.busy()
        (tmp_path / "go").touch()
        await until(runtime.tasks.has_wake, "the command's end")
        await runtime.aclose()
        return runtime

    asyncio.run(asyncio.wait_for(main(), 60))
    assert len(server.requests) == 2  # no turn after the interrupt
