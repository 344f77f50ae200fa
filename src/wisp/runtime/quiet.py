"""`Runtime.run_until_quiet`: a prompt's turn, then each turn the background work wakes.

Background tasks (subagents and Bash commands started in the background,
`wisp.engine.tasks`) can end after the turn that started them; each end that wants a turn
wakes one of its own, whose prompt is the task's notice (`Runtime.run_notifications`). A
front end that runs one prompt to the end of all it started (print mode) or that shows
those turns as they come (`wisp acp`) asks for them here instead of driving the task
registry itself.

Why an async iterator rather than a callback: the caller's work between turns (print
mode shows or holds the earlier turn's result) is plainly the body of its `async for`,
and it runs before the wait for the next turn, as it must; a caller can also take the
first turn alone (ACP answers `session/prompt` with it) and leave the rest to a task of
its own, or stop early, which a callback would need a second channel to say.

Interrupts: `Runtime.interrupt` (and so `hard_interrupt` and `aclose`) ends the loop: a
running turn ends as interrupted and no further turn is run; a wait for background work
ends at once. Limits (max turns, the spending budget) apply to each turn as the engine
applies them to any turn; a turn that hits one does not end the loop (print mode never
did: the background work it started still wants its turns). A background task that never
ends is not waited for forever: each command has its time limit (`wisp.engine.tasks`), the
wait is only for tasks still running, and an interrupt ends it.

Turns are run one at a time among these calls: a new call ends an earlier one's wait for
background work (its prompt's turn takes the pending notices at its first model call) and
waits for a woken turn the earlier one is running.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable
from typing import TYPE_CHECKING

from wisp.jsontypes import JSON
from wisp.values import Value

if TYPE_CHECKING:
    from wisp.engine.outcome import Outcome
    from wisp.engine.tasks import TaskRegistry

Announce = Callable[[], None]


class QuietTurn(Value):
    """One turn of `run_until_quiet`, as it ended."""

    outcome: Outcome
    woken: bool  # a background task's end started it, not the prompt
    # Background work is left (a task still running, or a notice owed): another turn may
    # follow. Print mode holds this turn's result back as an earlier one's.
    more: bool
    # A background subagent still runs (its end will want a turn).
    agents_running: bool


class QuietTurns:
    """A base class of `Runtime`, through `RuntimeTurns` (its turn machinery, `turns.py`)."""

    _quiet_stop: asyncio.Event | None = None  # the latest call's: set when it must end
    _quiet_lock: asyncio.Lock | None = None  # one turn at a time among the calls

    if TYPE_CHECKING:  # what `RuntimeTurns` gives
        @property
        def tasks(self) -> TaskRegistry: ...

        async def run_prompt(self, content: str | list[JSON], *, uuid: str | None = None,
                             announce: Announce | None = None) -> Outcome: ...

        async def run_notifications(self, *, announce: Announce | None = None
                                    ) -> Outcome | None: ...

    async def run_until_quiet(self, content: str | list[JSON], *,
                              uuid: str | None = None, announce: Announce | None = None,
                              announce_woken: Announce | None = None
                              ) -> AsyncGenerator[QuietTurn, None]:
        """Runs the prompt (`run_prompt`, with `uuid` and `announce`), yields its turn,
        then, while background work is left, waits for a task's end that wants a turn,
        runs that turn (`run_notifications`, with `announce_woken`) and yields it; ends
        when no task runs and no notice is owed, or on an interrupt (see module doc)."""
        stop = self._quiet_begin()
        lock = self._quiet_lock
        assert lock is not None
        async with lock:
            outcome: Outcome | None = await self.run_prompt(content, uuid=uuid,
                                                            announce=announce)
        woken = False
        while outcome is not None:
            more = self._quiet_more(stop)
            yield QuietTurn(outcome, woken, more, more and self.tasks.agents_busy())
            if not more:
                return
            outcome, woken = None, True
            while outcome is None:  # None: the notices went to a turn meanwhile
                if not await self._quiet_wait(stop):
                    return  # stopped rather than finished: no turn is owed
                async with lock:
                    if stop.is_set():
                        return
                    outcome = await self.run_notifications(announce=announce_woken)

    def _quiet_begin(self) -> asyncio.Event:
        if self._quiet_stop is not None:
            self._quiet_stop.set()  # an earlier call's wait ends: this one takes over
        if self._quiet_lock is None:
            self._quiet_lock = asyncio.Lock()
        stop = self._quiet_stop = asyncio.Event()
        return stop

    def _quiet_end(self) -> None:
        """An interrupt, or the session's end: the latest call runs no further turn."""
        if self._quiet_stop is not None:
            self._quiet_stop.set()

    def _quiet_more(self, stop: asyncio.Event) -> bool:
        tasks = self.tasks
        return not stop.is_set() and (tasks.has_wake() or tasks.busy())

    async def _quiet_wait(self, stop: asyncio.Event) -> bool:
        """True once a notice wants a turn; False when none can come any more (no
        background task runs) or the call was ended (`TaskRegistry.wait_for_wake`, which
        an interrupt could not end)."""
        tasks = self.tasks
        while not stop.is_set():
            if tasks.has_wake():
                return True
            if not tasks.busy():
                return False
            changed = asyncio.ensure_future(tasks.changed())
            ended = asyncio.ensure_future(stop.wait())
            try:
                await asyncio.wait({changed, ended}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                changed.cancel()
                ended.cancel()
        return False
