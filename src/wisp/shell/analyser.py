"""The Bash command analyser: parses a command line with tree-sitter-bash and reports every
simple command it could run and the paths those commands touch (see `model`).

Walks the syntax tree once. Statements return the directories the shell may be in after
them, split by success and failure, so `cd sub && rm x` resolves `x` under `sub` while
`cd sub; rm x` reports both candidates. Nesting is bounded: deeper structure is reported
unresolved instead of raising RecursionError.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from wisp.shell import grammar
from wisp.shell.arith import (
    declared_word_reason,
    is_name_or_element,
)
from wisp.shell.builtins import FILE_COMPARISONS, FILE_TESTS
from wisp.shell.call import Call, Handler, Inner, Script, Stdin
from wisp.shell.commands import COMMANDS, unknown
from wisp.shell.evaluated import (
    SHELL_VARIABLES,
    WORD_TYPES,
    Evaluated,
    shorten,
)
from wisp.shell.model import PathUse, ShellAnalysis, SimpleCommand, UseKind
from wisp.shell.paths import Cwd, assigned_reason, directory, resolve, union
from wisp.shell.words import Word, evaluate, evaluate_plain, text_of
from wisp.shell.wrappers import (
    WRAPPERS,
    dangerous_reason,
    is_dangerous_variable,
    is_safe_variable,
)

if TYPE_CHECKING:
    from tree_sitter import Node

# Statement and word nesting handled before giving up (each level costs a few Python
# frames, and the default recursion limit is 1000).
_MAX_NESTING = 60
# `bash -c "eval '…'"` levels.
_MAX_SCRIPT_DEPTH = 8
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
# Over-approximations of the variables a line may set and the functions it may define,
# found in its text before the walk, so that a use inside a loop before the assignment also
# counts. Each pattern runs only when a cheap substring test says it could match.
_PRESCAN: tuple[tuple[tuple[str, ...], re.Pattern[str]], ...] = (
    # `X=1`, `a[i]+=1`, and `${X:=default}` which assigns too
    (("=",), re.compile(rf"({_NAME})(?:\[[^\]]*\])?[+:]?=")),
    (("for", "select"), re.compile(rf"\b(?:for|select)\s+({_NAME})")),
    (("((", "let"), re.compile(rf"({_NAME})\s*(?:\+\+|--)|(?:\+\+|--)\s*({_NAME})")),
    # `printf -v NAME`, `printf -v "NAME"`: every name in the word after -v.
    (("printf",), _PRINTF_V := re.compile(r"\bprintf\s+(?:--\s+)?-v\s*(\S+)")),
)
# What a name is given: `X=5` and `for i in 1 2` give numbers; anything else may give text
# that bash would evaluate again in arithmetic (`x='a[$(rm f)]'; echo $((x))`).
_ASSIGNED_VALUE = re.compile(rf"({_NAME})(?:\[[^\]]*\])?([+:]?=)([^\s;&|)]*)")
_LOOP_WORDS = re.compile(rf"\b(?:for|select)\s+({_NAME})(?:\s+in\s+([^;\n]*))?")
_NUMBER = re.compile(r"[0-9]+")
_BINDER_HINT = re.compile("read|mapfile|getopts|unset|declare|typeset|local|export|let")
_BINDERS = re.compile(
    r"\b(?:read|mapfile|readarray|getopts|unset|declare|typeset|local|export|readonly|let)"
    r"\b([^;&|\n)]*)")
_IDENTIFIER = re.compile(_NAME)
_FUNCTION = re.compile(r"\bfunction\s+([^\s(){};&|]+)|([^\s;&|(){}<>`$'\"=]+)\s*\(\s*\)")
_LOOPS = frozenset({"for_statement", "c_style_for_statement", "while_statement"})
# Reserved words in command position mean the grammar missed a compound command: it only
# knows `time` as an ordinary command, so `time { rm x; }` comes out as a command `{ rm x`.
_RESERVED = frozenset({"{", "}", "!", "if", "then", "else", "elif", "fi", "do", "done",
                       "case", "esac", "while", "until", "for", "select", "function", "[[",
                       "]]"})
_HANDLERS: dict[str, Handler] = {**COMMANDS, **WRAPPERS}

Pair = tuple[Cwd, Cwd]  # the directories after success, after failure

@dataclass(slots=True)
class _Context:
    """How one simple command runs."""

    cwd: Cwd
    stdin: Stdin | None = None
    # Uses the command inherits: its redirections, a transparent wrapper's own uses.
    extra: list[PathUse] = field(default_factory=list)
    # The assignments it runs with that may steer it (`GIT_EXTERNAL_DIFF=x git diff`).
    tainted: tuple[str, ...] = ()
    # Runs in the current shell, so a `cd` moves the shell.
    in_shell: bool = True
    # A wrapper around it is not read-only.
    not_read_only: bool = False


@dataclass(slots=True)
class _Redirects:
    uses: list[PathUse] = field(default_factory=list)
    # Words the grammar hangs on a redirection (`cat >f a b`) that bash gives the command.
    words: list[Word] = field(default_factory=list)
    stdin: Stdin | None = None
    # Statements the grammar hangs on a here-doc (`cat <<EOF | sh`).
    nested: list[Node] = field(default_factory=list)


class _Analyser(Evaluated):
    def __init__(self, env: Mapping[str, str], cwd: str) -> None:
        self.env = env
        self.cwd: Cwd = (cwd,)
        self.commands: list[SimpleCommand] = []
        self.reasons: list[str] = []
        self.assigned: set[str] = set()
        # Assigned names whose value may be text rather than a number.
        self.stringy: set[str] = set()
        self.functions: set[str] = set()
        self.vars_opaque = False
        # Exported assignments that steer every later command.
        self.tainted: tuple[str, ...] = ()
        self.stdin: Stdin | None = None
        self.nesting = 0
        self.depth = 0
        self.cd_count = 0

    # -- results ---------------------------------------------------------------------------

    def result(self) -> ShellAnalysis:
        return ShellAnalysis(tuple(dict.fromkeys(self.commands)),
                             tuple(dict.fromkeys(self.reasons)))

    def emit(self, command: SimpleCommand) -> None:
        self.commands.append(command)

    def pseudo(self, name: str, uses: list[PathUse], read_only: bool = True) -> None:
        """A command for structure that is not a simple command (`[[ ]]`, `{ …; } >f`);
        its uses, if any, are redirections."""
        uses_t = tuple(dict.fromkeys(uses))
        self.emit(SimpleCommand(name, (name,), uses_t,
                                read_only and all(u.kind == "read" for u in uses_t),
                                redirected=uses_t if name in (":",) else ()))

    # -- WordHost --------------------------------------------------------------------------

    def substitution(self, node: Node) -> None:
        self.visit(node)

    def descend(self, node: Node) -> None:
        for child in node.named_children:
            self.visit(child)

    def variable(self, name: str) -> str | None:
        if name in self.assigned or self.vars_opaque:
            return None
        if name == "PWD":
            return self.cwd[0] if self.cwd is not None and len(self.cwd) == 1 else None
        if name in SHELL_VARIABLES or name.startswith("BASH") or not _IDENTIFIER.fullmatch(
                name):
            return None  # $1, $@, $?, $RANDOM, …
        return self.env.get(name, "")

    def home(self) -> str | None:
        if "HOME" in self.assigned or self.vars_opaque:
            return None
        return self.env.get("HOME") or None

    def assigns(self, name: str) -> bool:
        return name in self.assigned

    def resolve(self, word: Word, kind: UseKind, recursive: bool = False, *,
                redirect: bool = False) -> list[PathUse]:
        if word.assigned:
            self.reasons.append(assigned_reason(word))
        return resolve(word, kind, recursive, self.cwd, redirect=redirect, home=self.home())

    def word(self, node: Node) -> Word:
        return evaluate(node, self)

    # -- scripts ---------------------------------------------------------------------------

    def analyse(self, text: str) -> Pair:
        if _CONTROL.search(text):
            self.reasons.append("the command contains control characters (other than tab and "
                                "newline)")
        parser = grammar.parser()
        source = text.encode("utf-8", "surrogatepass")
        root = parser.parse(source).root_node
        if b"\\\n" in source:
            joined = _join_continuations(source, root)
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
                            _IDENTIFIER.findall(name)[0] for name in match.groups()
                            if name and _IDENTIFIER.search(name))
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
                self.stringy.update(_IDENTIFIER.findall(match[1]))
        if _BINDER_HINT.search(text):
            for match in _BINDERS.finditer(text):
                names = _IDENTIFIER.findall(match[1])
                self.assigned.update(names)
                if not match[0].startswith("let"):
                    self.stringy.update(names)

    def script(self, script: Script, ctx: _Context) -> Pair:
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

    # -- statements ------------------------------------------------------------------------

    def _enter(self) -> bool:
        """Count one level of nesting; False (and the line unresolved) when too deep."""
        if self.nesting >= _MAX_NESTING:
            self.reasons.append("the command nests too deeply to analyse")
            return False
        self.nesting += 1
        return True

    def visit(self, node: Node) -> Pair:
        if not self._enter():
            return (self.cwd, self.cwd)
        try:
            handler = _STATEMENTS.get(node.type)
            if handler is not None:
                return handler(self, node)
            if node.type in WORD_TYPES:
                self.word(node)
            else:
                self.descend(node)
            return (self.cwd, self.cwd)
        finally:
            self.nesting -= 1

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
                self.run([self.word(n) for n in pending], _Context(self.cwd, self.stdin))
                pending = []
            if child is not None and child.is_named:
                self.visit(child)
        return (self.cwd, self.cwd)

    # -- assignments, declarations, tests --------------------------------------------------

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

    # -- redirections ----------------------------------------------------------------------

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

    def redirects(self, nodes: list[Node]) -> _Redirects:
        found = _Redirects()
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

    def _file_redirect(self, node: Node, found: _Redirects) -> None:
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

    def _heredoc(self, node: Node, found: _Redirects) -> None:
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

    # -- simple commands -------------------------------------------------------------------

    def command(self, node: Node, more_redirects: list[Node] | None = None) -> Pair:
        start = self.cwd
        words: list[Node] = []
        redirects: list[Node] = []
        assignments: list[Node] = []
        for i, child in enumerate(node.children):
            name = node.field_name_for_child(i)
            if name in ("name", "argument"):
                words.append(child)
            elif name == "redirect":
                redirects.append(child)
            elif child.type == "variable_assignment":
                assignments.append(child)
            elif child.is_named:
                self.visit(child)
        if (more_redirects and words and words[-1].type == "number"
                and words[-1].end_byte == more_redirects[0].start_byte):
            words.pop()  # grammar quirk: the `0` of `cmd 0<in` comes out as an argument
        tainted = self._assignments(assignments, prefix=True)
        argv = [self.word(n) for n in words]
        found = self.redirects([*redirects, *(more_redirects or [])])
        argv.extend(found.words)
        effect = None
        if argv:
            ctx = _Context(start, found.stdin or self.stdin, found.uses,
                           (*self.tainted, *tainted))
            effect = self.run(argv, ctx)
        elif found.uses:
            self.pseudo(":", found.uses)  # `> file` alone truncates it
        if self._nested(found.nested, start):
            return (None, None)
        return effect if effect is not None else (start, start)

    def run(self, words: list[Word], ctx: _Context) -> Pair | None:
        """Run one simple command (after expansion): its handler, then what it wraps.
        Returns the directories afterwards when it may move the shell."""
        if not self._enter():
            return None
        try:
            return self._run(words, ctx)
        finally:
            self.nesting -= 1

    def _run(self, words: list[Word], ctx: _Context) -> Pair | None:
        if words[0].static in _RESERVED:
            self.reasons.append(f"`{words[0].static}` where a command name should be: a "
                                "compound command the grammar did not parse")
            return self.run(words[1:], ctx) if len(words) > 1 else None
        name = self._name(words[0])
        handler = unknown if name in self.functions else _HANDLERS.get(name, unknown)
        call = Call(name, words[1:], ctx.cwd, ctx.stdin, home=self.home(),
                    arith_ok=self.arith_ok)
        handler(call)
        self.reasons.extend(call.reasons)
        transparent = call.transparent and bool(call.inners or call.scripts)
        carried = [*ctx.extra, *call.uses] if transparent else []
        if not transparent or (carried and not call.inners):
            self._emit_call(call, words, ctx)
            carried = []
        effect = None
        for inner in call.inners:
            result = self._inner(inner, ctx, carried, transparent and not call.read_only)
            carried = []
            if inner.in_shell:
                effect = result
        for script in call.scripts:
            result = self.script(script, ctx)
            if script.in_shell:
                effect = result
        return self._effect(call, ctx, effect)

    def _name(self, word: Word) -> str:
        text = word.static
        if text is None:
            self.reasons.append("the command name comes from an expansion: "
                                f"{shorten(word.display)}")
            return word.display
        if word.glob >= 0:
            self.reasons.append("the command name contains a glob or brace pattern: "
                                f"{shorten(text)}")
        base = text.rstrip("/").rsplit("/", 1)[-1]
        return base or text

    def _emit_call(self, call: Call, words: list[Word], ctx: _Context) -> None:
        uses = tuple(dict.fromkeys([*ctx.extra, *call.uses]))
        read_only = (call.read_only and not ctx.tainted and not ctx.not_read_only
                     and call.name not in self.functions
                     and all(u.kind == "read" for u in uses))
        argv = (call.name, *(w.display for w in words[1:] if not w.synthetic))
        self.emit(SimpleCommand(call.name, argv, uses, read_only, call.unknown_program,
                                call.hidden_code, tuple(dict.fromkeys(ctx.tainted)),
                                tuple(dict.fromkeys(ctx.extra))))

    def _inner(self, inner: Inner, ctx: _Context, carried: list[PathUse],
               not_read_only: bool) -> Pair | None:
        cwd = ctx.cwd
        if inner.cwd_unknown:
            cwd = None
        elif inner.chdir is not None:
            if inner.chdir.assigned:
                self.reasons.append(assigned_reason(inner.chdir))
            cwd = directory(inner.chdir, ctx.cwd)
        if not inner.words:
            return None
        return self.run(inner.words, _Context(
            cwd, ctx.stdin, carried, (*ctx.tainted, *inner.tainted),
            ctx.in_shell and inner.in_shell, ctx.not_read_only or not_read_only))

    def _effect(self, call: Call, ctx: _Context, inner: Pair | None) -> Pair | None:
        if call.opaque_vars:
            self.vars_opaque = True
        if not ctx.in_shell:
            return None
        if call.name in self.functions:
            self.cd_count += 1  # a function may change directory
            return (None, None)
        if inner is not None:
            return inner
        if call.chdir is None:
            return None
        self.cd_count += 1
        target: Cwd
        if call.chdir == "unknown":
            target = None
        elif call.chdir == "home":
            home = self.home()
            target = (home,) if home else None
        else:
            if call.chdir.assigned:
                self.reasons.append(assigned_reason(call.chdir))
            cdpath = bool(self.env.get("CDPATH")) or "CDPATH" in self.assigned
            target = directory(call.chdir, ctx.cwd, cdpath)
        return (target, ctx.cwd)


def _join_continuations(source: bytes, root: Node) -> bytes:
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
        if run % 2 == 0 and not (node is not None and _literal_context(node)):
            cuts.append(at)
        at = source.find(b"\\\n", at + 2)
    pieces = []
    previous = 0
    for cut in cuts:
        pieces.append(source[previous:cut])
        previous = cut + 2
    pieces.append(source[previous:])
    return b"".join(pieces)


def _literal_context(node: Node | None) -> bool:
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


_Statement = Callable[[_Analyser, "Node"], Pair]
_STATEMENTS: dict[str, _Statement] = {
    "program": lambda a, n: a.sequence(n.children),
    "compound_statement": _Analyser._block,
    "do_group": lambda a, n: a.sequence(n.children),
    "elif_clause": lambda a, n: a.sequence(n.children),
    "else_clause": lambda a, n: a.sequence(n.children),
    "case_item": lambda a, n: a.sequence(n.children),
    "subshell": _Analyser._subshell,
    "command_substitution": _Analyser._subshell,
    "process_substitution": _Analyser._subshell,
    "negated_command": _Analyser._negated,
    "list": _Analyser._list,
    "pipeline": _Analyser._pipeline,
    "if_statement": _Analyser._control,
    "case_statement": _Analyser._control,
    "for_statement": _Analyser._control,
    "c_style_for_statement": _Analyser._control,
    "while_statement": _Analyser._control,
    "function_definition": _Analyser._function,
    "redirected_statement": _Analyser._redirected,
    "command": lambda a, n: a.command(n),
    "declaration_command": _Analyser._declaration,
    "unset_command": _Analyser._unset,
    "variable_assignment": _Analyser._standalone_assignments,
    "variable_assignments": _Analyser._standalone_assignments,
    "test_command": _Analyser._test,
    "ERROR": _Analyser._error,
    "file_redirect": _Analyser._bare_redirect,
    "heredoc_redirect": _Analyser._bare_redirect,
    "herestring_redirect": _Analyser._bare_redirect,
    "comment": _Analyser._ignore,
    "heredoc_start": _Analyser._ignore,
    "heredoc_end": _Analyser._ignore,
}


def analyse_command(command: str, *, cwd: str, env: Mapping[str, str]) -> ShellAnalysis:
    """Analyse one Bash tool command line. Never raises: whatever cannot be understood is
    reported in `ShellAnalysis.unresolved`."""
    analyser = _Analyser(env, cwd)
    try:
        analyser.analyse(command)
    except RecursionError:
        analyser.reasons.append("the command nests too deeply to analyse")
    except Exception as exc:  # a bug here must not let the line through unchecked
        analyser.reasons.append(f"the command could not be analysed ({type(exc).__name__})")
    return analyser.result()
