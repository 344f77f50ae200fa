"""Consecutive looking-around calls (Read, Grep, Glob, LS) shown as one line:
"● Read 3 files, searched for 2 patterns (ctrl+o to expand)".

A model exploring a project makes many such calls in a row; a header and a result line
for each buries what it went on to do. `ConversationView` holds them here instead of
printing them, shows "Reading 3 files…" in the live region while they run, and prints
the group when anything else is shown. ctrl+o then shows each call with its result.

A group is printed call by call, as before, when it is a single call (its own header
says more: the file's name) or when a call failed or was refused (that must be seen).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text

from wisp.jsontypes import JSON
from wisp.tui import render, tool_summary

# Each grouped tool: (what it did, doing it, the noun, its plural).
VERBS = {"Read": ("read", "reading", "file", "files"),
         "Grep": ("searched for", "searching for", "pattern", "patterns"),
         "Glob": ("searched for", "searching for", "pattern", "patterns"),
         "LS": ("listed", "listing", "directory", "directories")}


class GroupedCall:
    __slots__ = ("call_id", "data", "done", "input", "is_error", "name", "text")

    def __init__(self, call_id: str, name: str, tool_input: JSON) -> None:
        self.call_id, self.name, self.input = call_id, name, tool_input
        self.done = False
        self.text, self.is_error, self.data = "", False, None


class CallGroup:
    def __init__(self, depth: int) -> None:
        self.depth = depth
        self.calls: list[GroupedCall] = []

    def add(self, call_id: str, name: str, tool_input: JSON) -> None:
        self.calls.append(GroupedCall(call_id, name, tool_input))

    def find(self, call_id: str) -> GroupedCall | None:
        return next((c for c in self.calls if c.call_id == call_id), None)

    def finish(self, call_id: str, text: str, is_error: bool, data: Any) -> bool:
        """Records a result; False when the call is not in this group."""
        call = self.find(call_id)
        if call is None:
            return False
        call.done, call.text, call.is_error, call.data = True, text, is_error, data
        return True

    def one_by_one(self) -> bool:
        """Printed call by call: a single call, a failure, or calls still running (their
        results will come after the group is gone)."""
        return len(self.calls) == 1 or any(c.is_error or not c.done for c in self.calls)

    def headline(self, running: bool = False) -> str:
        """"Read 3 files, searched for 2 patterns"; while running, "Reading 3 files,
        searching for 2 patterns…"."""
        counts: dict[tuple[str, str, str, str], int] = {}
        for call in self.calls:
            key = VERBS[call.name]
            counts[key] = counts.get(key, 0) + 1
        parts = [f"{verb[1] if running else verb[0]} {n} {verb[2] if n == 1 else verb[3]}"
                 for verb, n in counts.items()]
        line = ", ".join(parts)
        return line[:1].upper() + line[1:] + ("…" if running else "")

    def summary_line(self, indent: int) -> Text:
        line = Text(" " * indent)
        line.append("● ", style="green")
        line.append(self.headline(), style="bold")
        line.append(" (ctrl+o to expand)", style="dim")
        return line

    def detail(self, indent: int, cwd: Path) -> Text:
        """What ctrl+o shows: each call, and its result's summary under it."""
        out = Text()
        for call in self.calls:
            out.append_text(render.tool_call_line(call.name, call.input, indent, cwd))
            data = call.data
            line = tool_summary.count_line(call.name, data) if isinstance(data, dict) else None
            out.append("\n")
            out.append_text(render.under_call(Text(line or "done"), indent))
            out.append("\n")
        out.rstrip()
        return out


def grouped(name: str) -> bool:
    return name in VERBS
