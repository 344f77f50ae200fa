"""Tracks the process groups that tools spawn so an interrupt or exit can kill them all.

Every child runs in its own session (`start_new_session=True`), so its pgid equals its pid
and killing the group reaches grandchildren too. Nothing here imports asyncio: the signal
handler and the atexit hook call `kill_all` synchronously.

Each session (each `wisp.runtime.Runtime`) has its own registry, so interrupting or
closing one session never touches another's processes. Every registry is also known,
weakly, to `live_registries()`: the exit-time reaper's last net.
"""

from __future__ import annotations

import contextlib
import os
import signal
import weakref

_LIVE: weakref.WeakSet[ProcessRegistry] = weakref.WeakSet()


class ProcessRegistry:
    def __init__(self) -> None:
        self._groups: set[int] = set()
        _LIVE.add(self)

    def add(self, pgid: int) -> None:
        self._groups.add(pgid)

    def discard(self, pgid: int) -> None:
        self._groups.discard(pgid)

    def __len__(self) -> int:
        return len(self._groups)

    def kill_all(self, sig: int = signal.SIGKILL) -> None:
        for pgid in list(self._groups):
            kill_group(pgid, sig)
        self._groups.clear()


def kill_group(pgid: int, sig: int = signal.SIGKILL) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def live_registries() -> list[ProcessRegistry]:
    return list(_LIVE)


# Long-lived services (stdio MCP servers): they outlive an interrupt, which kills only a
# session's tool processes, but not wisp: `end_all_processes` kills every registry.
SERVICE_PROCESSES = ProcessRegistry()
