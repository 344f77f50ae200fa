"""Runs the hooks registered for an event and merges what they say.

Two kinds of hook share this runner and its merge rule (`HookOutcome.merge`):
shell commands from settings (event JSON on stdin; exit 2 blocks with stderr as the
reason; JSON on stdout is honoured) and SDK callbacks (a `hook_callback` control request
whose answer is the same JSON). A hook that fails or times out is reported and skipped:
it never ends the run.
"""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from wisp.hooks.model import CallbackHook, CommandHook, HookAction, HookMatcher, HookOutcome
from wisp.tools.processes import kill_group

JSON = dict[str, Any]
# (callback_id, input, tool_use_id, timeout) → the hook's JSON answer
CallbackTransport = Callable[[str, JSON, str | None, float | None], Awaitable[JSON]]
Emit = Callable[[str, JSON], None]
MAX_CAPTURE = 1 << 20


class HookRunner:
    def __init__(self, matchers: list[HookMatcher] | None = None, *, cwd: str = ".",
                 callback: CallbackTransport | None = None, emit: Emit | None = None,
                 include_events: bool = False) -> None:
        self.matchers = list(matchers or [])
        self.cwd = cwd
        self.callback = callback
        self.emit = emit
        self.include_events = include_events

    def add(self, matchers: list[HookMatcher]) -> None:
        self.matchers.extend(matchers)

    def has(self, event: str) -> bool:
        return any(m.event == event for m in self.matchers)

    async def run(self, event: str, payload: JSON, *, target: str | None = None,
                  tool_use_id: str | None = None) -> HookOutcome:
        outcome = HookOutcome()
        for matcher in self.matchers:
            if matcher.event != event or not matcher.matches(target):
                continue
            for action in matcher.actions:
                output = await self._run_action(action, event, payload, tool_use_id)
                if output is not None:
                    outcome.merge(output, event)
        return outcome

    async def _run_action(self, action: HookAction, event: str, payload: JSON,
                          tool_use_id: str | None) -> JSON | None:
        hook_id = str(uuid.uuid4())
        name = f"{event}:{_label(action)}"
        self._event("hook_started", hook_id=hook_id, hook_name=name, hook_event=event)
        if isinstance(action, CallbackHook):
            output, report = await self._callback(action, payload, tool_use_id)
        else:
            def progress(line: str) -> None:
                self._event("hook_progress", hook_id=hook_id, hook_name=name, hook_event=event,
                            stdout=line)

            try:
                output, report = await run_command_hook(action, payload, self.cwd, progress)
            except OSError as exc:  # e.g. no /bin/sh: report it, never end the run
                output, report = None, {"outcome": "error", "error": str(exc)}
        self._event("hook_response", hook_id=hook_id, hook_name=name, hook_event=event,
                    **report)
        return output

    async def _callback(self, action: CallbackHook, payload: JSON, tool_use_id: str | None
                        ) -> tuple[JSON | None, JSON]:
        if self.callback is None:
            return None, {"outcome": "error", "error": "no SDK host to call"}
        try:
            answer = await asyncio.wait_for(
                self.callback(action.callback_id, payload, tool_use_id, action.timeout_s),
                action.timeout_s)
        except TimeoutError:
            return None, {"outcome": "timeout"}
        except Exception as exc:  # a failing host callback is reported, not fatal
            return None, {"outcome": "error", "error": str(exc)}
        return answer, {"outcome": "success", "output": json.dumps(answer)}

    def _event(self, subtype: str, **fields: Any) -> None:
        if self.include_events and self.emit is not None:
            self.emit(subtype, fields)


def _label(action: HookAction) -> str:
    return action.callback_id if isinstance(action, CallbackHook) else action.command[:60]


async def run_command_hook(hook: CommandHook, payload: JSON, cwd: str,
                           on_progress: Callable[[str], None] | None = None
                           ) -> tuple[JSON | None, JSON]:
    """Runs one shell hook. Returns (hook JSON output or None, report for hook_response).
    Each stdout line is also passed to `on_progress` as it arrives (hook_progress)."""
    proc = await asyncio.create_subprocess_exec(
        "/bin/sh", "-c", hook.command, cwd=cwd, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, start_new_session=True,
        env={**os.environ, "CLAUDE_PROJECT_DIR": cwd, "WISP_PROJECT_DIR": cwd})
    out: list[str] = []
    try:
        _, _, err = await asyncio.wait_for(asyncio.gather(
            _feed(proc, payload), _read_stdout(proc, out, on_progress),
            _read_stderr(proc)), hook.timeout_s)
        await proc.wait()
    except TimeoutError:
        return None, {"outcome": "timeout", "exit_code": None, "stdout": "".join(out),
                      "error": f"hook timed out after {hook.timeout_s:g}s"}
    finally:
        if proc.returncode is None:
            kill_group(proc.pid)
            await proc.wait()
    stdout = "".join(out)
    report: JSON = {"exit_code": proc.returncode, "stdout": stdout, "stderr": err}
    return _interpret(proc.returncode, stdout, err), {
        **report, "outcome": "success" if proc.returncode in (0, 2) else "error"}


async def _feed(proc: asyncio.subprocess.Process, payload: JSON) -> None:
    assert proc.stdin is not None
    try:
        proc.stdin.write(json.dumps(payload).encode())
        await proc.stdin.drain()
        proc.stdin.close()
    except (BrokenPipeError, ConnectionResetError):
        pass  # a hook that never reads its input is fine


async def _read_stdout(proc: asyncio.subprocess.Process, out: list[str],
                       on_progress: Callable[[str], None] | None) -> None:
    assert proc.stdout is not None
    kept = 0
    while line := await proc.stdout.readline():
        text = line.decode("utf-8", "replace")
        if kept < MAX_CAPTURE:
            out.append(text)
            kept += len(text)
        if on_progress is not None:
            on_progress(text.rstrip("\n"))


async def _read_stderr(proc: asyncio.subprocess.Process) -> str:
    assert proc.stderr is not None
    data = await proc.stderr.read()
    return data[:MAX_CAPTURE].decode("utf-8", "replace")


def _interpret(code: int | None, stdout: str, stderr: str) -> JSON | None:
    if code == 2:
        return {"decision": "block", "reason": stderr.strip() or "Blocked by a hook",
                "hookSpecificOutput": {"permissionDecision": "deny",
                                       "permissionDecisionReason": stderr.strip()}}
    if code != 0:
        return None
    text = stdout.strip()
    if text.startswith("{"):
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            return None
        return value if isinstance(value, dict) else None
    if text:
        # Plain stdout from a prompt hook is context for the model.
        return {"hookSpecificOutput": {"additionalContext": text}}
    return {}
