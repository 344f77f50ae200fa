"""--resume, --continue, --fork-session, --session-id, --resume-session-at."""

from __future__ import annotations

import itertools
import json
import os

import pytest

from tests.sessions.conftest import OTHER, SID, lines, messages, texts, transcript
from wisp.testing import reply


def first_run(wisp, server, prompt="first prompt", *extra):
    server.script(reply.text(f"answer to {prompt}"))
    run = wisp("-p", prompt, "--output-format", "json", *extra)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)["session_id"]


def test_resume_sends_the_earlier_turns_and_keeps_the_session(wisp, server):
    sid = first_run(wisp, server)
    server.script(reply.text("second answer"))
    run = wisp("-p", "second prompt", "--output-format", "json", "--resume", sid)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["session_id"] == sid
    sent = messages(server.requests[-1])
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert texts(sent[0]["content"]) == ["first prompt"]
    assert texts(sent[1]["content"]) == ["answer to first prompt"]
    assert texts(sent[2]["content"]) == ["second prompt"]
    # Appended to the same file, chained onto the old leaf.
    entries = lines(transcript(wisp, sid))
    assert len(entries) == 4
    assert entries[2]["parentUuid"] == entries[1]["uuid"]


def test_fork_gets_a_new_id_and_leaves_the_original_untouched(wisp, server):
    sid = first_run(wisp, server)
    original = transcript(wisp, sid)
    before = original.read_bytes()
    server.script(reply.text("forked answer"))
    run = wisp("-p", "forked prompt", "--output-format", "json", "--resume", sid, "--fork-session")
    assert run.returncode == 0, run.stderr
    fork_id = json.loads(run.stdout)["session_id"]
    assert fork_id != sid
    assert original.read_bytes() == before
    assert texts(messages(server.requests[-1])[0]["content"]) == ["first prompt"]
    copied = lines(transcript(wisp, fork_id))
    assert [e["type"] for e in copied] == ["user", "assistant", "user", "assistant"]
    assert {e["sessionId"] for e in copied} == {fork_id}
    assert copied[0]["parentUuid"] is None
    assert all(b["parentUuid"] == a["uuid"] for a, b in itertools.pairwise(copied))
    # Fresh line uuids (one uuid never names lines of two files), each copy naming the
    # line it copies, as the SDKs' fork_session writes them.
    source = lines(original)
    assert not {e["uuid"] for e in copied} & {e["uuid"] for e in source}
    assert [e["forkedFrom"] for e in copied[:2]] == [
        {"sessionId": sid, "messageUuid": e["uuid"]} for e in source]
    server.script(reply.text("again"))
    resumed = wisp("-p", "more", "--output-format", "json", "--resume", fork_id)
    assert resumed.returncode == 0, resumed.stderr
    assert [texts(m["content"]) for m in messages(server.requests[-1])] == [
        ["first prompt"], ["answer to first prompt"], ["forked prompt"], ["forked answer"],
        ["more"]]


