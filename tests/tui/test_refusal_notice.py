"""A refusal with a fallback model in the terminal UI (tmux): the refused answer stays in
the scrollback, a warning says it is withdrawn and which model answers, and the fallback's
answer follows."""

from __future__ import annotations

from tests.refusal.test_refusal_fallback import REFUSED, refusal
from tests.tui.harness import TuiSetup, wait_requests
from wisp.testing import reply


def test_the_fallback_is_announced_and_answers(tui: TuiSetup) -> None:
    tui.server.script(refusal(), reply.text("the fallback answer"))
    term = tui.terminal("--model", "claude-opus-5-5", "--fallback-model", "claude-sonnet-5")
    term.ready(timeout=20)
    term.submit("do it")
    term.wait_for("the fallback answer")
    shown = term.scrollback()
    assert REFUSED in shown
    assert "Sonnet 5 answers instead" in shown and "withdrawn" in shown
    assert [r.body["model"] for r in wait_requests(tui, 2) if r.body] == [
        "claude-opus-5-5", "claude-sonnet-5"]
