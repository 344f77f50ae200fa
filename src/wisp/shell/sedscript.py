"""GNU sed scripts read command by command, as sed reads them, to find what they touch:
`w`/`W` and `s///w` write files, `r`/`R` read them, `e` and `s///e` run commands.

Text that is data to sed (regexes, replacements, `a`/`i`/`c` text, comments, labels) is
skipped exactly; a command letter sed would not accept makes the script unknown, so nothing
can hide in text this parser misreads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

# Commands that take no argument.
_PLAIN = frozenset("=dDgGhHnNpPxzF")
# Commands whose argument runs to the end of the line (or `;` for labels).
_TEXT = frozenset("aic")
_FILES = {"r": "read", "R": "read", "w": "write", "W": "write"}
_ENDS = frozenset(";\n}#")


@dataclass(slots=True)
class SedEffects:
    reads: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    runs_code: bool = False
    # The script could not be read as sed reads it.
    unknown: bool = False


class _Reader:
    def __init__(self, script: str, effects: SedEffects) -> None:
        self.text = script
        self.at = 0
        self.effects = effects

    def peek(self) -> str:
        return self.text[self.at] if self.at < len(self.text) else ""

    def skip_blanks(self, newlines: bool = False) -> None:
        blanks = " \t\n;" if newlines else " \t"
        while self.peek() and self.peek() in blanks:
            self.at += 1

    def rest_of_line(self) -> str:
        end = self.text.find("\n", self.at)
        end = len(self.text) if end < 0 else end
        line = self.text[self.at : end]
        self.at = end
        return line

    def delimited(self, delimiter: str) -> bool:
        """Skip to the unescaped `delimiter`; False when it never comes."""
        while self.at < len(self.text):
            char = self.text[self.at]
            if char == "\\":
                self.at += 2
                continue
            self.at += 1
            if char == delimiter:
                return True
            if char == "\n" and delimiter != "\n":
                return False
        return False


def sed_effects(script: str) -> SedEffects:
    """What a sed script (all its -e fragments joined by newlines) does besides filtering."""
    effects = SedEffects()
    reader = _Reader(script, effects)
    try:
        while True:
            reader.skip_blanks(newlines=True)
            if not reader.peek():
                return effects
            if not _command(reader):
                effects.unknown = True
                return effects
    except IndexError:
        effects.unknown = True
    return effects


def _command(reader: _Reader) -> bool:
    if reader.peek() == "#":
        reader.rest_of_line()
        return True
    if not _addresses(reader):
        return False
    reader.skip_blanks()
    while reader.peek() == "!":
        reader.at += 1
        reader.skip_blanks()
    letter = reader.peek()
    if not letter:
        return False
    reader.at += 1
    return _body(reader, letter) and _end(reader, letter)


def _body(reader: _Reader, letter: str) -> bool:
    """Read what follows the command letter; False for a letter sed does not know."""
    if letter in _PLAIN or letter in "{}":
        return True
    handler = _BODIES.get(letter)
    return handler is not None and handler(reader)


def _number(reader: _Reader) -> bool:
    reader.skip_blanks()
    while reader.peek().isalnum() or reader.peek() == ".":
        reader.at += 1
    return True


def _run(reader: _Reader) -> bool:
    reader.effects.runs_code = True
    reader.rest_of_line()
    return True


def _transliterate(reader: _Reader) -> bool:
    delimiter = reader.peek()
    reader.at += 1
    return bool(delimiter) and delimiter not in "\n\\" and reader.delimited(
        delimiter) and reader.delimited(delimiter)


def _end(reader: _Reader, letter: str) -> bool:
    """After a command: blanks, then the end of the script, `;`, a newline, `}` or `#`."""
    if letter in _TEXT or letter in _FILES or letter in "e:btT":
        return True  # they ran to the end of the line already
    reader.skip_blanks()
    char = reader.peek()
    return not char or char in _ENDS or letter == "{"


def _label(reader: _Reader) -> bool:
    reader.skip_blanks()
    while reader.peek() and reader.peek() not in ";\n":
        reader.at += 1
    return True


def _text(reader: _Reader) -> bool:
    """`a text`, `a\\` + lines: to the end of the line, with backslash-newline going on."""
    while reader.at < len(reader.text):
        char = reader.text[reader.at]
        if char == "\\":
            reader.at += 2
            continue
        if char == "\n":
            return True
        reader.at += 1
    return True


def _file(reader: _Reader, kind: str) -> bool:
    reader.skip_blanks()
    name = reader.rest_of_line()
    (reader.effects.reads if kind == "read" else reader.effects.writes).append(name)
    return True


def _read_file(reader: _Reader) -> bool:
    return _file(reader, "read")


def _write_file(reader: _Reader) -> bool:
    return _file(reader, "write")


def _substitute(reader: _Reader) -> bool:
    delimiter = reader.peek()
    if not delimiter or delimiter in "\n\\":
        return False
    reader.at += 1
    if not (reader.delimited(delimiter) and reader.delimited(delimiter)):
        return False
    while True:
        flag = reader.peek()
        if flag == "w":
            reader.at += 1
            _file(reader, "write")
            return True
        if flag == "e":
            reader.effects.runs_code = True
        elif not flag or flag in _ENDS or flag in " \t":
            return True
        elif not (flag.isdigit() or flag in "gpiImM"):
            return False
        reader.at += 1


def _addresses(reader: _Reader) -> bool:
    if not _address(reader):
        return False
    reader.skip_blanks()
    if reader.peek() == ",":
        reader.at += 1
        reader.skip_blanks()
        if reader.peek() in ("+", "~"):
            reader.at += 1
        return _address(reader, required=True)
    return True


def _address(reader: _Reader, required: bool = False) -> bool:
    char = reader.peek()
    if char.isdigit():
        _line_number(reader)
        return True
    if char == "$":
        reader.at += 1
        return True
    if char in ("/", "\\"):
        return _regex_address(reader, char)
    return not required


def _line_number(reader: _Reader) -> None:
    """`N`, or `first~step`."""
    while reader.peek().isdigit():
        reader.at += 1
    if reader.peek() == "~":
        reader.at += 1
        while reader.peek().isdigit():
            reader.at += 1


def _regex_address(reader: _Reader, char: str) -> bool:
    """`/regex/` or `\\cregexc`, then its `I` and `M` flags."""
    reader.at += 1
    if char == "\\":
        char = reader.peek()
        reader.at += 1
        if not char or char in "\n\\":
            return False
    if not reader.delimited(char):
        return False
    while reader.peek() in ("I", "M"):
        reader.at += 1
    return True


_BODIES: dict[str, Callable[[_Reader], bool]] = {
    **dict.fromkeys("qQlLv", _number),
    **dict.fromkeys("btT:", _label),
    **dict.fromkeys(_TEXT, _text),
    **dict.fromkeys("rR", _read_file),
    **dict.fromkeys("wW", _write_file),
    "e": _run,
    "s": _substitute,
    "y": _transliterate,
}
