"""The everyday slash commands in tmux: /review and /security-review send their prompt,
/diff shows the uncommitted changes, /export writes the conversation, /add-dir lets the
tools into another folder, /usage, /skills and /doctor answer."""

from __future__ import annotations

import json
import re
import subprocess
import sys

from tests.mcp.conftest import mcp_config
from tests.mcp.test_roots import SERVER as ROOTS_SERVER
from tests.tui.harness import Terminal, TuiSetup, message_requests, wait_requests
from wisp.testing import reply


def started(tui: TuiSetup, *args: str, env: dict[str, str] | None = None) -> Terminal:
    term = tui.terminal(*args, env=env)
    term.ready(timeout=20)
    # Loaded: the footer names the mode ("default mode", or "· default" after a status
    # line command's output, which may come first).
    term.wait_for(r"(default mode|· default$)")
    return term


def test_review_commands_send_their_prompt(tui: TuiSetup) -> None:
    tui.server.script(reply.text("review done"), reply.text("security done"))
    term = started(tui)
    term.submit("/review src/")
    term.wait_for("review done")
    term.ready()
    term.submit("/security-review")
    term.wait_for("security done")
    first, second = (str(r.body) for r in message_requests(tui)[:2])
    assert "git diff HEAD" in first and "limited to: src/" in first
    assert "security review" in second


def test_diff_shows_the_uncommitted_changes(tui: TuiSetup) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
                       cwd=tui.cwd, check=True, capture_output=True)
    git("init", "-q")
    (tui.cwd / "app.py").write_text("one\n")
    git("add", ".")
    git("commit", "-qm", "start")
    (tui.cwd / "app.py").write_text("one\nadded-by-hand\n")
    term = started(tui)
    term.submit("/diff")
    screen = term.wait_for(r"\+added-by-hand")
    assert "app.py" in screen and "1 insertion" in screen


def test_export_writes_the_conversation(tui: TuiSetup) -> None:
    tui.server.script(reply.text("the exported answer"))
    term = started(tui)
    term.submit("a question to keep")
    term.wait_for("the exported answer")
    term.ready()
    term.submit("/export talk.txt")
    term.wait_for("Conversation exported to")
    text = (tui.cwd / "talk.txt").read_text()
    assert "> a question to keep" in text and "the exported answer" in text


def test_add_dir_lets_tools_work_in_another_folder(tui: TuiSetup) -> None:
    other = tui.cwd.parent / "other"
    other.mkdir()
    (other / "notes.txt").write_text("outside note\n")
    tui.server.script(reply.tool_use("Read", {"file_path": str(other / "notes.txt")}),
                      reply.text("read it"))
    term = started(tui)
    term.submit(f"/add-dir {other}")
    term.wait_for(r"working\s+folder\s+for\s+this\s+session")  # the line may wrap
    term.submit("read the other notes")
    term.wait_for("read it")
    assert "1. Yes" not in term.scrollback()  # not asked: the folder is a working one


def roots_seen(tui: TuiSetup, nth: int) -> dict:
    """What the roots server answered the `nth` call of its tool (the tool result the
    next request carries): the roots it was given and the roots notifications it saw."""
    request = message_requests(tui)[2 * nth + 1]
    assert request.body is not None
    result = request.body["messages"][-1]["content"][0]
    assert result["type"] == "tool_result", result
    return dict(json.loads(result["content"][0]["text"]))


