"""Tool results as a person reads them, not as the model does: "Read 42 lines", "Found
3 files", the diff an approved edit made ("Added 2 lines, removed 1 line"), a TodoWrite
checklist, a refusal as one short line. The text the model gets is unchanged, and
ctrl+o still shows it whole; results not named here keep their preview (a command's
output is what a person wants to see).

Every function returns None when it has nothing better than the preview to say.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text

from wisp.jsontypes import JSON
from wisp.textsafe import safe
from wisp.tui import diff_view

REFUSED_START = "The user doesn't want to proceed"
NOT_RUN = "User rejected tool use"  # the calls an interrupted turn left unanswered
CREATED_LINES = 12  # lines of a new file shown under "Wrote N lines"
_TODO_MARKS = {"completed": "☒", "in_progress": "◼", "pending": "☐"}


def summary(name: str, tool_input: JSON, data: Any, text: str, *, is_error: bool,
            cwd: Path) -> Text | None:
    if is_error or data == NOT_RUN:
        return _refusal(text, data)
    if name in ("Edit", "Write") and isinstance(data, dict):
        return _edit(data, cwd)
    if name == "TodoWrite":
        return checklist(tool_input.get("todos"))
    if isinstance(data, dict):
        return _counted(name, data)
    return None


def _refusal(text: str, data: Any) -> Text | None:
    if data == NOT_RUN or text.startswith(NOT_RUN):
        return Text("Not run: the turn was interrupted", style="dim")
    if text.startswith(REFUSED_START):
        return Text("No, you declined it", style="yellow")
    return None


def _edit(data: JSON, cwd: Path) -> Text | None:
    patch = data.get("structuredPatch")
    if data.get("type") == "create":
        content = str(data.get("content", ""))
        lines = content.count("\n") + (0 if content.endswith("\n") or not content else 1)
        path = safe(diff_view.relative(str(data.get("filePath", "")), cwd))
        out = Text(f"Wrote {lines} line{'s' if lines != 1 else ''} to {path}\n")
        out.append_text(diff_view.render(diff_view.hunks("", content), limit=CREATED_LINES))
        return out
    if not isinstance(patch, list):
        return None
    out = Text(diff_view.summary(patch) + "\n")
    out.append_text(diff_view.render(patch))
    return out


def checklist(todos: Any) -> Text | None:
    if not isinstance(todos, list) or not todos:
        return None
    out = Text()
    for todo in todos:
        if not isinstance(todo, dict):
            continue
        status = str(todo.get("status", "pending"))
        style = {"completed": "dim strike", "in_progress": "bold"}.get(status, "")
        out.append(f"{_TODO_MARKS.get(status, '☐')} {safe(str(todo.get('content', '')))}\n",
                   style=style)
    out.rstrip()
    return out


def _counted(name: str, data: JSON) -> Text | None:
    line = count_line(name, data)
    if line is None:
        return None
    out = Text(line)
    out.append(" (ctrl+o to expand)", style="dim")
    return out


def count_line(name: str, data: JSON) -> str | None:
    if name == "Read" and isinstance(data.get("file"), dict):
        return _plural(int(data["file"].get("numLines") or 0), "Read", "line")
    if name == "Glob" and isinstance(data.get("numFiles"), int):
        return _plural(data["numFiles"], "Found", "file")
    if name == "Grep":
        if data.get("mode") == "content" and isinstance(data.get("numLines"), int):
            return _plural(data["numLines"], "Found", "line")
        if data.get("mode") == "count" and isinstance(data.get("numMatches"), int):
            return _plural(data["numMatches"], "Found", "match", "matches")
        if isinstance(data.get("numFiles"), int):
            return _plural(data["numFiles"], "Found", "file")
    return None


def _plural(n: int, verb: str, noun: str, plural: str = "") -> str:
    return f"{verb} {n} {noun if n == 1 else plural or noun + 's'}"
