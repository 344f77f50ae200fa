"""Plan mode as a workflow, in tmux: the model presents its plan with ExitPlanMode, the
dialog shows it and asks how to go on; a yes leaves plan mode for the mode it names and
the model carries on, No keeps plan mode and ends the turn."""

from __future__ import annotations

import json

from tests.tui.harness import TuiSetup
from wisp.testing import reply

PLAN = "# Rename the helper\n\n1. Rename `old_name` in util.py\n2. Run the tests"


def planned(tui: TuiSetup) -> None:
    tui.server.script(reply.tool_use("ExitPlanMode", {"plan": PLAN}),
                      reply.text("carrying it out"))


def test_an_approved_plan_leaves_plan_mode_for_accept_edits(tui: TuiSetup) -> None:
    planned(tui)
    term = tui.terminal("--permission-mode", "plan")
    term.ready(timeout=20)
    term.submit("plan a rename")
    screen = term.wait_for("Would you like to go ahead")
    assert "Here is the plan:" in screen
    assert "Rename the helper" in screen and "Run the tests" in screen
    assert "1. Yes, and auto-accept edits" in screen
    assert "3. No, keep planning" in screen
    term.keys("1")
    screen = term.wait_for("carrying it out")
    assert "accept edits on" in screen.lower(), screen  # the footer names the new mode
    first, second = (r.body for r in tui.server.requests[:2])
    # Plan mode is named to the model while it is on, and not once it is off.
    assert "Plan mode is on" in json.dumps(first["system"])
    assert "Plan mode is on" not in json.dumps(second["system"])
    result = second["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and "approved" in json.dumps(result)
    saved = list((tui.home / ".wisp" / "plans").glob("*.md"))  # WISP_CONFIG_DIR's
    assert [p.read_text() for p in saved] == [PLAN]


def test_keep_planning_stays_in_plan_mode(tui: TuiSetup) -> None:
    planned(tui)
    term = tui.terminal("--permission-mode", "plan")
    term.ready(timeout=20)
    term.submit("plan a rename")
    term.wait_for("Would you like to go ahead")
    term.keys("3")
    screen = term.wait_for("plan mode on")
    assert "carrying it out" not in screen
    assert len(tui.server.requests) == 1  # the turn stopped for the user's word
