"""Whether the user trusts a project folder, and the record that says so.

Above: the settings loader (an untrusted folder's grants are held back, see
`wisp.settings.untrusted`), project memory (imports from outside the project need a
recorded approval) and the terminal UI's trust dialog, which writes the record. Below:
one JSON file, the user's config, shared with Claude Code so that a folder trusted in one
is trusted in the other:

    <config file>  {"projects": {"<abs path>": {"hasTrustDialogAccepted": true,
                                                "hasClaudeMdExternalIncludesApproved": true,
                                                "hasClaudeMdExternalIncludesWarningShown": true}}}

The config file is `$CLAUDE_CONFIG_DIR/.claude.json` when that variable (or wisp's own
`WISP_CONFIG_DIR`) names a config folder, else `~/.claude.json`: the reference reads the
first and never the second when the variable is set.

A project is the repository it is in (the nearest folder up with `.git`), else the
folder itself. It is trusted when its record says so, or a record on a folder above it
does (the reference's terminal UI counts parents too), except that the home folder and
`/` trust only themselves: trusting `~` once must not trust everything a user ever
clones under it. `WISP_TRUST_PROJECT=1` in the environment trusts the folder wisp runs
in, for headless runs (CI, an SDK host that vouches for its checkout); a repository's
settings cannot set it, since it is read from the process's own environment.

Cheap: nothing is read unless a project folder has settings (or memory imports) that
depend on the answer.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from wisp.jsontypes import JSON
from wisp.paths import config_file, home_folder

TRUST_ENV = "WISP_TRUST_PROJECT"
ACCEPTED = "hasTrustDialogAccepted"
IMPORTS_APPROVED = "hasClaudeMdExternalIncludesApproved"
IMPORTS_ASKED = "hasClaudeMdExternalIncludesWarningShown"

__all__ = ["ACCEPTED", "IMPORTS_APPROVED", "IMPORTS_ASKED", "TRUST_ENV", "config_file",
           "home_folder", "imports_decision", "is_trusted", "project_root", "record",
           "trusted_by_env"]


def project_root(cwd: Path) -> Path:
    """The repository `cwd` is in (nearest folder with `.git`), else `cwd` itself."""
    folder = Path(os.path.abspath(cwd))
    for candidate in (folder, *folder.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return folder


def trusted_by_env(env: Mapping[str, str]) -> bool:
    return env.get(TRUST_ENV, "").strip().lower() in ("1", "true", "yes")


def is_trusted(cwd: Path, env: Mapping[str, str]) -> bool:
    if trusted_by_env(env):
        return True
    projects = _projects(env)
    if not projects:
        return False
    return any(_flag(projects, folder, ACCEPTED) for folder in _vouching_folders(cwd, env))


def _vouching_folders(cwd: Path, env: Mapping[str, str]) -> list[Path]:
    """The folders whose record trusts `cwd`: its project root, itself and every folder
    above it but the home folder and `/`, which vouch only for themselves."""
    folder = Path(os.path.abspath(cwd))
    exempt = {Path(os.path.abspath(home_folder(env))), Path(folder.anchor)}
    above = [p for p in folder.parents if p not in exempt]
    return [project_root(folder), folder, *above]


def imports_decision(cwd: Path, env: Mapping[str, str]) -> tuple[bool, bool]:
    """(approved, asked): whether memory imports from outside the project are approved
    for this project, and whether the user was ever asked."""
    projects = _projects(env)
    root = project_root(cwd)
    return _flag(projects, root, IMPORTS_APPROVED), _flag(projects, root, IMPORTS_ASKED)


def record(cwd: Path, env: Mapping[str, str], **flags: bool) -> Path:
    """Sets `flags` (e.g. `hasTrustDialogAccepted=True`) on the project's record and
    writes the config back whole, every other key kept. Atomic: a reader (another wisp,
    Claude Code) sees the old file or the new one, never half of one."""
    path = config_file(env)
    doc = _read(path, strict=True)
    projects = doc.get("projects")
    if not isinstance(projects, dict):
        projects = doc["projects"] = {}
    key = str(project_root(cwd))
    entry = projects.get(key)
    if not isinstance(entry, dict):
        entry = projects[key] = {}
    entry.update(flags)
    _write(path, doc)
    return path


def _projects(env: Mapping[str, str]) -> JSON:
    projects = _read(config_file(env)).get("projects")
    return projects if isinstance(projects, dict) else {}


def _flag(projects: JSON, folder: Path, name: str) -> bool:
    entry = projects.get(str(folder))
    return isinstance(entry, dict) and entry.get(name) is True


def _read(path: Path, strict: bool = False) -> JSON:
    """The config, or {} when it is absent or unreadable (then nothing in it is trusted).
    `strict` (before writing): a file that exists but is not a JSON object raises
    ValueError rather than being replaced, which would lose the user's other state."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        if strict:
            raise ValueError(f"{path} is not readable JSON ({exc}); not changed") from exc
        return {}
    if not isinstance(doc, dict):
        if strict:
            raise ValueError(f"{path} is not a JSON object; not changed")
        return {}
    return doc


def _write(path: Path, doc: JSON) -> None:
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".claude.json.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(doc, handle, indent=2, ensure_ascii=False)
            handle.write("\n")
        os.replace(tmp, path)  # mkstemp made it 0600: the config holds the user's state
    except BaseException:
        os.unlink(tmp)
        raise
