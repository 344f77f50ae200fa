"""Judging file uses against path rules, the working-folder boundary and protected paths.

Every tool call that touches files is reduced to `FileUse`s (read, write, or mention for an
argument of an unknown command), whichever tool made them: Read, Grep and Glob read; Write,
Edit and NotebookEdit write; Bash reads and writes whatever its commands and redirections
name. Path rules then apply by family: `Read(...)` rules to reads, `Edit(...)` rules to
writes, both to mentions.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from wisp.paths.protected import is_harmless_device, is_inside, protected_reason
from wisp.rules import (
    EDIT_FAMILY,
    READ_FAMILY,
    Rule,
    normalise_path,
    path_matches,
    pattern_reaches_below,
    rule_path_pattern,
)
from wisp.values import Value

UseKind = Literal["read", "write", "mention"]


class FileUse(Value):
    kind: UseKind
    path: str | None  # normalised (absolute, `..` folded, symlinks resolved); None = unknown
    recursive: bool = False


def families(kind: UseKind) -> tuple[frozenset[str], ...]:
    if kind == "read":
        return (READ_FAMILY,)
    if kind == "write":
        return (EDIT_FAMILY,)
    return (READ_FAMILY, EDIT_FAMILY)


def path_rules(rules: Iterable[Rule], kind: UseKind) -> list[Rule]:
    """The rules of `rules` that govern a use of this kind (bare family rules included)."""
    wanted = families(kind)
    return [r for r in rules if r.family is not None and r.family in wanted]


def rule_covers(rule: Rule, use: FileUse, cwd: str, *, reach_below: bool) -> bool:
    """Whether `rule` applies to `use`. With `reach_below` (deny rules), a recursive use of
    a folder that holds a matching path counts too."""
    if use.path is None:
        return False
    if rule.content is None:
        return True
    pattern = rule_path_pattern(rule.content, Path(cwd))
    if path_matches(pattern, use.path):
        return True
    return reach_below and use.recursive and pattern_reaches_below(pattern, use.path)


def denying_rule(deny: Iterable[Rule], use: FileUse, cwd: str) -> Rule | None:
    for rule in path_rules(deny, use.kind):
        if rule_covers(rule, use, cwd, reach_below=True):
            return rule
    return None


def granting_rule(rules: Iterable[Rule], use: FileUse, cwd: str,
                  working: Iterable[str] | None = None) -> Rule | None:
    """The highest-ranked rule of `rules` (allow or ask) that names this use's path. Given
    the working folders (for allow rules), a bare `Read`/`Edit` rule grants only inside
    them: outside, a rule must name the path."""
    inside = None if working is None else inside_boundary(use, working)
    hits = [r for r in path_rules(rules, use.kind)
            if rule_covers(r, use, cwd, reach_below=False)
            and (r.content is not None or inside is not False)]
    return max(hits, key=lambda r: r.rank, default=None)


def inside_boundary(use: FileUse, working: Iterable[str]) -> bool:
    return use.path is not None and (is_harmless_device(use.path) or is_inside(use.path, working))


def protected_write(use: FileUse, config: Iterable[str]) -> str | None:
    if use.kind == "read" or use.path is None or is_harmless_device(use.path):
        return None
    return protected_reason(use.path, config)


def normalised(kind: UseKind, raw: str | None, cwd: str, recursive: bool = False) -> FileUse:
    return FileUse(kind, None if raw is None else normalise_path(raw, Path(cwd)), recursive)
