"""One SDK session: the control protocol, spoken over a link to an agent.

A link carries stream-json frames (as dicts) both ways: to a `wisp` or reference CLI
process (`_subprocess`), or to a duplex session running in this event loop
(`_inprocess`). Everything the SDK does on top is here, once, for both: the `initialize`
handshake, requests to the agent (interrupt, set_model, …) matched by request id, the
agent's requests to us (`can_use_tool`, `hook_callback`, `mcp_message`) answered by the
caller's Python callbacks, the message stream, and the end of a run.

The in-process link calls `answer` directly instead of sending those requests as frames,
so a tool function, hook or permission callback is a plain Python call. What a link must
do is `wisp.sdk.transport.Link`; what the `initialize` request carries, `_handshake`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncGenerator, AsyncIterable, Awaitable
from pathlib import Path
from typing import Any

from wisp import paths
from wisp.jsontypes import JSON
from wisp.sdk._handshake import OpeningHandshake, initialize_timeout
from wisp.sdk._host import HostAnswers
from wisp.sdk._launch import Launch, plan_launch
from wisp.sdk._parse import parse_message
from wisp.sdk._store_mirror import StoreMirror, discard, materialize
from wisp.sdk.errors import (
    ClaudeSDKError,
    CLIConnectionError,
    ProcessError,
    ResultError,
    result_error_text,
)
from wisp.sdk.transport import Link, TransportLink
from wisp.sdk.types import (
    Message,
)

END = object()  # the message stream is over


class Conversation(OpeningHandshake):
    def __init__(self, options: Any, transport: Any = None) -> None:
        if options.can_use_tool is not None and options.permission_prompt_tool_name:
            raise ValueError(
                "can_use_tool callback cannot be used with permission_prompt_tool_name. "
                "Please use one or the other.")
        self.options = options
        self.launch: Launch = plan_launch(options)
        self.host = HostAnswers(options)
        self.answer = self.host.answer
        self.server_info: JSON | None = None
        self.link: Link = self._make_link() if transport is None else TransportLink(transport)
        self._messages: asyncio.Queue[Any] = asyncio.Queue()
        self._pending: dict[str, asyncio.Future[JSON]] = {}
        self._answering: dict[str, asyncio.Task[None]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._reader: asyncio.Task[None] | None = None
        self._counter = 0
        self._session_state: str | None = None
        self._last_error_result: JSON | None = None
        self._run_ended = asyncio.Event()
        self._run_ended.set()  # nothing asked yet
        self._closed = False
        self.mirror: StoreMirror | None = None  # options.session_store
        self._store_config: Path | None = None  # a resume's copy of the store's session

    def _make_link(self) -> Link:
        cwd = str(self.options.cwd) if self.options.cwd is not None else os.getcwd()
        if self.options.cli_path is None:
            from wisp.sdk._inprocess import InProcessLink

            return InProcessLink(self.launch, cwd, self.answer, self.options.stderr)
        from wisp.sdk._subprocess import SubprocessLink

        return SubprocessLink(str(self.options.cli_path), self.launch, cwd,
                              self.options.stderr)

    @property
    def idle(self) -> bool:
        """No run is owed: every prompt written has had its run end."""
        return self._run_ended.is_set()

    @property
    def bidirectional(self) -> bool:
        """Whether the agent may still ask us something: then its input stays open until
        the run is over (a closed input would fail those requests)."""
        return self.host.needed

    # Opening -------------------------------------------------------------------------

    async def open(self) -> JSON:
        if self.options.cwd is not None and not os.path.isdir(self.options.cwd):
            raise CLIConnectionError(f"Working directory does not exist: {self.options.cwd}")
        if self.options.session_store is not None:
            await self._use_store(self.options.session_store)
        await self.link.start()
        self._reader = asyncio.ensure_future(self._read())
        answer = await self.request(self._initialize_request(),
                                    initialize_timeout(self.launch.env))
        self._check_hook_failure_support(answer)
        self.server_info = answer
        return answer

    async def _use_store(self, store: Any) -> None:
        """Mirror into the store; resume from it (a temporary config folder the agent
        reads, holding what the store has of the session)."""
        options = self.options
        if options.resume or options.continue_conversation:
            cwd = str(options.cwd) if options.cwd is not None else os.getcwd()
            found = await materialize(store, os.path.realpath(cwd), options.resume)
            if found is not None:
                self._store_config = found[0]
                self.launch.env["CLAUDE_CONFIG_DIR"] = str(found[0])
        projects = paths.config_dir(self.launch.env) / "projects"
        self.mirror = StoreMirror(store, projects, options.session_store_flush == "eager",
                                  options.stderr)

    # Requests to the agent -----------------------------------------------------------

    async def request(self, body: JSON, timeout: float | None = 60.0) -> JSON:
        if self._closed:
            raise CLIConnectionError("Not connected: the session is closed.")
        self._counter += 1
        request_id = f"req_{self._counter}_{os.urandom(4).hex()}"
        future: asyncio.Future[JSON] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            await self.link.send(
                {"type": "control_request", "request_id": request_id, "request": body})
            return await asyncio.wait_for(future, timeout)
        except TimeoutError:
            raise ClaudeSDKError(f"Control request timeout: {body.get('subtype')}") from None
        finally:
            self._pending.pop(request_id, None)

    async def send_user(self, content: Any, session_id: str) -> None:
        await self.send_message({"type": "user", "message": {"role": "user", "content": content},
                                 "parent_tool_use_id": None, "session_id": session_id})

    async def send_message(self, message: JSON) -> None:
        if self.options.verbatim_prompts:
            message = {**message, "client_composed": True}
        self._run_ended.clear()  # this prompt owes a run of its own
        await self.link.send(message)

    async def stream_input(self, stream: AsyncIterable[JSON], end: bool = True) -> None:
        """Writes the caller's messages; with `end`, closes the input once the last run is
        over (or at once when nothing was written)."""
        written = 0
        try:
            async for message in stream:
                if self._closed:
                    return
                await self.send_message(message)
                written += 1
        except Exception as exc:  # the caller's iterable failed: don't leave input open
            self._report(f"wisp.sdk: the prompt stream failed: {exc!r}\n")
        if end:
            await self.finish_input(wait=written > 0)

    async def finish_input(self, wait: bool = True) -> None:
        if wait and self.bidirectional:
            await self._run_ended.wait()
        with contextlib.suppress(Exception):
            await self.link.end_input()

    def spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # Requests from the agent ---------------------------------------------------------

    def _answer_in_background(self, frame: JSON) -> None:
        request_id = str(frame.get("request_id"))
        request = frame.get("request")

        async def reply() -> None:
            try:
                if not isinstance(request, dict):
                    raise ClaudeSDKError("control_request has no request object")
                body = await self.answer(request)
                response: JSON = {"subtype": "success", "request_id": request_id,
                                  "response": body}
            except asyncio.CancelledError:
                return  # withdrawn by the agent: no answer is owed
            except Exception as exc:
                response = {"subtype": "error", "request_id": request_id, "error": str(exc)}
            with contextlib.suppress(Exception):
                await self.link.send({"type": "control_response", "response": response})

        task = asyncio.ensure_future(reply())
        self._answering[request_id] = task
        task.add_done_callback(lambda _t: self._answering.pop(request_id, None))

    # Reading -------------------------------------------------------------------------

    async def _read(self) -> None:
        try:
            async for frame in self.link.frames():
                self._route(frame)
            code = await self.link.wait()
            if code != 0 and not self._closed:
                raise ProcessError(f"Command failed with exit code {code}", exit_code=code,
                                   stderr=self.link.stderr_text()
                                   or "Check stderr output for details")
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self._fail(self._typed_error(exc))
        finally:
            self._run_ended.set()
            self._messages.put_nowait(END)

    def _typed_error(self, exc: Exception) -> Exception:
        """An exit that follows an error result is that result's failure (ResultError)."""
        result = self._last_error_result
        if isinstance(exc, ProcessError) and result is not None:
            text = result_error_text(result)
            error = ResultError(f"Claude Code returned an error result: {text}",
                                data=result, exit_code=exc.exit_code)
            error.__cause__ = exc
            return error
        return exc

    def _fail(self, error: Exception) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(error)
        self._messages.put_nowait(error)

    def _route(self, frame: JSON) -> None:
        kind = frame.get("type")
        if kind == "control_response":
            self._settle(frame.get("response"))
        elif kind == "control_request":
            if not self._closed:
                self._answer_in_background(frame)
        elif kind == "control_cancel_request":
            task = self._answering.pop(str(frame.get("request_id")), None)
            if task is not None:
                task.cancel()
        elif kind == "transcript_mirror":  # for the store only, never a message
            self._mirror(frame)
        elif kind == "system" and frame.get("subtype") == "session_state_changed":
            self._on_state(frame.get("state"))
            if frame.get("sdk_host_only") is not True:
                self._messages.put_nowait(frame)
        else:
            self._on_message(kind, frame)

    def _mirror(self, frame: JSON) -> None:
        if self.mirror is not None:
            self.mirror.enqueue(frame.get("filePath"), frame.get("entries"))
            if self.mirror.eager:
                self.spawn(self.mirror.flush())

    def _settle(self, response: Any) -> None:
        if not isinstance(response, dict):
            return
        future = self._pending.get(str(response.get("request_id")))
        if future is None or future.done():
            return
        if response.get("subtype") == "error":
            future.set_exception(ClaudeSDKError(str(response.get("error") or "Unknown error")))
        else:
            body = response.get("response")
            future.set_result(body if isinstance(body, dict) else {})

    def _on_state(self, state: Any) -> None:
        self._session_state = state if isinstance(state, str) else None
        if state == "idle":
            self._run_ended.set()

    def _on_message(self, kind: object, frame: JSON) -> None:
        if kind in ("assistant", "user", "stream_event"):
            self._last_error_result = None  # the conversation moved on
        elif kind == "result":
            self._last_error_result = frame if frame.get("is_error") else None
            # An agent that reports session state ends the run with "idle"; one that
            # doesn't ends it with the result.
            if self._session_state in (None, "idle") or not self.bidirectional:
                self._run_ended.set()
        self._messages.put_nowait(frame)

    async def messages(self) -> AsyncGenerator[Message, None]:
        """Typed messages until the agent ends; its failure is raised after the last one."""
        while True:
            item = await self._messages.get()
            if item is END:
                self._messages.put_nowait(END)  # later readers end too
                return
            if isinstance(item, BaseException):
                raise item
            if self.mirror is not None and item.get("type") == "result":
                await self.mirror.flush()  # the turn's lines are in the store before its end
            message = parse_message(item)
            if message is not None:
                yield message

    # Closing -------------------------------------------------------------------------

    async def close(self, force: bool = False) -> None:
        """Ends the session: our tasks stop, the agent's input closes, and the agent (a
        process and everything it started, or the in-process runtime) is gone when this
        returns. `force` (a cancelled consumer) stops a running turn at once."""
        if self._closed:
            return
        self._closed = True
        for task in [*self._tasks, *self._answering.values()]:
            task.cancel()
        try:
            await asyncio.shield(self.link.close(force))
            if self.mirror is not None:
                await self.mirror.flush()
        finally:
            if self._store_config is not None:
                discard(self._store_config)
            for path in self.launch.temp_files:
                with contextlib.suppress(OSError):
                    path.unlink()
            if self._reader is not None and not self._reader.done():
                self._reader.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await self._reader

    def _report(self, text: str) -> None:
        if self.options.stderr is not None:
            self.options.stderr(text.rstrip("\n"))
