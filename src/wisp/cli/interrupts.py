"""Signals for the CLI's asyncio front ends, without `loop.add_signal_handler`.

`add_signal_handler` checks that its callback is not a coroutine function, which loads
`inspect` (~5% of a `-p` run, see `wisp.cli.deferred_imports`). `LoopSignals` installs
plain `signal.signal` handlers before `asyncio.run` (which then leaves SIGINT to them,
too) and hands each signal to the running loop, as asyncio's own SIGINT handler does.
They go in before the loop starts: `signal.signal` turns the handler it replaces into
an enum member when it can, and for asyncio's handler the failed attempt formats the
task it holds, which loads `inspect` just the same.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, NoReturn

from wisp.tools.reaper import end_all_processes

if TYPE_CHECKING:
    import asyncio

    from wisp.runtime.runtime import Runtime

SignalCallback = Callable[[int], None]


class LoopSignals:
    """Handlers for `signals`: before `route()` (or once the loop has closed) a signal
    goes to `unrouted`, called in the handler itself; after it, to its route, called
    on the loop."""

    def __init__(self, signals: Iterable[int], unrouted: SignalCallback) -> None:
        self._unrouted = unrouted
        self._routes: dict[int, SignalCallback] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._previous = {sig: signal.signal(sig, self._on_signal) for sig in signals}

    def route(self, routes: Mapping[int, SignalCallback]) -> None:
        """From now on each signal in `routes` runs its callback on the running loop."""
        import asyncio

        self._routes, self._loop = dict(routes), asyncio.get_running_loop()

    def restore(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)

    def _on_signal(self, sig: int, _frame: object) -> None:
        # Runs between two bytecodes of the main thread, maybe inside the loop's own
        # code: the loop is only asked to act.
        route = self._routes.get(sig)
        if route is None or self._loop is None or self._loop.is_closed():
            self._unrouted(sig)
        else:
            self._loop.call_soon_threadsafe(route, sig)


def exit_at_once(code: int) -> NoReturn:
    """Ends every tool's process group, then the process with `code`."""
    end_all_processes()
    os._exit(code)


class Interrupts:
    """Print mode's SIGINT/SIGTERM: kill every tool's process group and end the run
    with a result. A second signal, or one before the run has started (MCP servers
    connecting), exits at once."""

    def __init__(self) -> None:
        self.received: list[int] = []  # the signals received (false until one comes)
        self._runtime: Runtime | None = None
        self._signals = LoopSignals((signal.SIGINT, signal.SIGTERM),
                                    lambda _sig: exit_at_once(130))

    def arm(self, runtime: Runtime) -> list[int]:
        """From now on a first signal interrupts `runtime` (on its loop, the running one)."""
        self._runtime = runtime
        self._signals.route(dict.fromkeys((signal.SIGINT, signal.SIGTERM), self._interrupt))
        return self.received

    def restore(self) -> None:
        self._signals.restore()

    def _interrupt(self, sig: int) -> None:
        self.received.append(sig)
        assert self._runtime is not None
        running = self._runtime.hard_interrupt()
        if len(self.received) > 1 or not running:
            exit_at_once(130)
