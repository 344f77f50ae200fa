"""Dialogs in the live region: a numbered picker (permission prompts, /model, /resume)
and what a permission prompt shows about the call (the full command, a diff for edits).

A dialog is a future the caller awaits: digits pick directly, arrows and Enter pick the
highlighted choice, Esc answers None. Nothing is decided until the future resolves, so a
tool waiting on a permission prompt cannot run before the answer.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from rich.console import Group, RenderableType
from rich.text import Text

from wisp.jsontypes import JSON
from wisp.tui import diff_view
from wisp.tui.render import Renderer, safe


class Picker:
    """`refusal`: the choice that refuses (a permission prompt's "No"). A dialog whose
    title does not fit the terminal is shown cut (see `render`), and then the refusal is
    what Enter picks until the user moves: what is approved must be what was seen.
    `takes_text`: typed keys are the dialog's text (a search), not choices by number."""

    takes_text = False

    def __init__(self, title: RenderableType, choices: list[str], *, footer: str = "",
                 refusal: int | None = None, question: str = "") -> None:
        self.title = title
        self.question = question  # drawn with the choices: never cut away from them
        self.choices = choices
        self.footer = footer
        self.refusal = refusal
        self.selected = 0
        self.moved = False  # the user chose the highlighted line themselves
        self.cut = False  # the title did not fit when last drawn
        self.future: asyncio.Future[int | None] = asyncio.get_running_loop().create_future()
        self.editing = False  # a text field of the dialog has the keys (the rule of "2")
        # A dialog that asks for text (an MCP server's form field) names it here: its text
        # field has the keys from the start, Enter answers with `text`, Esc cancels.
        self.field: str | None = None
        self.text = ""

    def type(self, text: str) -> None:
        """A key typed into a dialog that `takes_text`."""

    def backspace(self) -> None:
        """Backspace in a dialog that `takes_text`."""

    def adjust(self, step: int) -> None:
        """← → in a dialog with a setting beside its choices (/model's effort)."""

    def move(self, step: int) -> None:
        self.moved = True
        self.selected = (self.selected + step) % len(self.choices)

    def pick(self, index: int | None) -> None:
        if not self.future.done():
            self.future.set_result(index)

    def choices_text(self, one_line: bool = False) -> RenderableType:
        """The choices, a line each (or all on one), then the footer on one row: a long
        footer (many rules) is cut, never allowed to push the choices away."""
        lines = Text(self.question + "\n", style="bold") if self.question else Text()
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
    """What the user approves: the whole command, or the change an edit makes to the file
    as it is now (numbered, with context)."""
    command = tool_input.get("command")
    if isinstance(command, str):
        return command_text(command)
    path = tool_input.get("file_path") or tool_input.get("notebook_path")
    if isinstance(path, str) and "old_string" in tool_input:
        return _edit_diff(path, tool_input, cwd)
    if isinstance(path, str) and "content" in tool_input:
        patch, _ = diff_view.write_patch(_absolute(path, cwd),
                                         str(tool_input.get("content", "")))
        return _with_path(path, cwd, diff_view.render(patch))
    if isinstance(path, str):
        return Text(safe(diff_view.relative(path, cwd)), style="bold")
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


def _absolute(path: str, cwd: Path) -> Path:
    return Path(path) if Path(path).is_absolute() else cwd / path


def _with_path(path: str, cwd: Path, body: Text) -> Text:
    out = Text(safe(diff_view.relative(path, cwd)) + "\n", style="bold")
    out.append_text(body)
    return out


def _edit_diff(path: str, tool_input: JSON, cwd: Path) -> Text:
    old, new = str(tool_input.get("old_string", "")), str(tool_input.get("new_string", ""))
    patch = diff_view.edit_patch(_absolute(path, cwd), old, new,
                                 bool(tool_input.get("replace_all", False)))
    if patch is not None:
        return _with_path(path, cwd, diff_view.render(patch))
    # Not found in the file as it is: the tool will refuse; show what was asked.
    body = Text("(the text to replace is not in the file as it is now)\n", style="yellow")
    body.append_text(diff_view.render(diff_view.hunks(old, new)))
    return _with_path(path, cwd, body)
