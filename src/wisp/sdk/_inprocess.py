"""The in-process link: a wisp duplex session in the caller's event loop.

The session is the one `wisp --input-format stream-json` runs, built from the same flags
(parsed by wisp's own parser) and speaking the same frames, but as dicts in memory: no
process, no JSON, no line limit. Requests the session makes of its host
(`can_use_tool`, `hook_callback`, `mcp_message`) are direct calls to the SDK's answer.

Per session, never per process: the environment is a dict (os.environ is never written),
the working folder is a path (no os.chdir), and the tools' processes belong to the
session's registry, killed when it closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import marshal
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wisp.diagnostics import route_to
from wisp.errors import RequestFailed
from wisp.jsontypes import JSON
from wisp.sdk._host import Answer
from wisp.sdk._launch import Launch

if TYPE_CHECKING:
    from wisp.control.stdin import Line
    from wisp.duplex.server import DuplexServer
    from wisp.wire.protocol import OutboundRequest

STDERR_TAIL_LINES = 50  # kept for a ProcessError's text
_FRESH_SUBTYPES = frozenset({"init", "session_state_changed"})


def detached(frame: JSON) -> JSON:
    """A deep copy of a frame. Frames share objects with the session's history; the caller
    gets its own, as it would from a pipe. `marshal` copies plain JSON data in C, several
    times faster than a Python walk; anything else takes the walk."""
    try:
        copied: JSON = marshal.loads(marshal.dumps(frame))
    except ValueError:  # not plain data (a tuple, an object)
        return _walked(frame)  # type: ignore[no-any-return]
    return copied


def _walked(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _walked(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_walked(v) for v in value]
    return value


class DirectHost:
    """Answers the session's host requests by calling the SDK, not by sending frames."""

    def __init__(self, answer: Answer) -> None:
        self._answer = answer

    async def request(self, payload: OutboundRequest, timeout: float | None = None) -> JSON:
        try:
            return await asyncio.wait_for(self._answer(dict(payload)), timeout)
        except (TimeoutError, asyncio.CancelledError):
            raise
        except Exception as exc:  # the caller's callback failed: the session decides
            raise RequestFailed(str(exc) or type(exc).__name__) from exc


class InputQueue:
    """The session's input: the SDK puts lines here instead of stdin. `reading` once the
    session reads it (its control handlers are registered by then)."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[Line | None] = asyncio.Queue()
        self.reading = False

    def start(self) -> None:
        self.reading = True


class InProcessLink:
    def __init__(self, launch: Launch, cwd: str, answer: Answer,
                 stderr: Callable[[str], None] | None) -> None:
        self.launch = launch
        self.cwd = cwd
        self.answer = answer
        self.stderr = stderr
        self.input = InputQueue()
        self.server: DuplexServer | None = None
        self._out: asyncio.Queue[JSON | None] = asyncio.Queue()
        self._lines = 0
        self._serving: asyncio.Task[None] | None = None
        self._context: contextvars.Context | None = None  # the session task's, for receive
        self._exit_code = 0
        self._errors: list[str] = []

    async def start(self) -> None:
        self._serving = asyncio.ensure_future(self._serve())

    def _build(self) -> DuplexServer:
        from wisp.duplex.server import DuplexServer
        from wisp.launch.argv import parse_argv
        from wisp.launch.options import build_options, validate
        from wisp.launch.startup import load_settings_for

        args = parse_argv(self.launch.args)
        if args.unsupported:
            from wisp.launch.unsupported import warning

            self._warn(warning(args.unsupported))
        opts = build_options(args, None).in_folder(Path(self.cwd).resolve())
        env = self.launch.env
        validate(opts, env)
        settings = load_settings_for(opts, env)
        return DuplexServer(opts, env, settings, sink=self, host=DirectHost(self.answer))

    async def _serve(self) -> None:
        from wisp.errors import UsageError
        from wisp.sessions.resume import SessionNotFound

        # What the session says to a human (warnings, errors) goes to this host's `stderr`
        # callback, as a CLI's stderr would: this task and the tasks it starts.
        route_to(self._diagnostic)
        self._context = contextvars.copy_context()
        try:
            self.server = self._build()
            self._exit_code = await self.server.serve(reader=self.input)
        except SessionNotFound as exc:
            from wisp.wire.frames import start_failed

            self.write(start_failed(str(exc), exc.session_id))  # as the CLI's stream-json
            self._fail(str(exc))
        except UsageError as exc:
            from wisp.launch.argv import usage_report

            self._fail(usage_report(exc))
        finally:
            if self.server is not None:
                with contextlib.suppress(Exception):
                    await self.server.runtime.aclose()
            self._out.put_nowait(None)

    def _fail(self, message: str) -> None:
        self._warn(message)
        self._exit_code = 1

    def _diagnostic(self, text: str) -> None:
        for line in text.splitlines():
            self._warn(line)

    def _warn(self, message: str) -> None:
        self._errors.append(message)
        del self._errors[:-STDERR_TAIL_LINES]
        if self.stderr is None:
            sys.stderr.write(message + "\n")  # no callback: where a CLI's stderr would go
            return
        with contextlib.suppress(Exception):  # the caller's logger must not end the session
            self.stderr(message)

    # FrameSink: the session's output.
    def write(self, frame: JSON) -> None:
        # Two frames are built afresh every time and share nothing with the session; the
        # rest (messages, results, stream events, control answers) are copied.
        fresh = frame.get("type") == "system" and frame.get("subtype") in _FRESH_SUBTYPES
        self._out.put_nowait(frame if fresh else detached(frame))

    async def send(self, frame: JSON) -> None:
        from wisp.control.stdin import Line
        from wisp.wire.protocol import stdin_frame

        self._lines += 1
        line = Line(self._lines, frame, None, 0, stdin_frame(frame))
        server, context = self.server, self._context
        if server is not None and context is not None and self.input.reading \
                and self.input.queue.empty():
            # Nothing queued ahead: handled at once, as the session's read loop would, in
            # the session's context (its diagnostics sink), saving a trip through the loop.
            context.run(server.receive, line)
            return
        self.input.queue.put_nowait(line)

    async def end_input(self) -> None:
        self.input.queue.put_nowait(None)

    async def frames(self) -> AsyncIterator[JSON]:
        while (frame := await self._out.get()) is not None:
            yield frame

    async def wait(self) -> int:
        if self._serving is not None:
            await asyncio.shield(self._serving)
        return self._exit_code

    def stderr_text(self) -> str:
        return "\n".join(self._errors)

    async def close(self, force: bool) -> None:
        """Interrupts a running turn (its processes die), ends the input, and waits for
        the session to wind down: SessionEnd hooks, MCP servers closed, transcript
        complete. A cancelled caller does not wait for queued prompts."""
        serving = self._serving
        if serving is None or serving.done():
            return
        server = self.server
        if server is not None and (force or server.turns.busy):
            server.interrupt(cancel_queued=True)
        await self.end_input()
        try:
            await asyncio.wait_for(asyncio.shield(serving), 10)
        except TimeoutError:
            serving.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await serving
