"""Redirections for the Bash analyser: the files they read and write, where a command's
standard input comes from (a pipe, a file, a here-document, a here-string), and the
redirections of a compound command, which apply to every command inside it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from wisp.shell.call import Stdin
from wisp.shell.model import PathUse, UseKind
from wisp.shell.paths import Cwd, union
from wisp.shell.walker import Pair, Walker
from wisp.shell.words import Word, text_of

if TYPE_CHECKING:
    from tree_sitter import Node


@dataclass(slots=True)
class Redirects:
    uses: list[PathUse] = field(default_factory=list)
    # Words the grammar hangs on a redirection (`cat >f a b`) that bash gives the command.
    words: list[Word] = field(default_factory=list)
    stdin: Stdin | None = None
    # Statements the grammar hangs on a here-doc (`cat <<EOF | sh`).
    nested: list[Node] = field(default_factory=list)


class Redirections(Walker):
    def _bare_redirect(self, node: Node) -> Pair:
        """A redirection with no command: `$(<file)` reads the file, `> f` truncates it."""
        found = self.redirects([node])
        if found.uses:
            self.pseudo(":", found.uses)
        self._nested(found.nested, self.cwd)
        return (self.cwd, self.cwd)

    def _redirected(self, node: Node) -> Pair:
        body = node.child_by_field_name("body")
        redirects = node.children_by_field_name("redirect")
        if body is None:
            found = self.redirects(redirects)
            self.pseudo(":", found.uses)
            self._nested(found.nested, self.cwd)
            return (self.cwd, self.cwd)
        return self._redirected_body(body, redirects)

    def _redirected_body(self, body: Node, redirects: list[Node]) -> Pair:
        if not self._enter():
            return (self.cwd, self.cwd)
        try:
            return self._redirected_body_inner(body, redirects)
        finally:
            self.nesting -= 1

    def _redirected_body_inner(self, body: Node, redirects: list[Node]) -> Pair:
        if body.type == "command":
            return self.command(body, redirects)
        # The grammar hangs `a && b > f` and `a | b > f` on the whole list or pipeline; bash
        # gives the redirections to the last command.
        if body.type == "pipeline":
            return self._pipeline(body, redirects)
        if body.type == "list":
            return self._list(body, redirects)
        if body.type == "negated_command":
            return self._negated(body, redirects)
        start, stdin = self.cwd, self.stdin
        found = self.redirects(redirects)
        uses = found.uses + [u for w in found.words for u in self.resolve(w, "mention")]
        mark = len(self.commands)
        if found.stdin is not None:
            self.stdin = Stdin("redirect")
        result = self.visit(body)
        self.stdin = stdin
        self._attach(mark, uses, body)
        if self._nested(found.nested, start):
            result = (None, None)
        self.cwd = union(*result)
        return result

    def _attach(self, mark: int, uses: list[PathUse], body: Node) -> None:
        """A compound's redirections apply to every command inside it."""
        if not uses:
            return
        if mark == len(self.commands):
            first = body.children[0] if body.children else body
            self.pseudo(first.type, uses)
            return
        writes = any(u.kind != "read" for u in uses)
        for i in range(mark, len(self.commands)):
            command = self.commands[i]
            self.commands[i] = command._replace(
                uses=tuple(dict.fromkeys((*command.uses, *uses))),
                read_only=command.read_only and not writes,
                redirected=tuple(dict.fromkeys((*command.redirected, *uses))))

    def _nested(self, nodes: list[Node], start: Cwd) -> bool:
        """Visit what the grammar hung on a here-doc; True when it may change directory
        (it is really the rest of the line, so later commands would run there)."""
        mark = self.cd_count
        for node in nodes:
            self.cwd = start
            self.visit(node)
        self.cwd = start
        return self.cd_count != mark

    def redirects(self, nodes: list[Node]) -> Redirects:
        found = Redirects()
        for node in nodes:
            if node.type == "file_redirect":
                self._file_redirect(node, found)
            elif node.type == "heredoc_redirect":
                self._heredoc(node, found)
            elif node.type == "herestring_redirect":
                target = self.word(node.named_children[-1]) if node.named_children else None
                if target is not None:
                    exact = target.static is not None
                    found.stdin = Stdin("herestring", target.static if exact else target.display,
                                        exact)
            else:
                self.visit(node)
        return found

    def _file_redirect(self, node: Node, found: Redirects) -> None:
        operator = descriptor = None
        targets: list[Node] = []
        broken = False
        for i, child in enumerate(node.children):
            name = node.field_name_for_child(i)
            if name == "destination":
                targets.append(child)
            elif name == "descriptor":
                descriptor = text_of(child)
            elif child.type == "ERROR":
                broken = True  # `<>` parses as `<` and an error
            elif not child.is_named:
                operator = child.type
        if not targets:
            return
        target = self.word(targets[0])
        found.words.extend(self.word(n) for n in targets[1:])
        kind = _redirect_kind(operator, target, broken)
        if kind is not None:
            found.uses.extend(self.resolve(target, kind, redirect=True))
        if operator == "<" and descriptor in (None, "0"):
            found.stdin = Stdin("file")

    def _heredoc(self, node: Node, found: Redirects) -> None:
        quoted = False
        body: Node | None = None
        strip_tabs = False
        for child in node.children:
            kind = child.type
            if kind == "heredoc_start":
                quoted = any(c in text_of(child) for c in "'\"\\")
            elif kind == "<<-":
                strip_tabs = True
            elif kind == "heredoc_body":
                body = child
            elif kind == "file_redirect":
                self._file_redirect(child, found)
            elif child.is_named and kind != "heredoc_end":
                found.nested.append(child)
        text = text_of(body) if body is not None else ""
        expansions = [] if quoted or body is None else [
            c for c in body.named_children if c.type != "heredoc_content"]
        for child in expansions:  # the shell expands these before the reader sees the text
            self.visit(child)
        if not quoted and not expansions:
            text = re.sub(r"\\([$`\\])|\\\n", lambda m: m[1] or "", text)
        if strip_tabs:
            text = "\n".join(line.lstrip("\t") for line in text.split("\n"))
        found.stdin = Stdin("heredoc", text, exact=not expansions)


def _redirect_kind(operator: str | None, target: Word, broken: bool) -> UseKind | None:
    if operator in (">&", "<&"):
        text = target.static if target.static is not None else target.value
        if text is not None and (text.isdigit() or text == "-"):
            return None  # duplicates or closes a descriptor
        return "write" if operator == ">&" else "read"
    if operator in (">&-", "<&-"):
        return None
    if operator == "<":
        return "write" if broken else "read"
    return "write"
