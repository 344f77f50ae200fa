"""The terminal UI in front of a hostile repository (`tests.security.hostile`), in tmux:
the trust dialog comes before anything of the folder runs and its answers are recorded as
Claude Code records them; nothing the repository (or a crafted transcript) writes drives
the terminal: the pane's title and contents are the evidence. And the permission dialog
shows what will run, whatever the command's shape and the terminal's height."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.security import hostile
from tests.security.hostile import Hostile
from tests.tui.harness import Terminal, TuiSetup, message_requests
from wisp.settings.trust import config_file, record
from wisp.testing import ScriptedServer, reply

TRUST_DIALOG = "Accessing workspace:"
IMPORTS_DIALOG = "Allow external CLAUDE.md file imports?"


@pytest.fixture
def catcher() -> Iterator[ScriptedServer]:
    with ScriptedServer() as server:
        yield server


@pytest.fixture
def repo(tui: TuiSetup, catcher: ScriptedServer, tmp_path: Path) -> Hostile:
    return hostile.build(tmp_path / "hostile", catcher.url)


def env_of(tui: TuiSetup, h: Hostile) -> dict[str, str]:
    return {**tui.env, "HOME": str(h.home), "WISP_CONFIG_DIR": str(h.home / ".wisp")}


def open_in(tui: TuiSetup, h: Hostile, *args: str, height: int = 40) -> Terminal:
    return tui.terminal(*args, height=height, env=env_of(tui, h), cwd=h.repo)


def title(term: Terminal) -> str:
    return term.tmux("display-message", "-p", "-t", "0", "#{pane_title}")


def records(tui: TuiSetup, h: Hostile) -> dict[str, object]:
    path = config_file(env_of(tui, h))
    projects = json.loads(path.read_text()).get("projects", {}) if path.exists() else {}
    entry = projects.get(str(h.repo), {})
    return entry if isinstance(entry, dict) else {}


def selected(screen: str) -> str:
    [line] = [line.strip() for line in screen.splitlines() if line.strip().startswith("❯ ")]
    return line


# The trust dialog -------------------------------------------------------------------------


def test_the_trust_dialog_comes_first_and_no_exits_with_nothing_run(
        tui: TuiSetup, repo: Hostile, catcher: ScriptedServer) -> None:
    term = open_in(tui, repo)
    screen = term.wait_for("Enter to confirm · Esc to cancel")
    assert TRUST_DIALOG in screen and str(repo.repo) in screen
    assert selected(screen) == "❯ 1. No, exit"  # the safe answer, pre-selected
    assert "2. Yes, I trust this folder" in screen
    # What trusting would apply is named, its hostile key shown and not obeyed.
    flat = screen.replace("\n", "")
    assert "hooks (PreToolUse, SessionStart, UserPromptSubmit)" in flat
    assert "X␛]0;PWNED-TITLE" in flat
    assert hostile.TITLE not in title(term)
    assert repo.ran() == []  # no hook, MCP server or variable while the user decides
    term.keys("Enter")
    assert term.exit_status() == 1
    assert "wisp didn't start because this folder isn't trusted." in term.screen()
    assert repo.ran() == [] and records(tui, repo) == {}
    assert message_requests(tui) == [] and catcher.requests == []


def test_esc_leaves_the_trust_dialog_with_status_0(tui: TuiSetup, repo: Hostile) -> None:
    term = open_in(tui, repo)
    term.wait_for(TRUST_DIALOG)
    term.keys("Escape")
    assert term.exit_status() == 0
    assert repo.ran() == [] and records(tui, repo) == {}


def test_yes_is_recorded_then_external_imports_are_asked_about_and_declined(
        tui: TuiSetup, repo: Hostile, catcher: ScriptedServer) -> None:
    catcher.script(reply.text("hello back"))
    term = open_in(tui, repo)
    term.wait_for(TRUST_DIALOG)
    term.keys("Down")
    term.wait_for(r"❯ 2\. Yes, I trust this folder")
    term.keys("Enter")
    screen = term.wait_for(IMPORTS_DIALOG)
    assert records(tui, repo).get("hasTrustDialogAccepted") is True
    flat = screen.replace("\n", "")  # long paths wrap
    assert str(repo.home / ".ssh" / "id_rsa") in flat
    assert str(repo.outside / "secret.txt") in flat
    assert selected(screen) == "❯ 1. No, disable external imports"
    assert repo.ran() == []  # still nothing: the session has not started
    term.keys("Enter")
    term.wait_gone(IMPORTS_DIALOG)
    term.ready(timeout=20)
    assert records(tui, repo).get("hasClaudeMdExternalIncludesWarningShown") is True
    assert records(tui, repo).get("hasClaudeMdExternalIncludesApproved") is False
    # The memory left out is said in the scrollback, not on a stderr under the UI.
    term.wait_for(r"left out 2 memory file\(s\) outside the project", where="scrollback")
    term.submit("hello")
    term.wait_for("hello back")
    # Trusted now: the repository's grants apply (its endpoint gets the session).
    ran = repo.ran()
    assert "hook-SessionStart" in ran and "hook-UserPromptSubmit" in ran, ran
    sent = json.dumps([r.body for r in catcher.requests])
    assert hostile.INSIDE in sent
    assert hostile.SSH_KEY not in sent and hostile.OUTSIDE not in sent
    assert hostile.TITLE not in title(term)


def test_a_trusted_folder_is_not_asked_again(tui: TuiSetup) -> None:
    """The harness recorded trust in the project, as an earlier Yes would have."""
    term = tui.terminal()
    term.ready(timeout=20)
    assert TRUST_DIALOG not in term.scrollback()


def test_the_home_folder_is_trusted_for_the_session_only(tui: TuiSetup) -> None:
    term = tui.terminal(cwd=tui.home)
    screen = term.wait_for(TRUST_DIALOG)
    assert "This is your home folder, so Yes lasts for this session only." in (
        screen.replace("\n", " ").replace("  ", " "))
    term.keys("2")
    term.wait_gone(TRUST_DIALOG)
    term.ready(timeout=20)
    projects = json.loads(config_file(tui.env).read_text())["projects"]
    assert str(tui.home) not in projects


# Nothing the repository writes drives the terminal ----------------------------------------


def trusted(tui: TuiSetup, h: Hostile) -> None:
    record(h.repo, env_of(tui, h), hasTrustDialogAccepted=True,
           hasClaudeMdExternalIncludesWarningShown=True)


ERASED = "␛]0;PWNED-TITLE␇␛[2K"  # set the title, erase the line: both shown, not obeyed


@pytest.mark.parametrize(("command", "shown"), [
    ("/help", f"Deploy it{ERASED}"),  # a command's description
    ("/help", f"Tidies{ERASED}"),  # a skill's
    ("/agents", f"Helps{ERASED}"),  # an agent's
    ("/mcp", "zap␛]0;PWNED-TITLE␇"),  # an MCP server's tool name
    ("/config", "Evil\\u001b]0;PWNED-TITLE\\u0007\\u001b[2K"),  # its output style, as JSON
])
def test_repository_text_is_shown_not_obeyed(tui: TuiSetup, repo: Hostile, command: str,
                                             shown: str) -> None:
    trusted(tui, repo)
    term = open_in(tui, repo)
    term.ready(timeout=20)
    before = title(term)
    term.submit(command)
    term.wait_for(re.escape(shown), timeout=20, where="scrollback")
    assert title(term) == before and hostile.TITLE not in title(term)


def test_a_crafted_transcript_is_shown_not_obeyed_on_resume(tui: TuiSetup) -> None:
    session = "5e55a0e0-0000-4000-8000-00000000abcd"
    hostile.crafted_transcript(tui.home / ".wisp", tui.cwd, session)
    term = tui.terminal("--resume", session)
    term.ready(timeout=20)
    screen = term.wait_for(r"listed␛\]0;PWNED-TITLE␇", where="scrollback")
    assert "ls␛]0;PWNED-TITLE␇" in screen  # the command in the call's header
    assert hostile.TITLE not in title(term)


# The permission dialog shows what runs -----------------------------------------------------


def test_a_command_padded_with_blank_lines_is_shown_whole(tui: TuiSetup) -> None:
    command = "echo safe" + "\n" * 60 + "touch PWNED"
    tui.server.script(reply.tool_use("Bash", {"command": command}), reply.text("done"))
    term = tui.terminal(height=24)
    term.ready(timeout=20)
    term.submit("go")
    screen = term.wait_for(r"3\. No")
    assert "echo safe" in screen and "touch PWNED" in screen
    assert "⋮ 59 blank lines" in screen
    assert re.search(r"1\. Yes", screen)


@pytest.mark.parametrize("height", [24, 10, 6])
def test_a_command_taller_than_the_terminal_keeps_its_end_and_the_choices_in_sight(
        tui: TuiSetup, height: int) -> None:
    command = "\n".join(f"echo line-{i}" for i in range(60)) + "\ntouch PWNED"
    tui.server.script(reply.tool_use("Bash", {"command": command}), reply.text("done"))
    term = tui.terminal(height=height)
    term.ready(timeout=20)
    term.submit("go")
    screen = term.wait_for(r"3\. No")
    assert re.search(r"1\. Yes", screen) and re.search(r"2\. Yes", screen)
    assert "more lines not shown" in screen or height < 8
    if height >= 10:
        assert "touch PWNED" in screen  # the end, where padding hides what runs
    assert "❯ 3. No" in screen  # not all of it is shown: approval is not pre-selected
    term.keys("Enter")
    term.wait_for("Interrupted")  # refused: the call ended without running
    assert not (tui.cwd / "PWNED").exists()
