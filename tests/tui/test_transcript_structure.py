"""How the conversation is laid out, in tmux: a long turn ends with its time, a quick one
does not; /clear empties the screen and draws the header again."""

from __future__ import annotations

import re

from tests.tui.harness import TuiSetup
from wisp.testing import reply


def test_a_long_turn_ends_with_how_long_it_took(tui: TuiSetup) -> None:
    tui.server.script(reply.text("quick one"), reply.slow("slow answer here", 0.3, chunks=12))
    term = tui.terminal()
    term.ready(timeout=20)
    term.submit("fast")
    term.wait_for("quick one")
    term.ready()
    assert "Worked for" not in term.scrollback()
    term.submit("slow")
    screen = term.wait_for(r"✻ Worked for \d+s", timeout=20)
    assert re.search(r"slow answer here[\s\S]*✻ Worked for [3-9]s", screen), screen


def test_clear_empties_the_screen_and_redraws_the_header(tui: TuiSetup) -> None:
    tui.server.script(reply.text("old answer"))
    term = tui.terminal()
    term.ready(timeout=20)
    term.submit("old question")
    term.wait_for("old answer")
    term.ready()
    term.submit("/clear")
    term.wait_for("new conversation")
    screen = term.ready()
    assert screen.startswith("✻ wisp ")
    assert "old answer" not in term.scrollback() and "old question" not in term.scrollback()
