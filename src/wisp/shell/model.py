"""What shell analysis reports: the simple commands a line runs and the paths they touch.

The contract with the permission engine:
- every command the line could run is in `commands`, with its name normalised (quotes and
  escapes removed, the basename of a path), wrappers looked through (`env`, `timeout`,
  `xargs`, `find -exec`, `sh -c '…'`, …) so the wrapped command is a command of its own;
- every path a command reads or writes, including redirection targets, is in its `uses`;
- anything that could not be resolved statically (a command name from an expansion, a
  parse error, `eval` of a non-literal, a shell reading its script from a pipe, …) is named
  in `ShellAnalysis.unresolved`, and the engine never auto-allows such a line.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

# read: the command reads the path; write: it creates, changes or removes it;
# mention: an argument of a command whose semantics are unknown, which might be either.
UseKind = Literal["read", "write", "mention"]


class PathUse(NamedTuple):
    kind: UseKind
    # Absolute (joined with the cwd the command runs in, `cd` tracked), `~` and environment
    # variables expanded, `..` NOT folded and symlinks NOT resolved (the engine does both).
    # None when the path cannot be known statically (`$(…)`, `$1`, a variable the line
    # assigns, arguments xargs reads from stdin).
    path: str | None
    # The command may descend below the path (grep -r, find, rm -r, cp -r, a glob such as
    # `secret/*`, which is reported as its fixed directory prefix with recursive=True).
    recursive: bool = False


class SimpleCommand(NamedTuple):
    name: str
    # Words after quote removal; argv[0] == name. A word that cannot be resolved keeps its
    # source text (e.g. "$(date)").
    argv: tuple[str, ...]
    uses: tuple[PathUse, ...] = ()
    # True when this command by itself changes nothing: a known reader whose arguments
    # are all understood, with no write among its uses.
    read_only: bool = False
    # A program wisp knows nothing about (not a known reader, writer or wrapper). It may
    # run its arguments as a command (`watch rm f`, `flock l rm f`, `ssh host rm f`), so
    # deny and ask rules are also matched against each argument suffix.
    unknown_program: bool = False
    # Runs inline code the analysis cannot see into (`python -c …`, awk `system()`, sed's
    # `e` command, `tar --checkpoint-action=exec=…`): no deny rule can be checked in it.
    hidden_code: bool = False
    # Assignments it runs with that may steer it (`GIT_PAGER=x git log`, an earlier
    # `export PAGER=x`), as written: an allow rule must spell them to cover the command.
    env: tuple[str, ...] = ()
    # The uses that come from redirections (and wrappers), not from the program itself:
    # a rule for the program does not grant them.
    redirected: tuple[PathUse, ...] = ()

    @property
    def text(self) -> str:
        """The normalised command line, without the assignments before it."""
        return " ".join(self.argv)

    @property
    def rule_text(self) -> str:
        """What `Bash(prefix:*)` allow rules are matched against: the command with the
        assignments that steer it."""
        return " ".join((*self.env, *self.argv))

    def candidate_texts(self) -> list[str]:
        """The texts a deny rule must not match: the command with and without its
        assignments, and for an unknown program every suffix of its arguments that starts
        with a plain word, its name normalised."""
        texts = [self.text, *([self.rule_text] if self.env else [])]
        if self.unknown_program:
            for i in range(1, len(self.argv)):
                word = self.argv[i]
                if word and not word.startswith("-"):
                    name = word.rstrip("/").rsplit("/", 1)[-1] or word
                    texts.append(" ".join((name, *self.argv[i + 1:])))
        return texts


class ShellAnalysis(NamedTuple):
    commands: tuple[SimpleCommand, ...]
    # Human-readable reasons, e.g. "the command name comes from an expansion: $X".
    unresolved: tuple[str, ...] = ()

    @property
    def read_only(self) -> bool:
        return bool(self.commands) and not self.unresolved and all(
            c.read_only for c in self.commands)

    def uses(self) -> list[PathUse]:
        return [use for command in self.commands for use in command.uses]
