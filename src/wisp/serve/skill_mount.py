"""A session's skills: each skill version its agent (and, for a coordinator, each of its
roster's agents) pins, written into the session's workspace at `skills/<name>/` (where
the SDK's `AgentToolContext` puts them in a self-hosted worker's workdir) and offered to
the model through wisp's Skill tool, exactly as a project's skills are
(`wisp.tools.skill`): the model sees each skill's name and description, loads its
instructions when a task calls for them, and reads or runs the skill's other files.

The files are written when a turn starts and the folder does not hold that version yet
(a marker file names the version written), read-only (mode 0444, and an Edit deny rule
for the folder). A skill no longer pinned is removed from the workspace. A coordinator's
threads share its workspace: the coordinator's turn mounts every roster skill, and a
thread is offered only its own agent's.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wisp.jsontypes import JSON
from wisp.project.skills import SKILL_FILE, Skill
from wisp.serve.http import HttpError
from wisp.serve.shapes import SkillVersionDocument
from wisp.serve.shapes.skills import skill_folder
from wisp.serve.skills import Skills, runnable
from wisp.serve.store.base import Store
from wisp.serve.store.offload import off_loop
from wisp.tools.base import ToolContext, ToolResult
from wisp.tools.skill import SkillTool

if TYPE_CHECKING:
    from wisp.runtime.runtime import Runtime

TOOL = "Skill"
RANK = -2  # the rank of the deny rules that hold skill folders read-only
_MARKER = ".wisp-skill-version"


def install(runtime: Runtime | None, store: Store, owner: str, agent: Mapping[str, Any],
            workspace: Path) -> None:
    """Mounts the skills of a session's agent and of its roster, and gives the runtime
    the Skill tool over the agent's own (or takes it away when there are none).
    ValueError when a pinned skill version no longer exists."""
    give(runtime, mount_all(store, owner, agent, workspace), workspace)


def mount_all(store: Store, owner: str, agent: Mapping[str, Any],
              workspace: Path) -> dict[str, Skill]:
    """`install`'s blocking half (store reads, file writes, no runtime: it may run on the
    store's thread pool): mounts the skills and answers the agent's own."""
    skills = Skills(store, owner)
    roster = (agent.get("multiagent") or {}).get("agents") or []
    mounted: set[str] = set()
    for member in (agent, *roster):
        for entry in member.get("skills") or []:
            version = _version(skills, entry)
            if version["name"] not in mounted:
                mounted.add(version["name"])
                _write(_folder(workspace, version["name"]), version["id"],
                       lambda v=version: skills.files(v["skill_id"], v["id"]))
    _prune(workspace / skill_folder(""), mounted)
    return found_skills(store, owner, agent, workspace)


async def offer(runtime: Runtime | None, store: Store, owner: str,
                agent: Mapping[str, Any], workspace: Path) -> None:
    """The Skill tool over `agent`'s skills (already mounted), their folders read-only.
    The skills are read off the event loop (`off_loop`: round trips on PostgreSQL)."""
    if runtime is not None:
        found = await off_loop(store, found_skills, store, owner, agent, workspace)
        give(runtime, found, workspace)


def found_skills(store: Store, owner: str, agent: Mapping[str, Any],
                 workspace: Path) -> dict[str, Skill]:
    """`agent`'s skills as mounted in `workspace` (store reads only)."""
    skills = Skills(store, owner)
    found: dict[str, Skill] = {}
    for entry in agent.get("skills") or []:
        version = _version(skills, entry)
        folder = _folder(workspace, version["name"])
        found[version["name"]] = Skill(version["name"], version["description"],
                                       folder / SKILL_FILE, "project")
    return found


def give(runtime: Runtime | None, found: dict[str, Skill], workspace: Path) -> None:
    """The runtime's Skill tool over `found` (none: it is taken away), their folders
    read-only. On the event loop: it changes the runtime."""
    if runtime is None:
        return
    from wisp.rules import Rule

    runtime.replace_ranked_rules("deny", RANK, [
        Rule.parse(f"Edit(/{s.folder.resolve()}/**)", rank=RANK) for s in found.values()])
    skill_tool = {TOOL: _SessionSkillTool(lambda: found, workspace)} if found else {}
    runtime.offer_tools(skill_tool, replacing=(TOOL,))


def _version(skills: Skills, entry: JSON) -> SkillVersionDocument:
    try:
        return skills.version(entry["skill_id"], entry["version"])
    except HttpError:
        raise ValueError(f"skill {entry['skill_id']} (version {entry['version']}) no "
                         "longer exists: update the agent") from None


def _folder(workspace: Path, name: str) -> Path:
    folder = workspace / skill_folder(name)
    if not folder.resolve().is_relative_to(workspace.resolve()):
        raise ValueError(f"{folder} leads out of the session's workspace")
    return folder


class _SessionSkillTool(SkillTool):
    """Names a skill's folder as the model's tools reach it: relative to the working
    folder (the workspace here, a self-hosted worker's workdir there)."""

    def __init__(self, skills: Callable[[], dict[str, Skill]], workspace: Path) -> None:
        super().__init__(skills)
        self.workspace = workspace

    async def run(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        result = await super().run(tool_input, ctx)
        if not isinstance(result.content, str):
            return result
        return ToolResult(result.content.replace(f"{self.workspace}/", ""), result.is_error,
                          result.data)


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
        place.chmod(0o555 if runnable(data) else 0o444)
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