def test_fork_with_session_id_uses_that_id(wisp, server):
    first_run(wisp, server, "x", "--session-id", SID)
    server.script(reply.text("ok"))
    run = wisp(
        "-p",
        "y",
        "--output-format",
        "json",
        "--resume",
        SID,
        "--fork-session",
        "--session-id",
        OTHER,
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["session_id"] == OTHER
    assert transcript(wisp, OTHER).is_file()


def test_continue_picks_the_newest_session(wisp, server):
    older = first_run(wisp, server, "older prompt")
    newer = first_run(wisp, server, "newer prompt")
    past = transcript(wisp, newer).stat().st_mtime - 60
    os.utime(transcript(wisp, older), (past, past))  # no tie on a coarse clock
    server.script(reply.text("continued"))
    run = wisp("-p", "go on", "--output-format", "json", "--continue")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["session_id"] == newer
    assert texts(messages(server.requests[-1])[0]["content"]) == ["newer prompt"]


def test_continue_goes_by_the_last_message_not_the_file_time(wisp, server):
    """Renaming or tagging an old session appends a line to it (the SDKs'
    rename_session/tag_session do): --continue still resumes the one last talked to."""
    older = first_run(wisp, server, "older prompt")
    newer = first_run(wisp, server, "newer prompt")
    with transcript(wisp, older).open("a") as handle:
        handle.write(json.dumps({"type": "custom-title", "customTitle": "renamed",
                                 "sessionId": older}) + "\n")
    future = transcript(wisp, newer).stat().st_mtime + 60
    os.utime(transcript(wisp, older), (future, future))
    server.script(reply.text("continued"))
    run = wisp("-p", "go on", "--output-format", "json", "--continue")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["session_id"] == newer


def test_session_id_is_used_as_given(wisp, server):
    assert first_run(wisp, server, "x", "--session-id", SID) == SID
    assert transcript(wisp, SID).is_file()


@pytest.mark.parametrize(
    ("args", "stderr"),
    [
        (("--session-id", "not-a-uuid"), "Error: Invalid session ID. Must be a valid UUID.\n"),
        (
            ("--resume", SID, "--session-id", OTHER),
            "Error: --session-id with --continue or --resume also needs --fork-session.\n",
        ),
        (
            ("--continue", "--session-id", OTHER),
            "Error: --session-id with --continue or --resume also needs --fork-session.\n",
        ),
        (
            ("--resume", "99999999-2222-4333-8444-555555555555"),
            "No conversation found with session ID: 99999999-2222-4333-8444-555555555555\n",
        ),
        (("--resume", "not-a-session"),
         "Error: --resume requires a valid session ID or session title when used with --print. "
         "Usage: wisp -p --resume <session-id|title>. Provided value \"not-a-session\" is not a "
         "UUID and does not match any session title.\n"),
        (("--resume-session-at", OTHER), "Error: --resume-session-at requires --resume\n"),
        (("--resume", SID, "--resume-drops-turn", OTHER),
         "Error: --resume-drops-turn requires --resume-session-at\n"),
    ],
)
@pytest.mark.parametrize("output", ["json", "text"])
def test_session_flag_errors_exit_1_before_any_api_call(wisp, server, args, stderr, output):
    run = wisp("-p", "x", "--output-format", output, *args)
    assert run.returncode == 1
    assert run.stderr == stderr
    assert run.stdout == ""
    assert server.requests == []


def test_a_session_id_already_in_use_is_refused(wisp, server):
    first_run(wisp, server, "x", "--session-id", SID)
    run = wisp("-p", "again", "--output-format", "json", "--session-id", SID)
    assert run.returncode == 1
    assert run.stderr == f"Error: Session ID {SID} is already in use.\n"
    assert len(server.requests) == 1


def test_continue_with_no_session_starts_a_new_one(wisp, server):
    """As the reference: nothing to continue is no error (tests/fixtures/reference/sessions)."""
    server.script(reply.text("fresh"))
    run = wisp("-p", "x", "--continue", "--output-format", "json")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["result"] == "fresh"
    assert [texts(m["content"]) for m in messages(server.requests[-1])] == [["x"]]


def test_resume_session_at_cuts_the_history_at_that_message(wisp, server):
    server.script(reply.text("one"), reply.text("two"))
    first = wisp("-p", "p1", "--output-format", "stream-json", "--verbose")
    sid = first.result["session_id"]
    at = first.of_type("assistant")[0]["uuid"]
    wisp("-p", "p2", "--resume", sid)
    server.script(reply.text("three"))
    run = wisp("-p", "p3", "--output-format", "json", "--resume", sid, "--resume-session-at", at)
    assert run.returncode == 0, run.stderr
    sent = messages(server.requests[-1])
    assert [texts(m["content"]) for m in sent] == [["p1"], ["one"], ["p3"]]
    # The branch is in the same file; the next plain resume follows the newest branch.
    server.script(reply.text("four"))
    wisp("-p", "p4", "--resume", sid)
    assert [texts(m["content"]) for m in messages(server.requests[-1])] == [
        ["p1"],
        ["one"],
        ["p3"],
        ["three"],
        ["p4"],
    ]


def test_resume_session_at_an_unknown_uuid_is_an_error(wisp, server):
    sid = first_run(wisp, server)
    run = wisp("-p", "x", "--resume", sid, "--resume-session-at", OTHER)
    assert run.returncode == 1
    assert run.stderr == f"No message found with message.uuid of: {OTHER}\n"
    assert len(server.requests) == 1
