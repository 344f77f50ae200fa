"""Drives a real `wisp` duplex process over pipes, as an SDK would, without an SDK.

A reader thread collects every stdout frame; tests wait on conditions with deadlines
(`wait_for`) instead of sleeping, and answer wisp's own control requests as a host would.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import Runner, wisp_command
from tests.frame_check import check_frame

JSON = dict[str, Any]
DUPLEX_ARGS = ("--output-format", "stream-json", "--verbose", "--input-format", "stream-json")


class Duplex:
    def __init__(
        self,
        runner: Runner,
        *args: str,
        env: dict[str, str] | None = None,
        duplex_args: tuple[str, ...] = DUPLEX_ARGS,
        prefix: tuple[str, ...] = (),  # e.g. setpriv's argv, to run wisp as another user
    ) -> None:
        self.proc = subprocess.Popen(
            [*prefix, *wisp_command(), *duplex_args, *args],
            cwd=runner.cwd,
            env={**runner.env, **(env or {})},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.frames: list[JSON] = []
        self.raw_lines: list[str] = []
        self.stderr = ""
        self.schema_errors: list[str] = []
        self._cond = threading.Condition()
        self._eof = False
        self._out = threading.Thread(target=self._read_stdout, daemon=True)
        self._err = threading.Thread(target=self._read_stderr, daemon=True)
        self._out.start()
        self._err.start()
        self._next_id = 0

    # Reading -----------------------------------------------------------------------------

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            line = raw.decode("utf-8")
            with self._cond:
                self.raw_lines.append(line)
                if line.startswith("{"):
                    frame = json.loads(line)  # a bad line fails the test here
                    try:
                        check_frame(frame)
                    except AssertionError as exc:  # raised in the test thread by kill()
                        self.schema_errors.append(str(exc))
                    self.frames.append(frame)
                self._cond.notify_all()
        with self._cond:
            self._eof = True
            self._cond.notify_all()

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        self.stderr = self.proc.stderr.read().decode("utf-8", "replace")

    def wait_for(
        self, predicate: Callable[[list[JSON]], Any], timeout: float = 15.0, what: str = "condition"
    ) -> Any:
        """Waits until `predicate(frames)` is truthy and returns its value."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                value = predicate(list(self.frames))
                if value:
                    return value
                left = deadline - time.monotonic()
                if left <= 0 or (self._eof and not value):
                    kinds = [_kind(f) for f in self.frames]
                    raise AssertionError(
                        f"timed out waiting for {what}; frames: {kinds}; "
                        f"stderr: {self.stderr[-2000:]}"
                    )
                self._cond.wait(left)

    def wait_frame(
        self,
        kind: str,
        subtype: str | None = None,
        count: int = 1,
        timeout: float = 15.0,
        **fields: Any,
    ) -> JSON:
        """The `count`-th frame of this type (and subtype, and field values)."""

        def found(frames: list[JSON]) -> JSON | None:
            hits = [f for f in frames if matches(f, kind, subtype, **fields)]
            return hits[count - 1] if len(hits) >= count else None

        label = f"{count}× {kind}/{subtype or '*'} {fields or ''}"
        frame: JSON = self.wait_for(found, timeout, label)
        return frame

    def of(self, kind: str, subtype: str | None = None, **fields: Any) -> list[JSON]:
        with self._cond:
            return [f for f in self.frames if matches(f, kind, subtype, **fields)]

    def results(self) -> list[JSON]:
        return self.of("result")

    # Writing -----------------------------------------------------------------------------

    def send(self, frame: JSON | str) -> None:
        assert self.proc.stdin is not None
        line = frame if isinstance(frame, str) else json.dumps(frame)
        self.proc.stdin.write(line.encode("utf-8") + b"\n")
        self.proc.stdin.flush()

    def user(self, content: str | list[JSON]) -> None:
        self.send(
            {
                "type": "user",
                "session_id": "",
                "parent_tool_use_id": None,
                "message": {"role": "user", "content": content},
            }
        )

    def request(self, subtype: str, **fields: Any) -> str:
        self._next_id += 1
        request_id = f"req_{self._next_id}"
        self.send(
            {
                "type": "control_request",
                "request_id": request_id,
                "request": {"subtype": subtype, **fields},
            }
        )
        return request_id

    def response_to(self, request_id: str, timeout: float = 15.0) -> JSON:
        frame = self.wait_for(
            lambda frames: next(
                (
                    f
                    for f in frames
                    if f.get("type") == "control_response"
                    and f["response"].get("request_id") == request_id
                ),
                None,
            ),
            timeout,
            f"the response to {request_id}",
        )
        response: JSON = frame["response"]
        return response

    def call(self, subtype: str, timeout: float = 15.0, **fields: Any) -> JSON:
        return self.response_to(self.request(subtype, **fields), timeout)

    def initialize(self, **fields: Any) -> JSON:
        response = self.call("initialize", **{"hooks": None, **fields})
        assert response["subtype"] == "success", response
        return response

    def answer(self, request: JSON, body: JSON | None = None, error: str | None = None) -> None:
        """Answers one of wisp's control requests."""
        response: JSON = {"request_id": request["request_id"]}
        if error is not None:
            response.update(subtype="error", error=error)
        else:
            response.update(subtype="success", response=body or {})
        self.send({"type": "control_response", "response": response})

    def wait_request(self, subtype: str, count: int = 1, timeout: float = 15.0) -> JSON:
        def found(frames: list[JSON]) -> JSON | None:
            hits = [
                f
                for f in frames
                if f.get("type") == "control_request" and f["request"].get("subtype") == subtype
            ]
            return hits[count - 1] if len(hits) >= count else None

        frame: JSON = self.wait_for(found, timeout, f"{count}× control_request/{subtype}")
        return frame

    def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        if not self.proc.stdin.closed:
            with contextlib.suppress(BrokenPipeError):  # wisp may have exited already
                self.proc.stdin.close()

    def finish(self, timeout: float = 10.0) -> int:
        """Closes stdin and waits for the exit; returns the exit code."""
        self.close_stdin()
        code = self.proc.wait(timeout)
        self._out.join(timeout)
        self._err.join(timeout)
        return code

    def kill(self) -> None:
        """Teardown: stop the process, then fail the test if any frame broke the schema."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        assert not self.schema_errors, self.schema_errors[0]


def matches(frame: JSON, kind: str, subtype: str | None = None, **fields: Any) -> bool:
    if frame.get("type") != kind:
        return False
    if subtype is not None and frame.get("subtype") != subtype:
        return False
    return all(frame.get(k) == v for k, v in fields.items())


def _kind(frame: JSON) -> str:
    subtype = frame.get("subtype")
    if frame.get("type") in ("control_request", "control_response"):
        subtype = (frame.get("request") or frame.get("response") or {}).get("subtype")
    return f"{frame.get('type')}/{subtype}" if subtype else str(frame.get("type"))


def state_changes(frames: list[JSON]) -> list[str]:
    return [
        f["state"]
        for f in frames
        if f.get("type") == "system" and f.get("subtype") == "session_state_changed"
    ]


def texts_of(frame: JSON) -> list[str]:
    content = frame["message"]["content"]
    if isinstance(content, str):
        return [content]
    return [b.get("text", "") for b in content if b.get("type") == "text"]


def marker(path: Path) -> str:
    return f"touch {path}"
