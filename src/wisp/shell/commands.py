"""What known commands read and write, and whether they change anything.

Each entry of `COMMANDS` annotates a `Call`. A command missing from the table is unknown:
its arguments are mentions and it is never read-only. A false "read-only" lets a command
skip a prompt, so a reader is read-only only when every word of it has a known meaning
(see `readers`, `minilangs`, `findcmd`, `gitcmd`, `builtins`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from wisp.shell.builtins import BUILTINS
from wisp.shell.call import Call, Handler
from wisp.shell.findcmd import find
from wisp.shell.gitcmd import git
from wisp.shell.minilangs import awk, jq, sed
from wisp.shell.options import Opts, Parsed, parse, spec
from wisp.shell.readers import readers
from wisp.shell.words import Word


def _fs(*names: str) -> frozenset[str]:
    return frozenset(names)


_NO_OPTS = Opts()
_RECURSIVE = _fs("-r", "-R", "--recursive")


def unknown(call: Call) -> None:
    call.read_only = False
    call.unknown_program = True
    parsed = parse(call.args, _NO_OPTS)
    for flag in parsed.flags:
        if flag.value is not None:  # the value of `--opt=value`
            call.mention(flag.value)
    for word in parsed.operands:
        call.mention(word)


def quiet(call: Call) -> None:
    """Commands that touch no file (echo, pwd, true, …)."""


@dataclass(frozen=True, slots=True)
class Writer:
    """A command that creates, changes or removes its operands."""

    opts: Opts = _NO_OPTS
    recursive: frozenset[str] = frozenset()
    reads: frozenset[str] = frozenset()
    # The first operand is not a path (a mode, an owner) unless one of these is given.
    first_is_value_unless: frozenset[str] | None = None

    def __call__(self, call: Call) -> None:
        call.read_only = False
        parsed = parse(call.args, self.opts)
        recursive = parsed.has(self.recursive)
        for word in parsed.values(self.reads):
            call.read(word)
        operands = parsed.operands
        if self.first_is_value_unless is not None and not parsed.has(
                self.first_is_value_unless):
            operands = operands[1:]
        for word in operands:
            call.write(word, recursive)


def _first_reads_second_writes(opts: Opts) -> Handler:
    """`uniq IN OUT`, `xxd IN OUT`."""

    def handler(call: Call) -> None:
        parsed = parse(call.args, opts)
        call.unknown_words(parsed.unknown)
        operands = parsed.operands
        for word in operands[:1]:
            call.read(word)
        for word in operands[1:]:
            call.write(word)

    return handler


_COPY = Opts(short_arg="tS", long_arg=_fs("target-directory", "suffix"))


def _sources_and_target(parsed: Parsed) -> tuple[list[Word], Word | None]:
    target = parsed.values({"-t", "--target-directory"})
    if target:
        return parsed.operands, target[-1]
    operands = parsed.operands
    if len(operands) < 2:
        return operands, None
    return operands[:-1], operands[-1]


def cp(call: Call) -> None:
    call.read_only = False
    parsed = parse(call.args, _COPY)
    recursive = parsed.has(_RECURSIVE | {"-a", "--archive"})
    sources, target = _sources_and_target(parsed)
    for word in sources:
        call.read(word, recursive)
    if target is not None:
        # The target may be a directory the sources land below.
        call.write(target, True)


def mv(call: Call) -> None:
    call.read_only = False
    parsed = parse(call.args, _COPY)
    sources, target = _sources_and_target(parsed)
    for word in [*sources, *([target] if target is not None else [])]:
        call.write(word, True)


def install(call: Call) -> None:
    call.read_only = False
    parsed = parse(call.args, Opts(short_arg="gmoSt", long_arg=_fs(
        "group", "mode", "owner", "suffix", "target-directory", "strip-program")))
    if parsed.has({"-d", "--directory"}):
        for word in parsed.operands:
            call.write(word)
        return
    sources, target = _sources_and_target(parsed)
    for word in sources:
        call.read(word)
    if target is not None:
        call.write(target, True)


def ln(call: Call) -> None:
    call.read_only = False
    parsed = parse(call.args, _COPY)
    symbolic = parsed.has({"-s", "--symbolic"})
    sources, target = _sources_and_target(parsed)
    for word in sources:
        # A symlink's target is only a name; a hard link gives another name to the file.
        call.use(word, "mention" if symbolic else "read")
    if target is not None:
        call.write(target, True)
    elif sources and sources[0].value is not None:
        call.write(Word.literal(sources[0].value.rstrip("/").rsplit("/", 1)[-1]))
    else:
        call.here("write", True)


_CHMOD_OPTIONS = _fs("-R", "-c", "-f", "-v", "--recursive", "--changes", "--silent",
                     "--quiet", "--verbose", "--preserve-root", "--no-preserve-root")


def chmod(call: Call) -> None:
    # `chmod -x f`: a mode may look like an option, so only known options are options.
    call.read_only = False
    recursive = False
    mode_seen = False
    for word in call.args:
        text = word.static or ""
        if text in _CHMOD_OPTIONS:
            recursive = recursive or text in {"-R", "--recursive"}
        elif text.startswith("--reference"):
            mode_seen = True
            if "=" in text:
                call.read(word.tail(text.index("=") + 1))
        elif not mode_seen:
            mode_seen = True
        else:
            call.write(word, recursive)


def dd(call: Call) -> None:
    call.read_only = False
    for word in call.args:
        if word.display.startswith("if="):
            call.read(word.tail(3))
        elif word.display.startswith("of="):
            call.write(word.tail(3))


_PATCH = Opts(short_arg="BDdFgiopVrYz", long_arg=_fs(
    "input", "output", "reject-file", "directory", "strip", "fuzz", "prefix", "suffix",
    "basename-prefix", "ifdef", "quoting-style", "version-control", "get"))


def patch(call: Call) -> None:
    call.read_only = False
    parsed = parse(call.args, _PATCH)
    for word in parsed.values({"-i", "--input"}):
        call.read(word)
    for word in parsed.values({"-o", "--output", "-r", "--reject-file"}):
        call.write(word)
    # The patch names the files it changes: anything below the directory it works in.
    directories = parsed.values({"-d", "--directory"})
    if directories:
        call.write(directories[-1], True)
    else:
        call.here("write", True)
    operands = parsed.operands
    for word in operands[:1]:
        call.write(word)
    for word in operands[1:2]:
        call.read(word)


def cd(call: Call) -> None:
    operands = parse(call.args, Opts(posix=True)).operands
    if not operands:
        call.chdir = "home"
    elif len(operands) == 1 and operands[0].static != "-":
        call.chdir = operands[0]
    else:
        call.chdir = "unknown"


def pushd(call: Call) -> None:
    operands = parse(call.args, Opts(posix=True)).operands
    directory = operands[0] if len(operands) == 1 else None
    if directory is not None and directory.display[:1] not in ("+", "-"):
        call.chdir = directory
    elif not any(w.static == "-n" for w in call.args):
        call.chdir = "unknown"


def popd(call: Call) -> None:
    if not any(w.static == "-n" for w in call.args):
        call.chdir = "unknown"


def _writers() -> dict[str, Handler]:
    return {
        "rm": Writer(recursive=_RECURSIVE),
        "rmdir": Writer(),
        "unlink": Writer(),
        "shred": Writer(Opts(short_arg="ns", long_arg=_fs("iterations", "size",
                                                          "random-source")),
                        reads=_fs("--random-source")),
        "mkdir": Writer(Opts(short_arg="m", long_arg=_fs("mode"))),
        "touch": Writer(Opts(short_arg="dtr", long_arg=_fs("date", "reference", "time")),
                        reads=_fs("-r", "--reference")),
        "truncate": Writer(Opts(short_arg="sr", long_arg=_fs("size", "reference")),
                           reads=_fs("-r", "--reference")),
        "tee": Writer(),
        "chown": Writer(Opts(long_arg=_fs("from", "reference")), recursive=_RECURSIVE,
                        reads=_fs("--reference"), first_is_value_unless=_fs("--reference")),
        "chgrp": Writer(Opts(long_arg=_fs("from", "reference")), recursive=_RECURSIVE,
                        reads=_fs("--reference"), first_is_value_unless=_fs("--reference")),
        "chmod": chmod, "cp": cp, "mv": mv, "install": install, "ln": ln, "dd": dd,
        "patch": patch,
    }


# Flags that hand an interpreter its program on the command line (or stdin with `-`).
_INLINE_CODE = re.compile(r"-[A-Za-z]*[ceErx]|--(eval|exec|command|execute|print)\b|-\Z")
_INTERPRETERS = ("python", "python2", "python3", "pypy", "pypy3", "node", "nodejs", "perl",
                 "ruby", "php", "lua", "luajit", "Rscript", "R", "deno", "bun", "tclsh", "wish",
                 "osascript", "pwsh", "powershell", "julia", "jshell", "groovy", "scala")


def interpreter(call: Call) -> None:
    """An interpreter runs whatever its program does; given inline, that program is code
    no rule can be checked against."""
    if any(_INLINE_CODE.match(w.display) for w in call.args[:4]) or (
            not call.args and call.stdin is not None):
        call.hidden_code = True
    unknown(call)


# tar options that run a command of the archive author's (or the model's) choosing,
# and their short forms.
_TAR_EXEC = ("checkpoint-action", "to-command", "use-compress-program", "info-script",
             "new-volume-script", "rsh-command")
_TAR_EXEC_SHORT = frozenset("IF")


def _tar_runs(word: Word, first: bool) -> bool:
    text = word.display
    if text.startswith("--"):
        name = text[2:].split("=", 1)[0]
        return bool(name) and any(option.startswith(name) for option in _TAR_EXEC)
    # `-xIf`, or the old style `tar xIf …` where the first word is all letters.
    letters = text[1:] if text.startswith("-") else text if first else ""
    return not _TAR_EXEC_SHORT.isdisjoint(letters)


def tar(call: Call) -> None:
    if any(_tar_runs(w, i == 0) for i, w in enumerate(call.args)):
        call.hidden_code = True
    unknown(call)


# Their words are data: they read no file, write none and run nothing.
_QUIET = ("echo", "pwd", "true", "false", ":", "whoami", "id", "uname", "basename",
          "dirname", "which", "type", "sleep", "expr", "nproc", "arch", "tty",
          "groups", "logname", "printenv", "exit", "return", "break", "continue", "shift",
          "wait", "umask", "ulimit", "jobs", "unalias", "set", "shopt")

COMMANDS: dict[str, Handler] = {
    **dict.fromkeys(_QUIET, quiet),
    **readers(),
    **BUILTINS,
    "sed": sed, "awk": awk, "gawk": awk, "mawk": awk, "nawk": awk, "jq": jq,
    "git": git, "find": find,
    "uniq": _first_reads_second_writes(spec(
        "-c -d -D -f: -i -s: -u -z -w: --count --repeated --all-repeated=? --skip-fields= "
        "--group=? --ignore-case --skip-chars= --unique --zero-terminated --check-chars= "
        "--help --version", numeric=True)),
    "xxd": _first_reads_second_writes(spec(
        "-a -b -C -e -E -h -i -p -r -u -v -c: -g: -l: -o: -s: -n: -R: -d")),
    **_writers(),
    "cd": cd, "pushd": pushd, "popd": popd,
    **dict.fromkeys(_INTERPRETERS, interpreter),
    **{f"python3.{minor}": interpreter for minor in range(6, 16)},
    "tar": tar,
}
