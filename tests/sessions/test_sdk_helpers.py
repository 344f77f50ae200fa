"""The official Python SDK's session helpers read wisp's transcripts (docs/protocol.md, "Transcripts
where the SDKs look")."""

from __future__ import annotations

import json

import pytest

from wisp.testing import reply

sdk = pytest.importorskip("claude_agent_sdk")


def test_list_sessions_and_get_session_messages_see_wisp_sessions(
    wisp, server, tmp_path, monkeypatch
):
    config = tmp_path / "claude-config"
    server.script(reply.tool_use("Bash", {"command": "echo hi"}), reply.text("all done"))
    run = wisp(
        "-p",
        "list me",
        "--output-format",
        "json",
        "--allowedTools",
        "Bash",
        env={"CLAUDE_CONFIG_DIR": str(config)},
    )
    assert run.returncode == 0, run.stderr
    sid = json.loads(run.stdout)["session_id"]
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))

    sessions = sdk.list_sessions(directory=str(wisp.cwd))
    assert [s.session_id for s in sessions] == [sid]
    assert sessions[0].first_prompt == "list me"
    assert sessions[0].cwd == str(wisp.cwd)

    found = sdk.get_session_messages(sid, directory=str(wisp.cwd))
    assert [m.type for m in found] == ["user", "assistant", "user", "assistant"]
    assert found[0].message["content"] == "list me"
    assert found[-1].message["content"] == [{"type": "text", "text": "all done"}]
    assert all(m.session_id == sid for m in found)
