"""Statements that hold statements, for the Bash analyser: lists (`&&`, `||`, `;`, `&`),
pipelines, subshells, `!`, `{ }` and `(( ))`, if/case/loops, function definitions, and
text the grammar could not parse.

Each returns the directories the shell may be in after it, after success and after
failure, so that a `cd` is followed as far as it can be.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from wisp.shell.call import Stdin
from wisp.shell.evaluated import WORD_TYPES
from wisp.shell.paths import union
from wisp.shell.walker import Context, Pair, Walker
from wisp.shell.words import text_of

if TYPE_CHECKING:
    from tree_sitter import Node

_LOOPS = frozenset({"for_statement", "c_style_for_statement", "while_statement"})


class Compound(Walker):
    def sequence(self, children: list[Node]) -> Pair:
        result = (self.cwd, self.cwd)
        for i, child in enumerate(children):
            if not child.is_named or child.type == "comment":
                continue
            start = self.cwd
            ok, fail = self.visit(child)
            if i + 1 < len(children) and children[i + 1].type == "&":
                self.cwd = start  # a background job runs in a subshell
                result = (start, start)
            else:
                self.cwd = union(ok, fail)
                result = (ok, fail)
        return result

    def _block(self, node: Node) -> Pair:
        if node.children and node.children[0].type == "((":
            return self._arithmetic(node)
        return self.sequence(node.children)

    def _arithmetic(self, node: Node) -> Pair:
        self.descend(node)
        self.arithmetic(text_of(node)[2:-2], "(( ))")
        self.pseudo("((", [])
        return (self.cwd, self.cwd)

    def _subshell(self, node: Node) -> Pair:
        start = self.cwd
        self.sequence(node.children)
        self.cwd = start
        return (start, start)

    def _negated(self, node: Node, tail: list[Node] | None = None) -> Pair:
        parts = [c for c in node.children if c.is_named and c.type != "comment"]
        if tail and len(parts) == 1:
            ok, fail = self._redirected_body(parts[0], tail)
        else:
            ok, fail = self.sequence(node.children)
        return (fail, ok)

    def _list(self, node: Node, tail: list[Node] | None = None) -> Pair:
        parts = [c for c in node.children if c.is_named and c.type != "comment"]
        operators = [c.type for c in node.children if c.type in ("&&", "||")]
        if len(parts) != 2 or len(operators) != 1:
            return self.sequence(node.children)
        ok, fail = self.visit(parts[0])
        self.cwd = ok if operators[0] == "&&" else fail
        ok2, fail2 = self._redirected_body(parts[1], tail) if tail else self.visit(parts[1])
        if operators[0] == "&&":
            return (ok2, union(fail, fail2))
        return (union(ok, ok2), fail2)

    def _pipeline(self, node: Node, tail: list[Node] | None = None) -> Pair:
        start, stdin = self.cwd, self.stdin
        elements = [c for c in node.children if c.is_named and c.type != "comment"]
        piped = False
        for child in node.children:
            if child.type in ("|", "|&"):
                piped = True
            elif child.is_named and child.type != "comment":
                self.cwd = start
                self.stdin = Stdin("pipe") if piped else stdin
                if tail and child == elements[-1]:
                    self._redirected_body(child, tail)
                else:
                    self.visit(child)
        self.cwd, self.stdin = start, stdin
        return (start, start)

    def _control(self, node: Node) -> Pair:
        """if/case/loops: a `cd` inside makes the directory afterwards unknown, and inside a
        loop also for the next iteration, so the body is walked again with it unknown."""
        self._loop_header(node)
        start, mark = self.cwd, self.cd_count
        self.sequence(node.children)
        if self.cd_count == mark:
            self.cwd = start
            return (start, start)
        if node.type in _LOOPS and start is not None:
            self.cwd = None
            self.sequence(node.children)
        return (None, None)

    def _function(self, node: Node) -> Pair:
        start = self.cwd
        name = node.child_by_field_name("name")
        if name is not None:
            self.functions.add(text_of(name))
            if text_of(name) == "command_not_found_handle":
                self.reasons.append("the line defines command_not_found_handle, which runs "
                                    "for any unknown command name")
        # The body runs wherever the function is called from.
        self.cwd = None
        for child in node.named_children:
            if child != name:
                self.visit(child)
        self.cwd = start
        return (start, start)

    def _ignore(self, node: Node) -> Pair:
        return (self.cwd, self.cwd)

    def _error(self, node: Node) -> Pair:
        """Unparsable text: words in a row are taken as a command so that deny rules still
        see it; the parse error already makes the line unresolved."""
        pending: list[Node] = []
        for child in [*node.children, None]:
            if child is not None and child.type in WORD_TYPES:
                pending.append(child)
                continue
            if pending:
                self.run([self.word(n) for n in pending], Context(self.cwd, self.stdin))
                pending = []
            if child is not None and child.is_named:
                self.visit(child)
        return (self.cwd, self.cwd)
