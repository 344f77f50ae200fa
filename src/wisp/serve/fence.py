"""The file tools of a served session, held to its workspace whatever path reaches them.

Above: the session driver, which puts `FencedTool` in front of the cloud toolset's read,
write, edit, glob and grep. Below: the toolset's own tools.

The permission rules already grant only the workspace (`wisp.serve.containment`); this
is the second wall, which does not depend on how a rule pattern matches: each path the
call names is resolved (`..` and every symlink) and must land inside the workspace, and
the call then runs on the resolved path, so a link the session's own commands made
cannot send it elsewhere. Listings (glob, grep) keep only what resolves inside.

Not covered: a link swapped between the check and the open by a command running at the
same moment (a background command). The OS sandbox holds the commands themselves.
"""

from __future__ import annotations

import os
from pathlib import Path

from wisp.jsontypes import JSON
from wisp.serve.toolset import DelegatingTool
from wisp.tools.base import Tool, ToolContext, ToolResult

# The input field that names a path, per toolset tool.
PATH_FIELDS = {"read": "file_path", "write": "file_path", "edit": "file_path",
               "glob": "path", "grep": "path"}


class FencedTool(DelegatingTool):
    """One toolset file tool, held to `workspace` (see the module doc)."""

    def __init__(self, inner: Tool, workspace: Path) -> None:
        super().__init__(inner)
        self.root = os.path.realpath(workspace)
        self.field = PATH_FIELDS[inner.name]

    def inside(self, path: str) -> bool:
        real = os.path.realpath(path)
        return real == self.root or real.startswith(self.root + "/")

    def resolved(self, tool_input: JSON) -> tuple[JSON, str | None]:
        """(the input on the resolved path, None) or (input, why it is refused)."""
        raw = tool_input.get(self.field)
        if raw is None or raw == "":
            return tool_input, None  # the tool's own default: the workspace
        if not isinstance(raw, str):
            return tool_input, None  # the tool's schema check answers it
        path = os.path.realpath(os.path.join(self.root, os.path.expanduser(raw)))
        if not self.inside(path):
            return tool_input, (f"{raw} is outside this session's workspace ({self.root}); "
                                "the session's tools can reach only the workspace")
        return {**tool_input, self.field: path}, None

    async def run(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        mapped, refusal = self.resolved(tool_input)
        if refusal is not None:
            return ToolResult.error(refusal)
        # glob and grep apply the narrowed read filter to every file they list
        return await self.inner.run(mapped, ctx.reading_only(self.inside))


def fenced(tools: dict[str, Tool], workspace: Path) -> dict[str, Tool]:
    """The toolset's file tools fenced; everything else as it was."""
    return {name: FencedTool(tool, workspace) if name in PATH_FIELDS else tool
            for name, tool in tools.items()}
