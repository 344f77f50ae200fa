"""Glob: find files by name pattern, most recently modified first."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from wisp.globmatch import GlobMatcher
from wisp.tools._fs import pruned, readable, resolve_path
from wisp.tools.base import JSON, Tool, ToolContext, ToolKind, ToolResult, check_input

MAX_RESULTS = 100


def _split_absolute(pattern: str, base: Path) -> tuple[str, Path]:
    """An absolute pattern carries its own base; make it relative to '/'."""
    if pattern.startswith("~"):
        pattern = os.path.expanduser(pattern)
    if pattern.startswith("/"):
        return pattern.lstrip("/"), Path("/")
    return pattern, base


def find_matching(base: Path, pattern: str, stop: Callable[[], bool] = lambda: False
                  ) -> list[str]:
    """Absolute paths of regular files under `base` whose relative path matches `pattern`.
    The walk runs in a worker thread, which nothing can cancel: it ends early once `stop()`
    is true, so an interrupted Glob of a huge tree does not hold wisp's exit."""
    matcher = GlobMatcher(pattern)
    prefix = matcher.literal_prefix()
    root = base / prefix if prefix else base
    depth_cap = matcher.max_depth()
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        if stop():
            return found
        rel_dir = os.path.relpath(dirpath, base).replace(os.sep, "/")
        depth = 0 if rel_dir == "." else rel_dir.count("/") + 1
        if depth_cap is not None and depth + 1 >= depth_cap:
            dirnames[:] = []
        else:
            dirnames[:] = pruned(dirnames, pattern)
        for name in filenames:
            rel = name if rel_dir == "." else f"{rel_dir}/{name}"
            if matcher.match(rel):
                found.append(os.path.join(dirpath, name))
    return found


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def newest_first(paths: list[str]) -> list[str]:
    return sorted(paths, key=lambda p: (-_mtime(p), p))


class Glob(Tool):
    name: ClassVar[str] = "Glob"
    description: ClassVar[str] = (
        "Find files whose path matches a glob pattern such as `**/*.py` or "
        "`src/**/*.{ts,tsx}` (`**` spans directories, `*` stays within one). Searches "
        "`path` (default: the working directory) and returns absolute paths, most recently "
        f"modified first, at most {MAX_RESULTS}. Use Grep to search file contents."
    )
    input_schema: ClassVar[JSON] = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Glob pattern to match"},
            "path": {
                "type": "string",
                "description": "Directory to search in (default: working directory)",
            },
        },
        "required": ["pattern"],
    }
    kind: ClassVar[ToolKind] = "read"
    searches_folders: ClassVar[bool] = True

    def target_paths(self, tool_input: JSON) -> list[str]:
        """The folder the walk really starts in: an absolute pattern or one with `..`
        segments carries its own base, and that is what the permission check must see."""
        path = tool_input.get("path")
        base = path if isinstance(path, str) and path else "."
        pattern = tool_input.get("pattern")
        if not isinstance(pattern, str):
            return [base]
        pattern, root = _split_absolute(pattern, Path(base))
        prefix = GlobMatcher(pattern).literal_prefix()
        return [os.path.join(root, prefix) if prefix else str(root)]

    def describe(self, tool_input: JSON) -> str:
        where = tool_input.get("path")
        return f"Glob {tool_input.get('pattern', '')}" + (f" in {where}" if where else "")

    async def run(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        problem = check_input(self.input_schema, tool_input)
        if problem:
            return ToolResult.error(problem)
        raw_path = tool_input.get("path")
        base = resolve_path(ctx.cwd, raw_path) if raw_path else ctx.cwd
        if not base.is_dir():
            return ToolResult.error(f"Directory does not exist: {base}")
        pattern, base = _split_absolute(tool_input["pattern"], base)
        started = time.monotonic()
        stop = ctx.abort.is_set
        matches = await asyncio.to_thread(lambda: newest_first(find_matching(base, pattern, stop)))
        may_read = ctx.read_filter
        if may_read is not None:
            matches = [m for m in matches if may_read(os.path.realpath(m))]
        shown = [readable(path) for path in matches[:MAX_RESULTS]]
        truncated = len(matches) > MAX_RESULTS
        data = {
            "filenames": shown,
            "numFiles": len(shown),
            "truncated": truncated,
            "durationMs": int((time.monotonic() - started) * 1000),
        }
        if not shown:
            return ToolResult(content="No files found", data=data)
        text = "\n".join(shown)
        if truncated:
            text += (
                f"\n(Showing the {MAX_RESULTS} most recent of {len(matches)} matches. "
                "Use a more specific path or pattern to see the rest.)"
            )
        return ToolResult(content=text, data=data)
