"""What bash evaluates in a command line besides running commands: arithmetic (`(( ))`,
`for ((…))`, `[[ a -eq b ]]`, subscripts, array literals) and variable names (`[[ -v ]]`),
judged for the analyser with what it knows of the line's variables (see `arith`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from wisp.shell.arith import CODE_VARIABLES, is_name_or_element, is_plain
from wisp.shell.words import Word, text_of

if TYPE_CHECKING:
    from tree_sitter import Node

_ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
# Set by bash itself, whatever the environment says.
SHELL_VARIABLES = frozenset({
    "RANDOM", "SRANDOM", "SECONDS", "LINENO", "EPOCHSECONDS", "EPOCHREALTIME", "PPID", "UID",
    "EUID", "GROUPS", "HOSTNAME", "HOSTTYPE", "OSTYPE", "MACHTYPE", "OLDPWD", "SHLVL",
    "FUNCNAME", "PIPESTATUS", "REPLY", "OPTARG", "OPTIND", "IFS", "DIRSTACK", "HISTCMD",
    "COMP_LINE", "COMP_WORDS", "COPROC"})
WORD_TYPES = frozenset({
    "word", "string", "raw_string", "ansi_c_string", "translated_string", "concatenation",
    "simple_expansion", "expansion", "command_substitution", "process_substitution",
    "number", "arithmetic_expansion", "brace_expression", "extglob_pattern", "regex"})


def shorten(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Evaluated:
    """The analyser's checks of what bash evaluates; it provides the state below."""

    env: Mapping[str, str]
    reasons: list[str]
    assigned: set[str]
    stringy: set[str]
    vars_opaque: bool

    def word(self, node: Node) -> Word:
        raise NotImplementedError

    def doubt(self, reason: str) -> None:
        self.reasons.append(reason)

    def arith_ok(self, text: str) -> bool:
        return is_plain(text, self._value_is_plain)

    def arithmetic(self, text: str, what: str) -> None:
        if not self.arith_ok(text):
            self.reasons.append(f"{what} evaluates {shorten(text.strip(), 60)!r} as "
                                "arithmetic, where a subscript or a variable's value can "
                                "run code")

    def _value_is_plain(self, name: str, depth: int) -> bool:
        """Whether `name`'s value, evaluated as arithmetic, runs nothing."""
        if name in self.stringy or self.vars_opaque:
            return False
        if name in self.assigned:
            return True  # only ever given numbers by this line
        if name in SHELL_VARIABLES or name.startswith("BASH"):
            return False
        return is_plain(self.env.get(name, ""), self._value_is_plain, depth)

    def _loop_header(self, node: Node) -> None:
        """`for ((…))` is arithmetic; `for NAME in …` binds NAME."""
        if node.type == "c_style_for_statement":
            for name in ("initializer", "condition", "update"):
                for part in node.children_by_field_name(name):
                    self.arithmetic(text_of(part), "for ((…))")
        elif node.type == "for_statement":
            variable = node.child_by_field_name("variable")
            if variable is not None and text_of(variable) in CODE_VARIABLES:
                self.reasons.append(f"the loop sets {text_of(variable)}, which bash runs "
                                    "as code")

    def _subscript(self, node: Node, what: str) -> None:
        """`a[i]`: an indexed array's subscript is arithmetic."""
        index = node.child_by_field_name("index")
        text = text_of(index) if index is not None else ""
        if text not in ("@", "*"):
            self.arithmetic(text, f"the subscript in {what}")

    def _array_literal(self, value: Node | None) -> None:
        """`a=([i]=v)`: each `[i]` is a subscript."""
        if value is None or value.type != "array":
            return
        for match in re.finditer(r"\[([^\]]*)\]=", text_of(value)):
            self.arithmetic(match[1], "an array subscript")

    def _evaluated_operands(self, node: Node) -> None:
        """`[[ a -eq b ]]` evaluates both sides as arithmetic; `[[ -v a[i] ]]` a subscript."""
        if node.type == "binary_expression":
            operator = node.child_by_field_name("operator")
            if operator is not None and text_of(operator) in _ARITHMETIC_TESTS:
                for side in ("left", "right"):
                    operand = node.child_by_field_name(side)
                    if operand is not None:
                        self.arithmetic(self._operand_text(operand), f"[[ {text_of(operator)} ]]")
        elif node.type == "unary_expression" and node.named_child_count == 2:
            operator, operand = node.named_children
            if text_of(operator) in ("-v", "-R"):
                name = self._operand_text(operand)
                if not is_name_or_element(name):
                    self.reasons.append(f"[[ -v ]] names a variable with {name!r}: bash "
                                        "evaluates its subscript")

    def _operand_text(self, node: Node) -> str:
        """An operand as bash's arithmetic sees it: quotes removed from literal text, and
        expansions kept as written (`$x`, whose value is then checked)."""
        word = self.word(node) if node.type in WORD_TYPES else None
        if word is not None and word.static is not None:
            return word.static
        text = text_of(node)
        return text[1:-1] if node.type == "string" else text
