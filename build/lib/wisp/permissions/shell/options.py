"""getopt-style option parsing over evaluated words, enough to tell options, their
arguments and operands apart.

When in doubt an option is taken NOT to have an argument: the next word then counts as an
operand and gets a path use, which is the safe mistake.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from wisp.permissions.shell.words import Word


class Opts(NamedTuple):
    # Short options with an argument (`-n 5` or `-n5`).
    short_arg: str = ""
    # Short options with an optional argument, only attached (`-i.bak`).
    short_opt: str = ""
    # Long options (without `--`) that take the next word as argument unless given `=value`.
    long_arg: frozenset[str] = frozenset()
    # Options end at the first operand (POSIX, and every wrapper: the rest is a command).
    posix: bool = False


@dataclass(slots=True)
class Parsed:
    flags: list[tuple[str, Word | None]] = field(default_factory=list)
    operands: list[Word] = field(default_factory=list)

    def has(self, names: Iterable[str]) -> bool:
        if not self.flags:
            return False
        wanted = names if isinstance(names, frozenset) else frozenset(names)
        return bool(wanted) and any(matches(flag, wanted) for flag, _ in self.flags)

    def values(self, names: Iterable[str]) -> list[Word]:
        if not self.flags:
            return []
        wanted = names if isinstance(names, frozenset) else frozenset(names)
        return [value for flag, value in self.flags
                if value is not None and matches(flag, wanted)]


def matches(flag: str, names: frozenset[str]) -> bool:
    """`flag` is one of `names`, counting GNU's unambiguous abbreviations of long options
    (`--in-pl` is `--in-place`) as the option itself."""
    if flag in names:
        return True
    return flag.startswith("--") and len(flag) > 3 and any(
        name.startswith(flag) for name in names)


def parse(args: list[Word], spec: Opts) -> Parsed:
    parsed = Parsed()
    i = 0
    while i < len(args):
        word = args[i]
        text = word.static
        if text is None or not text.startswith("-") or text == "-":
            if spec.posix:
                parsed.operands.extend(args[i:])
                return parsed
            parsed.operands.append(word)
        elif text == "--":
            parsed.operands.extend(args[i + 1 :])
            return parsed
        elif text.startswith("--"):
            i += _long(parsed, word, text, args[i + 1 : i + 2], spec)
        else:
            i += _short(parsed, word, text, args[i + 1 : i + 2], spec)
        i += 1
    return parsed


def _long(parsed: Parsed, word: Word, text: str, following: list[Word], spec: Opts) -> int:
    name, eq, _ = text.partition("=")
    if eq:
        parsed.flags.append((name, word.tail(len(name) + 1)))
        return 0
    if name[2:] in spec.long_arg and following:
        parsed.flags.append((name, following[0]))
        return 1
    parsed.flags.append((name, None))
    return 0


def _short(parsed: Parsed, word: Word, text: str, following: list[Word], spec: Opts) -> int:
    for j in range(1, len(text)):
        letter = text[j]
        if letter in spec.short_arg:
            if j + 1 < len(text):
                parsed.flags.append(("-" + letter, word.tail(j + 1)))
                return 0
            parsed.flags.append(("-" + letter, following[0] if following else None))
            return len(following)
        if letter in spec.short_opt:
            parsed.flags.append(("-" + letter, word.tail(j + 1) if j + 1 < len(text) else None))
            return 0
        parsed.flags.append(("-" + letter, None))
    return 0
