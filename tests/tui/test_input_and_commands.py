"""The terminal UI's input line and slash commands, driven in tmux: the first prompt from
argv, newlines and pastes, history (per project, across runs) and its search, `!cmd`,
`@file`, prompts queued while the model works, the built-in and custom commands, and the
ways out, with the transcript left for print mode (and taken back from it)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.tui.harness import POLL_S, Terminal, TuiSetup, message_requests, wait_requests
from wisp.models import catalog
from wisp.settings.trust import record
from wisp.testing import reply

JSON = dict[str, Any]
HAIKU = catalog.DEFAULT_ALIASES["haiku"]
SONNET = catalog.DEFAULT_ALIASES["sonnet"]


# Helpers --------------------------------------------------------------------------------


def texts_of(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    out: list[str] = []
    for block in content or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            out.append(str(block.get("text", "")))
        elif block.get("type") == "tool_result":
            out.extend(texts_of(block.get("content")))
    return out


def user_texts(body: JSON) -> str:
    """Every text the user side of the conversation holds, joined."""
    return "\n".join(t for m in body.get("messages") or [] if m.get("role") == "user"
                     for t in texts_of(m.get("content")))


def all_texts(body: JSON) -> str:
    return "\n".join(t for m in body.get("messages") or [] for t in texts_of(m.get("content")))


def last_user_text(body: JSON) -> str:
    """The texts of the last user message, joined."""
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "user":
            return "\n".join(texts_of(message.get("content")))
    return ""


def input_line(screen: str) -> str:
    """The input line: the last line that starts with the prompt mark."""
    lines = [line.rstrip() for line in screen.splitlines() if line.startswith("❯")]
    return lines[-1] if lines else ""


def wait_input(term: Terminal, expected: str, timeout: float = 10) -> str:
    """Waits until the input line holds exactly `expected` ("" for an empty input)."""
    want = f"❯ {expected}".rstrip()
    deadline = time.monotonic() + timeout
    while True:
        screen = term.screen()
        if input_line(screen) == want:
            return screen
        if time.monotonic() > deadline:
            pytest.fail(f"the input line never became {want!r}; screen:\n{screen}")
        time.sleep(POLL_S)


def run_print(tui: TuiSetup, *args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "wisp", "-p", *args], env=tui.env,
                          cwd=tui.cwd, capture_output=True, text=True, timeout=60,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    return proc


def started(tui: TuiSetup, *args: str, **kwargs: Any) -> Terminal:
    term = tui.terminal(*args, **kwargs)
    term.ready(timeout=20)
    return term


# 1. The first prompt from argv ------------------------------------------------------------


def test_positional_prompt_is_submitted_at_start(tui: TuiSetup) -> None:
    tui.server.script(reply.text("got the first prompt"))
    term = tui.terminal("first prompt")
    term.wait_for("got the first prompt", timeout=20)
    assert "❯ first prompt" in term.screen()
    [request] = wait_requests(tui, 1)
    assert last_user_text(request.body or {}) == "first prompt"
    term.ready()


# 2. Newlines and pastes ------------------------------------------------------------------


def test_backslash_enter_makes_a_newline(tui: TuiSetup) -> None:
    tui.server.script(reply.echo())
    term = started(tui)
    term.type("line1\\")
    term.keys("Enter")
    term.wait_for(r"^❯ line1$")
    term.type("line2")
    term.wait_for(r"^  line2$")
    assert message_requests(tui) == []  # the Enter after `\` did not submit
    term.keys("Enter")
    [request] = wait_requests(tui, 1)
    assert last_user_text(request.body or {}) == "line1\nline2"
    term.wait_for("echo: line1")


def test_a_small_paste_keeps_its_newlines(tui: TuiSetup) -> None:
    tui.server.script(reply.echo())
    term = started(tui)
    term.paste("p-one\np-two\np-three")
    term.wait_for(r"^  p-three$")
    assert message_requests(tui) == []  # the newlines of a paste do not submit
    term.keys("Enter")
    [request] = wait_requests(tui, 1)
    assert last_user_text(request.body or {}) == "p-one\np-two\np-three"


def test_a_large_paste_becomes_a_chip_and_is_sent_whole(tui: TuiSetup) -> None:
    tui.server.script(reply.text("read it all"))
    term = started(tui)
    pasted = "\n".join(f"row-{i:03d}" for i in range(1, 241))
    term.paste(pasted)
    screen = wait_input(term, "[pasted #1: 240 lines]")
    assert "row-001" not in screen and "row-240" not in screen
    term.keys("Enter")
    [request] = wait_requests(tui, 1)
    assert last_user_text(request.body or {}) == pasted
    term.wait_for("read it all")


def test_ctrl_o_expands_a_paste_chip_in_the_input(tui: TuiSetup) -> None:
    term = started(tui)
    term.type("see: ")
    term.paste("\n".join(f"chip-{i:03d}" for i in range(1, 241)))
    wait_input(term, "see: [pasted #1: 240 lines]")
    term.keys("C-o")
    screen = term.wait_for(r"^  chip-240$")
    assert "[pasted #1" not in screen
    assert message_requests(tui) == []


# 3. History ------------------------------------------------------------------------------


def test_up_and_down_walk_the_history_kept_per_project(tui: TuiSetup, tmp_path: Path) -> None:
    tui.server.script(reply.echo(), reply.echo())
    first = started(tui)
    first.submit("alpha one")
    first.wait_for("echo: alpha one")
    first.ready()
    first.submit("beta two")
    first.wait_for("echo: beta two")
    first.ready()
    first.keys("Up")
    wait_input(first, "beta two")
    first.keys("Up")
    wait_input(first, "alpha one")
    first.keys("Down")
    wait_input(first, "beta two")
    first.keys("Down")
    wait_input(first, "")
    first.keys("C-d")
    assert first.exit_status() == 0

    again = started(tui)  # a new run in the same project folder
    again.keys("Up")
    wait_input(again, "beta two")
    again.keys("Up")
    wait_input(again, "alpha one")

    other_cwd = tmp_path / "other-project"
    other_cwd.mkdir()
    record(other_cwd, tui.env, hasTrustDialogAccepted=True)  # trusted too, long ago
    other = Terminal(other_cwd, tui.env).start()
    try:
        other.ready(timeout=20)
        other.keys("Up")
        other.type("zz")  # after the Up: the input holds only what was typed
        screen = wait_input(other, "zz")
        assert "alpha one" not in screen and "beta two" not in screen
    finally:
        other.close()


def test_ctrl_r_searches_the_history(tui: TuiSetup) -> None:
    tui.server.script(reply.echo(), reply.echo())
    term = started(tui)
    term.submit("find the needle please")
    term.wait_for("echo: find the needle please")
    term.ready()
    term.submit("another thing")
    term.wait_for("echo: another thing")
    term.ready()
    term.keys("C-r")
    term.type("needle")
    wait_input(term, "find the needle please")  # the match shows in the input
    term.keys("Enter")  # ends the search with the match taken
    term.wait_gone("I-search")


# 5. `!cmd` --------------------------------------------------------------------------------


def test_bang_runs_a_shell_command_and_passes_its_output_on(tui: TuiSetup) -> None:
    tui.server.script(reply.text("noted"))
    term = started(tui)
    term.submit("!echo hello-shell")
    term.wait_for(r"⎿\s+hello-shell")
    term.ready()
    assert message_requests(tui) == []  # nothing went to the model
    term.submit("what did it print?")
    [request] = wait_requests(tui, 1)
    sent = last_user_text(request.body or {})
    assert "hello-shell" in sent and "echo hello-shell" in sent
    assert "what did it print?" in sent
    term.wait_for("noted")


def test_esc_ends_a_running_bang_command(tui: TuiSetup) -> None:
    seconds = f"30.{uuid.uuid4().int % 10**6:06d}"
    term = started(tui)
    term.submit(f"!sleep {seconds}")
    running = lambda: subprocess.run(  # noqa: E731
        ["pgrep", "-f", f"sleep {seconds}"], capture_output=True, check=False).returncode == 0
    deadline = time.monotonic() + 10
    while not running():
        assert time.monotonic() < deadline, "the command never started"
        time.sleep(0.02)
    term.keys("Escape")
    term.wait_for("Interrupted", timeout=5)
    deadline = time.monotonic() + 5
    while running():
        assert time.monotonic() < deadline, "the command outlived Esc"
        time.sleep(0.02)
    term.submit("!echo still-here")
    term.wait_for(r"⎿\s+still-here")


def test_a_huge_bang_output_is_shortened_and_saved_whole(tui: TuiSetup) -> None:
    term = started(tui)
    term.submit("!seq 1 200000")
    screen = term.wait_for(r"full output: ")
    flat = screen.replace("\n", "")
    path = re.search(r"full output: (\S+)\)", flat)
    assert path, screen
    assert Path(path.group(1)).read_text() == "".join(f"{n}\n" for n in range(1, 200001))


# 6. `@file` -------------------------------------------------------------------------------


def test_at_completes_paths_and_attaches_the_file(tui: TuiSetup) -> None:
    (tui.cwd / "README.md").write_text("readme-secret-content-42\n")
    tui.server.script(reply.text("explained"))
    term = started(tui)
    term.type("explain @REA")
    term.wait_for(r"README\.md")
    term.keys("C-u")
    wait_input(term, "")
    term.submit("explain @README.md")
    [request] = wait_requests(tui, 1)
    sent = last_user_text(request.body or {})
    assert "explain @README.md" in sent
    assert "readme-secret-content-42" in sent
    term.wait_for("explained")


# 7. Prompts queued while the model works -------------------------------------------------


def test_prompts_typed_while_working_are_queued_then_sent_in_order(tui: TuiSetup) -> None:
    tui.server.script(reply.slow("first answer done", 0.3, chunks=10), reply.echo(),
                      reply.echo())
    term = started(tui)
    term.submit("first")
    term.wait_for("Working…")
    term.submit("second queued")
    term.submit("third queued")
    screen = term.wait_for(r"queued: third queued")
    assert "queued: second queued" in screen
    assert len(message_requests(tui)) == 1  # still only the first turn
    term.wait_for("echo: third queued", timeout=20, where="scrollback")
    requests = wait_requests(tui, 3)
    assert [last_user_text(r.body or {}) for r in requests] == [
        "first", "second queued", "third queued"]
    assert "first answer done" in all_texts(requests[1].body or {})
    term.ready()
    assert "queued:" not in term.screen()


def test_up_on_an_empty_input_takes_back_the_last_queued_prompt(tui: TuiSetup) -> None:
    tui.server.script(reply.slow("first answer done", 0.3, chunks=10), reply.echo(),
                      reply.echo())
    term = started(tui)
    term.submit("first")
    term.wait_for("Working…")
    term.submit("keep me")
    term.submit("edit me")
    term.wait_for("queued: edit me")
    term.keys("Up")
    screen = wait_input(term, "edit me")
    assert "queued: edit me" not in screen and "queued: keep me" in screen
    term.wait_for("echo: keep me", timeout=20, where="scrollback")
    term.wait_gone("Working…")
    assert [last_user_text(r.body or {}) for r in message_requests(tui)] == [
        "first", "keep me"]  # the prompt taken back is not sent
    wait_input(term, "edit me")  # still there, for editing
    term.type(" now")
    term.keys("Enter")
    requests = wait_requests(tui, 3)
    assert last_user_text(requests[2].body or {}) == "edit me now"
    term.wait_for("echo: edit me now")


# 8. Slash commands -----------------------------------------------------------------------


def test_slash_shows_command_completions(tui: TuiSetup) -> None:
    term = started(tui)
    term.type("/")
    screen = term.wait_for(r"/clear\s+start a new conversation")
    assert re.search(r"/add-dir\s+let the tools", screen)  # the first, in name order
    term.type("he")  # past the menu's first page: narrowing finds it
    term.wait_for(r"/help\s+commands and keys")


def test_help_lists_the_commands(tui: TuiSetup) -> None:
    term = started(tui)
    term.submit("/help")
    screen = term.wait_for(r"/status", where="scrollback")
    for name in ("/clear", "/compact", "/model", "/cost", "/context", "/resume",
                 "/permissions", "/exit"):
        assert name in screen
    assert message_requests(tui) == []


def test_cost_shows_dollars_after_a_turn(tui: TuiSetup) -> None:
    tui.server.script(reply.text("priced answer"))
    term = started(tui)
    term.submit("what does it cost")
    term.wait_for("priced answer")
    term.ready()
    term.submit("/cost")
    screen = term.wait_for(r"Total cost:\s+\$0\.0\d*[1-9]")
    assert re.search(r"\d+ in · \d+ out", screen)


def test_clear_starts_a_new_conversation(tui: TuiSetup) -> None:
    tui.server.script(reply.text("first answer"), reply.echo())
    term = started(tui)
    term.submit("remember alpha")
    term.wait_for("first answer")
    term.ready()
    term.submit("/clear")
    term.wait_for("new conversation")
    term.ready()
    term.submit("fresh start")
    requests = wait_requests(tui, 2)
    messages = (requests[1].body or {})["messages"]
    assert len(messages) == 1
    assert "remember alpha" not in all_texts(requests[1].body or {})
    assert "first answer" not in all_texts(requests[1].body or {})
    assert requests[0].headers.get("x-claude-code-session-id") != requests[1].headers.get(
        "x-claude-code-session-id")
    term.wait_for("echo: fresh start")


def test_model_with_an_alias_switches_the_model(tui: TuiSetup) -> None:
    tui.server.script(reply.echo())
    term = started(tui)
    term.submit("/model haiku")
    term.wait_for(f"Model set to {re.escape(HAIKU)}")
    term.wait_for(rf"^\s+{re.escape(HAIKU)} · ")  # the footer
    term.submit("which model")
    [request] = wait_requests(tui, 1)
    assert (request.body or {})["model"] == HAIKU


def test_model_without_argument_shows_a_picker(tui: TuiSetup) -> None:
    tui.server.script(reply.echo())
    term = started(tui)
    term.submit("/model")
    screen = term.wait_for(r"1\. sonnet")
    assert "2. opus" in screen and "3. haiku" in screen
    # Each with its model, price and what it is for.
    assert re.search(rf"1\. sonnet · {re.escape(SONNET)} · \$[\d.]+/\$[\d.]+ per Mtok · "
                     r"balanced", screen), screen
    term.keys("1")
    term.wait_for(f"Model set to {re.escape(SONNET)}")
    term.ready()
    term.submit("which model")
    [request] = wait_requests(tui, 1)
    assert (request.body or {})["model"] == SONNET


def test_context_shows_tokens_and_a_percentage(tui: TuiSetup) -> None:
    tui.server.script(reply.text("some answer"))
    term = started(tui)
    term.submit("fill a little")
    term.wait_for("some answer")
    term.ready()
    term.submit("/context")
    term.wait_for(r"Context: [\d,]+ of [\d,]+ tokens \(\d+(\.\d+)?%")
    assert len(message_requests(tui)) == 1


def test_status_shows_the_session_id(tui: TuiSetup) -> None:
    tui.server.script(reply.text("hello"))
    term = started(tui)
    term.submit("hi")
    term.wait_for("hello")
    term.ready()
    [request] = message_requests(tui)
    session_id = request.headers["x-claude-code-session-id"]
    term.submit("/status")
    term.wait_for(rf"Session:\s+{re.escape(session_id)}")


def test_compact_summarises_the_conversation(tui: TuiSetup) -> None:
    tui.server.script(reply.text("a long answer to summarise"),
                      reply.text("SUMMARY-OF-IT-ALL"), reply.echo())
    term = started(tui)
    term.submit("talk a lot")
    term.wait_for("a long answer to summarise")
    term.ready()
    term.submit("/compact")
    term.wait_for(r"compacted", timeout=20)
    requests = wait_requests(tui, 2)
    assert "a long answer to summarise" in all_texts(requests[1].body or {})
    term.ready()
    term.submit("after compaction")
    requests = wait_requests(tui, 3)
    sent = all_texts(requests[2].body or {})
    assert "SUMMARY-OF-IT-ALL" in sent and "a long answer to summarise" not in sent


def test_init_asks_the_model_to_study_the_project_and_write_claude_md(tui: TuiSetup) -> None:
    """Issue 27: /init is a prompt the model runs, seeded with what wisp found on disk; the
    model's Write goes through the permission dialog like any other."""
    (tui.cwd / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    written = "# demo\n\nRun `pytest -q`.\n"
    tui.server.script(
        reply.tool_use("Write", {"file_path": str(tui.cwd / "CLAUDE.md"), "content": written}),
        reply.text("CLAUDE.md is written"))
    term = started(tui)
    term.submit("/init")
    term.wait_for(r"1\. Yes")
    sent = all_texts(message_requests(tui)[0].body or {})
    assert "Study this repository and write CLAUDE.md" in sent
    assert "Create the file with the Write tool." in sent
    assert "Python package `demo`" in sent  # the draft wisp derived from pyproject.toml
    term.keys("1")
    term.wait_for("CLAUDE.md is written")
    assert (tui.cwd / "CLAUDE.md").read_text() == written


def test_init_over_an_existing_file_asks_for_an_edit(tui: TuiSetup) -> None:
    (tui.cwd / "CLAUDE.md").write_text("# old notes\n")
    tui.server.script(reply.text("looked at it"))
    term = started(tui)
    term.submit("/init")
    term.wait_for("looked at it")
    sent = all_texts(message_requests(tui)[0].body or {})
    assert "The file exists already" in sent
    assert (tui.cwd / "CLAUDE.md").read_text() == "# old notes\n"


def test_permissions_allow_writes_local_settings(tui: TuiSetup) -> None:
    term = started(tui)
    term.submit("/permissions allow Bash(ls:*)")
    term.wait_for(r"Bash\(ls:\*\)")
    path = tui.cwd / ".claude" / "settings.local.json"
    deadline = time.monotonic() + 10
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(POLL_S)
    doc = json.loads(path.read_text())
    assert "Bash(ls:*)" in doc["permissions"]["allow"]
    term.ready()
    term.submit("/permissions")
    term.wait_for(r"allow\s+Bash\(ls:\*\)")


def test_resume_picks_an_earlier_session_of_the_project(tui: TuiSetup) -> None:
    tui.server.script(reply.text("earlier answer"))
    run_print(tui, "earlier session prompt")
    tui.server.script(reply.echo())
    term = started(tui)
    term.submit("/resume")
    term.wait_for(r"❯ .*earlier session prompt")
    term.keys("Enter")
    term.wait_for("earlier answer")
    term.ready()
    term.submit("and now")
    requests = wait_requests(tui, 2)
    sent = all_texts(requests[1].body or {})
    assert "earlier session prompt" in sent and "earlier answer" in sent
    assert last_user_text(requests[1].body or {}) == "and now"
    assert requests[1].headers.get("x-claude-code-session-id") == requests[0].headers.get(
        "x-claude-code-session-id")


def test_resume_with_words_finds_sessions_by_their_prompt(tui: TuiSetup) -> None:
    """One match is resumed at once; several are offered; none is said."""
    tui.server.script(reply.text("alpha answer"), reply.text("beta one"),
                      reply.text("beta two"))
    run_print(tui, "work on ALPHA parser")
    run_print(tui, "beta task one")
    run_print(tui, "beta task two")
    tui.server.script(reply.echo())
    term = started(tui)
    term.submit("/resume nothing-like-this")
    term.wait_for("No session matches nothing-like-this.")
    term.submit("/resume Beta")
    screen = term.wait_for("Resume a session matching 'Beta'")
    assert "beta task one" in screen and "beta task two" in screen
    assert "ALPHA" not in screen
    term.keys("Escape")
    term.wait_gone("Resume a session matching")
    term.submit("/resume alpha")
    term.wait_for("alpha answer")  # the only match: resumed, its history replayed


def test_hooks_agents_mcp_and_config_print_something_sensible(tui: TuiSetup) -> None:
    settings = {"hooks": {"Stop": [{"hooks": [{"type": "command",
                                               "command": "echo hook-marker-77"}]}]}}
    (tui.cwd / ".claude").mkdir()
    (tui.cwd / ".claude" / "settings.json").write_text(json.dumps(settings))
    term = started(tui)
    term.submit("/hooks")
    term.wait_for(r"Stop\s+\*\s+echo hook-marker-77")
    term.ready()
    term.submit("/agents")
    term.wait_for("general-purpose")
    term.ready()
    term.submit("/mcp")
    term.wait_for("No MCP servers")
    term.ready()
    term.submit("/config")
    screen = term.wait_for(r'"command": "echo hook-marker-77"', where="scrollback")
    assert ".claude/settings.json" in screen.replace("\n", "")  # which file it came from
    assert message_requests(tui) == []


def test_unknown_command_says_so_and_sends_nothing(tui: TuiSetup) -> None:
    term = started(tui)
    term.submit("/nosuch")
    term.wait_for("Unknown command")
    term.ready()
    assert message_requests(tui) == []


def test_custom_command_sends_its_body_with_arguments(tui: TuiSetup) -> None:
    commands = tui.cwd / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "greet.md").write_text("Say hi to $ARGUMENTS\n")
    tui.server.script(reply.echo())
    term = started(tui)
    term.submit("/greet Bob")
    [request] = wait_requests(tui, 1)
    assert last_user_text(request.body or {}) == "Say hi to Bob"
    term.wait_for("echo: Say hi to Bob")


