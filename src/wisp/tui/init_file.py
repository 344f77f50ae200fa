"""`/init`'s starting point: a draft `CLAUDE.md` for the project, from what is on disk.

The draft is derived deterministically (no model call); `/init` hands it to the model,
which studies the repository and writes the real file. `write_starter_memory` writes the
draft itself, for callers with no model. It only ever creates the file: an
existing `CLAUDE.md` is someone's work and is left as it is. Reading the project never
fails the command: a file that cannot be read or parsed just contributes nothing.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

MEMORY_FILE = "CLAUDE.md"
MAX_FOLDERS = 15
# Folders that are tooling, not the project's own layout.
_SKIPPED_FOLDERS = frozenset({"venv", "node_modules", "__pycache__"})
_NPM_SCRIPTS = ("test", "build", "lint")
_MAKE_TARGETS = ("test", "build")
# Manifests are small; anything larger is not worth reading for a starter file.
_MAX_READ = 1_000_000


INIT_PROMPT = (
    "Study this repository and write {path}: the guide an AI coding agent reads at the "
    "start of every session here. Read the README, the manifests and build files, and a "
    "sample of the code and tests first. Say how to build, test and lint (the exact "
    "commands, including one test on its own), how the code is laid out and why, and the "
    "conventions a newcomer would get wrong. Keep it short and concrete: no generic advice, "
    "nothing the code already says plainly. {task}\n\n"
    "What wisp found on disk, as a starting point (check it; it may be incomplete):\n\n"
    "{draft}")
INIT_NEW = "Create the file with the Write tool."
INIT_EXISTING = ("The file exists already: read it, keep what is right, and edit it where "
                 "it is wrong, stale or missing something.")


def init_prompt(cwd: Path) -> str:
    """What `/init` asks of the model for the project in `cwd`."""
    task = INIT_EXISTING if (cwd / MEMORY_FILE).exists() else INIT_NEW
    return INIT_PROMPT.format(path=MEMORY_FILE, task=task, draft=starter_memory(cwd))


def write_starter_memory(cwd: Path) -> tuple[Path, bool]:
    """Creates `<cwd>/CLAUDE.md` unless it exists: (path, True) when written, (path,
    False) when an existing file was left untouched. Errors writing it (a read-only
    folder) are raised: the caller reports them."""
    path = cwd / MEMORY_FILE
    if os.path.lexists(path):  # a dangling symlink counts: writing would follow it
        return path, False
    text = starter_memory(cwd)
    try:
        # "x": created only if still absent, so a file that appeared meanwhile survives.
        with open(path, "x", encoding="utf-8") as stream:
            stream.write(text)
    except FileExistsError:
        return path, False
    return path, True


def starter_memory(cwd: Path) -> str:
    """The starter text for the project in `cwd`."""
    commands = build_commands(cwd)
    folders = layout(cwd)
    lines = [f"# {title(cwd)}", "",
             "Guidance for AI coding agents (Claude Code, wisp) working in this repository.",
             "", "## Build and test", ""]
    lines += [f"- `{command}`{note}" for command, note in commands] or [
        "- (No build or test commands found: add the ones you use here.)"]
    lines += ["", "## Layout", ""]
    lines += [f"- `{folder}/`" for folder in folders[:MAX_FOLDERS]] or [
        "- (No folders yet: describe the layout here as it grows.)"]
    if len(folders) > MAX_FOLDERS:
        lines.append(f"- … and {len(folders) - MAX_FOLDERS} more")
    lines += ["", "## Conventions", "",
              "- (Add your project's conventions here: code style, naming, how to test, "
              "what to avoid.)", ""]
    return "\n".join(lines)


# ---- what the project says about itself ------------------------------------------------


def title(cwd: Path) -> str:
    """The first `# ` heading of README.md, else the folder's name."""
    text = (_read(cwd / "README.md") or "").removeprefix("\ufeff")
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced  # a `# comment` in a code block is not a heading
        elif not fenced and line.startswith("# "):
            heading = line[2:].strip().rstrip("#").strip()
            if heading:
                return heading
    # realpath, not Path.resolve: it cannot raise, and `.` becomes the folder's name.
    return os.path.basename(os.path.realpath(cwd)) or str(cwd)


def build_commands(cwd: Path) -> list[tuple[str, str]]:
    """(command, note) pairs from the manifests found in `cwd`, in a fixed order."""
    return [*_python(cwd), *_npm(cwd), *_make(cwd), *_cargo(cwd), *_go(cwd)]


def _python(cwd: Path) -> list[tuple[str, str]]:
    path = cwd / "pyproject.toml"
    if not path.is_file():
        return []
    text = _read(path)  # unreadable or malformed: still a Python project, name unknown
    name = _pyproject_name(text) if text is not None else None
    return [("python -m pytest", f" (tests; Python package `{name}`)" if name else " (tests)")]


def _pyproject_name(text: str) -> str | None:
    import tomllib

    try:
        doc = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError):
        return None
    for table in (doc.get("project"), _get(doc.get("tool"), "poetry")):
        name = _get(table, "name")
        if isinstance(name, str) and name.strip():
            return name.strip()
    return None


def _npm(cwd: Path) -> list[tuple[str, str]]:
    import json

    text = _read(cwd / "package.json")
    if text is None:
        return []
    try:
        scripts = _get(json.loads(text), "scripts")
    except ValueError:
        return []
    if not isinstance(scripts, dict):
        return []
    return [(f"npm run {name}", "") for name in _NPM_SCRIPTS if name in scripts]


def _make(cwd: Path) -> list[tuple[str, str]]:
    # The names GNU make looks for, in its order.
    texts = (_read(cwd / name) for name in ("GNUmakefile", "makefile", "Makefile"))
    text = next((t for t in texts if t is not None), None)
    if text is None:
        return []
    # `target:` or `target other:` at the start of a line, but not `target := value`.
    found = {name for name in _MAKE_TARGETS
             if re.search(rf"^(?:[^\s:#=]+[ \t]+)*{name}(?:[ \t]+[^\s:#=]+)*[ \t]*:(?!=)",
                          text, re.MULTILINE)}
    return [(f"make {name}", "") for name in _MAKE_TARGETS if name in found]


def _cargo(cwd: Path) -> list[tuple[str, str]]:
    return [("cargo test", "")] if (cwd / "Cargo.toml").is_file() else []


def _go(cwd: Path) -> list[tuple[str, str]]:
    return [("go test ./...", "")] if (cwd / "go.mod").is_file() else []


def layout(cwd: Path) -> list[str]:
    """Top-level folders, sorted, without hidden ones, virtual environments and caches."""
    try:
        entries = list(os.scandir(cwd))
    except OSError:
        return []
    folders = []
    for entry in entries:
        if entry.name.startswith(".") or entry.name in _SKIPPED_FOLDERS:
            continue
        if _is_dir(entry) and not (Path(entry.path) / "pyvenv.cfg").exists():
            folders.append(entry.name)
    return sorted(folders, key=lambda name: (name.lower(), name))


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _read(path: Path) -> str | None:
    """A small text file's content; None if absent, unreadable, too big or not UTF-8."""
    try:
        with open(path, encoding="utf-8") as stream:
            text = stream.read(_MAX_READ + 1)
    except (OSError, UnicodeDecodeError):
        return None
    return None if len(text) > _MAX_READ else text


def _get(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, dict) else None
