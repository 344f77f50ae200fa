"""The /resume and /model pickers, driven in tmux: /resume narrows its list as you type
(title, first prompt, any words of the prompts) and previews the highlighted session's
last messages; /model shows each model's price and what it is for, and lets you pick an
effort level for a model that takes one. Both stay usable at 60x20."""

from __future__ import annotations

import re

from tests.tui.harness import Terminal, TuiSetup, wait_requests
from tests.tui.test_input_and_commands import all_texts, run_print
from wisp.testing import reply


def started(tui: TuiSetup, width: int = 100, height: int = 30) -> Terminal:
    term = tui.terminal(width=width, height=height)
    term.ready(timeout=20)
    return term


def three_sessions(tui: TuiSetup) -> None:
    tui.server.script(reply.text("the parser is fixed"), reply.text("the docs are done"),
                      reply.text("logging answer"), reply.text("logging is quieter"))
    run_print(tui, "fix the ALPHA parser")
    run_print(tui, "write the user docs")
    run_print(tui, "make logging less noisy")
    proc = run_print(tui, "--continue", "and the warnings too")
    assert proc.returncode == 0


def test_resume_search_narrows_the_list_and_previews_the_last_messages(
        tui: TuiSetup) -> None:
    three_sessions(tui)
    tui.server.script(reply.echo())
    term = started(tui)
    term.submit("/resume")
    screen = term.wait_for(r"⌕ █")
    for prompt in ("fix the ALPHA parser", "write the user docs", "make logging less noisy"):
        assert prompt in screen, screen
    # The newest session is highlighted and previewed: its last prompt and answer.
    assert re.search(r"─ preview", screen), screen
    preview = screen.split("─ preview", 1)[1]
    assert "❯ and the warnings too" in preview and "⏺ logging is quieter" in preview
    # Words of any prompt narrow the list, in any case; digits are search text too.
    term.type("WARNINGS")
    screen = term.wait_for(r"\(1 of 3\)")
    assert "make logging less noisy" in screen and "write the user docs" not in screen
    term.keys("BSpace", "BSpace", "BSpace", "BSpace", "BSpace", "BSpace", "BSpace", "BSpace")
    term.type("docs zq")
    term.wait_for(r"\(no match\)")
    term.keys("Enter")  # nothing to pick: the picker stays
    term.keys("BSpace", "BSpace")
    screen = term.wait_for(r"\(1 of 3\)")
    assert "❯ write the user docs" in screen.split("─ preview", 1)[1]
    term.keys("Enter")
    term.wait_gone("Resume a session")
    term.wait_for("the docs are done")  # its history, replayed
    term.ready()
    term.submit("go on")
    requests = wait_requests(tui, 5)  # four in print mode, then this one
    assert "write the user docs" in all_texts(requests[4].body or {})


def test_resume_picker_moves_with_arrows_and_fits_60x20(tui: TuiSetup) -> None:
    three_sessions(tui)
    tui.server.script(reply.echo())
    term = started(tui, width=60, height=20)
    term.submit("/resume")
    screen = term.wait_for(r"enter resume · esc")
    lines = screen.rstrip("\n").split("\n")
    assert len(lines) <= 20 and all(len(line) <= 60 for line in lines)
    assert "Resume a session" in screen and "⌕" in screen
    term.keys("Down")
    screen = term.wait_for(r"❯ \d{4}-.*write the user docs")
    assert "⏺ the docs are done" in screen.split("─ preview", 1)[1]
    term.keys("Escape")
    term.wait_gone("Resume a session")
    term.ready()


def test_model_picker_sets_the_effort_with_the_arrows(tui: TuiSetup) -> None:
    tui.server.script(reply.echo())
    term = started(tui)
    term.submit("/model")
    screen = term.wait_for(r"Effort \(← →\): .*\[medium\]")
    assert re.search(r"2\. opus · claude-opus\S* · \$[\d.]+/\$[\d.]+ per Mtok · the most "
                     r"capable", screen), screen
    term.keys("Right", "Right")
    term.wait_for(r"Effort .*\[xhigh\] .*for hard problems")
    term.keys("Left", "Left", "Left", "Left", "Right")  # stops at low, then one up
    term.wait_for(r"Effort .*\[medium\] .*the default balance")
    term.keys("Right", "Right", "Down")  # the effort stays with the picker, not the line
    term.wait_for(r"❯ 2\. opus")
    term.wait_for(r"Effort .*\[xhigh\] .*for hard problems")
    term.keys("Enter")
    term.wait_for(r"Model set to claude-opus\S* · effort xhigh")
    term.ready()
    term.submit("think hard")
    [request] = wait_requests(tui, 1)
    body = request.body or {}
    assert body["model"].startswith("claude-opus")
    assert body["output_config"] == {"effort": "xhigh"}


def test_model_picker_fits_60x20_and_esc_changes_nothing(tui: TuiSetup) -> None:
    tui.server.script(reply.echo())
    term = started(tui, width=60, height=20)
    term.submit("/model")
    screen = term.wait_for(r"Effort \(← →\):")
    assert all(len(line) <= 60 for line in screen.split("\n"))
    for choice in ("1. sonnet", "2. opus", "3. haiku", "4. keep"):
        assert choice in screen, screen
    term.keys("Right", "Escape")
    term.wait_gone("Choose a model")
    term.ready()
    term.submit("hello")
    [request] = wait_requests(tui, 1)
    assert (request.body or {})["output_config"] == {"effort": "medium"}
