"""Edit: exact string replacement inside one file."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import ClassVar

from wisp.tools._fs import cat_n, looks_binary, record_read, resolve_path, stale_write_problem
from wisp.tools._patch import structured_patch
from wisp.tools.base import JSON, Tool, ToolContext, ToolKind, ToolResult, check_input
from wisp.tools.write import write_text

# Lines of surrounding context shown around the edited region.
_SNIPPET_CONTEXT = 4


class _Replacement:
    # Here and in _Plan, plain classes: a dataclass costs ~1 ms to define at start-up.
    __slots__ = ("count", "first_index", "new_string", "updated")

    def __init__(self, updated: str, count: int, first_index: int, new_string: str) -> None:
        self.updated = updated
        self.count = count
        self.first_index = first_index
        self.new_string = new_string


def _replace(content: str, old: str, new: str, replace_all: bool) -> _Replacement | str:
    count = content.count(old)
    if count == 0 and "\r\n" in content and "\n" in old and "\r\n" not in old:
        # The model almost always writes LF; match it against a CRLF file anyway.
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
        count = content.count(old)
    if count == 0:
        return f"String to replace not found in file.\nString: {old}"
    if count > 1 and not replace_all:
        return (
            f"Found {count} matches of the string to replace, but replace_all is false. "
            "To replace all occurrences, set replace_all to true. To replace only one "
            "occurrence, please provide more context to uniquely identify the instance."
        )
    updated = content.replace(old, new) if replace_all else content.replace(old, new, 1)
    return _Replacement(updated, count if replace_all else 1, content.index(old), new)


def _snippet(updated: str, rep: _Replacement) -> str:
    first = updated.count("\n", 0, rep.first_index)
    last = first + rep.new_string.count("\n")
    lines = updated.split("\n")
    lo = max(0, first - _SNIPPET_CONTEXT)
    hi = min(len(lines), last + _SNIPPET_CONTEXT + 1)
    return cat_n((line.rstrip("\r") for line in lines[lo:hi]), lo + 1)


def _load(path: Path) -> str:
    raw = path.read_bytes()
    if looks_binary(raw):
        raise ValueError(f"{path} is a binary file; Edit only changes text files.")
    return raw.decode("utf-8", errors="replace")


class Edit(Tool):
    name: ClassVar[str] = "Edit"
    description: ClassVar[str] = (
        "Replace `old_string` with `new_string` in a file, matching exactly (whitespace and "
        "indentation included). `old_string` must occur exactly once unless `replace_all` is "
        "true; add surrounding lines to make it unique. An empty `old_string` creates a new "
        "file containing `new_string`. Read the file first so the match is exact."
    )
    input_schema: ClassVar[JSON] = {
        "type": "object",
        "properties": {
            "file_path": {"type": "string", "description": "Path of the file to change"},
            "old_string": {"type": "string", "description": "Exact text to replace"},
            "new_string": {"type": "string", "description": "Text to put in its place"},
            "replace_all": {
                "type": "boolean",
                "default": False,
                "description": "Replace every occurrence instead of exactly one",
            },
        },
        "required": ["file_path", "old_string", "new_string"],
    }
    kind: ClassVar[ToolKind] = "edit"

    def target_paths(self, tool_input: JSON) -> list[str]:
        path = tool_input.get("file_path")
        return [path] if isinstance(path, str) else []

    def describe(self, tool_input: JSON) -> str:
        return f"Edit {tool_input.get('file_path', '')}"

    async def run(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        problem = check_input(self.input_schema, tool_input)
        if not problem and tool_input["old_string"] == tool_input["new_string"]:
            problem = "No changes to make: old_string and new_string are exactly the same."
        if problem:
            return ToolResult.error(problem)
        path = resolve_path(ctx.cwd, tool_input["file_path"])
        try:
            if tool_input["old_string"] == "" and not path.exists():
                original, plan = "", _Plan(tool_input["new_string"], "created")
            else:
                original = await _load_existing(path, ctx)
                plan = _plan(path, original, tool_input)
            if ctx.files is not None:
                await ctx.files.write(path, plan.updated)
            else:
                await asyncio.to_thread(write_text, path, plan.updated)
        except _Refusal as exc:
            return ToolResult.error(str(exc))
        except OSError as exc:
            return ToolResult.error(f"Cannot write {path}: {exc.strerror or exc}")
        record_read(ctx.state, path)
        return ToolResult(content=plan.message(path), data=_data(path, tool_input, original, plan))


class _Refusal(Exception):
    """The edit cannot be made as asked; the message tells the model why."""


class _Plan:
    __slots__ = ("replacement", "updated", "verb")

    def __init__(self, updated: str, verb: str, replacement: _Replacement | None = None) -> None:
        self.updated = updated
        self.verb = verb  # how the file changed, for the message: created / updated / edited
        self.replacement = replacement

    def message(self, path: Path) -> str:
        rep = self.replacement
        if rep is None:
            return f"File {self.verb} successfully at: {path}"
        if rep.count > 1:
            return f"The file {path} has been updated: replaced {rep.count} occurrences."
        return (
            f"The file {path} has been updated. The edited region now reads (cat -n):\n"
            + _snippet(self.updated, rep)
        )


async def _load_existing(path: Path, ctx: ToolContext) -> str:
    if not path.exists():
        raise _Refusal(f"File does not exist: {path}")
    if path.is_dir():
        raise _Refusal(f"{path} is a directory, not a file.")
    stale = stale_write_problem(ctx.state, path)
    if stale:
        raise _Refusal(stale)
    try:
        if ctx.files is not None:
            return await ctx.files.read(path)
        return await asyncio.to_thread(_load, path)
    except (OSError, ValueError) as exc:
        raise _Refusal(str(exc)) from exc


def _plan(path: Path, content: str, tool_input: JSON) -> _Plan:
    old, new = tool_input["old_string"], tool_input["new_string"]
    if old == "":
        if content.strip():
            raise _Refusal(
                f"old_string is empty but {path} already has content; "
                "give the exact text to replace."
            )
        return _Plan(new, "updated")
    rep = _replace(content, old, new, bool(tool_input.get("replace_all", False)))
    if isinstance(rep, str):
        raise _Refusal(rep)
    return _Plan(rep.updated, "edited", rep)


def _data(path: Path, tool_input: JSON, original: str, plan: _Plan) -> JSON:
    return {
        "filePath": str(path),
        "oldString": tool_input["old_string"],
        "newString": tool_input["new_string"],
        "originalFile": original,
        "structuredPatch": structured_patch(original, plan.updated),
        "userModified": False,
        "replaceAll": bool(tool_input.get("replace_all", False)),
    }
