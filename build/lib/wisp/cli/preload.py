"""Imports the agent loop ahead of the first turn, while a duplex session waits for input.

A duplex session answers `initialize` first and imports only what serving needs; the agent
loop (the loop, its outcome and decision types, model calls, compaction, structured
output) would otherwise load on the first user turn, making it 20-30 times as slow as the
next ones. Run once the session is idle, it moves that cost into the wait for the first
message; a message that arrives meanwhile simply waits for it, as it would have anyway.
"""

from __future__ import annotations

import contextlib
from importlib import import_module

# What the first turn imports that serving did not: `wisp.duplex.turns` imports the loop
# when it runs a prompt.
ENGINE_MODULES: tuple[str, ...] = ("wisp.engine.loop",)


def preload_engine() -> None:
    """Import the turn path now. Never raises: a module that fails to import here fails
    the same way on the first turn, where the error is reported as it always was."""
    for name in ENGINE_MODULES:
        with contextlib.suppress(Exception):
            import_module(name)
