"""The terminal side of `TuiApp`: printing into the scrollback above the live region,
redraws throttled to one a frame, the welcome header, /clear's erase and /copy's
clipboard sequence.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING

from wisp.tui.terminal import print_above

if TYPE_CHECKING:
    from prompt_toolkit.application import Application

    from wisp.runtime.config import RuntimeConfig
    from wisp.tui.terminal import SyncOutput

FRAME_S = 1 / 30
CLEAR_SCREEN = "\x1b[H\x1b[2J\x1b[3J"  # home, erase the screen, erase the scrollback
# OSC 52: "put this (base64) on the clipboard", which terminals, tmux and ssh pass along.
SET_CLIPBOARD = "\x1b]52;c;{}\x07"


def _short_folder(folder: str, env: Mapping[str, str], room: int) -> str:
    """The working folder in `room` columns: ~ for the home, then its start cut."""
    home = env.get("HOME", "")
    if home and (folder == home or folder.startswith(home.rstrip("/") + "/")):
        folder = "~" + folder[len(home.rstrip("/")):]
    return folder if len(folder) <= room else "…" + folder[-(room - 1):]


class Screen:
    """Drawing for `TuiApp`, which sets the state below."""

    app: Application[int]
    output: SyncOutput
    env: dict[str, str]
    config: RuntimeConfig
    shown_model: str
    tail_due: bool
    _frame_pending: bool
    _last_frame: float

    def print(self, ansi: str) -> None:
        self.tail_due = True  # the region drawn under it must not show what it printed
        print_above(self.app, self.output, ansi)  # type: ignore[arg-type]

    def invalidate(self) -> None:
        """The engine's output asks for a redraw: at most one per frame (1/30 s), however
        fast tokens come. Keys are not throttled: prompt_toolkit redraws after each one
        at once, reusing the streaming tail rendered for the last frame."""
        if self._frame_pending:
            return
        loop = asyncio.get_running_loop()
        delay = self._last_frame + FRAME_S - loop.time()
        if delay <= 0:
            self._frame()
        else:
            self._frame_pending = True
            loop.call_later(delay, self._frame)

    def _frame(self) -> None:
        self._frame_pending = False
        self._last_frame = asyncio.get_running_loop().time()
        self.tail_due = True
        self.app.invalidate()

    def width(self) -> int:
        return self.output.get_size().columns

    def _welcome(self) -> None:
        from prompt_toolkit import print_formatted_text
        from prompt_toolkit.formatted_text import FormattedText

        head, rest = self._welcome_parts()
        print_formatted_text(FormattedText([("bold", head), ("fg:ansibrightblack", rest)]),
                             output=self.output, style=None)

    def _welcome_parts(self) -> tuple[str, str]:
        """The header: its bold start and the rest, each line fitting the width."""
        from wisp import __version__
        from wisp.textsafe import safe

        width = self.width()
        hints = ("/help for commands · shift+tab to change mode · ctrl+d to exit"
                 if width >= 70 else "/help · ? for shortcuts · ctrl+d exits")
        return ("✻ wisp ", safe(f"{__version__} · {self.shown_model}")[:width - 8]
                + "\n  " + safe(_short_folder(str(self.config.cwd), self.env, width - 2))
                + "\n  " + hints)

    def copy_to_clipboard(self, text: str) -> None:
        """/copy: the terminal puts `text` on the clipboard. It travels base64-encoded, so
        nothing in it can reach the terminal as a sequence of its own."""
        import base64

        encoded = base64.b64encode(text.encode("utf-8")).decode("ascii")
        with self.output.one_update():
            self.output.write_raw(SET_CLIPBOARD.format(encoded))

    def clear_screen(self) -> None:
        """/clear: the screen and tmux's or the terminal's scrollback emptied, the header
        drawn again at the top. (Erase sequences cannot pass `print_above`'s door, which
        lets colours only; they are written here, by wisp's own code.)"""
        from rich.text import Text

        from wisp.tui.render import Renderer

        with self.output.one_update():
            self.app.renderer.erase()
            self.output.write_raw(CLEAR_SCREEN)
            self.app.renderer.reset()
        head, rest = self._welcome_parts()
        header = Text(head, style="bold")
        header.append(rest, style="dim")
        self.print(Renderer(self.width(), self.env).ansi(header))
