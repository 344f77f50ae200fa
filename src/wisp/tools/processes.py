"""Tracks the process groups that tools spawn so an interrupt or exit can kill them all.

Every child runs in its own session (`start_new_session=True`), so its pgid equals its pid
and killing the group reaches grandchildren too. Nothing here imports asyncio: the signal
handler and the atexit hook call `kill_all` synchronously.
"""

from __future__ import annotations

import contextlib
import os
import signal


class ProcessRegistry:
    def __init__(self) -> None:
        self._groups: set[int] = set()

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


# One registry for the whole process: the CLI's signal handlers and atexit hook kill these.
GLOBAL_PROCESSES = ProcessRegistry()
# Long-lived services (stdio MCP servers): they outlive an interrupt, which kills only
# GLOBAL_PROCESSES, but not wisp: `end_all_processes` kills both.
SERVICE_PROCESSES = ProcessRegistry()
