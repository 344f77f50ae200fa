"""The terminal side of inline rendering: prompt_toolkit's output with synchronized
updates, and `print_above`, which moves finished output into the scrollback.

Synchronized output (DEC private mode 2026) makes the terminal show a whole redraw at
once instead of painting it line by line, which is what users see as flicker while an
answer streams. Terminals that do not know the mode ignore it, as they must ignore any
unknown private mode, so it is sent unless `WISP_SYNC_OUTPUT=0`. prompt_toolkit has no
support for it, so the output class adds the two markers around each flush.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING

from prompt_toolkit.output.vt100 import Vt100_Output

from wisp.textsafe import terminal_safe

if TYPE_CHECKING:
    from prompt_toolkit.application import Application

BEGIN_SYNC = "\x1b[?2026h"
END_SYNC = "\x1b[?2026l"


class SyncOutput(Vt100_Output):
    """A Vt100 output that wraps every flush in a synchronized update, and can hold its
    flushes so that several steps (erase, print, redraw) reach the terminal as one."""

    sync = True
    _held = 0

    def flush(self) -> None:
        if self._held or not self._buffer:
            return
        if self.sync:
            self._buffer.insert(0, BEGIN_SYNC)
            self._buffer.append(END_SYNC)
        super().flush()

    @contextmanager
    def one_update(self) -> Iterator[None]:
        self._held += 1
        try:
            yield
        finally:
            self._held -= 1
            self.flush()


def make_output(env: Mapping[str, str]) -> SyncOutput:
    from prompt_toolkit.output.color_depth import ColorDepth

    # NO_COLOR: no colour, but bold, dim and reverse stay (https://no-color.org).
    depth = ColorDepth.DEPTH_1_BIT if env.get("NO_COLOR") else ColorDepth.from_env()
    output = SyncOutput.from_pty(sys.stdout, term=env.get("TERM"), default_color_depth=depth)
    assert isinstance(output, SyncOutput)
    output.sync = env.get("WISP_SYNC_OUTPUT", "1") != "0" and env.get("TERM") != "dumb"
    return output


def print_above(app: Application[object], output: SyncOutput, text: str) -> None:
    """Writes `text` (ANSI, whole lines) into the scrollback above the live region, then
    draws the live region again below it, all in one terminal update.

    prompt_toolkit's own `run_in_terminal` does this too, but it detaches the input and
    puts the terminal back in cooked mode for the duration, so keys typed while an answer
    streams would be echoed into the scrollback; and its redraw waits for the next
    event-loop turn, which shows the live region missing for a frame. Here the renderer
    erases what it drew, the text goes out, and the region is redrawn at once
    (`Application._redraw`, the synchronous form of `invalidate`).

    The scrollback's one door: only colour sequences (SGR) pass as escapes, every other
    control character is shown, not obeyed (`wisp.textsafe.terminal_safe`), whoever
    built `text`."""
    if not text:
        return
    text = terminal_safe(text)
    if not app.is_running:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    with output.one_update():
        app.renderer.erase()
        output.write_raw(text)
        app.renderer.reset()
        app._redraw()  # see the docstring


def terminal_is_interactive() -> bool:
    return sys.stdout.isatty() and sys.stdin.isatty() and os.environ.get("TERM") != "dumb"
