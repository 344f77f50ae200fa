"""`wisp acp` against a careless or vanishing editor, on its raw pipes: malformed
JSON-RPC, unknown methods, a prompt for an unknown session, and a client that
disconnects mid-turn get the protocol's errors, leave no process behind, and lose no
transcript."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import base_env
from tests.sdk.conftest import wisp_executable
from wisp.testing import ScriptedServer, reply

JSON = dict[str, Any]
DEADLINE = 30


class RawEditor:
    """`wisp acp` on pipes, one JSON line at a time."""

    def __init__(self, server: ScriptedServer, tmp_path: Path) -> None:
        self.cwd = tmp_path / "work"
        self.cwd.mkdir()
        (tmp_path / "home").mkdir()
        self.env = base_env(server, tmp_path / "home")
        self.proc = subprocess.Popen([wisp_executable(tmp_path), "acp"], cwd=self.cwd,
                                     env=self.env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, start_new_session=True)
        self.lines: queue.Queue[JSON | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))
        self.lines.put(None)

    def write(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: JSON) -> None:
        self.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")

    def next(self, match: Any = lambda m: True) -> JSON:
        deadline = time.monotonic() + DEADLINE
        while True:
            message = self.lines.get(timeout=max(deadline - time.monotonic(), 0.01))
            assert message is not None, "wisp acp closed its output"
            if match(message):
                return message

    def answer(self, key: int) -> JSON:
        return self.next(lambda m: m.get("id") == key and "method" not in m)

    def start(self) -> str:
        self.send({"id": 1, "method": "initialize", "params": {"protocolVersion": 1}})
        assert self.answer(1)["result"]["protocolVersion"] == 1
        self.send({"id": 2, "method": "session/new",
                   "params": {"cwd": str(self.cwd), "mcpServers": []}})
        return str(self.answer(2)["result"]["sessionId"])

    def close(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, 9)
        self.proc.wait()


@pytest.fixture
def raw(server: ScriptedServer, tmp_path: Path) -> Any:
    editor = RawEditor(server, tmp_path)
    yield editor
    editor.close()


def test_malformed_lines_get_protocol_errors_and_the_connection_goes_on(raw: RawEditor) -> None:
    raw.write(b"{not json\n")
    assert raw.next()["error"]["code"] == -32700
    raw.write(b"[1, 2]\n")
    assert raw.next()["error"]["code"] == -32600
    raw.send({"id": 7, "method": 42})
    assert raw.answer(7)["error"]["code"] == -32600
    raw.send({"id": 8, "method": "no/such_method", "params": {}})
    assert raw.answer(8)["error"]["code"] == -32601
    raw.start()  # still serving


def test_a_prompt_for_an_unknown_session_is_not_found(raw: RawEditor) -> None:
    raw.start()
    raw.send({"id": 3, "method": "session/prompt",
              "params": {"sessionId": "nope", "prompt": [{"type": "text", "text": "hi"}]}})
    error = raw.answer(3)["error"]
    assert error["code"] == -32002 and "nope" in error["message"]
    raw.send({"id": 4, "method": "session/load",
              "params": {"sessionId": "0b7a4a4e-0000-4000-8000-000000000000",
                         "cwd": str(raw.cwd), "mcpServers": []}})
    assert raw.answer(4)["error"]["code"] == -32002


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/stat")
    return not status.exists() or status.read_text().split()[2] != "Z"


def _sleeper(marker: str) -> int | None:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker in (entry / "cmdline").read_bytes().decode(errors="replace"):
                    return int(entry.name)
            except OSError:
                continue
    return None


def test_a_client_that_disconnects_mid_turn_leaves_no_process_and_a_whole_transcript(
        raw: RawEditor, server: ScriptedServer) -> None:
    marker = f"{300 + os.getpid() % 1000}.{time.monotonic_ns() % 10**6}"  # this run's own
    server.script(reply.tool_use("Bash", {"command": f"sleep {marker}"}), reply.text("done"))
    sid = raw.start()
    raw.send({"id": 5, "method": "session/prompt",
              "params": {"sessionId": sid, "prompt": [{"type": "text", "text": "wait a bit"}]}})
    deadline = time.monotonic() + DEADLINE
    while (pid := _sleeper(marker)) is None:
        assert time.monotonic() < deadline, "the command never started"
        try:
            message = raw.lines.get(timeout=0.02)
        except queue.Empty:
            continue
        if message and message.get("method") == "session/request_permission":
            raw.send({"id": message["id"], "result": {"outcome": {
                "outcome": "selected", "optionId": "allow_once"}}})
    assert raw.proc.stdin is not None
    raw.proc.stdin.close()  # the editor is gone
    assert raw.proc.wait(timeout=DEADLINE) == 0
    deadline = time.monotonic() + 5
    while _alive(pid):
        assert time.monotonic() < deadline, ("the command outlived wisp acp",
                                             Path(f"/proc/{pid}/stat").read_text(),
                                             Path(f"/proc/{pid}/cmdline").read_bytes())
        time.sleep(0.02)
    [transcript] = (Path(raw.env["WISP_CONFIG_DIR"]) / "projects").glob(f"*/{sid}.jsonl")
    text = transcript.read_text()
    assert "wait a bit" in text and f"sleep {marker}" in text
    for line in text.splitlines():
        json.loads(line)  # every line whole
