"""Skills: folders of instructions (and whatever files they need) that the model loads on
demand, kept where Claude Code users keep them:

- `<config dir>/skills/<name>/SKILL.md` (user) and `<cwd>/.claude/skills/<name>/SKILL.md`
  (project), plus the skills folders of plugins, whose skills are named `plugin:name`;
- front matter `name`, `description` and optionally `allowed-tools`; the body is the
  instructions.

Only the front matter is read at load time. The model sees names and descriptions (in the
Skill tool's description) and asks for a body when it needs one, so a session with fifty
skills pays for fifty headers, not fifty documents, and an edited body is seen by the next
call without a reload.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from wisp.diagnostics import warn
from wisp.project.frontmatter import (
    FieldValue,
    first_line,
    normalise_text,
    read_markdown,
    scalar,
    split_front_matter,
    tool_list,
)

SKILL_FILE = "SKILL.md"
# A name the model can type and a permission rule can hold: no spaces, parentheses or the
# `:` that separates a plugin's namespace. Compiled by `re` on first use, not at import.
_NAME = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}"
# Front matter is short; reading this much covers it in all but odd files, which are then
# read whole. Keeps a long body (reference tables, examples) off the start-up path.
_HEAD_BYTES = 8192

class Skill:
    """One skill found on disk. The body stays there: `load_body` reads it when asked."""

    __slots__ = ("allowed_tools", "description", "folder", "name", "path", "plugin",
                 "source")

    def __init__(self, name: str, description: str, path: Path, source: str, *,
                 plugin: str | None = None, allowed_tools: tuple[str, ...] = ()) -> None:
        self.name = name
        self.description = description
        self.path = path  # the SKILL.md
        self.folder = path.parent
        self.source = source  # "user", "project" or "plugin"
        self.plugin = plugin
        self.allowed_tools = allowed_tools

    def __repr__(self) -> str:
        return (f"Skill(name={self.name!r}, source={self.source!r}, "
                f"path={str(self.path)!r})")

    def load_body(self) -> str:
        """The instructions, front matter removed, as the file reads now. OSError when the
        file is gone or is not UTF-8 text."""
        parsed = read_markdown(self.path)
        if parsed is None:
            raise OSError(f"cannot read {self.path} as UTF-8 text")
        return parsed[1].strip()

    def describe(self) -> dict[str, str]:
        """The SDK's SlashCommand shape, for `initialize.commands` and `reload_skills`."""
        return {"name": self.name, "description": self.description, "argumentHint": ""}


def is_valid_name(name: str) -> bool:
    return re.fullmatch(_NAME, name) is not None


def load_skills(roots: Sequence[tuple[str, Path, str | None]]) -> dict[str, Skill]:
    """Every skill under `roots`, each (source, skills folder, namespace or None), by name,
    sorted. On a name clash a later root wins: callers pass user, project, then plugins.
    A folder without SKILL.md is not a skill; an unreadable or unnamed one is skipped
    with a warning, never an error."""
    found: dict[str, Skill] = {}
    for source, folder, namespace in roots:
        found.update(_skills_in(source, folder, namespace))
    return dict(sorted(found.items()))


def _skills_in(source: str, root: Path, namespace: str | None) -> dict[str, Skill]:
    found: dict[str, Skill] = {}
    try:  # the only system call when the folder does not exist
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return found
    for entry in entries:
        if entry.name.startswith(".") or not _is_folder(entry):
            continue
        skill = _read_skill(Path(entry.path), source, namespace)
        if skill is None:
            continue
        if skill.name in found:
            warn(f"wisp: warning: skipping skill {skill.path}: "
                 f"{found[skill.name].path} already uses the name {skill.name!r}\n")
            continue
        found[skill.name] = skill
    return found


def _is_folder(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()  # follows a symlinked skill folder
    except OSError:
        return False


def _read_skill(folder: Path, source: str, namespace: str | None) -> Skill | None:
    path = folder / SKILL_FILE
    try:
        fields, body = _read_header(path)
    except FileNotFoundError:
        return None  # a folder of something else: nothing to say
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not UTF-8 text"
        warn(f"wisp: warning: skipping skill {path}: {reason}\n")
        return None
    name = scalar(fields.get("name"))
    if name is None or not is_valid_name(name):
        name = folder.name
    if not is_valid_name(name):
        warn(f"wisp: warning: skipping skill {path}: {name!r} is not a usable skill name "
             "(letters, digits, '.', '_' and '-'); set `name` in its front matter\n")
        return None
    description = scalar(fields.get("description")) or first_line(body)
    return Skill(f"{namespace}:{name}" if namespace else name, description, path, source,
                 plugin=namespace if source == "plugin" else None,
                 allowed_tools=tool_list(fields.get("allowed-tools")))


def _read_header(path: Path) -> tuple[dict[str, FieldValue], str]:
    """The front matter and what body text came with it, reading the whole file only
    when the front matter runs past the first `_HEAD_BYTES`."""
    with path.open("rb") as file:
        head = file.read(_HEAD_BYTES + 1)
    cut = head.rfind(b"\n", 0, _HEAD_BYTES)
    if len(head) <= _HEAD_BYTES:
        text = head.decode("utf-8")
    elif cut >= 0:
        # Cut at a line end: a newline byte never sits inside a UTF-8 sequence, so what
        # is kept decodes cleanly (and the header is whole lines anyway).
        text = normalise_text(head[: cut + 1].decode("utf-8"))
        fields, body = split_front_matter(text)
        if fields or not text.startswith("---"):
            return fields, body
        # No closing fence in the head: a long header, or none at all. Read it all.
        text = path.read_text(encoding="utf-8")
    else:
        text = path.read_text(encoding="utf-8")
    return split_front_matter(normalise_text(text))
