"""The terminal UI's first promises, in tmux: a prompt and its streamed answer, a tool
call that waits for approval, and leaving with status 0."""

from __future__ import annotations

from tests.tui.harness import TuiSetup
from wisp.testing import reply


def test_prompt_streams_a_markdown_answer(tui: TuiSetup) -> None:
    tui.server.script(reply.text("The answer is **forty-two**.\n\n```python\nprint(42)\n```"))
    term = tui.terminal()
    term.ready()
    term.submit("what is it?")
    screen = term.wait_for(r"print\(42\)")
    assert "The answer is forty-two." in screen  # Markdown rendered: no asterisks left
    assert "**" not in screen and "```" not in screen
    assert "❯ what is it?" in screen
    term.ready()


def test_bash_waits_for_approval_then_runs_on_1(tui: TuiSetup) -> None:
    tui.server.script(reply.tool_use("Bash", {"command": "touch made.txt && echo made"}),
                      reply.text("finished"))
    term = tui.terminal()
    term.ready()
    term.submit("make it")
    term.wait_for(r"1\. Yes")
    screen = term.screen()
    assert "touch made.txt && echo made" in screen
    assert not (tui.cwd / "made.txt").exists()  # nothing runs before the answer
    term.keys("1")
    term.wait_for("finished")
    assert (tui.cwd / "made.txt").exists()
    assert "made" in term.screen()


def test_exit_command_ends_with_status_0(tui: TuiSetup) -> None:
    term = tui.terminal()
    term.ready()
    term.submit("/exit")
    assert term.exit_status() == 0


def test_without_a_terminal_for_stdout_it_suggests_print_mode(tui: TuiSetup) -> None:
    term = tui.terminal(stdout_pipe=True)
    assert term.exit_status() == 1
    assert "-p" in term.stderr() and "terminal" in term.stderr()
