"""getopt-style option parsing over evaluated words: options, their arguments and operands
told apart as the program itself would tell them apart.

Long options follow getopt_long: an exact name wins, otherwise any unambiguous prefix of a
long option is that option (`sort --o=F` is `--output=F`, `sed --i` is `--in-place`), in
both `--opt=value` and `--opt value` forms. A spec marked `complete` lists every option the
program has, so an option it does not list (or an ambiguous prefix) is reported in
`Parsed.unknown`: the caller cannot say what that word does, and must not call the command
harmless. An incomplete spec (wrappers, writers) takes unknown options as plain flags.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from wisp.shell.words import Word


class Opts(NamedTuple):
    # Short options without an argument.
    short_flags: str = ""
    # Short options with an argument (`-n 5` or `-n5`).
    short_arg: str = ""
    # Short options with an optional argument, only attached (`-i.bak`).
    short_opt: str = ""
    long_flags: frozenset[str] = frozenset()
    # Long options (without `--`) that take the next word as argument unless given `=value`.
    long_arg: frozenset[str] = frozenset()
    # Long options with an optional argument, only as `--opt=value`.
    long_opt: frozenset[str] = frozenset()
    # Options end at the first operand (POSIX, and every wrapper: the rest is a command).
    posix: bool = False
    # Every option is listed: anything else is unknown.
    complete: bool = False
    # `-5` is an option (head -5, nice -5).
    numeric: bool = False

    @property
    def long_names(self) -> frozenset[str]:
        return self.long_flags | self.long_arg | self.long_opt


def spec(text: str, *, posix: bool = False, numeric: bool = False) -> Opts:
    """A complete option table written the way `--help` lists it: `-a` a flag, `-n:` with
    an argument, `-i::` with an optional attached argument, `--all` a long flag,
    `--lines=` with an argument, `--color=?` with an optional `=value`."""
    short = {"": "", ":": "", "::": ""}
    longs: dict[str, set[str]] = {"": set(), "=": set(), "=?": set()}
    for token in text.split():
        if token.startswith("--"):
            name = token[2:]
            kind = "=?" if name.endswith("=?") else "=" if name.endswith("=") else ""
            longs[kind].add(name[: len(name) - len(kind)])
        else:
            letter, kind = token[1], token[2:]
            short[kind] += letter
    return Opts(short[""], short[":"], short["::"], frozenset(longs[""]),
                frozenset(longs["="]), frozenset(longs["=?"]), posix, True, numeric)


class Flag(NamedTuple):
    # `-x`, or `--name` with the program's full option name when it was recognised.
    name: str
    value: Word | None
    # The name is the program's own option (not an unrecognised spelling).
    exact: bool = True


@dataclass(slots=True)
class Parsed:
    flags: list[Flag] = field(default_factory=list)
    operands: list[Word] = field(default_factory=list)
    # Option words a complete spec does not know (or that are ambiguous prefixes).
    unknown: list[str] = field(default_factory=list)

    def has(self, names: Iterable[str]) -> bool:
        if not self.flags:
            return False
        wanted = names if isinstance(names, frozenset) else frozenset(names)
        return bool(wanted) and any(matches(flag, wanted) for flag in self.flags)

    def values(self, names: Iterable[str]) -> list[Word]:
        if not self.flags:
            return []
        wanted = names if isinstance(names, frozenset) else frozenset(names)
        return [flag.value for flag in self.flags
                if flag.value is not None and matches(flag, wanted)]


def matches(flag: Flag, names: frozenset[str]) -> bool:
    """`flag` is one of `names`; an unrecognised long spelling counts when it is a prefix
    of one of them (the program may know it by that abbreviation)."""
    if flag.name in names:
        return True
    return not flag.exact and flag.name.startswith("--") and len(flag.name) > 2 and any(
        name.startswith(flag.name) for name in names)


def long_option(name: str, spec: Opts) -> str | None:
    """The full name of the long option `name` abbreviates (without `--`), or None when it
    is unknown or ambiguous."""
    known = spec.long_names
    if name in known:
        return name
    found = [option for option in known if option.startswith(name)]
    return found[0] if len(found) == 1 else None


def parse(args: list[Word], spec: Opts) -> Parsed:
    parsed = Parsed()
    i = 0
    while i < len(args):
        word = args[i]
        # An expansion whose value is known is an option if the value looks like one.
        text = word.static if word.static is not None else word.value
        if text is None or not text.startswith("-") or text == "-":
            if text is None and spec.complete and not word.procsub:
                # `$X`, `-$X`: bash may hand the program an option here.
                parsed.unknown.append(word.display)
            if spec.posix:
                parsed.operands.extend(args[i:])
                return parsed
            parsed.operands.append(word)
        elif text == "--":
            parsed.operands.extend(args[i + 1 :])
            return parsed
        elif text.startswith("--"):
            i += _long(parsed, word, text, args[i + 1 : i + 2], spec)
        elif spec.numeric and text[1:].isdigit():
            parsed.flags.append(Flag("-NUM", word.tail(1)))
        else:
            i += _short(parsed, word, text, args[i + 1 : i + 2], spec)
        i += 1
    return parsed


def _long(parsed: Parsed, word: Word, text: str, following: list[Word], spec: Opts) -> int:
    written, eq, _ = text.partition("=")
    full = long_option(written[2:], spec)
    if full is None:
        if spec.complete:
            parsed.unknown.append(written)
        parsed.flags.append(Flag(written, word.tail(len(written) + 1) if eq else None,
                                 exact=False))
        return 0
    name = "--" + full
    if eq:
        if full in spec.long_flags and spec.complete:
            parsed.unknown.append(text)  # getopt refuses a value for a flag
        parsed.flags.append(Flag(name, word.tail(len(written) + 1)))
        return 0
    if full in spec.long_arg:
        parsed.flags.append(Flag(name, following[0] if following else None))
        return len(following)
    parsed.flags.append(Flag(name, None))
    return 0


def _short(parsed: Parsed, word: Word, text: str, following: list[Word], spec: Opts) -> int:
    for j in range(1, len(text)):
        letter = text[j]
        if letter in spec.short_arg:
            if j + 1 < len(text):
                parsed.flags.append(Flag("-" + letter, word.tail(j + 1)))
                return 0
            parsed.flags.append(Flag("-" + letter, following[0] if following else None))
            return len(following)
        if letter in spec.short_opt:
            parsed.flags.append(Flag("-" + letter, word.tail(j + 1) if j + 1 < len(text)
                                     else None))
            return 0
        if spec.complete and letter not in spec.short_flags:
            parsed.unknown.append("-" + letter)
        parsed.flags.append(Flag("-" + letter, None))
    return 0
