"""Twenty sessions in one process, at once: each `Runtime` has its own cwd, environment
overlay, settings (rules) and child processes, and runs a real tool loop against its own
scripted Messages API server over HTTP. None sees another's files, variables or rules,
and closing one mid-run leaves the others running."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.frame_check import check_frame
from wisp.engine.events import Event, RunFinished
from wisp.engine.outcome import Aborted, Outcome, Success
from wisp.runtime.config import RuntimeConfig
from wisp.runtime.runtime import Runtime
from wisp.settings.trust import record
from wisp.testing import ScriptedServer, reply
from wisp.wire.projection import StreamJson

JSON = dict[str, Any]
N = 20
VICTIM = 7  # closed while its Bash call is still running


class Recorder:
    """Keeps a runtime's events and the stream-json frames made of them, each frame
    checked against the wire schema."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.frames: list[JSON] = []
        self.projection = StreamJson(self, "")

    def emit(self, event: Event) -> None:
        self.events.append(event)
        self.projection.emit(event)

    def write(self, frame: JSON) -> None:
        check_frame(frame)
        self.frames.append(frame)


class Session:
    """One runtime's world: a folder, a home, settings, a server, a script."""

    def __init__(self, root: Path, shared: Path, index: int) -> None:
        self.index = index
        self.cwd = root / f"project-{index}"
        self.home = root / f"home-{index}"
        (self.cwd / ".claude").mkdir(parents=True)
        self.home.mkdir()
        self.denied = shared / f"secret-{index}.txt"  # denied here, readable elsewhere
        self.allowed = shared / f"secret-{(index + 1) % N}.txt"
        settings = {"env": {"RT_MARK": f"mark-{index}", f"ONLY_{index}": "yes"},
                    "permissions": {"deny": [f"Read(/{self.denied})"]}}
        (self.cwd / ".claude" / "settings.json").write_text(json.dumps(settings))
        command = ("sleep 30" if index == VICTIM else
                   'printf %s "$RT_MARK" > mine.txt && pwd && ls -A && cat mine.txt && echo && '
                   "env | grep -c '^ONLY_'")
        self.server = ScriptedServer(
            reply.tool_use("Bash", {"command": command}),
            reply.tool_uses([("Read", {"file_path": str(self.denied)}),
                             ("Read", {"file_path": str(self.allowed)})]),
            reply.text(f"done {index}"))
        self.sink = Recorder()

    def config(self, shared: Path) -> RuntimeConfig:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
               "HOME": str(self.home), "WISP_CONFIG_DIR": str(self.home / ".wisp"),
               "ANTHROPIC_BASE_URL": self.server.url, "ANTHROPIC_API_KEY": "sk-test",
               "CLAUDE_CODE_MAX_RETRIES": "0"}
        # Each user trusts their own project in their own config: its `env` applies.
        record(self.cwd, env, hasTrustDialogAccepted=True)
        return RuntimeConfig(cwd=self.cwd, env=env, add_dirs=(str(shared),),
                             permission_mode="bypassPermissions", permission_mode_set=True,
                             bypass_allowed=True, setting_sources=("user", "project"))

    def tool_results(self) -> list[JSON]:
        """What the model was sent back: every tool_result, in order."""
        out = []
        for request in self.server.requests:
            body = request.body or {}
            last = (body.get("messages") or [{}])[-1]
            content = last.get("content")
            if last.get("role") == "user" and isinstance(content, list):
                out += [b for b in content if b.get("type") == "tool_result"]
        return out


def result_text(block: JSON) -> str:
    content = block["content"]
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content)


async def wait_for(predicate: Any, timeout: float = 20.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.02)


async def run_all(sessions: list[Session], shared: Path) -> list[Outcome]:
    runtimes = [Runtime.open(s.config(shared), s.sink) for s in sessions]
    for session, runtime in zip(sessions, runtimes, strict=True):
        session.sink.projection.session_id = runtime.session.session_id
    tasks = [asyncio.ensure_future(r.run_prompt(f"work {i}")) for i, r in enumerate(runtimes)]
    victim = runtimes[VICTIM]
    await wait_for(lambda: len(victim.session.processes) > 0)  # its `sleep 30` runs
    others_running = sum(1 for t in tasks if not t.done())
    await victim.aclose()  # mid-run: its turn ends, its processes die
    assert tasks[VICTIM].done()
    assert len(victim.session.processes) == 0
    assert others_running > 1  # closing it happened while others were still working
    outcomes = await asyncio.wait_for(asyncio.gather(*tasks), 60)
    for runtime in runtimes:
        await runtime.aclose()
    return outcomes


@pytest.fixture
def sessions(tmp_path: Path) -> list[Session]:
    shared = tmp_path / "shared"
    shared.mkdir()
    for i in range(N):
        (shared / f"secret-{i}.txt").write_text(f"secret number {i}")
    made = [Session(tmp_path, shared, i) for i in range(N)]
    yield made
    for session in made:
        session.server.close()


def test_twenty_runtimes_in_one_process_stay_apart(sessions: list[Session],
                                                   tmp_path: Path) -> None:
    cwd_before, env_before = os.getcwd(), dict(os.environ)
    outcomes = asyncio.run(run_all(sessions, tmp_path / "shared"))
    assert os.getcwd() == cwd_before and dict(os.environ) == env_before

    for session, outcome in zip(sessions, outcomes, strict=True):
        i = session.index
        finished = [e for e in session.sink.events if isinstance(e, RunFinished)]
        assert len(finished) == 1 and finished[0].outcome == outcome
        assert session.sink.frames[-1]["type"] == "result"
        if i == VICTIM:
            assert isinstance(outcome, Aborted)
            assert not (session.cwd / "mine.txt").exists()
            continue
        assert outcome == Success(f"done {i}"), (i, outcome)
        bash, denied, allowed = session.tool_results()
        # Its own cwd, its own settings env, nobody else's files or variables.
        lines = result_text(bash).splitlines()
        assert lines[0] == str(session.cwd)
        assert sorted(lines[1:3]) == [".claude", "mine.txt"]
        assert lines[3:] == [f"mark-{i}", "1"]  # its variables, and no one else's
        assert (session.cwd / "mine.txt").read_text() == f"mark-{i}"
        # Its own rules: its secret is denied, the next one's (denied there) is not.
        assert denied["is_error"] is True and "secret number" not in result_text(denied)
        assert f"secret number {(i + 1) % N}" in result_text(allowed)
        # Its transcript went to its own home.
        transcripts = list((session.home / ".wisp").rglob("*.jsonl"))
        assert len(transcripts) == 1
