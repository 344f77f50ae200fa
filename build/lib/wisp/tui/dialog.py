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

from wisp.tui.render import safe

JSON = dict[str, Any]
DIFF_LINES = 40


class Picker:
    def __init__(self, title: RenderableType, choices: list[str], *, footer: str = "") -> None:
        self.title = title
        self.choices = choices
        self.footer = footer
        self.selected = 0
        self.future: asyncio.Future[int | None] = asyncio.get_running_loop().create_future()
        self.editing = False  # a text field of the dialog has the keys (the rule of "2")

    def move(self, step: int) -> None:
        self.selected = (self.selected + step) % len(self.choices)

    def pick(self, index: int | None) -> None:
        if not self.future.done():
            self.future.set_result(index)

    def body(self) -> RenderableType:
        lines = Text()
        for i, choice in enumerate(self.choices):
            mark = "❯ " if i == self.selected else "  "
            lines.append(f"{mark}{i + 1}. {choice}\n",
                         style="bold cyan" if i == self.selected else "")
        if self.footer:
            lines.append(self.footer, style="dim")
        lines.rstrip()
        return Group(self.title, lines)


def call_preview(tool_name: str, tool_input: JSON, cwd: Path) -> RenderableType:
    """What the user approves: the whole command, or the change an edit makes."""
    command = tool_input.get("command")
    if isinstance(command, str):
        return Text(safe(command), style="bold")
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
