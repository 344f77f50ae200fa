"""Simple commands for the Bash analyser: a command's words, assignments and redirections
are evaluated, then its handler (`commands`, `wrappers`) says what it reads, writes and
runs in turn (a wrapped command, a script), and whether it moves the shell (`cd`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from wisp.shell.call import Call, Handler, Inner
from wisp.shell.commands import COMMANDS, unknown
from wisp.shell.evaluated import shorten
from wisp.shell.model import PathUse, SimpleCommand
from wisp.shell.paths import Cwd, assigned_reason, directory
from wisp.shell.walker import Context, Pair, Walker
from wisp.shell.words import Word
from wisp.shell.wrappers import WRAPPERS

if TYPE_CHECKING:
    from tree_sitter import Node

# Reserved words in command position mean the grammar missed a compound command: it only
# knows `time` as an ordinary command, so `time { rm x; }` comes out as a command `{ rm x`.
_RESERVED = frozenset({"{", "}", "!", "if", "then", "else", "elif", "fi", "do", "done",
                       "case", "esac", "while", "until", "for", "select", "function", "[[",
                       "]]"})
_HANDLERS: dict[str, Handler] = {**COMMANDS, **WRAPPERS}


class Running(Walker):
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
            ctx = Context(start, found.stdin or self.stdin, found.uses,
                           (*self.tainted, *tainted))
            effect = self.run(argv, ctx)
        elif found.uses:
            self.pseudo(":", found.uses)  # `> file` alone truncates it
        if self._nested(found.nested, start):
            return (None, None)
        return effect if effect is not None else (start, start)

    def run(self, words: list[Word], ctx: Context) -> Pair | None:
        """Run one simple command (after expansion): its handler, then what it wraps.
        Returns the directories afterwards when it may move the shell."""
        if not self._enter():
            return None
        try:
            return self._run(words, ctx)
        finally:
            self.nesting -= 1

    def _run(self, words: list[Word], ctx: Context) -> Pair | None:
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

    def _emit_call(self, call: Call, words: list[Word], ctx: Context) -> None:
        uses = tuple(dict.fromkeys([*ctx.extra, *call.uses]))
        read_only = (call.read_only and not ctx.tainted and not ctx.not_read_only
                     and call.name not in self.functions
                     and all(u.kind == "read" for u in uses))
        argv = (call.name, *(w.display for w in words[1:] if not w.synthetic))
        self.emit(SimpleCommand(call.name, argv, uses, read_only, call.unknown_program,
                                call.hidden_code, tuple(dict.fromkeys(ctx.tainted)),
                                tuple(dict.fromkeys(ctx.extra))))

    def _inner(self, inner: Inner, ctx: Context, carried: list[PathUse],
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
        return self.run(inner.words, Context(
            cwd, ctx.stdin, carried, (*ctx.tainted, *inner.tainted),
            ctx.in_shell and inner.in_shell, ctx.not_read_only or not_read_only))

    def _effect(self, call: Call, ctx: Context, inner: Pair | None) -> Pair | None:
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
