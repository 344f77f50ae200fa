"""Where wisp's warnings and errors for a human go: the process's stderr, or, for a
session running inside an SDK host's process, that session's own `stderr` callback.

A `ContextVar` carries the session's sink: asyncio tasks inherit it from the task that
started the session, so concurrent in-process sessions each report to their own host,
and nothing replaces `sys.stderr` for the whole process.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from contextvars import ContextVar

Sink = Callable[[str], None]
_SINK: ContextVar[Sink | None] = ContextVar("wisp_diagnostics_sink", default=None)


def warn(text: str) -> None:
    """Writes `text` (whole lines, newline included) where this session's diagnostics go.
    Unbuffered on stderr: it may be the last thing a dying process says. Warnings quote
    names from files a repository ships (hook events, server names, paths): any control
    character in them is shown, never obeyed by the terminal (`wisp.textsafe`)."""
    from wisp.textsafe import safe

    text = safe(text)
    sink = _SINK.get()
    if sink is not None:
        sink(text)
        return
    try:  # noqa: SIM105 (contextlib is not loaded this early on every path)
        os.write(2, text.encode("utf-8", "replace"))
    except OSError:
        pass  # stderr closed: nobody to tell


def route_to(sink: Sink | None) -> None:
    """Sends this task's (and its future child tasks') diagnostics to `sink`."""
    _SINK.set(sink)
