"""A session's skills: each skill version its agent pins, written into the session's
workspace at `mnt/skills/<name>/` and offered to the model through wisp's Skill tool,
exactly as a project's skills are (`wisp.tools.skill`): the model sees each skill's name
and description, loads its instructions when a task calls for them, and reads or runs
the skill's other files in that folder.

The files are written when a turn starts and the folder does not hold that version yet
(a marker file names the version written), read-only (mode 0444, and an Edit deny rule
the session adds for the folder). A skill removed from the session's agent is removed
from the workspace.
"""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wisp.project.skills import SKILL_FILE, Skill
from wisp.serve.http import HttpError
from wisp.serve.shapes.skills import skill_folder
from wisp.serve.skills import Skills
from wisp.serve.store.base import Store

if TYPE_CHECKING:
    from wisp.runtime.runtime import Runtime

JSON = dict[str, Any]
TOOL = "Skill"
_MARKER = ".wisp-skill-version"


def install(runtime: Runtime | None, store: Store, owner: str, session: JSON,
            workspace: Path) -> list[str]:
    """Mounts the session agent's skills and gives the runtime the Skill tool over them
    (or takes it away when there are none). Answers the deny-rule paths that hold the
    skill folders read-only. ValueError when a pinned skill version no longer exists."""
    skills = Skills(store, owner)
    found: dict[str, Skill] = {}
    for entry in (session.get("agent") or {}).get("skills") or []:
        try:
            version = skills.version(entry["skill_id"], entry["version"])
        except HttpError:
            raise ValueError(f"skill {entry['skill_id']} (version {entry['version']}) "
                             "no longer exists: update the agent") from None
        folder = workspace / skill_folder(version["name"])
        if not folder.resolve().is_relative_to(workspace.resolve()):
            raise ValueError(f"{folder} leads out of the session's workspace")
        _write(folder, version["id"], lambda v=version: skills.files(v["skill_id"], v["id"]))
        found[version["name"]] = Skill(version["name"], version["description"],
                                       folder / SKILL_FILE, "project")
    _prune(workspace / skill_folder(""), set(found))
    _offer(runtime, found)
    return [f"{skill.folder.resolve()}/**" for skill in found.values()]


def _write(folder: Path, version_id: str, files: Any) -> None:
    marker = folder / _MARKER
    with contextlib.suppress(OSError):
        if marker.read_text() == version_id:
            return  # already there
    _remove(folder)
    for path, data in files().items():
        place = folder / path
        if not place.resolve().is_relative_to(folder.resolve()):
            raise ValueError(f"skill file {path!r} leaves the skill's folder")
        place.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
        place.write_bytes(data)
        place.chmod(0o444)
    marker.write_text(version_id)


def _remove(folder: Path) -> None:
    if folder.is_symlink() or folder.is_file():
        folder.unlink()  # the agent put something else there: it goes
    elif folder.exists():
        for child in folder.rglob("*"):
            with contextlib.suppress(OSError):
                child.chmod(0o755 if child.is_dir() else 0o644)
        shutil.rmtree(folder)


def _prune(root: Path, keep: set[str]) -> None:
    """Skill folders the agent no longer has (only ones this module wrote)."""
    if not root.is_dir():
        return
    for child in root.iterdir():
        if child.name not in keep and (child / _MARKER).is_file():
            _remove(child)


def _offer(runtime: Runtime | None, found: dict[str, Skill]) -> None:
    if runtime is None:
        return
    from wisp.tools.skill import SkillTool

    for tools in (runtime.base_tools, runtime.ctx.config.tools):
        tools.pop(TOOL, None)
        if found:
            tools[TOOL] = SkillTool(lambda: found)
