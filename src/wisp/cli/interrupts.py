"""Print mode's SIGINT/SIGTERM handling: a first signal ends the run with a result, a
second one (or one that comes before the run has started) exits at once."""

from __future__ import annotations

import os
import signal
from typing import TYPE_CHECKING

from wisp.tools.reaper import end_all_processes

if TYPE_CHECKING:
    import asyncio

    from wisp.runtime.runtime import Runtime


class Interrupts:
    """SIGINT/SIGTERM: kill every tool's process group and end the run with a result.
    A second signal, or one before the run has started (MCP servers connecting), exits
    at once.

    Plain `signal.signal` handlers that hand the signal to the loop, installed before
    `asyncio.run` (which then leaves SIGINT to them): `loop.add_signal_handler` would
    cost the run `inspect` (~6 ms, see `wisp.cli.deferred_imports`) for its check that
    the callback is not a coroutine function."""

    def __init__(self) -> None:
        self.received: list[int] = []  # the signals received (false until one comes)
        self._runtime: Runtime | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._previous = {sig: signal.signal(sig, self._on_signal)
                          for sig in (signal.SIGINT, signal.SIGTERM)}

    def arm(self, runtime: Runtime) -> list[int]:
        """From now on a first signal interrupts `runtime` (on its loop, the running one)."""
        import asyncio

        self._runtime, self._loop = runtime, asyncio.get_running_loop()
        return self.received

    def restore(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)

    def _on_signal(self, sig: int, _frame: object) -> None:
        # Runs between two bytecodes of the main thread, maybe inside the loop's own
        # code: the loop is only asked to act, as asyncio's own SIGINT handler does.
        if self._loop is None or self._loop.is_closed():  # not started, or over
            self._exit()
        else:
            self._loop.call_soon_threadsafe(self._interrupt, sig)

    def _interrupt(self, sig: int) -> None:
        self.received.append(sig)
        assert self._runtime is not None
        running = self._runtime.hard_interrupt()
        if len(self.received) > 1 or not running:
            self._exit()

    @staticmethod
    def _exit() -> None:
        end_all_processes()
        os._exit(130)