def test_add_dir_tells_mcp_servers_the_roots_changed(tui: TuiSetup) -> None:
    """As duplex's add_directory does: a connected server is sent
    notifications/roots/list_changed, and lists the folder from then on."""
    other = tui.cwd.parent / "other"
    other.mkdir()
    (tui.home / "mcp.json").write_text(mcp_config(
        elicit={"command": sys.executable, "args": [str(ROOTS_SERVER)]}))
    ask = reply.tool_use("mcp__elicit__ask", {"roots": True})
    tui.server.script(ask, reply.text("first roots"), ask, reply.text("second roots"))
    term = started(tui, "--mcp-config", str(tui.home / "mcp.json"),
                   "--allowedTools", "mcp__elicit")
    term.submit("roots?")  # the first turn connects the server
    term.wait_for("first roots")
    term.ready()
    assert roots_seen(tui, 0)["notified"] == []
    term.submit(f"/add-dir {other}")
    term.wait_for(r"working\s+folder\s+for\s+this\s+session")
    term.submit("and now?")
    term.wait_for("second roots")
    wait_requests(tui, 4)
    after = roots_seen(tui, 1)
    assert after["notified"] == ["notifications/roots/list_changed"]
    assert {"uri": other.resolve().as_uri()} in after["roots"]["roots"]


def test_usage_skills_and_doctor_answer(tui: TuiSetup) -> None:
    term = started(tui)
    term.submit("/usage")
    term.wait_for("Context: .* of the window used")
    term.submit("/skills")
    term.wait_for("No skills are installed")
    term.submit("/doctor")
    screen = term.wait_for("API key +set")
    assert "ripgrep" in screen and "settings" in screen


def test_effort_changes_what_the_next_request_asks_for(tui: TuiSetup) -> None:
    tui.server.script(reply.text("one"), reply.text("two"))
    term = started(tui)  # a model of generation 5 or later: it takes an effort
    term.submit("first")
    term.wait_for("one")
    term.ready()
    term.submit("/effort")
    term.wait_for("Effort: medium")
    term.submit("/effort sideways")
    term.wait_for("Unknown effort 'sideways'")
    term.submit("/effort high")
    term.wait_for("Effort set to high")
    term.submit("second")
    term.wait_for("two")
    first, second = (r.body for r in message_requests(tui)[:2])
    assert first["output_config"]["effort"] == "medium"
    assert second["output_config"]["effort"] == "high"


def test_rename_names_the_session_for_resume(tui: TuiSetup) -> None:
    tui.server.script(reply.text("noted"))
    term = started(tui)
    term.submit("remember this")
    term.wait_for("noted")
    term.ready()
    term.submit("/rename  release   notes ")
    term.wait_for("Session renamed to release notes")
    term.submit("/exit")
    assert term.exit_status() == 0
    fresh = started(tui)
    fresh.submit("/resume")
    screen = fresh.wait_for("release notes")  # the picker shows the title, not the prompt
    listed, _, preview = screen.partition("─ preview")
    assert "remember this" not in listed and "❯ remember this" in preview
    fresh.keys("Escape")
    fresh.wait_gone("release notes")
    fresh.submit("/exit")
    assert fresh.exit_status() == 0
    resumed = started(tui, "--resume", "release notes")  # and it resumes by its title
    resumed.wait_for("remember this")


def test_copy_puts_the_last_answer_on_the_clipboard(tui: TuiSetup) -> None:
    """tmux, told to accept OSC 52 from programs, keeps what arrived as a paste buffer:
    the oracle that the terminal was asked to copy exactly the answer."""
    answer = "line one\nline *two* with \x1b[31m an escape"
    tui.server.script(reply.text(answer, chunks=1))
    term = started(tui)
    term.tmux("set-option", "-g", "set-clipboard", "on")
    term.submit("/copy")
    term.wait_for("Nothing to copy yet")
    term.submit("say it")
    term.wait_for("line one")
    term.ready()
    term.submit("/copy")
    term.wait_for("Copied the last answer")
    assert term.tmux("show-buffer") == answer


def test_plugin_lists_what_each_plugin_brings(tui: TuiSetup, tmp_path) -> None:
    from tests.project.tree import plugin

    root = plugin(tmp_path / "deployer-plugin", tmp_path / "calc.pid")
    term = started(tui, "--plugin-dir", str(root))
    term.submit("/plugin")
    screen = term.wait_for("Deploys things")
    assert re.search(r"deployer\s+1\.2\.0\s+1 command folder", screen), screen
    assert "1 agent folder" in screen and "hooks" in screen
    assert "calc" in screen  # its MCP server
    assert "skill folder" not in screen  # it has none