# 9. Leaving, and the transcript left behind -----------------------------------------------


def test_ctrl_c_twice_on_an_empty_input_exits_0(tui: TuiSetup) -> None:
    term = started(tui)
    term.keys("C-c")
    term.wait_for("ctrl\\+c again")
    term.keys("C-c")
    assert term.exit_status() == 0


def test_ctrl_d_on_an_empty_input_exits_0(tui: TuiSetup) -> None:
    term = started(tui)
    term.keys("C-d")
    assert term.exit_status() == 0


def test_exit_leaves_a_transcript_print_mode_can_continue(tui: TuiSetup) -> None:
    tui.server.script(reply.text("ui answer 1234"))
    term = started(tui)
    term.submit("ui prompt abcd")
    term.wait_for("ui answer 1234")
    term.ready()
    term.submit("/exit")
    assert term.exit_status() == 0
    tui.server.script(reply.text("continued fine"))
    proc = run_print(tui, "again", "--continue", "--output-format", "json")
    assert json.loads(proc.stdout)["result"] == "continued fine"
    requests = message_requests(tui)
    assert len(requests) == 2
    sent = all_texts(requests[1].body or {})
    assert "ui prompt abcd" in sent and "ui answer 1234" in sent
    assert last_user_text(requests[1].body or {}) == "again"


def test_continue_in_the_ui_shows_and_sends_a_print_mode_session(tui: TuiSetup) -> None:
    tui.server.script(reply.text("print answer 5678"))
    run_print(tui, "print prompt efgh")
    tui.server.script(reply.echo())
    term = started(tui, "--continue")
    screen = term.wait_for("print answer 5678", where="scrollback")
    assert "print prompt efgh" in screen
    term.submit("next one")
    requests = wait_requests(tui, 2)
    sent = all_texts(requests[1].body or {})
    assert "print prompt efgh" in sent and "print answer 5678" in sent
    assert last_user_text(requests[1].body or {}) == "next one"
    term.wait_for("echo: next one")
