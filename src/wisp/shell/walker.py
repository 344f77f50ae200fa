"""The state the Bash analyser keeps while it walks a line, and what every part of the walk
shares: the results (`emit`, `pseudo`), how words are evaluated and resolved (the
`WordHost` the `words` module asks), and the nesting bound.

The walk itself is split by concern into mixins over this base (see `analyser`):
`compound` (lists, pipelines, control flow), `redirects`, `running` (simple commands and
what they wrap), `assignments`, `conditions` (`[[ ]]`) and `reading` (text to tree).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from wisp.shell.call import Script, Stdin
from wisp.shell.evaluated import SHELL_VARIABLES, Evaluated
from wisp.shell.model import PathUse, ShellAnalysis, SimpleCommand, UseKind
from wisp.shell.paths import Cwd, assigned_reason, resolve
from wisp.shell.words import Word, evaluate

if TYPE_CHECKING:
    from tree_sitter import Node

    from wisp.shell.redirects import Redirects

# Statement and word nesting handled before giving up (each level costs a few Python
# frames, and the default recursion limit is 1000).
_MAX_NESTING = 60
# A variable name (shared with the prescan in `reading`).
NAME = r"[A-Za-z_][A-Za-z0-9_]*"
IDENTIFIER = re.compile(NAME)

Pair = tuple[Cwd, Cwd]  # the directories after success, after failure


@dataclass(slots=True)
class Context:
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


class Walker(Evaluated):
    """The analyser's state and shared services; the mixins add the walk."""

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
        if name in SHELL_VARIABLES or name.startswith("BASH") or not IDENTIFIER.fullmatch(
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

    def _enter(self) -> bool:
        """Count one level of nesting; False (and the line unresolved) when too deep."""
        if self.nesting >= _MAX_NESTING:
            self.reasons.append("the command nests too deeply to analyse")
            return False
        self.nesting += 1
        return True

    # -- provided by the mixins ------------------------------------------------------------
    # Declared here so that each mixin can call the others' entry points with types
    # checked; the mixins come first in `_Analyser`'s bases, so theirs are the ones run.

    def visit(self, node: Node) -> Pair:
        raise NotImplementedError

    def analyse(self, text: str) -> Pair:
        raise NotImplementedError

    def script(self, script: Script, ctx: Context) -> Pair:
        raise NotImplementedError

    def sequence(self, children: list[Node]) -> Pair:
        raise NotImplementedError

    def _negated(self, node: Node, tail: list[Node] | None = None) -> Pair:
        raise NotImplementedError

    def _list(self, node: Node, tail: list[Node] | None = None) -> Pair:
        raise NotImplementedError

    def _pipeline(self, node: Node, tail: list[Node] | None = None) -> Pair:
        raise NotImplementedError

    def redirects(self, nodes: list[Node]) -> Redirects:
        raise NotImplementedError

    def _redirected_body(self, body: Node, redirects: list[Node]) -> Pair:
        raise NotImplementedError

    def _nested(self, nodes: list[Node], start: Cwd) -> bool:
        raise NotImplementedError

    def command(self, node: Node, more_redirects: list[Node] | None = None) -> Pair:
        raise NotImplementedError

    def run(self, words: list[Word], ctx: Context) -> Pair | None:
        raise NotImplementedError

    def _assignments(self, nodes: list[Node], *, prefix: bool, exported: bool = False
                     ) -> tuple[str, ...]:
        raise NotImplementedError
