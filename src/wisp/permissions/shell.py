"""Splits a shell command into the simple commands a rule must judge one by one.

`a && b`, `a || b`, `a; b`, `a | b` split; `$(x)`, backticks and `<(x)` contribute their
inner commands; `bash -c 'x'` / `sh -c "x"` contribute the string's commands. Expansion
recurses, so `echo $(bash -c 'rm f')` still yields `rm f`.
"""

from __future__ import annotations

import shlex

from wisp.tools.bash import split_compound

SHELLS = frozenset({"bash", "sh", "zsh", "dash", "/bin/bash", "/bin/sh", "/usr/bin/bash"})
MAX_DEPTH = 8


def _substitutions(command: str) -> list[str]:
    """Bodies of `$(…)`, `<(…)`, `>(…)` and backtick substitutions (outermost first)."""
    found: list[str] = []
    i = 0
    while i < len(command):
        if command.startswith(("$(", "<(", ">("), i):
            depth, j = 1, i + 2
            while j < len(command) and depth:
                depth += {"(": 1, ")": -1}.get(command[j], 0)
                j += 1
            found.append(command[i + 2 : j - 1])
            i = j
        elif command[i] == "`":
            end = command.find("`", i + 1)
            end = len(command) if end == -1 else end
            found.append(command[i + 1 : end])
            i = end + 1
        else:
            i += 1
    return found


def _shell_c_body(part: str) -> str | None:
    try:
        words = shlex.split(part)
    except ValueError:
        return None
    for index, word in enumerate(words[:-1]):
        if word == "-c" and index >= 1 and words[0] in SHELLS:
            return words[index + 1]
    return None


def expand_command(command: str, depth: int = 0) -> list[str]:
    if depth > MAX_DEPTH:
        return [command]
    parts: list[str] = []
    for raw_part in split_compound(command):
        part = raw_part.strip()
        if not part:
            continue
        parts.append(part)
        for inner in _substitutions(part):
            parts.extend(expand_command(inner, depth + 1))
        body = _shell_c_body(part)
        if body is not None:
            parts.extend(expand_command(body, depth + 1))
    return parts
