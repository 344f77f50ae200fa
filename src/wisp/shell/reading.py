"""From text to syntax tree for the Bash analyser: parsing (with bash's backslash-newline
joins, which tree-sitter-bash does not make), the prescan of what the line may assign or
define, and shell code a command runs as text (`bash -c`, `eval`), analysed in turn.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from wisp.shell import grammar
from wisp.shell.call import Script
from wisp.shell.evaluated import shorten
from wisp.shell.walker import IDENTIFIER, NAME, Context, Pair, Walker
from wisp.shell.words import text_of

if TYPE_CHECKING:
    from tree_sitter import Node

# `bash -c "eval '…'"` levels.
_MAX_SCRIPT_DEPTH = 8
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Over-approximations of the variables a line may set and the functions it may define,
# found in its text before the walk, so that a use inside a loop before the assignment also
# counts. Each pattern runs only when a cheap substring test says it could match.
_PRESCAN: tuple[tuple[tuple[str, ...], re.Pattern[str]], ...] = (
    # `X=1`, `a[i]+=1`, and `${X:=default}` which assigns too
    (("=",), re.compile(rf"({NAME})(?:\[[^\]]*\])?[+:]?=")),
    (("for", "select"), re.compile(rf"\b(?:for|select)\s+({NAME})")),
    (("((", "let"), re.compile(rf"({NAME})\s*(?:\+\+|--)|(?:\+\+|--)\s*({NAME})")),
    # `printf -v NAME`, `printf -v "NAME"`: every name in the word after -v.
    (("printf",), _PRINTF_V := re.compile(r"\bprintf\s+(?:--\s+)?-v\s*(\S+)")),
)
# What a name is given: `X=5` and `for i in 1 2` give numbers; anything else may give text
# that bash would evaluate again in arithmetic (`x='a[$(rm f)]'; echo $((x))`).
_ASSIGNED_VALUE = re.compile(rf"({NAME})(?:\[[^\]]*\])?([+:]?=)([^\s;&|)]*)")
_LOOP_WORDS = re.compile(rf"\b(?:for|select)\s+({NAME})(?:\s+in\s+([^;\n]*))?")
_NUMBER = re.compile(r"[0-9]+")
_BINDER_HINT = re.compile("read|mapfile|getopts|unset|declare|typeset|local|export|let")
_BINDERS = re.compile(
    r"\b(?:read|mapfile|readarray|getopts|unset|declare|typeset|local|export|readonly|let)"
    r"\b([^;&|\n)]*)")
_FUNCTION = re.compile(r"\bfunction\s+([^\s(){};&|]+)|([^\s;&|(){}<>`$'\"=]+)\s*\(\s*\)")


class Reading(Walker):
    def analyse(self, text: str) -> Pair:
        if _CONTROL.search(text):
            self.reasons.append("the command contains control characters (other than tab and "
                                "newline)")
        parser = grammar.parser()
        source = text.encode("utf-8", "surrogatepass")
        root = parser.parse(source).root_node
        if b"\\\n" in source:
            joined = join_continuations(source, root)
            if joined != source:
                root = parser.parse(joined).root_node
        if root.has_error:
            self.reasons.append("the command could not be parsed (a syntax error, or syntax "
                                "the grammar does not support)")
        self._prescan(text)
        return self.visit(root)

    def _prescan(self, text: str) -> None:
        for needles, pattern in _PRESCAN:
            for needle in needles:
                if needle in text:
                    for match in pattern.finditer(text):
                        self.assigned.update(
                            IDENTIFIER.findall(name)[0] for name in match.groups()
                            if name and IDENTIFIER.search(name))
                    break
        self._prescan_values(text)
        if "(" in text or "function" in text:
            for match in _FUNCTION.finditer(text):
                self.functions.add(match[1] or match[2])

    def _prescan_values(self, text: str) -> None:
        """Which assigned names may hold text rather than numbers."""
        if "=" in text:  # `x=`/`x+=` of anything but a number, and `${x:=...}`
            self.stringy.update(m[1] for m in _ASSIGNED_VALUE.finditer(text)
                                if m[2] == ":=" or not _NUMBER.fullmatch(m[3]))
        if "for" in text or "select" in text:  # loops over words that are not all numbers
            self.stringy.update(m[1] for m in _LOOP_WORDS.finditer(text) if m[2] is None
                                or not all(_NUMBER.fullmatch(w) for w in m[2].split()))
        if "printf" in text:
            for match in _PRINTF_V.finditer(text):
                self.stringy.update(IDENTIFIER.findall(match[1]))
        if _BINDER_HINT.search(text):
            for match in _BINDERS.finditer(text):
                names = IDENTIFIER.findall(match[1])
                self.assigned.update(names)
                if not match[0].startswith("let"):
                    self.stringy.update(names)

    def script(self, script: Script, ctx: Context) -> Pair:
        if not script.exact:
            self.reasons.append(f"{script.what} runs text that is not literal: "
                                f"{shorten(script.text)}")
        if self.depth >= _MAX_SCRIPT_DEPTH:
            self.reasons.append(f"shell code nested more than {_MAX_SCRIPT_DEPTH} levels deep "
                                "was not analysed")
            return (None, None)
        saved = (self.cwd, self.stdin, self.tainted)
        self.cwd = None if script.cwd_unknown else ctx.cwd
        self.stdin = ctx.stdin
        self.tainted = (*self.tainted, *ctx.tainted)
        self.depth += 1
        try:
            return self.analyse(script.text)
        finally:
            self.depth -= 1
            self.cwd, self.stdin, self.tainted = saved


def join_continuations(source: bytes, root: Node) -> bytes:
    """bash removes backslash-newline before it splits words, but tree-sitter-bash splits
    `r\\⏎m` into `r` and `m`. Remove them as bash does: not in single quotes, `$'…'`,
    comments or quoted here-documents."""
    cuts: list[int] = []
    at = source.find(b"\\\n")
    while at >= 0:
        run = 0
        while at - run - 1 >= 0 and source[at - run - 1] == 0x5C:
            run += 1
        node = root.descendant_for_byte_range(at, at + 1)
        if run % 2 == 0 and not (node is not None and literal_context(node)):
            cuts.append(at)
        at = source.find(b"\\\n", at + 2)
    pieces = []
    previous = 0
    for cut in cuts:
        pieces.append(source[previous:cut])
        previous = cut + 2
    pieces.append(source[previous:])
    return b"".join(pieces)


def literal_context(node: Node | None) -> bool:
    while node is not None:
        if node.type in ("raw_string", "ansi_c_string", "comment"):
            return True
        if node.type == "heredoc_body":
            start = node.prev_named_sibling
            while start is not None and start.type != "heredoc_start":
                start = start.prev_named_sibling
            return start is not None and any(c in text_of(start) for c in "'\"\\")
        node = node.parent
    return False
