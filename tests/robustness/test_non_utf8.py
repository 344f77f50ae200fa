"""Names and bytes that are not UTF-8 never end a run.

A file name that is not UTF-8 reaches Python with lone surrogates, which a strict UTF-8
encode refuses: once in a tool result it used to crash the transcript writer with no
result frame. Tools now show such bytes as U+FFFD, and the stdout and transcript writers
turn any lone surrogate that still arrives (a `"\\udcff"` escape from the SDK) into one.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import wisp_command
from tests.robustness.helpers import STREAM, history_text, model_requests, transcript_path
from wisp.testing import reply

BAD_NAME = b"bad\xff.txt"
SHOWN = "bad\ufffd.txt"
SURROGATE = "\udcff"


def make_file(folder: Path, name: bytes, content: bytes) -> None:
    fd = os.open(os.fsencode(folder) + b"/" + name, os.O_CREAT | os.O_WRONLY, 0o644)
    try:
        os.write(fd, content)
    finally:
        os.close(fd)


def tool_result(run) -> dict:
    return run.of_type("user")[0]["message"]["content"][0]


@pytest.mark.parametrize(
    "tool, tool_input",
    [
        ("Glob", {"pattern": "**/*.txt"}),
        ("Grep", {"pattern": "needle"}),
        ("Grep", {"pattern": "needle", "output_mode": "content"}),
        ("Grep", {"pattern": "needle", "output_mode": "count"}),
    ],
    ids=["glob", "grep-files", "grep-content", "grep-count"],
)
def test_a_listing_with_a_non_utf8_name_completes_and_resumes(wisp, server, tool, tool_input):
    make_file(wisp.cwd, BAD_NAME, b"needle\n")
    (wisp.cwd / "good.txt").write_text("needle\n")
    server.script(reply.tool_use(tool, tool_input), reply.text("listed"))
    run = wisp("-p", "list the files", *STREAM)  # stdout is decoded strictly as UTF-8
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.result["subtype"] == "success"
    shown = tool_result(run)
    assert not shown.get("is_error"), shown
    assert SHOWN in shown["content"] and "good.txt" in shown["content"]
    # The model saw the same readable name, never a lone surrogate.
    sent = history_text(model_requests(server)[1])
    assert SHOWN in sent and SURROGATE not in sent

    session_id = run.result["session_id"]
    transcript_path(wisp, session_id).read_bytes().decode("utf-8")  # valid UTF-8 throughout
    server.script(reply.text("again"))
    again = wisp("-p", "and now?", *STREAM, "--resume", session_id)
    assert again.returncode == 0, again.stderr[-2000:]
    assert again.result["subtype"] == "success"
    assert SHOWN in history_text(model_requests(server)[-1])


def test_read_shows_undecodable_content_with_replacement_characters(wisp, server):
    make_file(wisp.cwd, b"latin1.txt", b"caf\xe9 au lait\n")
    server.script(
        reply.tool_use("Read", {"file_path": str(wisp.cwd / "latin1.txt")}), reply.text("read")
    )
    run = wisp("-p", "read it", *STREAM)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "caf\ufffd au lait" in tool_result(run)["content"]
    assert run.result["subtype"] == "success"


def test_bash_output_that_is_not_utf8_is_shown_with_replacement_characters(wisp, server):
    make_file(wisp.cwd, BAD_NAME, b"")
    command = r"printf 'out\377\n'; printf 'err\376\n' >&2; ls"
    server.script(reply.tool_use("Bash", {"command": command}), reply.text("ran"))
    run = wisp("-p", "run it", *STREAM, "--permission-mode", "bypassPermissions",
               env={"IS_SANDBOX": "1"})
    assert run.returncode == 0, run.stderr[-2000:]
    content = tool_result(run)["content"]
    assert "out\ufffd" in content and "err\ufffd" in content and SHOWN in content
    assert run.result["subtype"] == "success"


@pytest.mark.parametrize("via", ["argv", "stdin"])
def test_a_prompt_that_is_not_utf8_reaches_the_model_readable(wisp, server, via):
    server.script(reply.text("ok"))
    prompt = b"caf\xe9 \xff"
    args = [*(a.encode() for a in wisp_command()), b"-p", b"--output-format", b"json"]
    proc = subprocess.run(
        [*args, prompt] if via == "argv" else args,
        input=prompt if via == "stdin" else b"",
        cwd=wisp.cwd, env=wisp.env, capture_output=True, timeout=60, check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout.decode("utf-8"))["result"] == "ok"
    assert model_requests(server)[0]["messages"][0]["content"] == "caf\ufffd \ufffd"


def test_a_lone_surrogate_from_the_sdk_goes_out_as_u_fffd(wisp, duplex, server):
    """A `"\\udcff"` escape is valid JSON that decodes to a lone surrogate: the replayed
    frame and the transcript line carrying it must still be written."""
    server.script(reply.text("fine"))
    proc = duplex("--replay-user-messages")
    proc.user(f"name {SURROGATE} here")  # json.dumps escapes it as \\udcff
    result = proc.wait_frame("result")
    assert result["subtype"] == "success"
    replay = proc.wait_frame("user", isReplay=True)
    assert replay["message"]["content"] == "name \ufffd here"
    assert proc.finish() == 0
    text = transcript_path(wisp, result["session_id"]).read_bytes().decode("utf-8")
    assert "name \ufffd here" in text
