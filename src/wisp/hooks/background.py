"""Hooks that go on in the background, as the reference runs them: a command hook
configured `"async": true`, or one whose first stdout line is `{"async": true,
"asyncTimeout": <ms>}`. The event does not wait for it; when it ends (within its timeout,
else its process group is killed), its JSON answer is kept, and the engine hands the
model its `additionalContext` and the user its `systemMessage` before the next model
request (`wisp.engine.loop`). An SDK callback that answers `{"async": true}` has no later
answer on the wire: it is taken as no decision.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from wisp.jsontypes import JSON
from wisp.processes import kill_group
from wisp.processes.output import CappedText

DEFAULT_ASYNC_TIMEOUT_S = 15.0  # the reference's, when the answer names none


class AsyncAnswer:
    """Watches a hook's stdout lines (passing each on) for an async answer first."""

    def __init__(self, on_line: Callable[[str], None] | None) -> None:
        self._on_line = on_line
        self._first: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self.timeout_s = DEFAULT_ASYNC_TIMEOUT_S

    def line(self, text: str) -> None:
        if not self._first.done():
            self._first.set_result(text)
        if self._on_line is not None:
            self._on_line(text)

    async def first(self, io: asyncio.Future[Any], timeout_s: float) -> bool:
        """Whether the hook's first line says it goes async (False once it ended, or
        printed something else first, or nothing within `timeout_s`)."""
        done, _ = await asyncio.wait({self._first, io}, timeout=timeout_s,
                                     return_when=asyncio.FIRST_COMPLETED)
        if self._first not in done:
            return False
        answer = _json(self._first.result())
        if not isinstance(answer, dict) or answer.get("async") is not True:
            return False
        timeout = answer.get("asyncTimeout")
        if isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout > 0:
            self.timeout_s = timeout / 1000
        return not io.done()


async def finish_later(proc: asyncio.subprocess.Process, io: asyncio.Future[Any],
                       out: CappedText, timeout_s: float, command: str) -> JSON | None:
    """The background hook's answer once it ends: the JSON after its async line (or its
    whole stdout for a hook configured async); None when it says nothing usable, fails or
    runs out of time (then it is killed)."""
    try:
        await asyncio.wait_for(asyncio.shield(io), timeout_s)
        await proc.wait()
    except TimeoutError:
        return None
    finally:
        if proc.returncode is None:
            kill_group(proc.pid)
            await proc.wait()
        io.cancel()
    if proc.returncode != 0:
        return None
    text = "".join(s for s in out.segments() if isinstance(s, str))
    for candidate in _after_async_line(text):
        answer = _json(candidate)
        if isinstance(answer, dict):
            return answer
    return None


def _after_async_line(text: str) -> list[str]:
    head, _, rest = text.strip().partition("\n")
    answer = _json(head)
    if isinstance(answer, dict) and answer.get("async") is True:
        return [rest.strip()] if rest.strip() else []
    return [text.strip()]


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # nesting deeper than the parser goes: not ours
        return None


class BackgroundHooks:
    """The session's background hooks, and the answers of those that ended."""

    def __init__(self) -> None:
        self._running: set[asyncio.Task[None]] = set()
        self._answers: list[tuple[str, JSON]] = []

    def adopt(self, done: Awaitable[JSON | None], name: str) -> None:
        async def keep() -> None:
            answer = await done
            if answer:
                self._answers.append((name, answer))

        task = asyncio.ensure_future(keep())
        self._running.add(task)
        task.add_done_callback(self._running.discard)

    def take(self) -> list[tuple[str, JSON]]:
        """(hook name, answer) of each that ended since the last call."""
        taken, self._answers = self._answers, []
        return taken

    async def aclose(self) -> None:
        """The session ends: background hooks still running are killed (their process
        groups), their answers dropped."""
        running = set(self._running)
        for task in running:
            task.cancel()
        if running:
            await asyncio.wait(running)
