"""Runs wisp or the reference CLI (Claude Code 2.1.332, in .bench-cache/ or at
$WISP_REFERENCE_CLI) the same way, offline, against the scripted Messages API server: a
duplex stream-json session driven frame by frame, or one print-mode run. Scenarios built
on this record what the reference does (tests/fixtures/reference/) and check wisp, and a
fresh reference run, against it."""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from wisp.settings.trust import record
from wisp.testing import ScriptedServer

JSON = dict[str, Any]
ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "reference"
REFERENCE = Path(os.environ.get("WISP_REFERENCE_CLI")
                 or ROOT / ".bench-cache" / "claude-code" / "node_modules" / ".bin" / "claude")
WISP = (sys.executable, "-m", "wisp")
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def command(which: str) -> list[str]:
    return [str(REFERENCE)] if which == "reference" else list(WISP)


def have_reference() -> bool:
    return REFERENCE.exists()


class Place:
    """An isolated home, config dir and project folder for one CLI run."""

    def __init__(self, tmp: Path, server: ScriptedServer, env: dict[str, str] | None = None
                 ) -> None:
        self.home = tmp / "home"
        self.config = self.home / ".claude"
        self.work = tmp / "work"
        self.work.mkdir(parents=True, exist_ok=True)
        self.config.mkdir(parents=True, exist_ok=True)
        base = {k: v for k, v in os.environ.items()
                if not k.startswith(("ANTHROPIC_", "CLAUDE_", "WISP_"))}
        self.env = {**base, "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "sk-test",
                    "HOME": str(self.home), "CLAUDE_CONFIG_DIR": str(self.config),
                    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                    "WISP_RETRY_BASE_DELAY_MS": "10", **(env or {})}

    def trust(self) -> None:
        """Records that the user trusts the work folder (the record both CLIs read), so
        its settings' grants apply; see `wisp.settings.trust`."""
        record(self.work, self.env, hasTrustDialogAccepted=True)

    def transcripts(self) -> list[Path]:
        return sorted(self.config.glob("projects/*/*.jsonl"))


class Duplex:
    """A `--input-format stream-json` session: send frames, read until a condition."""

    def __init__(self, which: str, place: Place, *args: str) -> None:
        self.proc = subprocess.Popen(
            [*command(which), "--output-format", "stream-json", "--verbose",
             "--input-format", "stream-json", *args],
            cwd=place.work, env=place.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
        self.frames: list[JSON] = []
        self._queue: queue.Queue[JSON | None] = queue.Queue()
        self._requests = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith("{"):
                frame = json.loads(line)
                self.frames.append(frame)
                self._queue.put(frame)
        self._queue.put(None)

    def send(self, frame: JSON) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(frame) + "\n")
        self.proc.stdin.flush()

    def prompt(self, text: str, uuid: str | None = None) -> list[JSON]:
        """One user message; the frames up to its result."""
        frame: JSON = {"type": "user", "message": {"role": "user", "content": text},
                       "parent_tool_use_id": None, "session_id": ""}
        if uuid is not None:
            frame["uuid"] = uuid
        self.send(frame)
        return self.until(lambda f: f.get("type") == "result")

    def control(self, request: JSON) -> JSON:
        """A control request; its response body (`subtype`, `response` or `error`)."""
        self._requests += 1
        request_id = f"req_{self._requests}"
        self.send({"type": "control_request", "request_id": request_id, "request": request})
        got = self.until(lambda f: f.get("type") == "control_response"
                         and f["response"].get("request_id") == request_id)
        response: JSON = got[-1]["response"]
        return response

    def until(self, done: Any, timeout: float = 60) -> list[JSON]:
        seen: list[JSON] = []
        deadline = time.monotonic() + timeout
        while True:
            frame = self._queue.get(timeout=max(0.1, deadline - time.monotonic()))
            if frame is None:
                raise EOFError(f"the CLI ended early: {seen}")
            seen.append(frame)
            if done(frame):
                return seen

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            return self.proc.wait(30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


def print_run(which: str, place: Place, *args: str) -> tuple[int, str, list[JSON]]:
    """One print-mode run: (exit code, stdout, the JSON frames it printed)."""
    proc = subprocess.run([*command(which), *args], cwd=place.work, env=place.env,
                          capture_output=True, text=True, timeout=120, check=False)
    frames = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    return proc.returncode, proc.stdout, frames


def kind(frame: JSON) -> str:
    """`type` or `type/subtype` (system frames), what a frame sequence is compared by."""
    subtype = frame.get("subtype")
    if frame.get("type") == "system" and subtype:
        return f"system/{subtype}"
    return str(frame.get("type"))


def load_fixture(name: str) -> JSON:
    data: JSON = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    return data


def save_fixture(name: str, data: JSON) -> None:
    path = FIXTURES / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def compare(observed: JSON, fixture: JSON, skip: dict[str, str] | None = None) -> list[str]:
    """Observations that differ from the fixture's, but those in `skip` (name → why it
    differs on purpose). Returns readable differences (empty when all agree)."""
    problems = []
    for name, expected in fixture.items():
        if skip and name in skip:
            continue
        if name not in observed:
            problems.append(f"{name}: not observed")
        elif observed[name] != expected:
            problems.append(f"{name}:\n  reference {expected!r}\n  observed  {observed[name]!r}")
    return problems
