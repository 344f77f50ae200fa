"""Transcripts on disk: path, mode, Claude Code's line format, persistence switches."""

from __future__ import annotations

import json
import stat

from tests.sessions.conftest import lines, project_dir, transcript
from wisp.paths import project_key
from wisp.testing import reply


def test_a_run_writes_its_transcript_in_claude_codes_format(wisp, server):
    server.script(reply.tool_use("Bash", {"command": "echo hi"}), reply.text("done"))
    run = wisp(
        "-p", "run it", "--output-format", "stream-json", "--verbose", "--allowedTools", "Bash"
    )
    assert run.returncode == 0
    sid = run.result["session_id"]
    path = transcript(wisp, sid)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    entries = lines(path)
    assert [e["type"] for e in entries] == ["user", "assistant", "user", "assistant"]
    parent = None
    for entry in entries:
        assert entry["parentUuid"] == parent
        parent = entry["uuid"]
        assert entry["sessionId"] == sid
        assert entry["cwd"] == str(wisp.cwd)
        assert entry["isSidechain"] is False
        assert entry["userType"] == "external"
        assert entry["version"] and entry["timestamp"].endswith("Z")
    assert entries[0]["message"] == {"role": "user", "content": "run it"}
    tool_use, final = entries[1], entries[3]
    # The assistant line holds the whole API message, with the real stop_reason.
    assert tool_use["message"]["stop_reason"] == "tool_use"
    assert final["message"]["stop_reason"] == "end_turn"
    assert final["message"]["model"] and final["message"]["usage"]["output_tokens"] > 0
    assert final["message"]["id"].startswith("msg_") and final["requestId"]
    assert entries[2]["message"]["content"][0]["type"] == "tool_result"
    # Lines carry the uuids of the frames the client saw.
    frame_uuids = {f["uuid"] for f in run.frames if f["type"] in ("assistant", "user")}
    assert {entries[1]["uuid"], entries[2]["uuid"], entries[3]["uuid"]} <= frame_uuids


def test_project_directory_replaces_every_non_alphanumeric_character():
    assert project_key("/tmp/a b.c_d/é") == "-tmp-a-b-c-d--"
    long = "/x" * 150
    key = project_key(long)
    assert key.startswith("-x" * 100 + "-") and len(key) > 200


def test_no_session_persistence_writes_nothing(wisp, server):
    server.script(reply.text("hi"))
    run = wisp("-p", "x", "--no-session-persistence")
    assert run.returncode == 0
    assert not project_dir(wisp).exists()


def test_claude_config_dir_is_used_when_set(wisp, server, tmp_path):
    server.script(reply.text("hi"))
    claude_dir = tmp_path / "claude-config"
    run = wisp("-p", "x", "--output-format", "json", env={"CLAUDE_CONFIG_DIR": str(claude_dir)})
    sid = json.loads(run.stdout)["session_id"]
    assert (claude_dir / "projects" / project_key(wisp.cwd) / f"{sid}.jsonl").is_file()
    assert not project_dir(wisp).exists()


def test_a_run_refused_before_the_prompt_leaves_no_file(wisp, server):
    run = wisp("-p", "x", "--output-format", "stream-json")  # needs --verbose
    assert run.returncode == 1
    assert not project_dir(wisp).exists()


def test_an_unwritable_config_dir_warns_but_the_run_succeeds(wisp, server, tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    server.script(reply.text("still fine"))
    run = wisp("-p", "x", env={"WISP_CONFIG_DIR": str(blocker)})
    assert run.returncode == 0
    assert run.stdout == "still fine\n"
    assert "cannot write transcript" in run.stderr
