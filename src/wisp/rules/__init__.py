"""Permission rules in the reference syntax: `Tool`, `Tool(content)`, `mcp__server[__tool]`.

Content forms: `Bash(npm run test:*)` (prefix), `Bash(git status)` (exact, `*` globs),
`Read(./src/**)` / `Edit(/abs/**)` / `Edit(~/x/**)` (path globs), `WebFetch(domain:host)`,
`Skill(pdf)` / `Skill(myplugin:*)` (a name, exact or by prefix).
Paths are compared after normalisation (absolute, `..` folded, symlinks resolved), so a
rule cannot be sidestepped by spelling the same file differently.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

from wisp.globmatch import GlobMatcher

PATH_TOOLS = frozenset({"Read", "Write", "Edit", "Glob", "Grep", "NotebookEdit", "MultiEdit"})
EDIT_TOOLS = frozenset({"Write", "Edit", "NotebookEdit", "MultiEdit"})
# Rules protect files, not tools: a path rule written for any tool of a family governs every
# way of reading (or changing) the file, Bash included.
READ_FAMILY = frozenset({"Read", "Grep", "Glob"})
EDIT_FAMILY = EDIT_TOOLS


class Rule:
    """One permission rule. Equal (and hashed) by what it says, not by where it came from.
    A plain slotted class: rules are parsed before print mode's first frame, where
    importing `dataclasses` would cost 20–40 ms."""

    __slots__ = ("content", "rank", "tool")

    def __init__(self, tool: str, content: str | None = None, rank: int = 5) -> None:
        self.tool = tool
        self.content = content
        # Precedence of the source the rule came from (user 1 … CLI flags 5, session 6):
        # between allow and ask, the higher-ranked source decides.
        self.rank = rank

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Rule) and (self.tool, self.content) == (other.tool,
                                                                         other.content)

    def __hash__(self) -> int:
        return hash((self.tool, self.content))

    def __repr__(self) -> str:
        return f"Rule({self.tool!r}, {self.content!r}, rank={self.rank})"

    @classmethod
    def parse(cls, text: str, rank: int = 5) -> Rule:
        text = text.strip()
        match = re.fullmatch(r"([^()\s]+)\((.*)\)", text, flags=re.DOTALL)
        if match:
            content = match.group(2)
            return cls(match.group(1), content if content not in ("", "*") else None, rank)
        return cls(text, None, rank)

    def __str__(self) -> str:
        return self.tool if self.content is None else f"{self.tool}({self.content})"

    @property
    def family(self) -> frozenset[str] | None:
        """The file family this rule governs (READ_FAMILY or EDIT_FAMILY), or None."""
        if self.tool in READ_FAMILY:
            return READ_FAMILY
        if self.tool in EDIT_FAMILY:
            return EDIT_FAMILY
        return None

    def names_tool(self, tool_name: str) -> bool:
        if self.tool == tool_name:
            return True
        # `mcp__server` covers every tool of that server.
        return self.tool.startswith("mcp__") and tool_name.startswith(self.tool + "__")


def normalise_path(raw: str, cwd: Path) -> str:
    """Absolute, `..`-free, symlink-resolved. Missing tails are kept as given so a rule
    about a file that does not exist yet still applies."""
    expanded = os.path.expanduser(raw)
    absolute = expanded if os.path.isabs(expanded) else os.path.join(cwd, expanded)
    return os.path.realpath(absolute)


def rule_path_pattern(content: str, cwd: Path) -> str:
    if content.startswith("//"):
        return normalise_path(content[1:], cwd)
    return normalise_path(content, cwd) + ("/" if content.endswith("/") else "")


@lru_cache(maxsize=256)
def _matcher(pattern: str) -> GlobMatcher:
    return GlobMatcher(pattern)


def path_matches(pattern: str, path: str) -> bool:
    """`**` crosses directories, `*` does not; a directory pattern covers what is below it."""
    if _matcher(pattern).match(path):
        return True
    base = pattern.rstrip("/")
    return "*" not in base and (path == base or path.startswith(base + "/"))


def pattern_reaches_below(pattern: str, folder: str) -> bool:
    """Whether something `pattern` matches could lie below `folder`: a recursive read or
    write of the folder would then touch it."""
    magic = any(c in pattern for c in "*?[{")
    fixed = _matcher(pattern).literal_prefix() if magic else pattern
    fixed = fixed.rstrip("/")
    return fixed == folder or fixed.startswith(folder.rstrip("/") + "/")


def command_matches(content: str, command: str) -> bool:
    command = command.strip()
    if content.endswith(":*"):
        prefix = content[:-2].strip()
        return command == prefix or command.startswith(prefix + " ")
    if "*" in content:
        return re.fullmatch(".*".join(map(re.escape, content.split("*"))), command) is not None
    return command == content


def name_matches(content: str, name: str) -> bool:
    """A named thing (a skill) against rule content: the exact name, or with `prefix:*`
    any name starting with the prefix, as Claude Code matches them. A leading `/` is
    ignored, since users write skills as the slash commands they also are."""
    content = content.strip().removeprefix("/")
    if not name:
        return False
    if content.endswith(":*"):
        return name.startswith(content[:-2])
    return name == content


def split_rule_list(text: str) -> list[str]:
    """Rules written as one comma-separated line (`Bash(git add, commit), Read`): commas
    inside parentheses belong to the rule. Items are stripped; empty ones dropped."""
    items, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(depth - 1, 0)
        elif char == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return [item.strip() for item in items if item.strip()]
