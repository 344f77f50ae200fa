"""Rewind in tmux: Esc Esc on an empty input (or /rewind) lists the earlier prompts and
restores the code, the conversation, or both; Esc Esc with a draft clears it."""

from __future__ import annotations

import subprocess
import sys
import time

from tests.tui.harness import Terminal, TuiSetup, message_requests, wait_requests
from wisp.testing import reply


def started(tui: TuiSetup, *args: str) -> Terminal:
    term = tui.terminal(*args)
    term.ready(timeout=20)
    term.wait_for("accept edits on|default mode")  # loaded
    return term


def test_esc_esc_rewinds_code_and_conversation_to_before_a_prompt(tui: TuiSetup) -> None:
    target = tui.cwd / "a.txt"
    tui.server.script(
        reply.tool_use("Write", {"file_path": str(target), "content": "v1\n"}),
        reply.text("first done"),
        reply.tool_use("Edit", {"file_path": str(target), "old_string": "v1",
                                "new_string": "v2"}),
        reply.text("second done"),
        reply.echo())
    term = started(tui, "--permission-mode", "acceptEdits")
    term.submit("make version one")
    term.wait_for("first done")
    term.ready()
    term.submit("change to version two")
    term.wait_for("second done")
    term.ready()
    assert target.read_text() == "v2\n"
    term.keys("Escape")
    time.sleep(0.15)  # two presses, as a person makes them
    term.keys("Escape")
    screen = term.wait_for("Rewind: back to before which prompt")
    assert "1. change to version two" in screen and "2. make version one" in screen
    term.keys("1")
    screen = term.wait_for("Restore code and conversation")
    assert "1 file would change" in screen
    term.keys("1")
    term.wait_for("Rewound code and conversation")
    assert target.read_text() == "v1\n"
    # The prompt is back in the input; the model no longer sees the second turn.
    term.wait_for(r"^❯ change to version two$")
    term.keys("C-u")
    term.submit("after the rewind")
    requests = wait_requests(tui, 5)
    term.wait_for("echo: after the rewind")
    sent = str(requests[-1].body.get("messages") if requests[-1].body else "")
    assert "make version one" in sent and "first done" in sent
    assert "change to version two" not in sent and "second done" not in sent


def test_rewind_conversation_only_leaves_the_files(tui: TuiSetup) -> None:
    target = tui.cwd / "b.txt"
    tui.server.script(
        reply.tool_use("Write", {"file_path": str(target), "content": "kept\n"}),
        reply.text("wrote it"),
        reply.echo())
    term = started(tui, "--permission-mode", "acceptEdits")
    term.submit("write b")
    term.wait_for("wrote it")
    term.ready()
    term.submit("/rewind")
    term.wait_for("Rewind: back to before which prompt")
    term.keys("1")
    term.wait_for("Restore conversation")
    term.keys("2")
    term.wait_for("Rewound conversation")
    assert target.read_text() == "kept\n"  # the code stays
    term.keys("C-u")
    term.submit("fresh start")
    term.wait_for("echo: fresh start")
    sent = str(message_requests(tui)[-1].body)
    assert "write b" not in sent
    # The transcript branched at the rewind: resuming it brings back the conversation
    # after the rewind, not the turn that was rewound.
    tui.server.script(reply.echo())
    resumed = subprocess.run([sys.executable, "-m", "wisp", "-p", "--continue", "again"],
                             cwd=tui.cwd, env=tui.env, capture_output=True, text=True,
                             timeout=60, check=False)
    assert resumed.returncode == 0, resumed.stderr
    sent = str(message_requests(tui)[-1].body)
    assert "fresh start" in sent and "again" in sent
    assert "write b" not in sent and "wrote it" not in sent


def test_esc_esc_clears_a_draft_and_up_brings_it_back(tui: TuiSetup) -> None:
    term = started(tui)
    term.type("a draft to drop")
    term.wait_for("a draft to drop")
    term.keys("Escape")
    time.sleep(0.15)
    term.keys("Escape")
    term.wait_gone("a draft to drop")
    assert "Rewind" not in term.screen()  # a draft is cleared, not rewound
    term.keys("Up")
    term.wait_for("❯ a draft to drop")
