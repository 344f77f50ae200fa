"""Files as an editor holds them: the file tools read and write through this when a front
end connects one (`wisp acp` with a client that offers `fs/read_text_file` and
`fs/write_text_file`), so an unsaved buffer is what the model reads and an edit lands in
the editor, where the user sees it and can undo it. When it offers terminals, Bash runs
its commands in one the user watches (`EditorTerminals`), unless the OS sandbox must hold
them: an editor's terminal is outside it.

Above: Read, Write and Edit (`ToolContext.files`). Below: the front end's client
connection. A leaf: it imports nothing of wisp.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import NamedTuple, Protocol


class EditorFiles(Protocol):
    async def read(self, path: Path) -> str:
        """The file's text as the editor has it (an unsaved buffer wins over the disk).
        Raises OSError when the editor cannot read it."""
        ...

    async def write(self, path: Path, text: str) -> None:
        """Replaces the file's text in the editor. Raises OSError when it refuses."""
        ...


class TerminalRun(NamedTuple):
    """How a command run in an editor's terminal ended: its output (as the terminal kept
    it), its exit code or the signal that ended it, and why it ended ("exited",
    "timeout" or "interrupted")."""

    output: str
    exit_code: int | None
    signal: str | None
    ending: str
    truncated: bool = False


class EditorTerminals(Protocol):
    async def run(self, command: str, cwd: Path, timeout_s: float, abort: asyncio.Event,
                  tool_use_id: str | None) -> TerminalRun:
        """Runs `command` with bash in a terminal the editor shows, until it exits, the
        timeout passes or `abort` is set (then the editor kills it). Raises OSError when
        the editor cannot run it."""
        ...
