"""Keys of the terminal UI, in tmux: the ones a person presses the moment the prompt
appears (Shift+Tab), the key right after Esc, and leaving (how to come back)."""

from __future__ import annotations

import re
import time

import pytest

from tests.tui.harness import POLL_S, TuiSetup, message_requests
from wisp.testing import reply


def test_shift_tab_pressed_as_soon_as_the_prompt_shows_is_kept(tui: TuiSetup) -> None:
    target = tui.cwd / "early.txt"
    tui.server.script(reply.tool_use("Write", {"file_path": str(target), "content": "x\n"}),
                      reply.text("written early"))
    term = tui.terminal()
    deadline = time.monotonic() + 20
    while not re.search(r"^❯", term.screen(), re.MULTILINE):  # not `ready`: no waiting
        assert time.monotonic() < deadline, term.screen()
        time.sleep(POLL_S / 4)
    term.keys("BTab")
    term.wait_for("accept edits on")
    term.submit("write it")
    term.wait_for("written early")
    assert target.read_text() == "x\n"
    assert "1. Yes" not in term.scrollback()  # accept-edits was on: nothing asked


@pytest.mark.parametrize("pause", [0.0, 0.2])
def test_the_key_typed_after_esc_is_not_swallowed(tui: TuiSetup, pause: float) -> None:
    term = tui.terminal()
    term.ready(timeout=20)
    term.wait_for("default mode")  # loaded
    term.keys("Escape")
    time.sleep(pause)
    term.type("/exit")
    term.keys("Enter")
    assert term.exit_status() == 0
    assert message_requests(tui) == []  # "exit" never went to the model


def test_esc_then_a_letter_types_the_letter(tui: TuiSetup) -> None:
    tui.server.script(reply.echo())
    term = tui.terminal()
    term.ready(timeout=20)
    term.wait_for("default mode")
    term.keys("Escape")
    time.sleep(0.2)
    term.submit("hello after esc")
    term.wait_for("echo: hello after esc")


def test_leaving_prints_how_to_resume_and_resume_comes_back(tui: TuiSetup) -> None:
    tui.server.script(reply.text("first answer"), reply.echo())
    term = tui.terminal()
    term.ready(timeout=20)
    term.submit("remember me")
    term.wait_for("first answer")
    term.ready()
    term.keys("C-d")
    assert term.exit_status() == 0
    found = re.search(r"wisp --resume (\S+)", term.scrollback())
    assert found, term.scrollback()
    again = tui.terminal("--resume", found.group(1))
    again.wait_for("first answer", timeout=20)  # the conversation is replayed
    again.ready()
    again.submit("and now")
    again.wait_for("echo: and now")
    sent = message_requests(tui)[-1].body or {}
    assert "remember me" in str(sent.get("messages"))


def test_leaving_an_empty_session_prints_no_resume_line(tui: TuiSetup) -> None:
    term = tui.terminal()
    term.ready(timeout=20)
    term.wait_for("default mode")
    term.submit("/exit")
    assert term.exit_status() == 0
    assert "--resume" not in term.scrollback()


def test_question_mark_shows_the_shortcuts_until_a_key_is_typed(tui: TuiSetup) -> None:
    term = tui.terminal()
    term.ready(timeout=20)
    term.type("?")
    screen = term.wait_for(r"ctrl\+g")
    assert "edit the prompt in $EDITOR" in screen and "change the permission mode" in screen
    assert not re.search(r"^❯ \?", screen, re.MULTILINE)  # `?` opened it, was not typed
    term.type("x")
    term.wait_gone(r"ctrl\+g")
    term.wait_for(r"^❯ x$")
    term.type("?")  # in a prompt, `?` is just a character
    term.wait_for(r"^❯ x\?$")


def test_ctrl_g_edits_the_prompt_in_the_editor(tui: TuiSetup) -> None:
    editor = tui.cwd.parent / "editor.sh"
    editor.write_text('#!/bin/sh\nprintf "written in the editor" > "$1"\n')
    editor.chmod(0o755)
    tui.server.script(reply.echo())
    term = tui.terminal(env={"EDITOR": str(editor), "VISUAL": str(editor)})
    term.ready(timeout=20)
    term.type("draft")
    term.keys("C-g")
    term.wait_for(r"^❯ written in the editor$")
    assert message_requests(tui) == []  # back in the input, not sent
    term.keys("Enter")
    term.wait_for("echo: written in the editor")


def test_a_narrow_terminal_keeps_the_welcome_and_the_footer_whole(tui: TuiSetup) -> None:
    term = tui.terminal(width=60, height=20)
    screen = term.ready(timeout=20)
    screen = term.wait_for("ctx")
    lines = screen.split("\n")
    assert lines[0].startswith("✻ wisp ")
    assert lines[2] == "  /help · ? for shortcuts · ctrl+d exits"  # not wrapped
    footer = next(line for line in lines if "ctx" in line)
    assert " · default · ctx " in footer and "$0.0000" in footer  # shortened, not cut
    assert len(footer) <= 60


def test_bang_shows_the_shell_mode_cue(tui: TuiSetup) -> None:
    term = tui.terminal()
    term.ready(timeout=20)
    term.wait_for("default mode")
    term.type("!ls")
    term.wait_for("! shell mode")
    term.keys("C-u")
    term.wait_gone("! shell mode")


@pytest.mark.parametrize("call", [
    ("Edit", "edit"), ("Bash", "command"), ("ExitPlanMode", "plan")])
def test_dialogs_fit_a_60_by_20_screen(tui: TuiSetup, call: tuple[str, str]) -> None:
    """Issue 27 item 11: whatever the dialog holds, on a 60×20 screen its question and
    every choice are on screen, no line is wider than the screen, and a dialog cut to fit
    starts on the choice that refuses."""
    name, kind = call
    target = tui.cwd / "big.txt"
    target.write_text("".join(f"line {i}\n" for i in range(1, 80)))
    tool_input = {
        "edit": {"file_path": str(target), "old_string": "".join(
            f"line {i}\n" for i in range(10, 50)), "new_string": "gone\n"},
        "command": {"command": "\n".join(f"touch file{i}" for i in range(40))},
        "plan": {"plan": "\n".join(f"{i}. step number {i}" for i in range(1, 40))},
    }[kind]
    tui.server.script(reply.tool_use(name, tool_input), reply.text("after"))
    args = ("--permission-mode", "plan") if kind == "plan" else ()
    term = tui.terminal(*args, width=60, height=20)
    term.ready(timeout=20)
    term.submit("go")
    screen = term.wait_for(r"\d\. No")
    lines = screen.split("\n")
    assert all(len(line) <= 60 for line in lines), screen
    choices = [line for line in lines if re.match(r"^\s*❯?\s*\d\. ", line)]
    assert len(choices) == 3, screen
    assert "❯" in choices[-1], screen  # cut to fit: Enter refuses until the user moves
    assert "?" in screen  # the question is there
