"""Write: create or overwrite a file with the given content."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import ClassVar

from wisp.tools._fs import record_read, resolve_path, stale_write_problem
from wisp.tools._patch import structured_patch
from wisp.tools.base import JSON, Tool, ToolContext, ToolKind, ToolResult, check_input

# Previous contents above this size are not diffed for the structured patch.
_MAX_DIFF_BYTES = 1_000_000


def _previous_text(path: Path) -> str | None:
    try:
        if path.stat().st_size > _MAX_DIFF_BYTES:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def write_text(path: Path, content: str) -> None:
    """Write exactly `content` (no newline translation), creating parent directories."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as handle:
        handle.write(content)


async def _before(path: Path, ctx: ToolContext) -> str | None:
    if ctx.files is not None:
        return await ctx.files.read(path)
    return await asyncio.to_thread(_previous_text, path)


class Write(Tool):
    name: ClassVar[str] = "Write"
    description: ClassVar[str] = (
        "Create a file, or replace an existing file's entire contents, with `content`. "
        "Missing parent directories are created. Prefer Edit for changing part of an "
        "existing file. `file_path` should be absolute."
    )
    input_schema: ClassVar[JSON] = {
        "type": "object",
        "properties": {
            "file_path": {"type": "string", "description": "Path of the file to write"},
            "content": {"type": "string", "description": "The complete new file contents"},
        },
        "required": ["file_path", "content"],
    }
    kind: ClassVar[ToolKind] = "edit"

    def target_paths(self, tool_input: JSON) -> list[str]:
        path = tool_input.get("file_path")
        return [path] if isinstance(path, str) else []

    def describe(self, tool_input: JSON) -> str:
        return f"Write {tool_input.get('file_path', '')}"

    async def run(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        problem = check_input(self.input_schema, tool_input)
        if problem:
            return ToolResult.error(problem)
        path = resolve_path(ctx.cwd, tool_input["file_path"])
        content: str = tool_input["content"]
        if path.is_dir():
            return ToolResult.error(f"{path} is a directory; give a file path to write.")
        stale = stale_write_problem(ctx.state, path)
        if stale:
            return ToolResult.error(stale)
        existed = path.exists()
        try:
            before = await _before(path, ctx) if existed else None
            if ctx.files is not None:
                await ctx.files.write(path, content)
            else:
                await asyncio.to_thread(write_text, path, content)
        except OSError as exc:
            return ToolResult.error(f"Cannot write {path}: {exc.strerror or exc}")
        record_read(ctx.state, path)
        data: JSON = {
            "type": "update" if existed else "create",
            "filePath": str(path),
            "content": content,
            "structuredPatch": structured_patch(before, content) if before is not None else [],
        }
        if existed:
            return ToolResult(content=f"The file {path} has been updated.", data=data)
        return ToolResult(content=f"File created successfully at: {path}", data=data)
