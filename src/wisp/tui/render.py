"""Turning conversation pieces into terminal text (ANSI) with rich.

Everything printed to the scrollback goes through `Renderer.ansi`, which renders at the
terminal's current width and honours `NO_COLOR` (rich reads it). Whatever the renderables
hold, every piece of text rich produces is passed through `wisp.textsafe.safe` before it
becomes ANSI: an escape sequence in a tool's output, a command's description, a tool name
in a transcript, must not set the title, move the cursor, recolour or hide text, so
control characters other than newline and tab (and the invisible characters that reorder
text) are shown as visible symbols. Callers need not remember it, and a new screen cannot
forget it. Markdown links are written out, not hidden behind terminal hyperlinks.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.markdown import Markdown
from rich.segment import Segment
from rich.text import Text

from wisp.jsontypes import JSON
from wisp.textsafe import safe
from wisp.tui.stream_text import Piece

__all__ = ["Renderer", "note", "piece_renderable", "result_block", "safe", "thinking_block",
           "tool_call_line", "under_call"]

CODE_THEME = "monokai"
PREVIEW_LINES = 4
LINE_CAP = 400  # characters of one line shown in a preview


_PADDING = re.compile(r" +((?:\x1b\[[0-9;]*m)*)$", re.MULTILINE)


class _Shown:
    """A renderable whose text segments are made safe as rich produces them: the one
    place where text becomes terminal output, so no caller can skip it. (Control
    segments are rich's own cursor codes, made by wisp's code, never from text.)"""

    __slots__ = ("item",)

    def __init__(self, item: RenderableType) -> None:
        self.item = item

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for segment in console.render(self.item, options):
            if segment.control is None and segment.text:
                yield Segment(safe(segment.text), segment.style)
            else:
                yield segment


class Renderer:
    def __init__(self, width: int, env: Mapping[str, str]) -> None:
        self.width = width
        self._no_color = bool(env.get("NO_COLOR"))

    def ansi(self, *items: RenderableType) -> str:
        out = io.StringIO()
        console = Console(file=out, force_terminal=True, width=max(20, self.width),
                          no_color=self._no_color, highlight=False, soft_wrap=False,
                          color_system="truecolor",
                          legacy_windows=False)
        for item in items:
            console.print(_Shown(item))
        # rich pads every line to the full width: drop the padding, or a terminal that
        # reflows on resize would wrap each of those lines.
        return _PADDING.sub(r"\1", out.getvalue())

    def piece(self, piece: Piece, indent: int = 0) -> str:
        """Gaps between pieces are the caller's: rich's own leading blank lines go."""
        if piece.kind == "code":
            from wisp.tui.highlight import highlight_code

            return highlight_code(safe(piece.text), piece.language, indent,
                                  colour=not self._no_color)
        return self.ansi(_indented(piece_renderable(piece), indent)).lstrip("\n")


def piece_renderable(piece: Piece) -> RenderableType:
    """Prose as Markdown (code pieces go to `wisp.tui.highlight`)."""
    return Markdown(safe(piece.text), code_theme=CODE_THEME, hyperlinks=False)


def _indented(item: RenderableType, indent: int) -> RenderableType:
    if not indent:
        return item
    from rich.padding import Padding

    return Padding(item, (0, 0, 0, indent))


def key_input(name: str, tool_input: JSON) -> str:
    """The one input that says what a call does: the command, the path, the pattern."""
    for key in ("command", "file_path", "notebook_path", "path", "pattern", "url",
                "description", "query", "prompt"):
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            return value
    if not tool_input:
        return ""
    return json.dumps(tool_input, ensure_ascii=False)[:200]


_PATH_KEYS = ("file_path", "notebook_path", "path")
_HEADINGS = {"TodoWrite": "Update Todos"}  # calls whose input says nothing in a line


def tool_call_line(name: str, tool_input: JSON, indent: int = 0, cwd: Path | None = None
                   ) -> Text:
    """`● Name(what)`: a path relative to the working folder when it is inside it."""
    if name in _HEADINGS:
        line = Text(" " * indent)
        line.append("● ", style="green")
        line.append(_HEADINGS[name], style="bold")
        return line
    what = key_input(name, tool_input)
    if cwd is not None and any(tool_input.get(k) == what for k in _PATH_KEYS):
        from wisp.tui.diff_view import relative

        what = relative(what, cwd)
    shown = safe(what).replace("\n", " ⏎ ")
    if len(shown) > 160:
        shown = shown[:157] + "…"
    line = Text(" " * indent)
    line.append("● ", style="green")
    line.append(safe(name), style="bold")  # a transcript's or MCP server's name
    if shown:
        line.append(f"({shown})")
    return line


def under_call(body: Text, indent: int = 0) -> Text:
    """`body` hung under its call: "  ⎿  " before its first line, aligned after."""
    out = Text()
    for i, line in enumerate(body.split("\n")):
        out.append(" " * indent + ("  ⎿  " if i == 0 else "     "))
        out.append_text(line)
        out.append("\n")
    out.rstrip()
    return out


def result_text(data: Any) -> str:
    """A tool result's content as plain text (blocks joined, images named)."""
    if isinstance(data, str):
        return data
    if isinstance(data, list):
        parts = []
        for block in data:
            if isinstance(block, dict) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            elif isinstance(block, dict):
                parts.append(f"[{block.get('type', 'block')}]")
            else:
                parts.append(str(block))
        return "\n".join(parts)
    if isinstance(data, dict):
        for key in ("stdout", "content", "text", "output"):
            if isinstance(data.get(key), str):
                return str(data[key])
        return json.dumps(data, ensure_ascii=False, default=str)
    return "" if data is None else str(data)


