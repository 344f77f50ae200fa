"""Shell words after quote removal, with the expansions that can be done without running
anything: environment variables, `~`, `$PWD`. Everything else leaves the value unknown."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, NamedTuple, Protocol

from wisp.shell.arith import CODE_VARIABLES
from wisp.shell.model import PathUse

if TYPE_CHECKING:
    from tree_sitter import Node

# An active (unquoted) glob or brace pattern; quoted characters are masked with NUL first.
_PATTERN = re.compile(r"[*?]|\[[^\]\x00]+\]|\{[^{}]*(?:,|\.\.)[^{}]*\}")
_PATTERN_CHARS = frozenset("*?[{")
_ESCAPE = re.compile(r"(\\.)", re.S)
_DQ_ESCAPE = re.compile(r"\\([$`\"\\\n])")
# bash expands `~` after the `=` of an argument that looks like an assignment (`x=~/a`).
_ASSIGN_TILDE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=~")
_ANSI_C = re.compile(
    r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|c.|.)", re.S)
_ANSI_SIMPLE = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n",
                "r": "\r", "t": "\t", "v": "\v"}
_SIMPLE_TYPES = frozenset({"word", "number", "raw_string"})
_PLAIN_TYPES = frozenset({"word", "number", "extglob_pattern", "regex", "variable_name",
                          "test_operator", "file_descriptor", "brace_expression",
                          "special_variable_name"})


class Word(NamedTuple):
    # Quote-removed text; expansions keep their source text (what argv shows).
    display: str
    # The value when the word has no expansion at all (a literal), else None.
    static: str | None = None
    # The value after the expansions we can do (`~`, environment variables); None if unknown.
    value: str | None = None
    # Index in `value` of the first active glob or brace character, -1 if none.
    glob: int = -1
    # The whole word is `<(…)`/`>(…)`: a pipe, not a file anyone chose.
    procsub: bool = False
    # What the word stands for when another program substitutes it (find's `{}`, xargs input).
    stands_for: tuple[PathUse, ...] | None = None
    # Not in the command line at all (the arguments xargs appends): kept out of argv.
    synthetic: bool = False
    # Variables the word expands that the line itself assigns (their value is unknown).
    assigned: tuple[str, ...] = ()

    @classmethod
    def literal(cls, text: str) -> Word:
        return cls(text, text, text, find_pattern([(text, True)]))

    def tail(self, start: int) -> Word:
        """The word without its first `start` characters (an option name such as `--file=`),
        which must be literal."""
        head = self.display[:start]
        value = self.value
        if value is not None:
            value = value[start:] if value.startswith(head) else None
        static = self.static[start:] if self.static is not None else None
        glob = self.glob - start if self.glob >= start and value is not None else -1
        return Word(self.display[start:], static, value, glob, stands_for=self.stands_for,
                    assigned=self.assigned)


class WordHost(Protocol):
    """What evaluating a word needs from the analyser."""

    def substitution(self, node: Node) -> None:
        """Analyse the commands of a `$(…)`, backtick or `<(…)` substitution."""

    def descend(self, node: Node) -> None:
        """Look for substitutions anywhere below `node`."""

    def variable(self, name: str) -> str | None:
        """The value of `$name`, "" when unset, None when it cannot be known."""

    def home(self) -> str | None:
        """What `~` expands to, None when unknown."""

    def assigns(self, name: str) -> bool:
        """The line assigns `name` somewhere."""

    def doubt(self, reason: str) -> None:
        """The word makes bash do something the analysis cannot follow."""

    def arithmetic(self, text: str, what: str) -> None:
        """`text` is evaluated as arithmetic (see `arith`)."""


def text_of(node: Node) -> str:
    raw = node.text
    if raw is None:
        return ""
    try:
        return raw.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return raw.decode("utf-8", "replace")


def find_pattern(segments: list[tuple[str, bool]]) -> int:
    """Index of the first active glob/brace pattern over (text, active) segments, or -1."""
    if not any(active and not _PATTERN_CHARS.isdisjoint(text) for text, active in segments):
        return -1
    masked = "".join(text if active else "\x00" * len(text) for text, active in segments)
    match = _PATTERN.search(masked)
    return match.start() if match else -1


def decode_ansi_c(body: str) -> str:
    def one(match: re.Match[str]) -> str:
        esc = match.group(1)
        kind = esc[0]
        if kind in "xuU":
            return chr(min(int(esc[1:], 16), 0x10FFFF))
        if kind.isdigit():
            return chr(int(esc, 8) & 0xFF)
        if kind == "c":
            return chr(ord(esc[1]) & 0x1F)
        return _ANSI_SIMPLE.get(esc, esc)

    return _ANSI_C.sub(one, body)


class _Builder:
    """Accumulates one word: its display text and, while knowable, its expanded value as
    (text, glob-active) segments."""

    __slots__ = ("assigned", "display", "host", "known", "literal", "segments", "tilde_ok")

    def __init__(self, host: WordHost) -> None:
        self.host = host
        self.display: list[str] = []
        self.segments: list[tuple[str, bool]] = []
        self.known = True
        self.literal = True
        self.tilde_ok: bool | None = None  # decided by the first part
        self.assigned: list[str] = []

    def add(self, node: Node, quoted: bool) -> None:
        kind = node.type
        handler = _PARTS.get(kind)
        if handler is not None:
            handler(self, node, quoted)
        elif kind in _PLAIN_TYPES or not node.is_named:
            self.plain(text_of(node), quoted)
        else:
            self.host.descend(node)
            self.opaque(text_of(node))

    def plain(self, text: str, quoted: bool) -> None:
        if self.tilde_ok is None:
            self.tilde_ok = not quoted
        if "\\" not in text:
            self.display.append(text)
            self.segments.append((text, not quoted))
            return
        for i, part in enumerate(_ESCAPE.split(text)):
            if i % 2 == 0:
                self.display.append(part)
                self.segments.append((part, not quoted))
            elif part != "\\\n":  # a line continuation disappears
                self.display.append(part[1])
                self.segments.append((part[1], False))

    def quoted_text(self, text: str) -> None:
        self.tilde_ok = bool(self.tilde_ok)
        self.display.append(text)
        self.segments.append((text, False))

    def opaque(self, source: str) -> None:
        self.tilde_ok = bool(self.tilde_ok)
        self.display.append(source)
        self.known = False
        self.literal = False

    def expansion_value(self, name: str, source: str, quoted: bool) -> None:
        value = self.host.variable(name)
        if self.host.assigns(name):
            self.assigned.append(name)
        self.tilde_ok = bool(self.tilde_ok)
        self.display.append(source)
        self.literal = False
        # Unquoted, a value with blanks would be split into several words.
        if value is None or (not quoted and any(c in value for c in " \t\n")):
            self.known = False
            return
        self.segments.append((value, not quoted))

    def finish(self, procsub: bool) -> Word:
        display = "".join(self.display)
        static = display if self.literal else None
        assigned = tuple(self.assigned)
        if not self.known:
            return Word(display, static, None, procsub=procsub, assigned=assigned)
        segments = self.segments
        if self.tilde_ok:
            expanded = _expand_tilde(segments, self.host)
            if expanded is None:
                return Word(display, static, None, assigned=assigned)
            segments = expanded
        value = "".join(text for text, _ in segments)
        return Word(display, static, value, find_pattern(segments), assigned=assigned)


Segments = list[tuple[str, bool]]


def _expand_tilde(segments: Segments, host: WordHost) -> Segments | None:
    first, active = segments[0] if segments else ("", False)
    if not active:
        return segments
    if first.startswith("~"):
        start = 0
    else:
        match = _ASSIGN_TILDE.match(first)
        if match is None:
            return segments
        start = match.end() - 1
    end = first.find("/", start)
    if end < 0:
        if len(segments) > 1:
            return segments  # the tilde-prefix runs into quoted text: bash leaves it alone
        end = len(first)
    user = first[start + 1 : end]
    if user == "":
        home = host.home()
    elif user == "+":
        home = host.variable("PWD")
    else:  # ~- (OLDPWD) and ~user are not known statically
        home = None
    if home is None:
        return None
    return [(first[:start], True), (home, False), (first[end:], True), *segments[1:]]


def _string(builder: _Builder, node: Node, quoted: bool) -> None:
    children = node.children
    for i, child in enumerate(children):
        if child.type == '"' and (i == 0 or i == len(children) - 1):
            continue
        if child.type == "string_content":
            builder.quoted_text(_DQ_ESCAPE.sub(lambda m: "" if m[1] == "\n" else m[1],
                                               text_of(child)))
        elif not child.is_named:
            builder.quoted_text(text_of(child))
        else:
            builder.add(child, True)


def _sequence(builder: _Builder, node: Node, quoted: bool) -> None:
    for child in node.children:
        builder.add(child, quoted)


def _translated_string(builder: _Builder, node: Node, quoted: bool) -> None:
    for child in node.named_children:  # skip the leading `$` of `$"…"`
        builder.add(child, quoted)


def _raw_string(builder: _Builder, node: Node, quoted: bool) -> None:
    builder.quoted_text(text_of(node)[1:-1])


def _ansi_c_string(builder: _Builder, node: Node, quoted: bool) -> None:
    builder.quoted_text(decode_ansi_c(text_of(node)[2:-1]))


def _simple_expansion(builder: _Builder, node: Node, quoted: bool) -> None:
    source = text_of(node)
    builder.expansion_value(source[1:], source, quoted)


# `${!x}` looks up the variable x names; `${!prefix*}` and `${!a[@]}` only list names.
_INDIRECT = re.compile(r"\$\{!(?![A-Za-z_][A-Za-z0-9_]*(?:[*@]|\[[*@]\])\})")
_ASSIGNING = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*):?=")


def _expansion_doubts(host: WordHost, node: Node, source: str) -> None:
    """What bash evaluates inside `${…}`: an indirect name, prompt expansion (`@P` runs the
    value's `$(…)`), a substring's offset and length, a subscript, an assigned default."""
    if _INDIRECT.match(source):
        host.doubt(f"{source} looks up a variable by a name bash evaluates")
    children = node.children
    kinds = [c.type for c in children]
    if "@" in kinds and source.endswith("P}"):
        host.doubt(f"{source} expands its value as a prompt, which runs the commands in it")
    if len(kinds) > 3 and kinds[1] in ("variable_name", "subscript") and kinds[2] == ":":
        host.arithmetic(source[source.index(":") + 1 : -1], "a substring expansion")
    for child in children:
        if child.type == "subscript":
            index = child.child_by_field_name("index")
            text = text_of(index) if index is not None else ""
            if text not in ("@", "*"):
                host.arithmetic(text, "a subscript")
    assigning = _ASSIGNING.match(source)
    if assigning and assigning[1] in CODE_VARIABLES:
        host.doubt(f"{source} sets {assigning[1]}, which bash runs as code")


def _expansion(builder: _Builder, node: Node, quoted: bool) -> None:
    children = node.children
    source = text_of(node)
    if len(children) == 3 and children[1].type == "variable_name":
        builder.expansion_value(text_of(children[1]), source, quoted)
        return
    _expansion_doubts(builder.host, node, source)
    builder.assigned.extend(text_of(c) for c in children
                            if c.type == "variable_name" and builder.host.assigns(text_of(c)))
    builder.host.descend(node)  # `${X:-$(cmd)}` runs cmd
    builder.opaque(source)


def _arithmetic_expansion(builder: _Builder, node: Node, quoted: bool) -> None:
    source = text_of(node)
    inner = source[3:-2] if source.startswith("$((") else source[2:-1]
    builder.host.arithmetic(inner, source[:3] if source.startswith("$((") else "$[ ]")
    builder.host.descend(node)
    builder.opaque(source)


def _substitution(builder: _Builder, node: Node, quoted: bool) -> None:
    builder.host.substitution(node)
    builder.opaque(text_of(node))


_PARTS = {
    "string": _string,
    "concatenation": _sequence,
    "command_name": _sequence,
    "translated_string": _translated_string,
    "raw_string": _raw_string,
    "ansi_c_string": _ansi_c_string,
    "simple_expansion": _simple_expansion,
    "expansion": _expansion,
    "command_substitution": _substitution,
    "process_substitution": _substitution,
    "arithmetic_expansion": _arithmetic_expansion,
}


def evaluate_plain(text: str, host: WordHost) -> Word:
    """A word from source text the grammar did not parse as a word (in `[[ -d ~/x ]]` it
    sees arithmetic); anything beyond plain characters leaves the value unknown."""
    builder = _Builder(host)
    if any(c in text for c in "$`'\"\\"):
        builder.opaque(text)
    else:
        builder.plain(text, False)
    return builder.finish(procsub=False)


def evaluate(node: Node, host: WordHost) -> Word:
    kind = node.type
    if kind == "command_name" and node.child_count == 1:
        node = node.children[0]
        kind = node.type
    if kind in _SIMPLE_TYPES:  # the common case, without building segments
        text = text_of(node)
        if kind == "raw_string":
            text = text[1:-1]
            return Word(text, text, text)
        if "\\" not in text and "~" not in text:
            glob = -1 if _PATTERN_CHARS.isdisjoint(text) else find_pattern([(text, True)])
            return Word(text, text, text, glob)
    builder = _Builder(host)
    builder.add(node, False)
    return builder.finish(procsub=node.type == "process_substitution")
