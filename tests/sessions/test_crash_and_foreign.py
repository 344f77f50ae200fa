"""Crash safety (kill -9 mid-turn, torn last lines) and transcripts Claude Code wrote."""

from __future__ import annotations

import json
import shutil

from tests.sessions.conftest import (
    SID,
    kill9,
    lines,
    messages,
    project_dir,
    spawn,
    texts,
    transcript,
)
from wisp.testing import reply


def test_sigkill_while_streaming_after_a_tool_keeps_every_completed_line(wisp, server):
    server.script(
        reply.tool_use("Bash", {"command": "echo hi"}),
        reply.slow("a reply that never finishes", delay_per_event=0.5, chunks=30),
    )
    proc = spawn(
        wisp,
        "-p",
        "run it",
        "--output-format",
        "stream-json",
        "--verbose",
        "--allowedTools",
        "Bash",
    )
    assert proc.stdout is not None
    sid = json.loads(proc.stdout.readline())["session_id"]
    server.wait_for_requests(2, timeout=15)  # the tool ran; the second reply is streaming
    kill9(proc)
    entries = lines(transcript(wisp, sid))  # every line parses
    assert [e["type"] for e in entries] == ["user", "assistant", "user"]
    assert entries[2]["message"]["content"][0]["content"] == "hi"

    server.script(reply.text("picked up"))
    run = wisp("-p", "carry on", "--output-format", "json", "--resume", sid)
    assert run.returncode == 0, run.stderr
    sent = messages(server.requests[-1])
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert sent[1]["content"][0]["type"] == "tool_use"
    last = sent[2]["content"]
    assert last[0]["type"] == "tool_result" and last[0]["content"] == "hi"
    assert texts(last) == ["carry on"]
    assert len(lines(transcript(wisp, sid))) == 5


def test_a_torn_last_line_is_skipped_and_the_next_line_starts_fresh(wisp, server):
    server.script(reply.text("one"))
    sid = json.loads(wisp("-p", "p1", "--output-format", "json").stdout)["session_id"]
    path = transcript(wisp, sid)
    with path.open("ab") as f:
        f.write(b'{"parentUuid":"x","type":"assistant","message":{"role":"assis')
    server.script(reply.text("two"))
    run = wisp("-p", "p2", "--output-format", "json", "--resume", sid)
    assert run.returncode == 0, run.stderr
    assert [texts(m["content"]) for m in messages(server.requests[-1])] == [["p1"], ["one"], ["p2"]]
    raw = path.read_text().splitlines()
    torn = raw.index('{"parentUuid":"x","type":"assistant","message":{"role":"assis')
    # The first run's lines, the fragment, then the new run's from a fresh line.
    assert [json.loads(line)["type"] for line in raw[torn + 1:]] == [
        "user", "last-prompt", "assistant", "last-prompt"]


def test_a_dangling_tool_use_gets_an_error_result_on_resume(wisp, server):
    server.script(reply.tool_use("Bash", {"command": "echo hi"}), reply.text("done"))
    sid = json.loads(wisp("-p", "p1", "--output-format", "json", "--allowedTools", "Bash").stdout)[
        "session_id"
    ]
    path = transcript(wisp, sid)
    raw = path.read_text().splitlines()
    # As if killed before the tool finished: up to the tool_use line.
    kept = raw[:next(n for n, line in enumerate(raw) if '"type":"assistant"' in line) + 1]
    path.write_text("\n".join(kept) + "\n")
    server.script(reply.text("again"))
    assert wisp("-p", "p2", "--resume", sid).returncode == 0
    sent = messages(server.requests[-1])
    tool_id = sent[1]["content"][0]["id"]
    result = sent[2]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == tool_id
    assert result["is_error"] is True
    assert texts(sent[2]["content"]) == ["p2"]


def install_example(wisp, examples, name, session_id):
    target = project_dir(wisp) / f"{session_id}.jsonl"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(examples / name, target)
    return target


def test_claude_codes_one_turn_transcript_resumes(wisp, server, examples):
    sid = "809ff573-6d3e-4462-9644-abde464bb179"
    path = install_example(wisp, examples, f"bare_1turn__{sid}.jsonl", sid)
    before = path.read_bytes()
    server.script(reply.text("ok"))
    run = wisp("-p", "follow-up", "--output-format", "json", "--resume", sid)
    assert run.returncode == 0, run.stderr
    sent = messages(server.requests[-1])
    assert [texts(m["content"]) for m in sent] == [["say hi"], ["hello from fake"], ["follow-up"]]
    assert path.read_bytes().startswith(before)


def test_claude_codes_tool_transcript_resumes_with_its_tool_turn(wisp, server, examples):
    sid = "bad34e8f-3c59-459c-be3d-7c7fc24e2f01"
    install_example(wisp, examples, "tool_turn_plus_resume__bad34e8f.trimmed.jsonl", sid)
    server.script(reply.text("ok"))
    run = wisp("-p", "third prompt", "--output-format", "json", "--resume", sid)
    assert run.returncode == 0, run.stderr
    sent = messages(server.requests[-1])
    assert [m["role"] for m in sent] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    assert sent[1]["content"][0]["name"] == "Bash"
    assert sent[2]["content"][0]["tool_use_id"] == sent[1]["content"][0]["id"]
    assert texts(sent[4]["content"]) == ["second prompt"]
    assert texts(sent[6]["content"]) == ["third prompt"]


def test_a_claude_code_transcript_forks(wisp, server, examples):
    sid = "809ff573-6d3e-4462-9644-abde464bb179"
    install_example(wisp, examples, f"bare_1turn__{sid}.jsonl", sid)
    server.script(reply.text("ok"))
    run = wisp(
        "-p", "x", "--output-format", "json", "--resume", sid, "--fork-session", "--session-id", SID
    )
    assert run.returncode == 0, run.stderr
    copied = lines(transcript(wisp, SID))
    assert [e["type"] for e in copied] == ["user", "assistant", "user", "assistant"]


def test_a_transcript_in_claude_codes_layout_resumes(wisp, server):
    """The same shapes as Claude Code's own files (see claude_code_format), so this runs in
    CI too, where the reference's captures are not available."""
    from tests.sessions.claude_code_format import tool_session

    sid = "5a1d0c2e-1111-4222-8333-944455556666"
    path = project_dir(wisp) / f"{sid}.jsonl"
    tool_session(sid, str(wisp.cwd), path)
    before = path.read_bytes()
    server.script(reply.text("ok"))
    run = wisp("-p", "third prompt", "--output-format", "json", "--resume", sid)
    assert run.returncode == 0, run.stderr
    sent = messages(server.requests[-1])
    assert [m["role"] for m in sent] == ["user", "assistant", "user", "assistant", "user",
                                         "assistant", "user"]
    assert sent[1]["content"][0]["name"] == "Bash"
    assert sent[2]["content"][0]["tool_use_id"] == "toolu_cc_1"
    assert texts(sent[4]["content"]) == ["second prompt"]
    assert texts(sent[6]["content"]) == ["third prompt"]
    assert path.read_bytes().startswith(before)
