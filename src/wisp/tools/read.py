"""Read: show a text file, or a window of it, with line numbers."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import ClassVar

from wisp.tools._fs import BINARY_SNIFF_BYTES, cat_n, looks_binary, record_read, resolve_path
from wisp.tools.base import JSON, Tool, ToolContext, ToolKind, ToolResult, check_input

DEFAULT_LIMIT = 2000
MAX_LINE_CHARS = 2000
# Past this the answer would swamp the context window; the model should page instead.
MAX_OUTPUT_CHARS = 256_000


class _Window:
    __slots__ = ("lines", "total")  # not a dataclass: ~1 ms less at start-up

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.total = 0


def _read_window(path: Path, offset: int, limit: int) -> _Window | str:
    """The requested lines plus the file's line count, or a reason the file can't be shown."""
    window = _Window()
    with path.open("rb") as raw:
        if looks_binary(raw.read(BINARY_SNIFF_BYTES)):
            return f"{path} is a binary file; its contents are not shown."
        raw.seek(0)
        end = offset + limit
        for number, line_bytes in enumerate(raw, 1):
            window.total = number
            if offset <= number < end:
                line = line_bytes.decode("utf-8", errors="replace").rstrip("\r\n")
                if len(line) > MAX_LINE_CHARS:
                    line = line[:MAX_LINE_CHARS] + " [line truncated]"
                window.lines.append(line)
    return window


def _binary(path: Path) -> bool:
    with path.open("rb") as raw:
        return looks_binary(raw.read(BINARY_SNIFF_BYTES))


def _text_window(text: str, offset: int, limit: int) -> _Window:
    """The window of a text an editor gave (its unsaved buffer), cut as a file's would be."""
    window = _Window()
    lines = text.splitlines()
    window.total = len(lines)
    for line in lines[offset - 1:offset - 1 + limit]:
        cut = line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + " [line truncated]"
        window.lines.append(cut)
    return window


def _unreadable(path: Path) -> str | None:
    if not path.exists():
        return f"File does not exist: {path}"
    if path.is_dir():
        return f"{path} is a directory, not a file; use Bash ls or Glob to list it."
    if not path.is_file():
        # FIFOs and devices could block the read forever.
        return f"{path} is not a regular file."
    return None


def _positive_int(value: object, default: int) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return default


class Read(Tool):
    name: ClassVar[str] = "Read"
    description: ClassVar[str] = (
        "Read a text file from the local filesystem. `file_path` should be absolute (relative "
        "paths resolve against the working directory). Output is numbered like `cat -n`, one "
        f"line per row, at most {DEFAULT_LIMIT} lines from the start unless `offset` (1-based "
        f"first line) and `limit` (number of lines) are given. Lines over {MAX_LINE_CHARS} "
        "characters are cut short. Use Bash `ls` or Glob to look at directories."
    )
    input_schema: ClassVar[JSON] = {
        "type": "object",
        "properties": {
            "file_path": {"type": "string", "description": "Path of the file to read"},
            "offset": {"type": "integer", "description": "1-based line number to start at"},
            "limit": {"type": "integer", "description": "How many lines to read"},
        },
        "required": ["file_path"],
    }
    kind: ClassVar[ToolKind] = "read"

    def target_paths(self, tool_input: JSON) -> list[str]:
        path = tool_input.get("file_path")
        return [path] if isinstance(path, str) else []

    def describe(self, tool_input: JSON) -> str:
        return f"Read {tool_input.get('file_path', '')}"

    async def run(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        problem = check_input(self.input_schema, tool_input)
        if problem:
            return ToolResult.error(problem)
        path = resolve_path(ctx.cwd, tool_input["file_path"])
        unreadable = _unreadable(path)
        if unreadable:
            return ToolResult.error(unreadable)
        offset = _positive_int(tool_input.get("offset"), 1)
        limit = _positive_int(tool_input.get("limit"), DEFAULT_LIMIT)
        try:
            if ctx.files is not None and not await asyncio.to_thread(_binary, path):
                window: _Window | str = _text_window(await ctx.files.read(path), offset, limit)
            else:
                window = await asyncio.to_thread(_read_window, path, offset, limit)
        except OSError as exc:
            return ToolResult.error(f"Cannot read {path}: {exc.strerror or exc}")
        if isinstance(window, str):
            return ToolResult.error(window)
        record_read(ctx.state, path)
        return _present(path, window, offset)


def _present(path: Path, window: _Window, offset: int) -> ToolResult:
    body = "\n".join(window.lines)
    data = {
        "type": "text",
        "file": {
            "filePath": str(path),
            "content": body,
            "numLines": len(window.lines),
            "startLine": offset,
            "totalLines": window.total,
        },
    }
    if window.total == 0:
        text = f"(The file {path} exists but is empty.)"
    elif not window.lines:
        text = (
            f"(The file {path} has {window.total} lines; offset {offset} is past the end. "
            "Use a smaller offset.)"
        )
    else:
        text = cat_n(window.lines, offset)
        if len(text) > MAX_OUTPUT_CHARS:
            return ToolResult.error(
                f"{path} is too large to show in one piece ({len(text)} characters for "
                f"{len(window.lines)} lines). Read a smaller window with offset and limit, "
                "or search it with Grep."
            )
    return ToolResult(content=text, data=data)
