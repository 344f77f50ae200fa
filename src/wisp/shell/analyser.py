"""The Bash command analyser: parses a command line with tree-sitter-bash and reports every
simple command it could run and the paths those commands touch (see `model`).

Walks the syntax tree once. Statements return the directories the shell may be in after
them, split by success and failure, so `cd sub && rm x` resolves `x` under `sub` while
`cd sub; rm x` reports both candidates. Nesting is bounded: deeper structure is reported
unresolved instead of raising RecursionError.

The walk is split by concern into mixins over `walker.Walker` (the shared state); this
module puts them together and dispatches each syntax node to its statement handler.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from wisp.shell.assignments import Assignments
from wisp.shell.compound import Compound
from wisp.shell.conditions import Conditions
from wisp.shell.evaluated import WORD_TYPES
from wisp.shell.model import ShellAnalysis
from wisp.shell.reading import Reading
from wisp.shell.redirects import Redirections
from wisp.shell.running import Running
from wisp.shell.walker import Pair

if TYPE_CHECKING:
    from tree_sitter import Node


class _Analyser(Compound, Redirections, Running, Assignments, Conditions, Reading):
    """One walk of one line: the mixins' statement handlers, dispatched by node type."""

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
