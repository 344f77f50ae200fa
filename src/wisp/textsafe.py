"""Text from outside made harmless to show on a terminal.

Anything a repository, a transcript, a model, a tool or an MCP server wrote can carry
bytes a terminal obeys: an escape sequence that sets the window title, erases a line or
hides text, a carriage return that draws over what came before, a bidirectional control
that shows a command in another order than it runs. `safe` makes each of them visible
instead: C0 controls (but tab and newline) become the Unicode "control pictures" (ESC is
shown as ␛), DEL ␡, C1 controls U+FFFD, and the invisible formatting characters that
reorder or hide text are written as `⟨U+202E⟩`. `terminal_safe` is for text that is
already ANSI (what rich renders): its colour sequences (SGR) pass, nothing else does.

A leaf: imported by the terminal UI (where every string reaches the screen through it,
see `wisp.tui.render` and `wisp.tui.terminal`) and by stderr notes quoting a file.
"""

from __future__ import annotations

import re

__all__ = ["safe", "safe_line", "terminal_safe"]

_TABLE: dict[int, str | int] = {c: 0x2400 + c for c in range(32) if c not in (9, 10)}
_TABLE.update({0x7F: 0x2421, **{c: 0xFFFD for c in range(0x80, 0xA0)}})
# Bidirectional overrides, isolates and marks, zero-width spaces and joiners that are
# not needed by emoji (U+200D) or scripts that use them (U+200C), word joiners and
# invisible operators, the byte order mark, interlinear annotation marks.
_INVISIBLE = (0x061C, 0x180E, 0x200B, 0x200E, 0x200F, *range(0x202A, 0x202F),
              *range(0x2060, 0x2065), *range(0x2066, 0x206A), 0xFEFF,
              *range(0xFFF9, 0xFFFC))
_TABLE.update({c: f"⟨U+{c:04X}⟩" for c in _INVISIBLE})
_LINE_TABLE = {**_TABLE, 9: " ", 10: " ⏎ "}
# One SGR sequence (colours, bold, ...): the only escape rich and pygments write for us.
# Compiled on first use (re caches it): print mode loads this module before its first frame.
_SGR = r"\x1b\[[0-9;:]*m"


def safe(text: str) -> str:
    """`text` with every character a terminal would obey shown instead (newlines and
    tabs stay)."""
    return text.translate(_TABLE)


def safe_line(text: str) -> str:
    """`safe`, and on one line: newlines shown as ⏎ (for a note or a list entry)."""
    return text.translate(_LINE_TABLE)


def terminal_safe(ansi: str) -> str:
    """ANSI text with its SGR sequences kept and everything else made `safe`: the last
    check before bytes reach the terminal, whoever built them."""
    if "\x1b" not in ansi:
        return safe(ansi)
    out: list[str] = []
    start = 0
    for match in re.finditer(_SGR, ansi):
        out.append(safe(ansi[start:match.start()]))
        out.append(match.group())
        start = match.end()
    out.append(safe(ansi[start:]))
    return "".join(out)
