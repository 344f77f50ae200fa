"""An endpoint that cannot be reached (refused, unresolvable, TLS-broken, silent) gets a
short retry, each said on stderr in text mode, then one line naming the endpoint and the
likely cause: seconds, not the minutes HTTP-level failures may still take."""

from __future__ import annotations

import json
import re
import socket
import time
from collections.abc import Iterator

import pytest

from tests.conftest import Runner
from wisp.testing import ScriptedServer, reply

STREAM = ("--output-format", "stream-json", "--verbose")


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A bound socket that never listens: connecting to it is refused, with no race."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


@pytest.fixture
def defaults(wisp: Runner) -> Runner:
    """The retry settings a user has: none (the suite's fast backoff taken away)."""
    for name in ("WISP_RETRY_BASE_DELAY_MS", "CLAUDE_CODE_MAX_RETRIES"):
        wisp.env.pop(name, None)
    return wisp


def test_a_refused_port_ends_within_seconds_naming_the_variable(defaults, closed_port):
    url = f"http://127.0.0.1:{closed_port}"
    started = time.monotonic()
    run = defaults("-p", "hi", env={"ANTHROPIC_BASE_URL": url})
    took = time.monotonic() - started
    assert run.returncode == 1
    assert run.stdout == (f"API Error: nothing listens at {url} (connection refused) — is "
                          "ANTHROPIC_BASE_URL right?\n")
    assert run.stderr == (
        f"wisp: cannot reach {url} (connection refused); retrying in 1s (2/3)\n"
        f"wisp: cannot reach {url} (connection refused); retrying in 2s (3/3)\n")
    assert 2.9 <= took < 15  # the 1 s and 2 s waits, and nothing like the old 2+ minutes


def test_stream_json_reports_the_short_retry_as_api_retry_frames(wisp, closed_port):
    url = f"http://127.0.0.1:{closed_port}"
    run = wisp("-p", "hi", *STREAM, env={"ANTHROPIC_BASE_URL": url,
                                         "CLAUDE_CODE_MAX_RETRIES": "10"})
    assert run.returncode == 1
    retries = run.of_type("system", "api_retry")
    assert [(r["attempt"], r["max_retries"], r["error_status"], r["error"]) for r in retries] \
        == [(1, 2, None, "connection_error"), (2, 2, None, "connection_error")]
    assert run.result["result"] == (f"API Error: nothing listens at {url} (connection "
                                    "refused) — is ANTHROPIC_BASE_URL right?")
    assert "retrying" not in run.stderr  # the frames say it: stderr stays for the host


def test_max_retries_zero_still_means_no_retry(wisp, closed_port):
    run = wisp("-p", "hi", env={"ANTHROPIC_BASE_URL": f"http://127.0.0.1:{closed_port}",
                                "CLAUDE_CODE_MAX_RETRIES": "0"})
    assert run.returncode == 1
    assert "retrying" not in run.stderr
    assert run.stdout.startswith("API Error: nothing listens at ")


def test_an_unresolvable_host_says_offline_or_a_wrong_url(wisp):
    run = wisp("-p", "hi", env={"ANTHROPIC_BASE_URL": "http://api.wisp-first-run.invalid"})
    assert run.returncode == 1
    assert re.fullmatch(r"API Error: cannot resolve api\.wisp-first-run\.invalid \(.+\) — "
                        r"offline, or is ANTHROPIC_BASE_URL wrong\?\n", run.stdout), run.stdout
    lines = run.stderr.splitlines()
    assert len(lines) == 2
    assert all(line.startswith("wisp: cannot reach http://api.wisp-first-run.invalid (")
               for line in lines)


def test_https_to_a_plain_http_server_is_a_tls_failure(wisp, server: ScriptedServer):
    url = server.url.replace("http://", "https://")
    run = wisp("-p", "hi", env={"ANTHROPIC_BASE_URL": url})
    assert run.returncode == 1
    assert run.stdout.startswith(f"API Error: TLS with {url} failed (")
    assert run.stdout.endswith(" — a plain-http server behind an https:// URL "
                               "(ANTHROPIC_BASE_URL), or a proxy that intercepts TLS "
                               "(point SSL_CERT_FILE at its certificate)?\n")
    assert server.requests == []  # no request was readable as one


def test_a_silent_endpoint_is_not_tried_again_past_the_budget(defaults):
    # A listener whose one-slot queue is full: the kernel drops further connection
    # attempts, so connecting times out (after wisp's 10 s), as behind a firewall.
    with socket.socket() as listener, socket.socket() as filler:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        filler.connect(listener.getsockname())
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        started = time.monotonic()
        run = defaults("-p", "hi", env={"ANTHROPIC_BASE_URL": url})
        took = time.monotonic() - started
    assert run.returncode == 1
    assert run.stdout == (f"API Error: cannot reach {url} (no answer within 10s) — offline "
                          "or behind a firewall, or is ANTHROPIC_BASE_URL wrong?\n")
    assert run.stderr == ""  # no retry: a second 10 s wait would not tell more
    assert took < 15


def test_http_errors_keep_their_retry_policy_and_are_said_in_text_mode(wisp, server):
    server.script(*[reply.error(529, "Overloaded") for _ in range(3)], reply.text("ok"))
    run = wisp("-p", "hi")  # the suite's CLAUDE_CODE_MAX_RETRIES=3
    assert (run.returncode, run.stdout) == (0, "ok\n")
    lines = run.stderr.splitlines()
    assert [re.sub(r"retrying in \S+", "retrying in T", line) for line in lines] == [
        f"wisp: API error 529 (Overloaded); retrying in T ({n}/4)" for n in (2, 3, 4)]


def test_the_openai_provider_names_its_own_setting(wisp, closed_port):
    url = f"http://127.0.0.1:{closed_port}"
    run = wisp("-p", "hi", "--model", "openai:gpt-4.1",
               env={"OPENAI_BASE_URL": f"{url}/v1", "OPENAI_API_KEY": "sk-oa"})
    assert run.returncode == 1
    assert run.stdout == (f"API Error: nothing listens at {url} (connection refused) — is "
                          "OPENAI_BASE_URL right?\n")
    assert len(run.stderr.splitlines()) == 2


def test_a_settings_provider_names_its_settings_file(wisp, closed_port):
    url = f"http://127.0.0.1:{closed_port}"
    settings = wisp.cwd / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"providers": {"local": {"base_url": f"{url}/v1"}}}))
    wisp.trust()
    run = wisp("-p", "hi", "--model", "local:qwen3-coder", *STREAM)
    assert run.returncode == 1
    assert run.result["result"] == (f"API Error: nothing listens at {url} (connection "
                                    f"refused) — is providers.local.base_url in {settings} "
                                    "right?")
