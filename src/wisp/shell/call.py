"""One invocation of a command, as the per-command semantics see and annotate it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

from wisp.shell.model import PathUse, UseKind
from wisp.shell.paths import Cwd, assigned_reason, here, resolve
from wisp.shell.words import Word

StdinKind = Literal["pipe", "redirect", "file", "heredoc", "herestring"]


class Stdin(NamedTuple):
    """Where a command's standard input comes from, when that matters (shells read their
    script from it)."""

    kind: StdinKind
    text: str | None = None
    # The text is exactly what the reader gets (no expansion left in it).
    exact: bool = True


@dataclass(slots=True)
class Inner:
    """A command another command runs (`env X cmd`, `find -exec cmd ;`, `xargs cmd`)."""

    words: list[Word]
    # Runs in the current shell (`builtin cd`, `command cd`): its `cd` moves the shell.
    in_shell: bool = False
    # Where it runs: the wrapper's directory (`env -C`, `sudo -D`) or unknown (`-execdir`).
    chdir: Word | None = None
    cwd_unknown: bool = False
    # The assignments it runs with that may steer it (`env GIT_EXTERNAL_DIFF=x git diff`).
    tainted: tuple[str, ...] = ()


class Script(NamedTuple):
    """Shell code a command runs (`bash -c`, `eval`, a here-document fed to `sh`)."""

    text: str
    what: str
    exact: bool = True
    # Runs in the current shell (eval): its `cd` moves the shell.
    in_shell: bool = False
    # Runs at an unknown time (trap): relative paths cannot be resolved.
    cwd_unknown: bool = False


@dataclass(slots=True)
class Call:
    name: str
    args: list[Word]
    cwd: Cwd
    stdin: Stdin | None = None
    home: str | None = None
    uses: list[PathUse] = field(default_factory=list)
    read_only: bool = True
    # A wrapper: only what it runs is reported, not the wrapper itself.
    transparent: bool = False
    inners: list[Inner] = field(default_factory=list)
    scripts: list[Script] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    # `cd`: where the shell goes ("home": $HOME, "unknown": it cannot be followed).
    chdir: Word | Literal["unknown", "home"] | None = None
    # Variables may have any value after this command (`source`).
    opaque_vars: bool = False
    # A program whose semantics are unknown: it may run its arguments as a command.
    unknown_program: bool = False
    # Runs code given inline that the analysis cannot see into (`python -c`, awk
    # `system()`, sed `e`, tar `--checkpoint-action=exec=`).
    hidden_code: bool = False
    # Whether text bash would evaluate as arithmetic runs nothing (`let`, `read a[i]`):
    # set by the analyser, which knows what the line assigns.
    arith_ok: Callable[[str], bool] = lambda _text: False

    def unknown_words(self, words: list[str]) -> None:
        """Words whose meaning is not known (an option the program's table lacks): the
        command may do anything those words ask, so it is not read-only."""
        if words:
            self.read_only = False

    def resolve(self, word: Word, kind: UseKind, recursive: bool = False) -> list[PathUse]:
        if word.assigned:
            self.reasons.append(assigned_reason(word))
        return resolve(word, kind, recursive, self.cwd, home=self.home)

    def use(self, word: Word, kind: UseKind, recursive: bool = False) -> None:
        if kind != "read":
            self.read_only = False
        self.uses.extend(self.resolve(word, kind, recursive))

    def read(self, word: Word, recursive: bool = False) -> None:
        self.use(word, "read", recursive)

    def write(self, word: Word, recursive: bool = False) -> None:
        self.use(word, "write", recursive)

    def mention(self, word: Word) -> None:
        self.use(word, "mention")

    def here(self, kind: UseKind, recursive: bool) -> None:
        if kind != "read":
            self.read_only = False
        self.uses.extend(here(kind, recursive, self.cwd))


Handler = Callable[[Call], None]
