"""Consecutive Read, Grep and Glob calls shown as one line ("Read 2 files, searched for
2 patterns"), ctrl+o showing each call and its result; a group holding a failure is
shown call by call, so the failure is seen. Driven in tmux."""

from __future__ import annotations

import re

from tests.tui.harness import TuiSetup
from wisp.testing import reply


def test_looking_around_calls_collapse_into_one_line_and_ctrl_o_expands_it(
        tui: TuiSetup) -> None:
    (tui.cwd / "a.txt").write_text("one\ntwo\nthree\n")
    (tui.cwd / "b.txt").write_text("only\n")
    tui.server.script(
        reply.tool_uses([("Read", {"file_path": str(tui.cwd / "a.txt")}),
                         ("Read", {"file_path": str(tui.cwd / "b.txt")})],
                        text="Let me look."),
        reply.tool_use("Grep", {"pattern": "only"}),
        reply.tool_use("Glob", {"pattern": "*.txt"}),
        reply.text("looked around"))
    term = tui.terminal()
    term.ready(timeout=20)
    term.submit("look")
    term.wait_for("looked around")
    screen = term.ready()
    assert re.search(r"^● Read 2 files, searched for 2 patterns \(ctrl\+o to expand\)$",
                     screen, re.MULTILINE), screen
    assert "Read(a.txt)" not in screen and "Glob(" not in screen
    # The group comes after the text before it and before the answer after it.
    assert screen.index("Let me look.") < screen.index("● Read 2 files") < screen.index(
        "looked around")
    term.keys("C-o")
    screen = term.wait_for(r"Glob\(\*\.txt\)")
    assert re.search(r"● Read\(a\.txt\)\n\s+⎿\s+Read 3 lines", screen), screen
    assert re.search(r"● Read\(b\.txt\)\n\s+⎿\s+Read 1 line\b", screen), screen
    assert re.search(r"● Grep\(only\)\n\s+⎿\s+Found 1 file\b", screen), screen
    assert re.search(r"● Glob\(\*\.txt\)\n\s+⎿\s+Found 2 files", screen), screen


def test_a_single_read_keeps_its_own_header(tui: TuiSetup) -> None:
    (tui.cwd / "a.txt").write_text("one\ntwo\n")
    tui.server.script(reply.tool_use("Read", {"file_path": str(tui.cwd / "a.txt")}),
                      reply.tool_use("Bash", {"command": "echo next"}),
                      reply.text("done reading"))
    term = tui.terminal("--allowedTools", "Bash")
    term.ready(timeout=20)
    term.submit("read it")
    term.wait_for("done reading")
    text = term.scrollback()
    assert re.search(r"● Read\(a\.txt\)\n\s+⎿\s+Read 2 lines", text), text
    assert "Read 1 file" not in text
    assert text.index("Read(a.txt)") < text.index("Bash(echo next)")


def test_a_group_with_a_failure_is_shown_call_by_call(tui: TuiSetup) -> None:
    (tui.cwd / "a.txt").write_text("one\n")
    tui.server.script(
        reply.tool_uses([("Read", {"file_path": str(tui.cwd / "a.txt")}),
                         ("Read", {"file_path": str(tui.cwd / "missing.txt")})]),
        reply.text("one was missing"))
    term = tui.terminal()
    term.ready(timeout=20)
    term.submit("read both")
    term.wait_for("one was missing")
    text = term.scrollback()
    assert "Read 2 files" not in text
    assert re.search(r"● Read\(a\.txt\)\n\s+⎿\s+Read 1 line\b", text), text
    assert re.search(r"● Read\(missing\.txt\)\n\s+⎿\s+.*(not exist|No such)", text), text


def test_a_held_read_beside_a_command_keeps_each_result_under_its_call(
        tui: TuiSetup) -> None:
    """A command's header, then a Read held for a group: the command's output must not
    end up under the Read's header when the group is printed before it."""
    (tui.cwd / "a.txt").write_text("one\ntwo\nthree\n")
    tui.server.script(
        reply.tool_uses([("Bash", {"command": "echo from-the-shell"}),
                         ("Read", {"file_path": str(tui.cwd / "a.txt")})]),
        reply.text("both done"))
    term = tui.terminal("--allowedTools", "Bash")
    term.ready(timeout=20)
    term.submit("do both")
    term.wait_for("both done")
    text = term.scrollback()
    assert re.search(r"Bash\(echo from-the-shell\)\n\s+⎿\s+from-the-shell", text), text
    assert re.search(r"Read\(a\.txt\)\n\s+⎿\s+Read 3 lines", text), text
