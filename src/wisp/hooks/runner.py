"""Runs the hooks registered for an event and merges what they say.

Two kinds of hook share this runner and its merge rule (`HookOutcome.merge`):
shell commands from settings (event JSON on stdin; exit 2 blocks with stderr as the
reason; JSON on stdout is honoured) and SDK callbacks (a `hook_callback` control request
whose answer is the same JSON). A hook that fails or times out is reported (on stderr, and
as a `hook_response` event when hook events are on) and skipped, so it never ends the run;
unless its matcher said `onFailure: "block"`, when the failure blocks, as a denial would.
"""

from __future__ import annotations

import asyncio
import codecs
import json
import os
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from wisp.diagnostics import warn
from wisp.errors import ChannelClosed
from wisp.hooks.background import AsyncAnswer, BackgroundHooks, finish_later
from wisp.hooks.model import (
    CallbackHook,
    CommandHook,
    HookAction,
    HookEvent,
    HookMatcher,
    HookOutcome,
)
from wisp.jsonsafe import JSONTooDeep, loads_bounded
from wisp.jsontypes import JSON
from wisp.processes import kill_group
from wisp.processes.output import CappedText, clip
from wisp.stamps import new_uuid

# (callback_id, input, tool_use_id, timeout) → the hook's JSON answer
CallbackTransport = Callable[[str, JSON, str | None, float | None], Awaitable[JSON]]
Emit = Callable[[str, JSON], None]
# Hook output is read in chunks without a line limit. A JSON answer is parsed when stdout
# was kept whole (at least MAX_CAPTURE characters; past that only head and tail are held);
# what the model (and the transcript) sees of one hook, plain stdout or exit-2 stderr, is
# cut to MODEL_TEXT_LIMIT, head and tail kept.
MAX_CAPTURE = 1 << 20
MODEL_TEXT_LIMIT = 50_000
CHUNK = 1 << 16


class HookRunner:
    def __init__(self, matchers: list[HookMatcher] | None = None, *, cwd: str = ".",
                 callback: CallbackTransport | None = None, emit: Emit | None = None,
                 include_events: bool = False, env: Mapping[str, str] | None = None) -> None:
        self.matchers = list(matchers or [])
        self.cwd = cwd
        # The session's environment, which command hooks run with (None: this process's).
        self.env = env
        self.callback = callback
        self.emit = emit
        self.include_events = include_events
        self.background = BackgroundHooks()

    def add(self, matchers: list[HookMatcher]) -> None:
        self.matchers.extend(matchers)

    def has(self, event: HookEvent) -> bool:
        return any(m.event == event for m in self.matchers)

    async def run(self, event: HookEvent, payload: JSON, *, target: str | None = None,
                  tool_use_id: str | None = None) -> HookOutcome:
        outcome = HookOutcome()
        for matcher in self.matchers:
            if matcher.event != event or not matcher.matches(target):
                continue
            for action in matcher.actions:
                started = time.monotonic()
                output = await self._run_action(action, event, payload, tool_use_id,
                                                outcome.errors)
                outcome.ran.append({"command": _label(action),
                                    "duration_ms": round((time.monotonic() - started) * 1000)})
                if output is not None:
                    outcome.merge(output, event)
        return outcome

    async def _run_action(self, action: HookAction, event: HookEvent, payload: JSON,
                          tool_use_id: str | None, errors: list[str]) -> JSON | None:
        hook_id = new_uuid()
        name = f"{event}:{_label(action)}"
        self._event("hook_started", hook_id=hook_id, hook_name=name, hook_event=event)
        if isinstance(action, CallbackHook):
            output, report = await self._callback(action, payload, tool_use_id)
            # A host that is gone is no failure to report, but a guard that must block on
            # failure still blocks: nobody cleared the call.
            quiet = report["outcome"] == "skipped" and not action.blocks_on_failure
            if report["outcome"] != "success" and not quiet:
                output = self._failed(action, event, report)
        else:
            def progress(line: str) -> None:
                self._event("hook_progress", hook_id=hook_id, hook_name=name, hook_event=event,
                            stdout=line)

            try:
                output, report = await run_command_hook(
                    action, payload, self.cwd, progress, env=self.env,
                    on_background=lambda done: self.background.adopt(done, name))
            except OSError as exc:  # e.g. no /bin/sh: report it, never end the run
                output, report = None, {"outcome": "error", "error": str(exc)}
        self._event("hook_response", hook_id=hook_id, hook_name=name, hook_event=event,
                    **report)
        if report.get("outcome") in ("error", "timeout"):
            errors.append(f"{name}: {report.get('error') or report['outcome']}")
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
        except ChannelClosed:
            # The host is gone (a SessionEnd after the SDK closed stdin): nobody to ask,
            # and nothing to warn about.
            return None, {"outcome": "skipped", "error": "the SDK host has closed the session"}
        except Exception as exc:  # a failing host callback is reported, not fatal
            return None, {"outcome": "error", "error": str(exc)}
        return answer, {"outcome": "success", "output": json.dumps(answer)}

    def _failed(self, action: CallbackHook, event: HookEvent, report: JSON) -> JSON | None:
        """Reports a failed callback; with onFailure "block", its answer is a block."""
        why = report.get("error") or report["outcome"]
        reason = f"{event} hook {action.callback_id} failed: {why}"
        warn(f"wisp: {reason}\n")
        # A Stop hook's "block" would keep the run going: failing closed there is stopping.
        if not action.blocks_on_failure or event in ("Stop", "SubagentStop"):
            return None
        return {"decision": "block", "reason": reason,
                "hookSpecificOutput": {"hookEventName": event, "permissionDecision": "deny",
                                       "permissionDecisionReason": reason}}

    def _event(self, subtype: str, **fields: Any) -> None:
        if self.include_events and self.emit is not None:
            self.emit(subtype, fields)


