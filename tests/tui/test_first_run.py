"""The terminal UI on a first run: no key is one line and exit 1 instead of a UI whose
every prompt would fail; a mistyped provider in /model is said, and the model stays."""

from __future__ import annotations

import time

from tests.tui.harness import TuiSetup, wait_requests
from wisp.models import catalog
from wisp.models.spec import TRY_OFFLINE
from wisp.testing import reply


def test_no_key_prints_the_line_and_exits_1_without_opening_the_ui(tui: TuiSetup) -> None:
    started = time.monotonic()
    term = tui.terminal(env={"ANTHROPIC_BASE_URL": "", "ANTHROPIC_API_KEY": ""})
    assert term.exit_status(timeout=10) == 1
    assert time.monotonic() - started < 5
    assert term.stderr() == (
        "Not logged in · set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN; ANTHROPIC_BASE_URL "
        f"for a gateway that needs no key). To try wisp without a key: {TRY_OFFLINE}\n")
    assert "❯" not in term.screen()  # the UI never drew its input line


def test_model_with_an_unknown_provider_is_said_and_changes_nothing(tui: TuiSetup) -> None:
    tui.server.script(reply.echo())
    term = tui.terminal()
    term.ready(timeout=20)
    term.submit("/model nosuchprovider:foo")
    term.wait_for(r'/model failed: unknown provider "nosuchprovider"')
    term.ready()
    term.submit("which model")
    [request] = wait_requests(tui, 1)
    assert (request.body or {})["model"] == catalog.DEFAULT_ALIASES["opus"]
    said = " ".join(term.scrollback().split())  # however the line was wrapped
    assert "known providers: anthropic, openai" in said