def preview(text: str, lines: int = PREVIEW_LINES, cap: int = LINE_CAP
            ) -> tuple[list[str], int]:
    """The first `lines` lines (each cut to `cap` characters) and how many lines there
    are. Never splits all of a huge output: only as much as the preview needs."""
    total = text.count("\n") + 1 if text else 0
    head = text.split("\n", lines)[:lines]
    return [line[:cap] + ("…" if len(line) > cap else "") for line in head], total


def result_block(text: str, is_error: bool, indent: int = 0, *, full_path: str | None = None,
                 expanded: bool = False, width: int = 0) -> Text:
    """A result's first lines under its call. Shortened lines fit the width (so the
    `⎿` column holds); an expanded result wraps instead."""
    cap = LINE_CAP if expanded or width <= 0 else max(10, width - indent - 8)
    shown, total = preview(safe(text), 2000 if expanded else PREVIEW_LINES, cap)
    out = Text()
    style = "red" if is_error else "dim"
    if not shown or not any(s.strip() for s in shown):
        shown = ["(no output)"]
    for i, line in enumerate(shown):
        prefix = " " * indent + ("  ⎿  " if i == 0 else "     ")
        out.append(prefix)
        out.append(("Error: " if is_error and i == 0 else "") + line, style=style)
        out.append("\n")
    hidden = total - len(shown)
    if hidden > 0:
        more = f"     … +{hidden} lines"
        more += f" (full output: {full_path})" if full_path else " (ctrl+o to expand)"
        out.append(" " * indent + more + "\n", style="dim italic")
    out.rstrip()
    return out


def thinking_block(text: str, expanded: bool, indent: int = 0,
                   seconds: float | None = None) -> Text:
    """Collapsed: "✻ Thought for Ns" (how long it streamed; unknown for a replayed one),
    the thought itself one ctrl+o away."""
    body = safe(text.strip())
    out = Text(" " * indent)
    if not expanded:
        took = f" for {max(1, round(seconds))}s" if seconds is not None else ""
        out.append(f"✻ Thought{took}", style="dim italic")
        out.append(" (ctrl+o to expand)", style="dim")
        return out
    out.append("✻ Thinking\n", style="dim italic")
    for line in body.split("\n"):
        out.append(" " * indent + "  " + line + "\n", style="dim italic")
    out.rstrip()
    return out


def note(text: str, style: str = "dim") -> Text:
    return Text(safe(text), style=style)
