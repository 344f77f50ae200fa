"""What a person sees of edits and tool results, in tmux: the permission dialog written as
a question with a numbered diff of the real file, the diff summary after an approved
edit, refusals as a short line, and results as summaries under their own calls."""

from __future__ import annotations

import re

from tests.tui.harness import Terminal, TuiSetup
from wisp.testing import reply

DIALOG = r"1\. Yes"
ORIGINAL = "".join(f"line {i}\n" for i in range(1, 21))


def started(tui: TuiSetup) -> Terminal:
    term = tui.terminal()
    term.ready(timeout=20)
    return term


def test_edit_dialog_shows_a_numbered_diff_of_the_real_file_and_asks(tui: TuiSetup) -> None:
    target = tui.cwd / "src" / "notes.txt"
    target.parent.mkdir()
    target.write_text(ORIGINAL)
    tui.server.script(
        reply.tool_use("Edit", {"file_path": str(target), "old_string": "line 12\n",
                                "new_string": "line twelve\nline 12b\n"}),
        reply.text("edit finished"))
    term = started(tui)
    term.submit("change line 12")
    screen = term.wait_for(DIALOG)
    assert "Edit file" in screen
    assert "Do you want to make this edit to src/notes.txt?" in screen
    assert str(target) not in screen  # relative to the project, not absolute
    assert "--allowedTools" not in screen and "--permission-mode" not in screen
    # The file's own numbers, three lines of context on each side.
    assert re.search(r"^\s+9\s+line 9$", screen, re.MULTILINE), screen
    assert re.search(r"^\s+12 - line 12$", screen, re.MULTILINE), screen
    assert re.search(r"^\s+12 \+ line twelve$", screen, re.MULTILINE), screen
    assert re.search(r"^\s+13 \+ line 12b$", screen, re.MULTILINE), screen
    assert re.search(r"^\s+16\s+line 15$", screen, re.MULTILINE), screen
    assert "line 8" not in screen.split("Edit file", 1)[1]
    coloured = term.screen(colors=True)
    assert re.search(r"\x1b\[[0-9;]*48;[0-9;]*m", coloured), "no background colour"
    term.keys("1")
    screen = term.wait_for("edit finished")
    assert "Added 2 lines, removed 1 line" in screen
    assert "has been updated" not in term.scrollback()  # the model's text stays the model's
    assert target.read_text() == ORIGINAL.replace("line 12\n", "line twelve\nline 12b\n")


def test_write_of_a_new_file_says_how_many_lines_it_wrote(tui: TuiSetup) -> None:
    target = tui.cwd / "fresh.py"
    tui.server.script(
        reply.tool_use("Write", {"file_path": str(target), "content": "a = 1\nb = 2\n"}),
        reply.text("write finished"))
    term = started(tui)
    term.submit("write it")
    screen = term.wait_for(DIALOG)
    assert "Create file" in screen and "Do you want to create fresh.py?" in screen
    term.keys("1")
    screen = term.wait_for("write finished")
    assert "Wrote 2 lines to fresh.py" in screen
    assert re.search(r"^\s+⎿\s+Write|Write\(fresh\.py\)", screen, re.MULTILINE)
    assert "File created successfully" not in term.scrollback()


def test_bash_dialog_asks_a_question_and_a_refusal_is_one_short_line(tui: TuiSetup) -> None:
    tui.server.script(reply.tool_use("Bash", {"command": "touch nope.txt"}), reply.echo())
    term = started(tui)
    term.submit("make it")
    screen = term.wait_for(DIALOG)
    assert "Bash command" in screen and "Do you want to run this command?" in screen
    assert "--allowedTools" not in screen and "has not been granted" not in screen
    assert re.search(r"3\. No, and tell wisp what to do differently \(esc\)", screen)
    term.keys("Escape")
    screen = term.wait_for("No, you declined it")
    assert "doesn't want to proceed" not in term.scrollback()
    assert not (tui.cwd / "nope.txt").exists()


def test_results_of_parallel_calls_are_summaries_under_their_own_calls(
        tui: TuiSetup) -> None:
    (tui.cwd / "a.txt").write_text("one\ntwo\nthree\n")
    tui.server.script(
        reply.tool_uses([("Read", {"file_path": str(tui.cwd / "a.txt")}),
                         ("Bash", {"command": "echo from-the-shell"})]),
        reply.text("looked around"))
    term = tui.terminal("--allowedTools", "Bash")
    term.ready(timeout=20)
    term.submit("look")
    term.wait_for("looked around")
    text = term.scrollback()
    # Each result is under a header naming its own call (named again when another
    # call's header came between).
    assert re.search(r"Read\(a\.txt\)\n\s+⎿\s+Read 3 lines", text), text
    assert re.search(r"Bash\(echo from-the-shell\)\n\s+⎿\s+from-the-shell", text), text
    assert "     1\tone" not in text and "1→one" not in text  # no cat -n text


def test_todowrite_shows_a_checklist(tui: TuiSetup) -> None:
    todos = [{"content": "Write the parser", "activeForm": "Writing", "status": "completed"},
             {"content": "Test the parser", "activeForm": "Testing", "status": "in_progress"},
             {"content": "Ship it", "activeForm": "Shipping", "status": "pending"}]
    tui.server.script(reply.tool_use("TodoWrite", {"todos": todos}), reply.text("planned"))
    term = started(tui)
    term.submit("plan")
    screen = term.wait_for("planned")
    assert "Update Todos" in screen
    assert "☒ Write the parser" in screen
    assert "◼ Test the parser" in screen
    assert "☐ Ship it" in screen
    assert '"activeForm"' not in term.scrollback()
