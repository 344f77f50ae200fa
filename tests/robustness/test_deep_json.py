"""JSON nested thousands deep, on stdin or in a transcript, is a handled error.

Before: one stdin line of 5,000 nested brackets raised RecursionError in the stdin reader
thread (or, as the first line, in the early initialize path): no further answers, and no
exit at end of input. Now it is answered like a malformed line and the session goes on.
"""

from __future__ import annotations

import json

import pytest

from tests.duplex.harness import Duplex
from tests.robustness.helpers import model_requests, transcript_path
from wisp.testing import reply

DEPTH = 5_000
DEEP_LINES = {
    "lists": "[" * DEPTH + "]" * DEPTH,
    "objects": '{"a":' * DEPTH + "1" + "}" * DEPTH,
}


def input_errors(proc: Duplex) -> list[dict]:
    return proc.of("system", "input_error")


@pytest.mark.parametrize("shape", sorted(DEEP_LINES))
@pytest.mark.parametrize("initialized", [False, True], ids=["first-line", "after-initialize"])
def test_a_deep_stdin_line_is_an_input_error_and_the_session_goes_on(
    duplex, server, shape, initialized
):
    server.script(reply.text("still here"))
    proc = duplex()
    if initialized:
        proc.initialize()
    proc.send(DEEP_LINES[shape])
    error = proc.wait_frame("system", "input_error")
    assert "nested deeper than" in error["error"]
    assert error["line"] == (2 if initialized else 1)
    proc.user("hello")
    result = proc.wait_frame("result")
    assert result["subtype"] == "success" and result["result"] == "still here"
    assert proc.finish() == 0  # EOF still ends the session cleanly


def test_the_reader_survives_any_line(duplex, server):
    """Each of these used to be fatal or is at least odd; none may stop the reading."""
    server.script(reply.text("answered"))
    proc = duplex()
    proc.initialize()
    assert proc.proc.stdin is not None
    odd = [
        DEEP_LINES["lists"],
        "[" * 1_000_000,  # deep and unterminated
        '{"a": "' + "[" * 10_000 + '"}',  # brackets inside a string are not nesting
        "\ud800",  # not even encodable: sent as raw bytes below
        "[1, 2",
    ]
    for line in odd:
        proc.proc.stdin.write(line.encode("utf-8", "surrogatepass") + b"\n")
    proc.proc.stdin.flush()
    proc.wait_for(lambda frames: len(input_errors(proc)) >= 4, what="four input errors")
    proc.user("hello")
    assert proc.wait_frame("result")["result"] == "answered"
    assert proc.finish() == 0
    lines = sorted(e["line"] for e in input_errors(proc))
    assert lines == [2, 3, 5, 6]  # the bracket-in-string object is valid, and ignored


def test_a_transcript_with_a_deep_line_still_resumes(wisp, server):
    server.script(reply.text("first answer"))
    first = wisp("-p", "remember the word heron", "--output-format", "json")
    assert first.returncode == 0, first.stderr[-2000:]
    session_id = json.loads(first.stdout)["session_id"]
    path = transcript_path(wisp, session_id)
    deep_entry = '{"type":"user","uuid":"deep","parentUuid":null,"message":' * DEPTH
    with path.open("a") as f:
        f.write(DEEP_LINES["lists"] + "\n")
        f.write(deep_entry + "1" + "}" * DEPTH + "\n")

    server.script(reply.text("heron"))
    again = wisp("-p", "which word?", "--output-format", "json", "--resume", session_id)
    assert again.returncode == 0, again.stderr[-2000:]
    assert json.loads(again.stdout)["result"] == "heron"
    history = json.dumps(model_requests(server)[-1]["messages"])
    assert "remember the word heron" in history and "first answer" in history
