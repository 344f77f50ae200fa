"""Runs one scenario against a stream-json CLI (wisp, or the reference Claude Code) in
duplex mode, offline, the way an SDK host would: it writes the scenario's frames in order,
waits for what each step waits for, answers the CLI's own requests (hook callbacks from
the scenario's table, `mcp_message` from a tiny in-process MCP server, `can_use_tool`
with allow), and records every frame both ways plus the bodies the model server saw.

Used by the parity tests and by `record.py`, which stores the reference's run as a fixture.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wisp.settings.trust import record
from wisp.testing import ScriptedServer, reply
from wisp.testing.reply import Reply

JSON = dict[str, Any]
ROOT = Path(__file__).resolve().parents[2]
REFERENCE = Path(os.environ.get("WISP_REFERENCE_CLI")
                 or ROOT / ".bench-cache" / "claude-code" / "node_modules" / ".bin" / "claude")
DUPLEX = ("--output-format", "stream-json", "--verbose", "--input-format", "stream-json")
HookAnswer = JSON | Callable[[JSON, int], JSON]


def wisp_cli() -> list[str]:
    return [sys.executable, "-m", "wisp"]


def reference_cli() -> list[str]:
    return [str(REFERENCE)]


@dataclass
class Step:
    """Write `send` (if any), then wait for `results` results in all, or the answer to
    request `response`, or `sleep` seconds."""

    send: JSON | None = None
    results: int | None = None
    response: str | None = None
    sleep: float = 0.0


@dataclass
class Scenario:
    name: str
    steps: list[Step]
    replies: list[Reply] = field(default_factory=list)
    args: tuple[str, ...] = ()
    hooks: dict[str, HookAnswer] = field(default_factory=dict)  # callback_id → answer
    settings: JSON | None = None  # .claude/settings.json of the work folder
    files: dict[str, str] = field(default_factory=dict)  # written in the work folder
    sdk_tools: dict[str, list[str]] = field(default_factory=dict)  # SDK server → tools
    prompts: tuple[str, ...] = ()  # the prompt texts, looked for in what the model saw


@dataclass
class Run:
    frames: list[JSON]  # {"dir": "in"|"out", "frame": ...}
    requests: list[JSON]  # bodies of the model requests
    returncode: int | None
    stderr: str
    work: Path

    def out(self) -> list[JSON]:
        return [e["frame"] for e in self.frames if e["dir"] == "out"]


def user(text: str, **extra: Any) -> JSON:
    return {"type": "user", "message": {"role": "user", "content": text},
            "parent_tool_use_id": None, "session_id": "", **extra}


def control(request_id: str, subtype: str, **fields: Any) -> JSON:
    return {"type": "control_request", "request_id": request_id,
            "request": {"subtype": subtype, **fields}}


def mcp_answer(server: str, message: JSON, tools: dict[str, list[str]]) -> JSON:
    """A minimal MCP server per name: tools `tools[server]`, each echoing its input."""
    method, ident = message.get("method"), message.get("id")
    if ident is None:
        return {"jsonrpc": "2.0", "result": {}}
    if method == "initialize":
        params = message.get("params") or {}
        return {"jsonrpc": "2.0", "id": ident, "result": {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}}, "serverInfo": {"name": server, "version": "1.0.0"}}}
    if method == "tools/list":
        return {"jsonrpc": "2.0", "id": ident, "result": {"tools": [
            {"name": name, "description": f"the {name} tool",
             "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}}}
            for name in tools.get(server, [])]}}
    if method == "tools/call":
        params = message.get("params") or {}
        text = f"{server}:{params.get('name')} got {json.dumps(params.get('arguments'))}"
        return {"jsonrpc": "2.0", "id": ident,
                "result": {"content": [{"type": "text", "text": text}]}}
    return {"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": "no method"}}


def environment(server: ScriptedServer, home: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "TERM": "dumb",
        "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "sk-test",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1", "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "WISP_CONFIG_DIR": str(home / ".wisp"), "CLAUDE_CODE_MAX_RETRIES": "1",
        "WISP_RETRY_BASE_DELAY_MS": "10", "IS_SANDBOX": "1",
        "PYTHONPATH": str(ROOT / "src"),
    }


async def drive(cli: list[str], scenario: Scenario, *, timeout: float = 60,
                check: Callable[[JSON], None] | None = None) -> Run:
    """Runs `scenario` against `cli`. `check` sees every stdout frame (the wire schema).
    The scenario's folders are removed afterwards (`Run.work` only names where it ran)."""
    tmp = Path(tempfile.mkdtemp(prefix=f"parity-{scenario.name}-"))
    try:
        return await _drive_in(cli, scenario, tmp, timeout, check)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


