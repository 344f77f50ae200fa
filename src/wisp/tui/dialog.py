"""Dialogs in the live region: a numbered picker (permission prompts, /model, /resume)
and what a permission prompt shows about the call (the full command, a diff for edits).

A dialog is a future the caller awaits: digits pick directly, arrows and Enter pick the
highlighted choice, Esc answers None. Nothing is decided until the future resolves, so a
tool waiting on a permission prompt cannot run before the answer.
"""

from __future__ import annotations

import asyncio
import difflib
from pathlib import Path
from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text

from wisp.tui.render import Renderer, safe

JSON = dict[str, Any]
DIFF_LINES = 40


class Picker:
    """`refusal`: the choice that refuses (a permission prompt's "No"). A dialog whose
    title does not fit the terminal is shown cut (see `render`), and then the refusal is
    what Enter picks until the user moves: what is approved must be what was seen."""

    def __init__(self, title: RenderableType, choices: list[str], *, footer: str = "",
                 refusal: int | None = None) -> None:
        self.title = title
        self.choices = choices
        self.footer = footer
        self.refusal = refusal
        self.selected = 0
        self.moved = False  # the user chose the highlighted line themselves
        self.cut = False  # the title did not fit when last drawn
        self.future: asyncio.Future[int | None] = asyncio.get_running_loop().create_future()
        self.editing = False  # a text field of the dialog has the keys (the rule of "2")

    def move(self, step: int) -> None:
        self.moved = True
        self.selected = (self.selected + step) % len(self.choices)

    def pick(self, index: int | None) -> None:
        if not self.future.done():
            self.future.set_result(index)

    def choices_text(self, one_line: bool = False) -> RenderableType:
        """The choices, a line each (or all on one), then the footer on one row: a long
        footer (many rules) is cut, never allowed to push the choices away."""
        lines = Text()
        for i, choice in enumerate(self.choices):
            mark = "❯ " if i == self.selected else "  "
            lines.append(f"{mark}{i + 1}. {choice}" + ("   " if one_line else "\n"),
                         style="bold cyan" if i == self.selected else "")
        lines.rstrip()
        if not self.footer:
            return lines
        return Group(lines, Text(self.footer, style="dim", no_wrap=True, overflow="ellipsis"))

    def render(self, renderer: Renderer, rows: int) -> str:
        """The dialog as ANSI lines, in at most `rows` rows when the terminal has that
        many: the choices whole and last, whatever the height; a title too tall is shown
        as its first line, how many lines are hidden, and its last lines (a command's
        end is where a padded one hides what it does)."""
        title = _lines(renderer.ansi(self.title))
        one_line = len(_lines(renderer.ansi(self.choices_text()))) >= rows
        room = rows - len(_lines(renderer.ansi(self.choices_text(one_line))))
        self.cut = len(title) > room
        if self.cut and not self.moved and self.refusal is not None:
            self.selected = self.refusal
        choices = _lines(renderer.ansi(self.choices_text(one_line)))
        if self.cut:
            title = _cut(title, room, renderer)
        elif room > len(title):
            title.append("")  # a blank line between the two, when there is room
        return "\n".join([*title, *choices]) + "\n"


def _lines(ansi: str) -> list[str]:
    return ansi.rstrip("\n").split("\n")


def _cut(title: list[str], room: int, renderer: Renderer) -> list[str]:
    """`title` in `room` rows: its first line, a note of what is hidden, its last lines."""
    if room <= 0:
        return []
    head = title[:1] if room >= 3 else []
    tail = title[len(title) - max(0, room - 1 - len(head)):] if room > 1 + len(head) else []
    hidden = len(title) - len(head) - len(tail)
    note = Text(f"  … {hidden} more line{'s' if hidden != 1 else ''} not shown (a taller "
                "terminal shows them)", style="bold yellow", no_wrap=True, overflow="ellipsis")
    return [*head, *_lines(renderer.ansi(note)), *tail]


def call_preview(tool_name: str, tool_input: JSON, cwd: Path) -> RenderableType:
    """What the user approves: the whole command, or the change an edit makes."""
    command = tool_input.get("command")
    if isinstance(command, str):
        return command_text(command)
    path = tool_input.get("file_path") or tool_input.get("notebook_path")
    if isinstance(path, str) and "old_string" in tool_input:
        return _edit_diff(path, str(tool_input.get("old_string", "")),
                          str(tool_input.get("new_string", "")))
    if isinstance(path, str) and "content" in tool_input:
        return _write_diff(path, str(tool_input.get("content", "")), cwd)
    if isinstance(path, str):
        return Text(safe(path), style="bold")
    import json

    return Text(safe(json.dumps(tool_input, ensure_ascii=False, indent=2)[:2000]))


def command_text(command: str) -> Text:
    """The whole command, each run of blank lines shown as one line that counts them:
    60 newlines between `echo safe` and `touch PWNED` must not push the second part out
    of sight."""
    out = Text(style="bold")
    blank = 0
    lines = safe(command).split("\n")
    for i, line in enumerate(lines):
        if not line.strip():
            blank += 1
            if i < len(lines) - 1:
                continue
        if blank > 2:
            out.append(f"  ⋮ {blank} blank lines\n", style="dim italic")
        elif blank:
            out.append("\n" * blank)
        blank = 0
        if line.strip():
            out.append(line + "\n")
    out.rstrip()
    return out


def _edit_diff(path: str, old: str, new: str) -> RenderableType:
    return diff_text(path, old.splitlines(), new.splitlines())


def _write_diff(path: str, content: str, cwd: Path) -> RenderableType:
    target = Path(path) if Path(path).is_absolute() else cwd / path
    try:
        before = target.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        before = []  # a new file: every line is an addition
    return diff_text(path, before, content.splitlines())


def diff_text(path: str, before: list[str], after: list[str]) -> Text:
    out = Text(safe(path) + "\n", style="bold")
    lines = list(difflib.unified_diff(before, after, lineterm="", n=2))[2:]
    for line in lines[:DIFF_LINES]:
        style = "green" if line.startswith("+") else "red" if line.startswith("-") else (
            "cyan" if line.startswith("@@") else "dim")
        out.append(safe(line) + "\n", style=style)
    if len(lines) > DIFF_LINES:
        out.append(f"… +{len(lines) - DIFF_LINES} more diff lines\n", style="dim")
    out.rstrip()
    return out
