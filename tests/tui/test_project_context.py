"""The terminal UI in a project with memory, a skill and a plugin, driven in tmux: the
model gets the memory, `/memory` lists it, `/<skill>` and a plugin's `/<plugin>:<command>`
send their bodies, and `/reload-skills` picks up a skill written while the UI runs."""

from __future__ import annotations

import json
from pathlib import Path

from tests.project import tree
from tests.tui.harness import Terminal, TuiSetup, wait_requests
from wisp.testing import reply


def started(tui: TuiSetup, *args: str) -> Terminal:
    term = tui.terminal(*args)
    term.ready(timeout=20)
    return term


def test_memory_reaches_the_model_and_slash_memory_lists_it(tui: TuiSetup) -> None:
    tree.memory_files(tui.cwd, Path(tui.env["WISP_CONFIG_DIR"]))
    tui.server.script(reply.text("noted"))
    term = started(tui)
    term.submit("/memory")
    term.wait_for("4 memory file")
    term.wait_for("CLAUDE.local.md")
    term.submit("hello")
    [request] = wait_requests(tui, 1)
    text = tree.user_text(request.body or {})
    assert tree.PROJECT_RULE in text and tree.IMPORTED_RULE in text
    term.wait_for("noted")


def test_a_skill_and_a_plugin_command_run_from_the_input(tui: TuiSetup,
                                                         tmp_path: Path) -> None:
    tree.skill(tui.cwd)
    plugin = tmp_path / "deployer"
    tree.write(plugin / ".claude-plugin" / "plugin.json", json.dumps({"name": "deployer"}))
    tree.write(plugin / "commands" / "ship.md", f"{tree.PLUGIN_COMMAND_BODY}\n")
    tui.server.script(reply.text("skill done"), reply.text("shipped"))
    term = started(tui, "--plugin-dir", str(plugin))
    term.submit("/agents")  # answered once the engine (which read the plugin) is loaded
    term.wait_for("general-purpose")
    term.type("/deployer:sh")
    term.wait_for("/deployer:ship")  # completion offers the plugin's command
    term.keys("C-u")
    term.submit("/pdf report.pdf")
    first = wait_requests(tui, 1)[0].body or {}
    assert tree.SKILL_BODY in json.dumps(first["messages"][-1])
    assert "report.pdf" in json.dumps(first["messages"][-1])
    term.wait_for("skill done")
    term.submit("/deployer:ship prod")
    second = wait_requests(tui, 2)[1].body or {}
    assert "PLUGIN-COMMAND-6a7b: deploy prod now." in json.dumps(second["messages"][-1])
    term.wait_for("shipped")


def test_reload_skills_picks_up_a_new_skill(tui: TuiSetup) -> None:
    term = started(tui)
    tree.skill(tui.cwd, "late")
    term.submit("/reload-skills")
    term.wait_for("Skills reloaded: late")