def _label(action: HookAction) -> str:
    return action.callback_id if isinstance(action, CallbackHook) else action.command[:60]


async def run_command_hook(hook: CommandHook, payload: JSON, cwd: str,
                           on_progress: Callable[[str], None] | None = None, *,
                           env: Mapping[str, str] | None = None,
                           on_background: Callable[[Awaitable[JSON | None]], None] | None = None
                           ) -> tuple[JSON | None, JSON]:
    """Runs one shell hook. Returns (hook JSON output or None, report for hook_response).
    Each stdout line is also passed to `on_progress` as it arrives (hook_progress). A hook
    configured `async`, or whose first line is `{"async": true, "asyncTimeout": ms}`, is
    handed to `on_background` to finish (when given): it answers nothing now."""
    proc = await asyncio.create_subprocess_exec(
        "/bin/sh", "-c", hook.command, cwd=cwd, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, start_new_session=True,
        env={**(os.environ if env is None else env), "CLAUDE_PROJECT_DIR": cwd,
             "WISP_PROJECT_DIR": cwd})
    out, err = CappedText(MAX_CAPTURE // 2), CappedText(MODEL_TEXT_LIMIT)
    watch = AsyncAnswer(on_progress)
    io = asyncio.ensure_future(asyncio.gather(
        _feed(proc, payload), _drain(proc.stdout, out, _Lines(watch.line)),
        _drain(proc.stderr, err)))
    started = time.monotonic()
    if on_background is not None and (hook.background
                                      or await watch.first(io, hook.timeout_s)):
        # The hook goes on in the background: it must not hold the event up.
        timeout = hook.timeout_s if hook.background else watch.timeout_s
        on_background(finish_later(proc, io, out, timeout, hook.command))
        return None, {"outcome": "async", "exit_code": None, "stdout": _for_model(out)}
    try:
        left = hook.timeout_s - (time.monotonic() - started)
        await asyncio.wait_for(asyncio.shield(io), max(left, 0.001))
        await proc.wait()
    except TimeoutError:
        return None, {"outcome": "timeout", "exit_code": None, "stdout": _for_model(out),
                      "error": f"hook timed out after {hook.timeout_s:g}s"}
    finally:
        if proc.returncode is None:
            kill_group(proc.pid)
            await proc.wait()
        io.cancel()
    output, note = _interpret(proc.returncode, out, err, hook.command)
    report: JSON = {"exit_code": proc.returncode, "stdout": _for_model(out),
                    "stderr": _for_model(err),
                    "outcome": "success" if proc.returncode in (0, 2) else "error"}
    if note:
        warn(f"wisp: warning: hook {hook.command[:60]!r}: {note}\n")
        report["error"] = note
    return output, report


async def _feed(proc: asyncio.subprocess.Process, payload: JSON) -> None:
    assert proc.stdin is not None
    try:
        proc.stdin.write(json.dumps(payload).encode())
        await proc.stdin.drain()
        proc.stdin.close()
    except (BrokenPipeError, ConnectionResetError):
        pass  # a hook that never reads its input is fine


class _Lines:
    """Cuts a hook's stdout into hook_progress lines however long they are; a line past
    MODEL_TEXT_LIMIT keeps its head and tail (memory stays bounded without a newline)."""

    def __init__(self, emit: Callable[[str], None]) -> None:
        self._emit = emit
        self._line = CappedText(MODEL_TEXT_LIMIT // 2)

    def feed(self, text: str) -> None:
        *complete, rest = text.split("\n")
        for piece in complete:
            self._line.add(piece)
            self._flush()
        self._line.add(rest)

    def close(self) -> None:
        if self._line.total:
            self._flush()

    def _flush(self) -> None:
        self._emit(_for_model(self._line))
        self._line = CappedText(MODEL_TEXT_LIMIT // 2)


async def _drain(stream: asyncio.StreamReader | None, sink: CappedText,
                 lines: _Lines | None = None) -> None:
    """Reads a pipe to its end in chunks, not lines: `readline` raises on a line over 64 KiB,
    and a hook may print anything. Memory stays bounded by `sink`."""
    assert stream is not None
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    while True:
        chunk = await stream.read(CHUNK)
        text = decoder.decode(chunk, final=not chunk)
        sink.add(text)
        if lines is not None:
            lines.feed(text)
        if not chunk:
            break
    if lines is not None:
        lines.close()


def _for_model(text: CappedText) -> str:
    """At most MODEL_TEXT_LIMIT characters: head and tail, and how much was cut between."""
    return clip(text.segments(), MODEL_TEXT_LIMIT)[0]


def _whole(text: CappedText) -> str | None:
    """Everything the stream said, or None when it was too long to keep."""
    segments = text.segments()
    return segments[0] if len(segments) == 1 and isinstance(segments[0], str) else None


def _interpret(code: int | None, stdout: CappedText, stderr: CappedText, command: str
               ) -> tuple[JSON | None, str | None]:
    """The hook's answer as hook JSON, and a note when output that looks like JSON could
    not be used as such. Exit 2 blocks; the reason names the command, as the reference's
    does ("[command]: stderr")."""
    if code == 2:
        reason = f"[{command}]: {_for_model(stderr) or 'No stderr output'}"
        return {"decision": "block", "reason": reason,
                "hookSpecificOutput": {"permissionDecision": "deny",
                                       "permissionDecisionReason": reason}}, None
    return _answer(stdout) if code == 0 else (None, None)


def _answer(stdout: CappedText) -> tuple[JSON | None, str | None]:
    whole = _whole(stdout)
    text = (whole if whole is not None else _for_model(stdout)).strip()
    if not text.startswith("{"):
        return (_plain(stdout) if text else {}), None
    if whole is None:
        return None, f"JSON output over {MAX_CAPTURE} characters is not read"
    try:
        value = loads_bounded(text)
    except JSONTooDeep as exc:
        return _plain(stdout), f"output is not usable JSON ({exc}); read as plain text"
    except ValueError:
        return None, None  # malformed JSON is ignored, as it always was
    return (_capped_texts(value) if isinstance(value, dict) else None), None


def _plain(stdout: CappedText) -> JSON:
    # Plain stdout from a prompt hook is context for the model.
    return {"hookSpecificOutput": {"additionalContext": _for_model(stdout).strip()}}


# The texts of a JSON answer that reach the model (or the user), cut like plain output.
_TEXTS = ("reason", "systemMessage", "stopReason")
_SPECIFIC_TEXTS = ("additionalContext", "permissionDecisionReason")


def _capped_texts(output: JSON) -> JSON:
    capped = {k: _cap(v) if k in _TEXTS else v for k, v in output.items()}
    specific = output.get("hookSpecificOutput")
    if isinstance(specific, dict):
        capped["hookSpecificOutput"] = {
            k: _cap(v) if k in _SPECIFIC_TEXTS else v for k, v in specific.items()}
    return capped


def _cap(value: Any) -> Any:
    return clip([value], MODEL_TEXT_LIMIT)[0] if isinstance(value, str) else value
