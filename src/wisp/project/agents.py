"""Subagents defined in Markdown files: `.claude/agents/*.md` (project), `<config dir>/
agents/*.md` (user) and a plugin's `agents/` folder.

Front matter `name`, `description`, `tools` (a list or comma-separated; absent means every
tool), `disallowedTools`, `model` (`inherit` means the session's) and `maxTurns`; the body
is the agent's system prompt. Each file becomes a definition in the shape the SDKs send in
`initialize.agents` (`{"description", "prompt", "tools", ...}`), so one parser
(`wisp.engine.subagents.parse_agents`) serves files, `--agents` and `initialize` alike,
and this module stays light enough to run before the first frame.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from wisp.diagnostics import warn
from wisp.jsontypes import JSON
from wisp.project.frontmatter import FieldValue, read_markdown, scalar, tool_list

# A root: (source, folder, namespace). Plugin agents are named `<plugin>:<agent>`.
AgentRoot = tuple[str, Path, str | None]
_NAME = r"[A-Za-z0-9_][A-Za-z0-9_.-]*"


def agents_flag(raw: str) -> JSON:
    """`--agents`: JSON text or a file holding it, an object of agent definitions (the
    shape initialize's `agents` has). UsageError when it is not one; OSError when the
    file cannot be read."""
    import json

    from wisp.errors import UsageError

    text = raw if raw.lstrip().startswith("{") else Path(raw).expanduser().read_text()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"--agents is not valid JSON: {exc.msg}") from None
    if not isinstance(data, dict):
        raise UsageError("--agents must be a JSON object of agent definitions")
    return data


def load_agent_files(roots: Sequence[AgentRoot]) -> dict[str, JSON]:
    """Definitions by name. Later roots win on a name clash (callers pass user, project,
    then plugins), as a project's own agent should replace a user's of the same name."""
    agents: dict[str, JSON] = {}
    for source, folder, namespace in roots:
        for path in _markdown_files(folder):
            parsed = _read_agent(path, source)
            if parsed is None:
                continue
            name, spec = parsed
            agents[f"{namespace}:{name}" if namespace else name] = spec
    return agents


def _markdown_files(folder: Path) -> list[Path]:
    try:
        names = sorted(os.listdir(folder))
    except OSError:  # absent (the usual case) or unreadable: nothing to load
        return []
    return [folder / n for n in names if n.endswith(".md") and not n.startswith(".")]


def _read_agent(path: Path, source: str) -> tuple[str, JSON] | None:
    parsed = read_markdown(path)
    if parsed is None:
        warn(f"wisp: warning: skipping agent file {path}: not readable as UTF-8 text\n")
        return None
    fields, body = parsed
    name = scalar(fields.get("name")) or path.stem
    if re.fullmatch(_NAME, name) is None:
        warn(f"wisp: warning: skipping agent file {path}: {name!r} is not a valid name\n")
        return None
    spec: JSON = {"description": scalar(fields.get("description")) or "",
                  "prompt": body.strip(), "source": source, "path": str(path)}
    _optional_fields(spec, fields)
    return name, spec


def _optional_fields(spec: JSON, fields: dict[str, FieldValue]) -> None:
    tools = list(tool_list(fields.get("tools")))
    if tools and tools != ["*"]:  # `*` (or no list) means every tool the session has
        spec["tools"] = tools
    disallowed = fields.get("disallowedtools") or fields.get("disallowed-tools")
    if disallowed is not None:
        spec["disallowedTools"] = list(tool_list(disallowed))
    model = scalar(fields.get("model"))
    if model and model.lower() != "inherit":
        spec["model"] = model
    turns = scalar(fields.get("maxturns") or fields.get("max-turns"))
    if turns and turns.isdigit():
        spec["maxTurns"] = int(turns)
