"""Conditional expressions for the Bash analyser: `[[ … ]]` and `[ … ]` parsed as test
commands. Their file tests (`-f x`, `a -nt b`) read paths; their other operands are
words (and arithmetic, see `evaluated`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from wisp.shell.builtins import FILE_COMPARISONS, FILE_TESTS
from wisp.shell.evaluated import WORD_TYPES
from wisp.shell.model import PathUse
from wisp.shell.walker import Pair, Walker
from wisp.shell.words import evaluate_plain, text_of

if TYPE_CHECKING:
    from tree_sitter import Node


class Conditions(Walker):
    def _test(self, node: Node) -> Pair:
        uses: list[PathUse] = []
        for child in node.named_children:
            self._test_node(child, uses)
        name = node.children[0].type if node.children else "[["
        self.pseudo(name, uses)
        return (self.cwd, self.cwd)

    def _test_node(self, node: Node, uses: list[PathUse]) -> None:
        if not self._enter():
            return
        try:
            if self._file_test(node, uses):
                return
            if node.type in WORD_TYPES:
                self.word(node)
                return
            for child in node.named_children:
                self._test_node(child, uses)
        finally:
            self.nesting -= 1

    def _file_test(self, node: Node, uses: list[PathUse]) -> bool:
        """`-f x`, `a -nt b`: their operands are read."""
        self._evaluated_operands(node)
        if node.type == "unary_expression" and node.named_child_count == 2:
            operator, operand = node.named_children
            if text_of(operator) in FILE_TESTS:
                self._file_operand(operand, uses)
                return True
        if node.type == "binary_expression":
            comparison = node.child_by_field_name("operator")
            left = node.child_by_field_name("left")
            right = node.child_by_field_name("right")
            if (comparison is not None and text_of(comparison) in FILE_COMPARISONS
                    and left is not None and right is not None):
                self._file_operand(left, uses)
                self._file_operand(right, uses)
                return True
        return False

    def _file_operand(self, node: Node, uses: list[PathUse]) -> None:
        if node.type in WORD_TYPES:
            uses.extend(self.resolve(self.word(node), "read"))
        elif node.type == "unary_expression" and node.children and node.children[0].type == "~":
            # `[[ -d ~/x ]]`: the grammar reads `~` as arithmetic negation.
            self.descend(node)
            uses.extend(self.resolve(evaluate_plain(text_of(node), self), "read"))
        elif node.type == "binary_expression":
            # `[ -f x -a -d y ]` parses as `-f (x -a (-d y))`: x is the operand.
            left = node.child_by_field_name("left")
            right = node.child_by_field_name("right")
            if left is not None:
                self._test_node_operand(left, uses)
            if right is not None:
                self._test_node(right, uses)
        else:
            uses.append(PathUse("read", None))
            self._test_node(node, uses)

    def _test_node_operand(self, node: Node, uses: list[PathUse]) -> None:
        if not self._enter():
            return
        try:
            self._file_operand(node, uses)
        finally:
            self.nesting -= 1
