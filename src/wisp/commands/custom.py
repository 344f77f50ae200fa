"""Custom slash commands: Markdown prompt templates in the layout Claude Code uses.

Users already keep these files for Claude Code, so wisp reads the same places and the same
format rather than inventing its own:

- `<cwd>/.claude/commands/**/*.md` (project) and `<config_dir>/commands/**/*.md` (user);
  `frontend/component.md` is the command `/frontend:component`;
- optional front matter between `---` lines (`description`, `argument-hint`, `model`,
  `allowed-tools`), then the prompt body with `$ARGUMENTS` and `$1`, `$2`, … placeholders.

The front matter is read by `wisp.project.frontmatter` (shared with agents, skills, output
styles and plugins). Loading never raises on a bad
file: a file that cannot be read is skipped, broken front matter makes the whole file the
body. One user's stray file must not take the command menu down.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Literal

from wisp.project.frontmatter import (
    first_line,
    normalise_text,
    scalar,
    split_front_matter,
    tool_list,
)

Source = Literal["project", "user", "plugin"]

# Patterns are kept as strings and compiled by `re` on first use (and cached there):
# compiling them at import would add milliseconds to every UI start-up.
#
# What may follow the `/`. The first character must be a letter, digit or `_` so that
# paths such as `/..` or `/.config` are not taken for commands.
_NAME = r"[A-Za-z0-9_][A-Za-z0-9_:.-]*"
_SLASH = rf"/({_NAME})(?:\s+(.*))?"
# One pass over both kinds of placeholder, so text substituted for one is never expanded
# again (an argument that itself contains `$1` stays as typed).
_PLACEHOLDER = r"\$ARGUMENTS|\$([1-9][0-9]*)"
# Longer runs of digits cannot be a real argument index (and int() refuses > 4300 digits).
_MAX_INDEX_DIGITS = 6


class CustomCommand:
    """One loaded command. A plain slotted class: built for every file at UI start-up,
    where importing `dataclasses` would cost more than all the parsing."""

    __slots__ = ("allowed_tools", "argument_hint", "body", "description", "model", "name",
                 "path", "source")

    def __init__(self, name: str, description: str, body: str, source: Source, path: Path, *,
                 argument_hint: str | None = None, model: str | None = None,
                 allowed_tools: tuple[str, ...] = ()) -> None:
        self.name = name
        self.description = description
        self.body = body
        self.source: Source = source
        self.path = path
        self.argument_hint = argument_hint
        self.model = model
        self.allowed_tools = allowed_tools

    def __repr__(self) -> str:
        return (f"CustomCommand(name={self.name!r}, source={self.source!r}, "
                f"path={str(self.path)!r}, description={self.description!r})")


def load_commands(cwd: Path, config_dir: Path,
                  plugin_roots: Sequence[tuple[str, Path]] = (),
                  sources: Collection[str] = ("user", "project")) -> dict[str, CustomCommand]:
    """Every command from the user's and the project's folders (those of `sources`, the
    settings sources the session loads), by name, sorted. A project command replaces a
    user command of the same name: the project knows its own needs. `plugin_roots` are
    (plugin name, folder): their commands are `/<plugin>:<name>`."""
    found: dict[str, CustomCommand] = {}
    roots: list[tuple[Source, Path, str]] = [
        root for root in (("user", config_dir / "commands", ""),
                          ("project", cwd / ".claude" / "commands", ""))
        if root[0] in sources]
    roots += [("plugin", folder, f"{plugin}:") for plugin, folder in plugin_roots]
    for source, root, prefix in roots:  # user first, so project commands overwrite them
        for name, path in _command_files(root):
            command = read_command(prefix + name, path, source)
            if command is not None:
                found[prefix + name] = command
    return dict(sorted(found.items()))


def _command_files(root: Path) -> list[tuple[str, Path]]:
    """(name, path) of each `*.md` below `root`. Hidden files and folders are skipped
    (editor swap folders, `.git`), and so are names no one could type after a `/`."""
    files: list[tuple[str, Path]] = []
    # os.walk rather than rglob: it does not follow folder symlinks (no loops) and
    # ignores folders it cannot list instead of raising.
    for folder, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for filename in sorted(filenames):
            if filename.startswith(".") or not filename.endswith(".md"):
                continue
            path = Path(folder, filename)
            parts = path.relative_to(root).with_suffix("").parts
            name = ":".join(parts)
            if re.fullmatch(_NAME, name):
                files.append((name, path))
    return files


def read_command(name: str, path: Path, source: Source) -> CustomCommand | None:
    """The command in `path`, or None when the file cannot be read as UTF-8 text."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    fields, body = split_front_matter(normalise_text(text))
    body = body.strip()
    description = scalar(fields.get("description")) or first_line(body)
    return CustomCommand(
        name=name, description=description, body=body, source=source, path=path,
        argument_hint=scalar(fields.get("argument-hint")),
        model=scalar(fields.get("model")),
        allowed_tools=tool_list(fields.get("allowed-tools")))


# ---- invocation ---------------------------------------------------------------------------


def expand(command: CustomCommand, arguments: str) -> str:
    """The prompt `command` sends for `arguments`: `$ARGUMENTS` is the whole argument text,
    `$1`, `$2`, … its shell-like words (a missing one is empty). A body without any
    placeholder gets the arguments appended, so what the user typed is never dropped."""
    arguments = arguments.strip()
    body = command.body
    if re.search(_PLACEHOLDER, body) is None:
        if not arguments:
            return body
        return f"{body}\n\nARGUMENTS: {arguments}" if body else f"ARGUMENTS: {arguments}"
    words = split_arguments(arguments)

    def substitute(match: re.Match[str]) -> str:
        digits = match.group(1)
        if digits is None:
            return arguments
        index = int(digits) - 1 if len(digits) <= _MAX_INDEX_DIGITS else len(words)
        return words[index] if index < len(words) else ""

    return re.sub(_PLACEHOLDER, substitute, body)


def split_arguments(arguments: str) -> list[str]:
    """Shell-like words (`"two words"` is one); plain whitespace splitting when the text
    does not parse as shell words (an unclosed quote), so an argument is never refused."""
    try:
        return shlex.split(arguments)
    except ValueError:
        return arguments.split()


def parse_slash(text: str) -> tuple[str, str] | None:
    """`"/name rest"` → `("name", "rest")`; None for anything else.

    The name must follow the `/` at once (`"/ foo"` is None) and end at whitespace or the
    end, so a path such as `"/tmp/x"` is None. A bare `"/usr"` still parses as `("usr", "")`:
    only the caller knows whether such a command exists. Leading whitespace means the
    text is not a command (`" /help"` is None); trailing whitespace is ignored.
    """
    match = re.fullmatch(_SLASH, text.rstrip(), re.DOTALL)
    if match is None:
        return None
    return match.group(1), (match.group(2) or "").strip()
