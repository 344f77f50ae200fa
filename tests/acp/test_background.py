"""Background work in an editor's session (`wisp acp` only: Zed's adapter runs the CLI's
own duplex loop): a command the model started with `run_in_background` ends after the
prompt has answered, and the turn its end wakes reaches the editor as `session/update`
notifications; a prompt sent meanwhile takes the wait over, so the woken turn comes once,
after it."""

from __future__ import annotations

import json
from typing import Any

from tests.acp.conftest import Agent
from tests.acp.editor import Editor
from tests.acp.test_acceptance import TIMEOUT, prompt, run
from tests.acp.test_features import model_bodies
from tests.waits import until
from wisp.testing import ScriptedServer, reply

# Runs until the test makes the file `go`: the prompt's turn is surely over by then.
WAITING = "while [ ! -e go ]; do sleep 0.02; done; echo finished-here"


def _background_call() -> Any:
    return reply.tool_use("Bash", {"command": WAITING, "description": "wait for go",
                                   "run_in_background": True})


def test_a_background_commands_end_wakes_a_turn_the_editor_sees(
        native: Agent, server: ScriptedServer) -> None:
    server.script(_background_call(), reply.text("started it"), reply.text("it finished"))
    editor = Editor(answers=["allow_once"])

    async def body(conn: Any, sid: str) -> None:
        assert await prompt(conn, sid, "start it") == "end_turn"
        assert editor.text() == "started it"
        assert len(model_bodies(server)) == 2
        (native.cwd / "go").touch()
        await until(lambda: len(editor.of("usage_update")) == 2, "the woken turn's end",
                    TIMEOUT)

    run(native, editor, body)
    assert editor.text() == "started itit finished"
    woken = json.dumps(model_bodies(server)[-1]["messages"][-1])
    assert "<task-notification>" in woken and "<status>completed</status>" in woken
    assert len(model_bodies(server)) == 3


def test_a_prompt_sent_meanwhile_takes_the_wait_over(native: Agent,
                                                     server: ScriptedServer) -> None:
    server.script(_background_call(), reply.text("started it"), reply.text("hello"),
                  reply.text("it finished"))
    editor = Editor(answers=["allow_once"])

    async def body(conn: Any, sid: str) -> None:
        assert await prompt(conn, sid, "start it") == "end_turn"
        assert await prompt(conn, sid, "still there?") == "end_turn"
        assert editor.text() == "started ithello"
        (native.cwd / "go").touch()
        await until(lambda: len(editor.of("usage_update")) == 3, "the woken turn's end",
                    TIMEOUT)

    run(native, editor, body)
    assert editor.text() == "started ithelloit finished"
    bodies = model_bodies(server)
    assert len(bodies) == 4  # one woken turn, not one per prompt that waited
    assert "<task-notification>" in json.dumps(bodies[-1]["messages"][-1])
