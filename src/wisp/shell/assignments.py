"""Assignments and declarations for the Bash analyser: `X=1 cmd`, `X=1`, `export`,
`declare`, `local`, `unset`. An assignment may steer the commands that see it
(`GIT_EXTERNAL_DIFF=x git diff`), and bash evaluates subscripts and array literals.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from wisp.shell.arith import declared_word_reason, is_name_or_element
from wisp.shell.model import SimpleCommand
from wisp.shell.walker import Pair, Walker
from wisp.shell.words import text_of
from wisp.shell.wrappers import dangerous_reason, is_dangerous_variable, is_safe_variable

if TYPE_CHECKING:
    from tree_sitter import Node


class Assignments(Walker):
    def _assignments(self, nodes: list[Node], *, prefix: bool, exported: bool = False
                     ) -> tuple[str, ...]:
        """Walk assignments; returns those that may steer the command they prefix (all
        but a short list of harmless variables)."""
        tainted: tuple[str, ...] = ()
        for node in nodes:
            name_node = node.child_by_field_name("name")
            if name_node is not None and name_node.type == "subscript":
                self._subscript(name_node, "an assignment")
                name_node = name_node.child_by_field_name("name")
            self._array_literal(node.child_by_field_name("value"))
            name = text_of(name_node) if name_node is not None else ""
            for child in node.named_children:  # the value, and a subscript's index
                self.visit(child)
            if is_dangerous_variable(name):
                self.reasons.append(dangerous_reason(name))
            if is_safe_variable(name):
                continue
            if prefix:
                tainted = (*tainted, text_of(node))
            elif exported or name in self.env:
                self.tainted = (*self.tainted, text_of(node))  # every later command sees it
        return tainted

    def _standalone_assignments(self, node: Node) -> Pair:
        nodes = [node] if node.type == "variable_assignment" else [
            c for c in node.named_children if c.type == "variable_assignment"]
        self._assignments(nodes, prefix=False)
        return (self.cwd, self.cwd)

    def _declaration(self, node: Node) -> Pair:
        keyword = node.children[0].type if node.children else "declare"
        argv = [keyword]
        assignments: list[Node] = []
        for child in node.named_children:
            if child.type == "variable_assignment":
                assignments.append(child)
                argv.append(text_of(child))
            else:
                word = self.word(child)
                argv.append(word.display)
                reason = declared_word_reason(keyword, word.static)
                if reason:
                    self.reasons.append(reason)
        exported = keyword == "export" or any(a.startswith("-") and "x" in a for a in argv[1:])
        self._assignments(assignments, prefix=False, exported=exported)
        self.emit(SimpleCommand(keyword, tuple(argv), (), True))
        return (self.cwd, self.cwd)

    def _unset(self, node: Node) -> Pair:
        argv = [node.children[0].type if node.children else "unset"]
        for child in node.named_children:
            word = self.word(child)
            argv.append(word.display)
            if not (word.static or "").startswith("-") and not is_name_or_element(word.static):
                self.reasons.append(f"unset names a variable with {word.display!r}: bash "
                                    "evaluates its subscript")
        self.emit(SimpleCommand(argv[0], tuple(argv), (), True))
        return (self.cwd, self.cwd)
