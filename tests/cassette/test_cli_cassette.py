"""`WISP_RECORD` / `WISP_REPLAY` with the real binary: a tool loop recorded against the
scripted server replays with the server gone, in another folder, and the tool runs again.

`wisp.runtime.build` wraps the session's model with `wisp.models.cassette.wrap_for_env`."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import Runner
from wisp.testing import ScriptedServer, reply

KEY = "sk-ant-api03-e2e-SECRET-KEY-0123456789"
PROMPT = "write hi to out.txt"
ARGS = ("--allowedTools", "Bash", "--output-format", "stream-json", "--verbose")


def record(tmp_path: Path, cassette: Path) -> str:
    with ScriptedServer(reply.tool_use("Bash", {"command": "echo hi > out.txt"}),
                        reply.text("Wrote hi to out.txt.")) as server:
        (tmp_path / "rec").mkdir()
        wisp = Runner(server, tmp_path / "rec")
        run = wisp("-p", PROMPT, *ARGS,
                   env={"WISP_RECORD": str(cassette), "ANTHROPIC_API_KEY": KEY})
        assert run.returncode == 0, run.stderr
        assert (wisp.cwd / "out.txt").read_text() == "hi\n"
        assert len(server.requests) == 2
        return str(run.result["result"])


def replayer(tmp_path: Path, name: str, server: ScriptedServer) -> Runner:
    (tmp_path / name).mkdir()
    return Runner(server, tmp_path / name)


def test_a_recorded_run_replays_with_no_server_in_a_fresh_folder(tmp_path: Path) -> None:
    cassette = tmp_path / "run.jsonl"
    result = record(tmp_path, cassette)
    assert result == "Wrote hi to out.txt."

    raw = cassette.read_text()
    assert KEY not in raw and "SECRET-KEY" not in raw  # no key, nothing from the headers
    exchanges = [json.loads(line) for line in raw.splitlines()]
    assert [e["ended"] for e in exchanges] == ["complete", "complete"]
    assert exchanges[1]["request"]["messages"][-1]["content"][0]["type"] == "tool_result"

    # The server is gone (ANTHROPIC_BASE_URL points at a closed port): all from the file.
    gone = ScriptedServer()
    gone.close()
    wisp = replayer(tmp_path, "rep", gone)
    run = wisp("-p", PROMPT, *ARGS,
               env={"WISP_REPLAY": str(cassette), "WISP_REPLAY_MATCH": "loose"})
    assert run.returncode == 0, run.stderr
    assert run.result["result"] == result
    assert run.of_type("system", "api_retry") == []
    assert (wisp.cwd / "out.txt").read_text() == "hi\n"  # the tool really ran again

    # A different conversation fails at once, naming the difference; nothing is retried.
    wisp = replayer(tmp_path, "other", gone)
    run = wisp("-p", "write bye to out.txt", *ARGS,
               env={"WISP_REPLAY": str(cassette), "WISP_REPLAY_MATCH": "loose"})
    assert run.returncode != 0
    assert run.of_type("system", "api_retry") == []
    text = run.stdout + run.stderr
    assert "WISP_REPLAY: no recorded exchange matches this request" in text
    assert "closest differs at messages[0].content" in text
    assert "write hi" in text and "write bye" in text
    assert not (wisp.cwd / "out.txt").exists()
