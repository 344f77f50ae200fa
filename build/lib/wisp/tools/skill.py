"""Skill: loads one of the user's skills (`wisp.project.skills`) into the conversation.

The tool's description lists each skill's name and description; that is all the model
knows of them until it calls the tool, which answers with the skill's instructions read
from disk at that moment, the folder they live in and the other files there, so the model
can Read a reference or run a script the instructions mention.

Not a built-in: the runtime offers it only when skills exist, with a callable that returns
the current skills, so a reload changes what the next call sees.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import ClassVar, Literal

from wisp.project.skills import SKILL_FILE, Skill
from wisp.tools.base import JSON, Tool, ToolContext, ToolKind, ToolResult, check_input

SkillSource = Callable[[], Mapping[str, Skill]]

MAX_LISTED_FILES = 50
# A long description costs tokens on every request; the name and a sentence are enough
# for the model to choose.
MAX_DESCRIPTION_CHARS = 250


def skill_name(tool_input: JSON) -> str:
    """The name a call asks for, as both the permission check and the lookup see it: a
    model sometimes writes a skill as the slash command it also is."""
    raw = tool_input.get("skill")
    return raw.strip().removeprefix("/") if isinstance(raw, str) else ""


class SkillTool(Tool):
    name: ClassVar[str] = "Skill"
    # Loading a skill reads instructions the user installed; the calls the model then
    # makes are judged one by one. A `Skill(name)` rule matches the skill's name.
    kind: ClassVar[ToolKind] = "meta"
    rule_subject: ClassVar[Literal["paths", "command", "domain", "name"]] = "name"
    description: ClassVar[str] = (
        "Load a skill: a set of instructions, sometimes with scripts and reference files, "
        "that the user installed for a kind of task. When a request matches a skill's "
        "description, load the skill before starting and follow its instructions. Give "
        "the skill's exact name as `skill`, and optionally `args` for the skill to work on. "
        "A skill already loaded in this conversation need not be loaded again.\n\n"
        "Available skills:\n{skills}"
    )
    input_schema: ClassVar[JSON] = {
        "type": "object",
        "properties": {
            "skill": {"type": "string", "description": "The skill's name, e.g. \"pdf\""},
            "args": {"type": "string", "description": "Optional input for the skill"},
        },
        "required": ["skill"],
    }

    def __init__(self, skills: SkillSource) -> None:
        self.skills = skills

    def api_definition(self) -> JSON:
        return {
            "name": self.name,
            "description": self.description.format(skills=listing(self.skills())),
            "input_schema": self.input_schema,
        }

    def is_read_only(self, tool_input: JSON) -> bool:
        return True

    def subject(self, tool_input: JSON) -> str:
        return skill_name(tool_input)

    def describe(self, tool_input: JSON) -> str:
        return f"Load the skill {skill_name(tool_input) or '?'}"

    async def run(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        problem = check_input(self.input_schema, tool_input)
        if problem:
            return ToolResult.error(problem)
        skills = self.skills()
        name = skill_name(tool_input)
        skill = skills.get(name)
        if skill is None:
            known = ", ".join(skills) or "none"
            return ToolResult.error(f"Unknown skill {name!r}. Available skills: {known}")
        try:
            body = skill.load_body()
        except OSError as exc:
            return ToolResult.error(f"Could not load the skill {name!r}: {exc}")
        args = tool_input.get("args")
        text = loaded_text(skill, body, args.strip() if isinstance(args, str) else "")
        return ToolResult(text, data={"success": True, "commandName": name})


def listing(skills: Mapping[str, Skill]) -> str:
    """`- name: description`, one line a skill."""
    if not skills:
        return "(none)"
    return "\n".join(f"- {name}: {_short(skill.description)}" if skill.description
                     else f"- {name}" for name, skill in skills.items())


def _short(text: str) -> str:
    text = " ".join(text.split())
    if len(text) <= MAX_DESCRIPTION_CHARS:
        return text
    return text[: MAX_DESCRIPTION_CHARS - 1] + "…"


def loaded_text(skill: Skill, body: str, args: str) -> str:
    parts = [f"Skill {skill.name!r} loaded from {skill.folder}. Paths in its instructions "
             "are relative to that folder."]
    files, more = folder_files(skill.folder)
    if files:
        shown = "\n".join(f"- {f}" for f in files)
        extra = "\n- … and more, not listed" if more else ""
        parts.append(f"Other files in the folder:\n{shown}{extra}")
    parts.append(body or "(The skill has no instructions.)")
    if args:
        parts.append(f"Arguments: {args}")
    return "\n\n".join(parts)


def folder_files(folder: Path, limit: int = MAX_LISTED_FILES) -> tuple[list[str], bool]:
    """Up to `limit` files below `folder` (relative, SKILL.md and hidden ones left out), and
    whether there are more. The walk stops once past the limit: a skill that vendors a
    dependency tree must not cost a crawl of it."""
    found: list[str] = []
    # os.walk does not follow folder symlinks (no loops) and skips folders it cannot list.
    for current, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        here = Path(current).relative_to(folder)
        for filename in sorted(filenames):
            if filename.startswith(".") or (not here.parts and filename == SKILL_FILE):
                continue
            if len(found) == limit:
                return found, True
            found.append((here / filename).as_posix())
    return found, False
