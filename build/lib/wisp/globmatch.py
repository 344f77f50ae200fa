"""Shell-style path globs with `**` and `{a,b}`, matched against '/'-separated relative paths.

fnmatch cannot express "any number of directories" and pathlib's glob has no braces; models
routinely write `**/*.{ts,tsx}`, so we translate globs to regular expressions ourselves.
"""

from __future__ import annotations

import re

_MAX_ALTERNATIVES = 256
_MAGIC = frozenset("*?[{")


def _split_top_level(body: str) -> list[str]:
    options, depth, start = [], 0, 0
    for i, c in enumerate(body):
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == "," and depth == 0:
            options.append(body[start:i])
            start = i + 1
    options.append(body[start:])
    return options


def expand_braces(pattern: str) -> list[str]:
    """`a/{b,c}/*.{x,y}` -> four patterns. Braces without a comma stay literal."""
    depth, start = 0, -1
    for i, c in enumerate(pattern):
        if c == "{":
            if depth == 0:
                start = i
            depth += 1
        elif c == "}" and depth:
            depth -= 1
            if depth == 0:
                options = _split_top_level(pattern[start + 1 : i])
                if len(options) > 1:
                    head, tail = pattern[:start], pattern[i + 1 :]
                    expanded = [p for o in options for p in expand_braces(head + o + tail)]
                    return expanded[:_MAX_ALTERNATIVES]
    return [pattern]


def _char_class(pattern: str, i: int) -> tuple[str, int]:
    """Translate the `[...]` starting at `i`; returns (regex, index after it)."""
    j = i + 1
    if j < len(pattern) and pattern[j] in "!^":
        j += 1
    if j < len(pattern) and pattern[j] == "]":
        j += 1
    while j < len(pattern) and pattern[j] != "]":
        j += 1
    if j >= len(pattern):
        return re.escape("["), i + 1
    body = pattern[i + 1 : j].replace("\\", "\\\\")
    if body[:1] in ("!", "^"):
        body = "^" + body[1:]
    return f"[{body}]", j + 1


def translate(pattern: str) -> str:
    """A regex (without anchors) for one brace-free glob."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[":
            regex, i = _char_class(pattern, i)
            out.append(regex)
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return "".join(out)


class GlobMatcher:
    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.alternatives = expand_braces(pattern)
        regex = "|".join(f"(?:{translate(p)})" for p in self.alternatives)
        self._regex = re.compile(f"(?s:{regex})\\Z")

    def match(self, relative_path: str) -> bool:
        return self._regex.match(relative_path) is not None

    def max_depth(self) -> int | None:
        """How many path segments a match can have, or None when `**` makes it unbounded."""
        if any("**" in p for p in self.alternatives):
            return None
        return max(p.count("/") + 1 for p in self.alternatives)

    def literal_prefix(self) -> str:
        """Leading directories free of wildcards, so a walk can start there."""
        literal: list[str] = []
        for segment in self.pattern.split("/")[:-1]:
            if _MAGIC & set(segment):
                break
            literal.append(segment)
        return "/".join(literal)
