"""Deciding whether a shell command is clearly read-only, conservatively.

A false "read-only" would let a command skip the permission prompt, so anything we do not
positively recognise counts as a write.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable

_OPERATORS = ("&&", "||", "|&", ";", "|", "\n")
# Expansions that can run hidden commands.
_EXPANSIONS = ("$(", "`", "<(", ">(")


def _separator_at(command: str, i: int) -> str:
    for op in _OPERATORS:
        if command.startswith(op, i):
            return op
    if command[i] == "&":
        before = command[i - 1] if i > 0 else ""
        after = command[i + 1] if i + 1 < len(command) else ""
        # `2>&1`, `<&3` and `&>file` are redirections, not background separators.
        if (before and before in "<>") or after == ">":
            return ""
        return "&"
    return ""


def split_compound(command: str) -> list[str]:
    """Split a shell line on `&&`, `||`, `;`, `|`, `|&`, `&` and newlines, outside quotes.

    Returns the stripped, non-empty simple commands. This is a lexical split, not a shell
    parser: subshells and control structures come back as parts that start with `(`, `{`,
    `if` and so on, which callers should treat as unknown.
    """
    parts: list[str] = []
    buf: list[str] = []
    quote = ""
    i, n = 0, len(command)
    while i < n:
        c = command[i]
        if quote:
            if c == "\\" and quote == '"' and i + 1 < n:
                buf.append(command[i : i + 2])
                i += 2
                continue
            buf.append(c)
            quote = "" if c == quote else quote
            i += 1
            continue
        if c == "\\" and i + 1 < n:
            # A backslash-newline is a line continuation, not a separator.
            buf.append(" " if command[i + 1] == "\n" else command[i : i + 2])
            i += 2
            continue
        if c in "'\"":
            quote = c
            buf.append(c)
            i += 1
            continue
        sep = _separator_at(command, i)
        if sep:
            parts.append("".join(buf))
            buf = []
            i += len(sep)
            continue
        buf.append(c)
        i += 1
    parts.append("".join(buf))
    return [p.strip() for p in parts if p.strip()]


def _short_flags(args: list[str]) -> str:
    return "".join(a[1:] for a in args if a.startswith("-") and not a.startswith("--"))


def _find_ok(args: list[str]) -> bool:
    writers = {"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fls"}
    return not any(a in writers or a.startswith("-fprint") for a in args)


def _git_ok(args: list[str]) -> bool:
    if not args or args[0] not in {"status", "log", "diff", "show", "branch"}:
        return False
    rest = args[1:]
    if args[0] == "branch":
        listing = {"-a", "-r", "-v", "-vv", "--all", "--remotes", "--list", "--show-current"}
        return all(a in listing for a in rest)
    return not any(a.startswith(("--output", "--ext-diff")) for a in rest)


def _sort_ok(args: list[str]) -> bool:
    long_bad = ("--output", "--compress-program")
    return "o" not in _short_flags(args) and not any(a.startswith(long_bad) for a in args)


def _uniq_ok(args: list[str]) -> bool:
    # `uniq IN OUT` writes OUT.
    return len([a for a in args if not a.startswith("-")]) <= 1


def _date_ok(args: list[str]) -> bool:
    return "s" not in _short_flags(args) and not any(a.startswith("--set") for a in args)


def _file_ok(args: list[str]) -> bool:
    return "C" not in _short_flags(args) and "--compile" not in args


def _rg_ok(args: list[str]) -> bool:
    # `--pre` runs an arbitrary preprocessor command on each file.
    return not any(a.startswith("--pre") for a in args)


def _no_args(args: list[str]) -> bool:
    return not args


def _any_args(args: list[str]) -> bool:
    return True


_READ_ONLY: dict[str, Callable[[list[str]], bool]] = {
    **{
        name: _any_args
        for name in (
            *("echo", "printf", "ls", "cat", "head", "tail", "wc", "pwd", "grep", "which"),
            *("whoami", "true", "false", "stat", "du", "df", "uname", "id", "basename"),
            *("dirname", "realpath", "cut", "tr", "diff"),
        )
    },
    "rg": _rg_ok,
    "find": _find_ok,
    "env": _no_args,
    "git": _git_ok,
    "sort": _sort_ok,
    "uniq": _uniq_ok,
    "date": _date_ok,
    "file": _file_ok,
}


def _part_is_read_only(part: str) -> bool:
    try:
        words = shlex.split(part)
    except ValueError:
        return False
    if not words:
        return False
    check = _READ_ONLY.get(words[0])
    return check is not None and check(words[1:])


def _outside_quotes(command: str) -> str:
    """The command with quoted text blanked, so `grep 'a > b'` is not taken as a redirect."""
    kept: list[str] = []
    quote = ""
    i = 0
    while i < len(command):
        c = command[i]
        if c == "\\" and quote != "'":
            # An escaped character is literal (and an escaped quote opens nothing).
            kept.append("  ")
            i += 2
            continue
        if quote:
            quote = "" if c == quote else quote
            kept.append(" ")
        else:
            quote = c if c in "'\"" else ""
            kept.append(c)
        i += 1
    return "".join(kept)


def is_read_only_command(command: str) -> bool:
    # `$(` and backticks run even inside double quotes, so they are checked on the raw text.
    if any(token in command for token in _EXPANSIONS) or ">" in _outside_quotes(command):
        return False
    parts = split_compound(command)
    return bool(parts) and all(_part_is_read_only(p) for p in parts)


def last_program(command: str) -> str:
    """The program name of the last simple command, used to interpret exit codes."""
    parts = split_compound(command)
    if not parts:
        return ""
    try:
        words = shlex.split(parts[-1])
    except ValueError:
        words = parts[-1].split()
    return words[0] if words else ""