async def _drive_in(cli: list[str], scenario: Scenario, tmp: Path, timeout: float,
                    check: Callable[[JSON], None] | None) -> Run:
    home, work = tmp / "home", tmp / "work"
    home.mkdir()
    work.mkdir()
    for name, text in scenario.files.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text)
    if scenario.settings is not None:
        (work / ".claude").mkdir()
        (work / ".claude" / "settings.json").write_text(json.dumps(scenario.settings))
        # Trusted, in the record both CLIs read: an untrusted folder's hooks do not run
        # in wisp (the reference runs them in print and stream-json modes).
        record(work, {"HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude")},
               hasTrustDialogAccepted=True)
    with ScriptedServer(*scenario.replies, default=reply.text("default reply")) as server:
        proc = await asyncio.create_subprocess_exec(
            *cli, *DUPLEX, *scenario.args, cwd=work, env=environment(server, home),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, limit=1 << 24)
        host = _Host(proc, scenario, check)
        try:
            await asyncio.wait_for(host.play(), timeout)
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
            await host.close()
        requests = [r.body for r in server.requests
                    if isinstance(r.body, dict) and "messages" in r.body
                    and r.body.get("stream")]
    return Run(host.log, requests, proc.returncode, host.stderr, work)


class _Host:
    def __init__(self, proc: asyncio.subprocess.Process, scenario: Scenario,
                 check: Callable[[JSON], None] | None) -> None:
        self.proc = proc
        self.scenario = scenario
        self.check = check
        self.log: list[JSON] = []
        self.results = 0
        self.answered: set[str] = set()
        self.calls: dict[str, int] = {}
        self.changed = asyncio.Condition()
        self.stderr = ""
        self._started = time.monotonic()
        self._reader = asyncio.ensure_future(self._read())
        self._errors = asyncio.ensure_future(self._read_stderr())

    def _write(self, frame: JSON) -> None:
        assert self.proc.stdin is not None
        if self.proc.stdin.is_closing():
            return  # a request after our EOF: the CLI fails it on its own
        self.log.append({"dir": "in", "t": self._now(), "frame": frame})
        self.proc.stdin.write((json.dumps(frame) + "\n").encode())

    def _now(self) -> float:
        return round(time.monotonic() - self._started, 3)

    async def play(self) -> None:
        assert self.proc.stdin is not None
        for step in self.scenario.steps:
            if step.send is not None:
                self._write(step.send)
                await self.proc.stdin.drain()
            if step.sleep:
                await asyncio.sleep(step.sleep)
            async with self.changed:
                await self.changed.wait_for(lambda step=step: self._reached(step))
        self.proc.stdin.close()
        await self.proc.wait()

    def _reached(self, step: Step) -> bool:
        return ((step.results is None or self.results >= step.results)
                and (step.response is None or step.response in self.answered))

    async def close(self) -> None:
        await self._reader
        await self._errors

    async def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        self.stderr = (await self.proc.stderr.read()).decode("utf-8", "replace")

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            if not line.startswith(b"{"):
                continue
            frame = json.loads(line)
            if self.check is not None:
                self.check(frame)
            self.log.append({"dir": "out", "t": self._now(), "frame": frame})
            if frame.get("type") == "control_request":
                self._answer(frame)
            async with self.changed:
                if frame.get("type") == "result":
                    self.results += 1
                elif frame.get("type") == "control_response":
                    self.answered.add(str(frame["response"].get("request_id")))
                self.changed.notify_all()

    def _answer(self, frame: JSON) -> None:
        request = frame["request"]
        kind = request.get("subtype")
        body: JSON
        if kind == "hook_callback":
            callback = str(request.get("callback_id"))
            self.calls[callback] = self.calls.get(callback, 0) + 1
            answer = self.scenario.hooks.get(callback, {})
            body = answer(request["input"], self.calls[callback]) if callable(answer) else answer
        elif kind == "mcp_message":
            body = {"mcp_response": mcp_answer(str(request.get("server_name")),
                                               request.get("message") or {},
                                               self.scenario.sdk_tools)}
        elif kind == "can_use_tool":
            body = {"behavior": "allow", "updatedInput": request.get("input")}
        else:
            return
        self._write({"type": "control_response", "response": {
            "subtype": "success", "request_id": frame["request_id"], "response": body}})