def test_config_set_and_unset_edit_the_user_settings_in_place(tui: TuiSetup) -> None:
    import json

    settings = tui.home / ".wisp" / "settings.json"  # WISP_CONFIG_DIR's
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"env": {"KEEP": "1"}}) + "\n")
    term = started(tui)
    term.submit("/config set permissions.defaultMode acceptEdits")
    term.wait_for("Saved permissions.defaultMode = acceptEdits in ~/.wisp/settings.json")
    term.submit("/config set includeCoAuthoredBy false")
    term.wait_for("Saved includeCoAuthoredBy")
    term.submit("/config set permissions.defaultMode sideways")
    term.wait_for("wisp would not load that")
    assert json.loads(settings.read_text()) == {
        "env": {"KEEP": "1"}, "permissions": {"defaultMode": "acceptEdits"},
        "includeCoAuthoredBy": False}
    term.submit("/config unset permissions.defaultMode")
    term.wait_for("Removed permissions.defaultMode")
    term.submit("/config set model claude-sonnet-4-6")
    term.wait_for("this session uses claude-sonnet-4-6")
    assert json.loads(settings.read_text()) == {
        "env": {"KEEP": "1"}, "permissions": {}, "includeCoAuthoredBy": False,
        "model": "claude-sonnet-4-6"}


def test_the_status_line_command_stands_in_the_footer(tui: TuiSetup) -> None:
    """The settings' statusLine command gets the session as JSON and its first line
    replaces model, context and cost in the footer, made safe; /statusline changes it."""
    import json
    import sys

    script = ("import json, sys; d = json.load(sys.stdin); "
              "print('STATUS', d['model']['id'], 'cost', d['cost']['total_cost_usd'], "
              "'\\x1b]0;PWNED\\x07'); print('second line')")
    settings = tui.home / ".wisp" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    command = f"{sys.executable} -c \"{script}\""
    settings.write_text(json.dumps({"statusLine": {"type": "command", "command": command}}))
    tui.server.script(reply.text("answered"))
    term = started(tui)
    screen = term.wait_for("STATUS claude-opus-5-5 cost 0")
    footer = screen.rstrip().splitlines()[-1]
    assert "second line" not in screen and "ctx" not in footer
    assert "PWNED" in footer  # the title sequence shown as text…
    assert "PWNED" not in term.tmux("display-message", "-p", "#{pane_title}")  # …not obeyed
    term.submit("hello")
    term.wait_for("answered")
    term.wait_for(r"STATUS claude-opus-5-5 cost 0\.0\d*[1-9]")  # refreshed after the turn
    term.submit("/statusline echo SECOND-STATUS")
    term.wait_for("SECOND-STATUS ·")
    assert json.loads(settings.read_text())["statusLine"]["command"] == "echo SECOND-STATUS"
    term.submit("/statusline off")
    term.wait_for(r"ctx (<1|\d+)% · \$")
    assert "statusLine" not in json.loads(settings.read_text())


def test_memory_edit_opens_the_file_in_the_editor(tui: TuiSetup, tmp_path) -> None:
    """$EDITOR is a script that appends a line and says which file it got; the UI comes
    back after it."""
    editor = tmp_path / "fake-editor.sh"
    log = tmp_path / "editor.log"
    editor.write_text(f"#!/bin/sh\necho \"$1\" >> {log}\necho '- use tabs' >> \"$1\"\n")
    editor.chmod(0o755)
    term = started(tui, env={"EDITOR": str(editor)})
    term.submit("/memory edit")
    term.wait_for("Edited CLAUDE.md")
    assert log.read_text().strip() == str(tui.cwd / "CLAUDE.md")
    assert (tui.cwd / "CLAUDE.md").read_text() == "- use tabs\n"
    term.submit("/memory edit local")
    term.wait_for("Edited CLAUDE.local.md")
    assert (tui.cwd / "CLAUDE.local.md").read_text() == "- use tabs\n"
    term.submit("/memory edit elsewhere")
    term.wait_for("Usage: /memory edit")
