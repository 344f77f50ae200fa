"""Grep: regex search over file contents.

ripgrep runs the search (`_grep_rg`; wisp's wheel brings it), or, where there is none,
Python's engine in a child process (`_grep_worker`): never in wisp's own process, where a
backtracking pattern could hold the GIL for hours and leave SIGTERM unanswered. Whichever
ran, files a Read deny rule covers are dropped from the hits before anything is shown.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, ClassVar, cast

from wisp.tools._fs import readable, resolve_path
from wisp.tools.base import JSON, Tool, ToolContext, ToolKind, ToolResult, check_input
from wisp.tools.glob import newest_first

if TYPE_CHECKING:
    # Loaded on the first search: see _query and _search.
    from wisp.tools._grep_search import Hits, Mode, Query

# Keeps a broad content search from flooding the context window.
MAX_OUTPUT_CHARS = 30_000
_MODES = ("files_with_matches", "content", "count")


def _int(tool_input: JSON, key: str) -> int:
    value = tool_input.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    return max(0, int(value))


def _page(items: list[str], tool_input: JSON) -> tuple[list[str], str]:
    """Apply offset/head_limit; returns the page and a note when it is not everything."""
    offset, limit = _int(tool_input, "offset"), _int(tool_input, "head_limit")
    page = items[offset : offset + limit] if limit else items[offset:]
    if len(page) == len(items):
        return page, ""
    return page, f"[Showing {len(page)} of {len(items)} results (offset {offset})]"


def _cap(text: str) -> str:
    if len(text) <= MAX_OUTPUT_CHARS:
        return text
    cut = text.rfind("\n", 0, MAX_OUTPUT_CHARS)
    cut = cut if cut > 0 else MAX_OUTPUT_CHARS
    return (
        text[:cut] + f"\n[Output truncated at {cut} of {len(text)} characters; narrow the "
        "search or use head_limit/offset.]"
    )


def _query(tool_input: JSON, ctx: ToolContext) -> Query:
    raw_path = tool_input.get("path")
    context = _int(tool_input, "-C")
    from wisp.tools._grep_search import Query

    return Query(
        pattern=tool_input["pattern"],
        root=resolve_path(ctx.cwd, raw_path) if raw_path else ctx.cwd,
        mode=cast("Mode", tool_input.get("output_mode") or "files_with_matches"),
        glob=tool_input.get("glob") or None,
        file_type=tool_input.get("type") or None,
        ignore_case=bool(tool_input.get("-i", False)),
        line_numbers=bool(tool_input.get("-n", True)),
        before=_int(tool_input, "-B") or context,
        after=_int(tool_input, "-A") or context,
        multiline=bool(tool_input.get("multiline", False)),
    )


def _present(query: Query, hits: Hits, tool_input: JSON) -> ToolResult:
    data: JSON = {"mode": query.mode}
    if query.mode == "content":
        lines = hits.lines(separated=bool(query.before or query.after))
        page, note = _page([readable(line) for line in lines], tool_input)
        data.update(numLines=len(page), content="\n".join(page), numFiles=len(hits.files))
        text = "\n".join(page) if page else "No matches found"
    elif query.mode == "count":
        rows = [f"{readable(path)}:{n}" for path, n in hits.counts]
        page, note = _page(rows, tool_input)
        total = sum(n for _, n in hits.counts)
        data.update(numMatches=total, numFiles=len(hits.counts), content="\n".join(page))
        text = "\n".join(page) if page else "No matches found"
        if page:
            text += f"\n\nFound {total} total matching lines across {len(hits.counts)} files."
    else:
        # Sorted on the real paths (stat needs them), shown readable.
        page, note = _page([readable(p) for p in newest_first(hits.files)], tool_input)
        data.update(filenames=page, numFiles=len(hits.files))
        noun = "file" if len(hits.files) == 1 else "files"
        text = f"Found {len(hits.files)} {noun}\n" + "\n".join(page) if page else "No files found"
    if note:
        text += "\n\n" + note
    return ToolResult(content=_cap(text), data=data)


class Grep(Tool):
    name: ClassVar[str] = "Grep"
    description: ClassVar[str] = (
        "Search file contents with a regular expression (ripgrep syntax). Narrow the files "
        "with `glob` (e.g. `*.py`, `**/*.{ts,tsx}`) or `type` (e.g. `py`, `js`). "
        "`output_mode`: `files_with_matches` (default; file paths), `content` (matching "
        "lines, with `-n`, `-A`/`-B`/`-C` context) or `count`. `-i` ignores case; "
        "`multiline` lets `.` and patterns span lines. `head_limit`/`offset` page through "
        "long results. Use this instead of running grep or rg through Bash."
    )
    input_schema: ClassVar[JSON] = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Regular expression to search for"},
            "path": {"type": "string", "description": "File or directory (default: cwd)"},
            "glob": {"type": "string", "description": "Only search files matching this glob"},
            "type": {"type": "string", "description": "Only search this file type"},
            "output_mode": {"type": "string", "enum": list(_MODES)},
            "-i": {"type": "boolean", "description": "Case-insensitive"},
            "-n": {"type": "boolean", "description": "Line numbers (content mode)"},
            "-A": {"type": "number", "description": "Lines of context after a match"},
            "-B": {"type": "number", "description": "Lines of context before a match"},
            "-C": {"type": "number", "description": "Lines of context around a match"},
            "head_limit": {"type": "number", "description": "Show only the first N results"},
            "offset": {"type": "number", "description": "Skip the first N results"},
            "multiline": {"type": "boolean", "description": "Let matches span lines"},
        },
        "required": ["pattern"],
    }
    kind: ClassVar[ToolKind] = "read"
    searches_folders: ClassVar[bool] = True

    def target_paths(self, tool_input: JSON) -> list[str]:
        path = tool_input.get("path")
        return [path] if isinstance(path, str) and path else ["."]

    def describe(self, tool_input: JSON) -> str:
        where = tool_input.get("path")
        return f"Grep {tool_input.get('pattern', '')}" + (f" in {where}" if where else "")

    async def run(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        problem = check_input(self.input_schema, tool_input)
        if problem:
            return ToolResult.error(problem)
        if tool_input.get("output_mode", "files_with_matches") not in _MODES:
            return ToolResult.error(f"output_mode must be one of: {', '.join(_MODES)}")
        query = _query(tool_input, ctx)
        if not query.root.exists():
            return ToolResult.error(f"Path does not exist: {query.root}")
        hits = await _search(query, ctx)
        if isinstance(hits, str):
            return ToolResult.error(hits)
        return _present(query, hits, tool_input)


async def _search(query: Query, ctx: ToolContext) -> Hits | str:
    from wisp.tools._grep_rg import search_ripgrep
    from wisp.tools._grep_worker import search_in_child

    rg = ripgrep()
    try:
        if rg:
            hits = await search_ripgrep(rg, query, ctx.processes, ctx.abort)
        else:
            hits = await search_in_child(query, ctx.processes, ctx.abort)
    except OSError as exc:
        return f"Grep failed: {exc}"
    if isinstance(hits, str) or ctx.read_filter is None:
        return hits
    return hits.kept(ctx.read_filter)


def ripgrep() -> str | None:
    """The `rg` to run (wisp's own, else PATH's); None where there is none."""
    from wisp.tools._grep_rg import find_ripgrep

    builtin = os.environ.get("USE_BUILTIN_RIPGREP", "").strip().lower() not in ("0", "false")
    return find_ripgrep(builtin)
