"""Where wisp keeps its config and sessions: `CLAUDE_CONFIG_DIR`, else `WISP_CONFIG_DIR`,
else `~/.claude` as the reference does, so the official SDKs' session helpers (Python
`list_sessions`/`get_session_messages`/`get_session_info`, TypeScript `listSessions`/
`getSessionMessages`/`getSessionInfo`) find wisp's sessions with nothing configured."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import Runner
from tests.needs import missing, node_or_skip
from tests.sdk.conftest import wisp_executable
from wisp.paths import config_dir, project_key
from wisp.settings.loader import user_settings_path
from wisp.testing import reply

TS_DIR = Path(__file__).resolve().parents[1] / "sdk" / "ts"
TS_SDK = TS_DIR / "node_modules" / "@anthropic-ai" / "claude-agent-sdk" / "package.json"


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"HOME": "/h"}, "/h/.claude"),
        ({"HOME": "/h", "WISP_CONFIG_DIR": "/w"}, "/w"),
        ({"HOME": "/h", "CLAUDE_CONFIG_DIR": "/c"}, "/c"),
        # The SDKs set CLAUDE_CONFIG_DIR on the process they start, and read it: it wins.
        ({"HOME": "/h", "WISP_CONFIG_DIR": "/w", "CLAUDE_CONFIG_DIR": "/c"}, "/c"),
        ({"HOME": "/h", "WISP_CONFIG_DIR": "", "CLAUDE_CONFIG_DIR": ""}, "/h/.claude"),
        ({"HOME": "/h", "WISP_CONFIG_DIR": "~/w"}, "/h/w"),
    ],
)
def test_one_config_dir_for_settings_and_sessions(env, expected, monkeypatch):
    monkeypatch.setenv("HOME", "/h")  # what `~` expands to
    assert config_dir(env) == Path(expected)
    assert user_settings_path(env) == Path(expected) / "settings.json"


def unconfigured(wisp: Runner) -> Runner:
    """The runner with no config dir set: only HOME (a temporary folder) says where."""
    wisp.env.pop("WISP_CONFIG_DIR")
    assert not {k for k in wisp.env if k in ("CLAUDE_CONFIG_DIR", "WISP_CONFIG_DIR")}
    return wisp


def test_sessions_and_settings_live_in_home_dot_claude(wisp, server, monkeypatch):
    official = pytest.importorskip("claude_agent_sdk")
    unconfigured(wisp)
    settings = wisp.home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"model": "claude-haiku-4-5"}))
    server.script(reply.text("noted"))
    run = wisp("-p", "remember this", "--output-format", "json")
    assert run.returncode == 0, run.stderr
    sid = json.loads(run.stdout)["session_id"]
    assert server.requests[-1].body["model"] == "claude-haiku-4-5"  # the user settings
    assert (wisp.home / ".claude" / "projects" / project_key(wisp.cwd) / f"{sid}.jsonl").is_file()
    assert not (wisp.home / ".wisp").exists()

    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("WISP_CONFIG_DIR", raising=False)
    monkeypatch.setenv("HOME", str(wisp.home))
    [listed] = official.list_sessions(str(wisp.cwd))
    assert (listed.session_id, listed.summary) == (sid, "remember this")
    assert [s.session_id for s in official.list_sessions()] == [sid]
    info = official.get_session_info(sid)
    assert info is not None and info.first_prompt == "remember this"
    found = official.get_session_messages(sid)
    assert [m.type for m in found] == ["user", "assistant"]
    assert found[-1].message["content"] == [{"type": "text", "text": "noted"}]


def test_the_typescript_sdk_finds_wisp_sessions(wisp, server, tmp_path):
    node = node_or_skip()
    if not TS_SDK.exists():
        missing("the TypeScript SDK is not installed (bash scripts/install-sdk-deps)",
                "WISP_REQUIRE_NODE")
    unconfigured(wisp)
    server.script(reply.text("noted"))
    proc = subprocess.run(
        [node, str(TS_DIR / "sessions.mjs")], cwd=TS_DIR, capture_output=True, text=True,
        timeout=90, check=False,
        env={**wisp.env, "WISP_CLI": wisp_executable(tmp_path), "WISP_WORK": str(wisp.cwd)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    [result] = [o["message"] for o in out if o.get("message", {}).get("type") == "result"]
    [helpers] = [o["helpers"] for o in out if "helpers" in o]
    sid = result["session_id"]
    assert helpers["listed"] == [{"sessionId": sid, "summary": "remember this",
                                  "firstPrompt": "remember this"}]
    assert [m["type"] for m in helpers["messages"]] == ["user", "assistant"]
    assert helpers["info"] == {"sessionId": sid, "summary": "remember this"}
    assert (wisp.home / ".claude" / "projects" / project_key(wisp.cwd) / f"{sid}.jsonl").is_file()
