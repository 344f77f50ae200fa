"""Commands that run other commands or shell code: wrappers (`env`, `timeout`, `sudo`,
`xargs`, …), shells (`bash -c`, `sh <<EOF`), `eval`, `source`, `trap`, and the builtins that
change what a command name means (`alias`, `enable`, `hash -p`)."""

from __future__ import annotations

import re

from wisp.shell.call import Call, Handler, Inner, Script
from wisp.shell.model import PathUse
from wisp.shell.options import Opts, parse
from wisp.shell.words import Word

# Assigning these changes which program a command name runs, or makes the shell run code.
_DANGEROUS_VARIABLES = frozenset({
    "PATH", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "DYLD_INSERT_LIBRARIES",
    "DYLD_LIBRARY_PATH", "BASH_ENV", "ENV", "IFS", "SHELLOPTS", "BASHOPTS", "PS4",
    "PROMPT_COMMAND", "EXECIGNORE"})
# Variables that cannot make a command write or run anything else. Any other one can
# (GIT_EXTERNAL_DIFF, PAGER, LESSOPEN, LD_PRELOAD, PYTHONSTARTUP, NODE_OPTIONS, …): a
# command run with it is not read-only, and a rule covers it only if the rule spells the
# assignment.
_SAFE_VARIABLES = frozenset({"LANG", "LANGUAGE", "TZ", "NO_COLOR", "FORCE_COLOR", "CLICOLOR",
                             "CLICOLOR_FORCE", "TERM", "COLUMNS", "LINES"})
_ENV_ASSIGNMENT = re.compile(r"[^=]+=")
# A script "file" that is really a pipe: `bash <(curl …)`, `curl … | bash /dev/stdin`.
_PIPE_FILE = re.compile(r"/dev/(?:stdin|fd/\d+)|/proc/(?:self|\d+)/fd/\d+")
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "rbash"})


def is_dangerous_variable(name: str) -> bool:
    return name in _DANGEROUS_VARIABLES or name.startswith("BASH_FUNC_")


def is_safe_variable(name: str) -> bool:
    return name in _SAFE_VARIABLES or name.startswith("LC_")


def dangerous_reason(name: str) -> str:
    return f"the line assigns {name}, which changes what commands run"


def script_from(word: Word, what: str, *, in_shell: bool = False,
                cwd_unknown: bool = False) -> Script:
    exact = word.static is not None and word.stands_for is None
    text = word.static if word.static is not None else word.display
    return Script(text, what, exact, in_shell, cwd_unknown)


def _read_script(call: Call, word: Word) -> None:
    """A shell or `source` runs the file `word`."""
    if word.procsub or (word.value is not None and _PIPE_FILE.fullmatch(word.value)):
        call.reasons.append(f"{call.name} runs a script it reads from a pipe: {word.display}")
    else:
        call.read(word)


def _skip_assignments(call: Call, words: list[Word]) -> tuple[list[Word], tuple[str, ...]]:
    """`env A=1 B=2 cmd`: drop the assignments; also those that may steer the command."""
    tainted: tuple[str, ...] = ()
    i = 0
    while i < len(words) and _ENV_ASSIGNMENT.match(words[i].display):
        name = words[i].display.split("=", 1)[0]
        if is_dangerous_variable(name):
            call.reasons.append(dangerous_reason(name))
        if not is_safe_variable(name):
            tainted = (*tainted, words[i].display)
        i += 1
    return words[i:], tainted


def _wrapper(opts: Opts, *, skip: int = 0, writes: frozenset[str] = frozenset(),
             in_shell: bool = False) -> Handler:
    """A transparent wrapper: options, `skip` operands (timeout's duration), then a command."""

    def handler(call: Call) -> None:
        parsed = parse(call.args, opts)
        for word in parsed.values(writes):
            call.write(word)
        command = parsed.operands[skip:]
        if command:
            call.transparent = True
            call.inners.append(Inner(command, in_shell=in_shell))

    return handler


_ENV = Opts(short_arg="uCS", long_arg=frozenset({"unset", "chdir", "split-string"}), posix=True)


def env(call: Call) -> None:
    parsed = parse(call.args, _ENV)
    rest = parsed.operands
    if rest and rest[0].static == "-":  # `env -` is `env -i`
        rest = rest[1:]
    command, tainted = _skip_assignments(call, rest)
    split = parsed.values({"-S", "--split-string"})
    if split:
        # -S splits its string into words and runs them: close enough to shell code.
        call.transparent = True
        words = [split[-1], *command]
        text = " ".join(w.static if w.static is not None else w.display for w in words)
        call.scripts.append(Script(text, "env -S", all(w.static is not None for w in words)))
        return
    if command:
        chdir = parsed.values({"-C", "--chdir"})
        call.transparent = True
        call.inners.append(Inner(command, chdir=chdir[-1] if chdir else None, tainted=tainted))


def command(call: Call) -> None:
    parsed = parse(call.args, Opts(posix=True))
    if parsed.has({"-v", "-V"}):
        return  # only looks the name up
    if parsed.operands:
        call.transparent = True
        call.inners.append(Inner(parsed.operands, in_shell=True))


def coproc(call: Call) -> None:
    call.reasons.append("coproc is not analysed precisely")
    if call.args:
        call.transparent = True
        call.inners.append(Inner(call.args))


_SUDO = Opts(short_arg="ugChprtUDRT", long_arg=frozenset({
    "user", "group", "close-from", "host", "prompt", "role", "type", "other-user", "chdir",
    "chroot", "command-timeout", "login-class"}), posix=True)


def sudo(call: Call) -> None:
    call.read_only = False
    parsed = parse(call.args, _SUDO)
    words, tainted = _skip_assignments(call, parsed.operands)
    if parsed.has({"-e", "--edit"}):
        for word in words:
            call.write(word)
        return
    if not words and parsed.has({"-s", "-i", "--shell", "--login"}):
        words = [Word.literal("sh")]
    if not words:
        return
    chdir = parsed.values({"-D", "--chdir"})
    # A login shell starts in the target user's home; a chroot moves "/".
    unknown = parsed.has({"-i", "--login", "-R", "--chroot"})
    call.inners.append(Inner(words, chdir=chdir[-1] if chdir else None, cwd_unknown=unknown,
                             tainted=tainted))


def doas(call: Call) -> None:
    call.read_only = False
    parsed = parse(call.args, Opts(short_arg="uC", posix=True))
    if parsed.has({"-C"}):
        return  # checks a configuration file
    words = parsed.operands or ([Word.literal("sh")] if parsed.has({"-s"}) else [])
    if words:
        call.inners.append(Inner(words))


_SU = Opts(short_arg="cgGsw", long_arg=frozenset({
    "command", "group", "supp-group", "shell", "whitelist-environment", "session-command"}))


def su(call: Call) -> None:
    call.read_only = False
    parsed = parse(call.args, _SU)
    scripts = parsed.values({"-c", "--command", "--session-command"})
    for word in scripts:
        call.scripts.append(script_from(word, "su -c", cwd_unknown=True))
    if not scripts:
        # `su [-] [user [args]]` starts the user's shell with the remaining arguments.
        operands = [w for w in parsed.operands if w.static != "-"]
        call.inners.append(Inner([Word.literal("sh"), *operands[1:]], cwd_unknown=True))


_XARGS = Opts(short_arg="adEILnPs", short_opt="eil", long_arg=frozenset({
    "arg-file", "delimiter", "eof", "max-lines", "max-args", "max-procs", "max-chars",
    "process-slot-var"}), posix=True)


def xargs(call: Call) -> None:
    # Reported besides what it runs, and never read-only, so a rule has to allow it.
    call.read_only = False
    parsed = parse(call.args, _XARGS)
    for word in parsed.values({"-a", "--arg-file"}):
        call.read(word)
    replace = [v.static or "" for v in parsed.values({"-I", "-i", "--replace"})]
    if parsed.has({"-i", "--replace"}) and not replace:
        replace = ["{}"]
    words = parsed.operands or [Word.literal("echo")]
    # The arguments read from stdin are unknown paths.
    unknown = (PathUse("mention", None),)
    if replace and replace[-1]:
        mark = replace[-1]
        words = [Word(w.display, stands_for=unknown) if mark in w.display else w for w in words]
    else:
        words = [*words, Word("", stands_for=unknown, synthetic=True)]
    call.inners.append(Inner(words))


_SHELL = Opts(short_arg="oO", long_arg=frozenset({"rcfile", "init-file"}), posix=True)


def shell(call: Call) -> None:
    parsed = parse(call.args, _SHELL)
    if parsed.has({"-c"}):
        call.transparent = True
        if parsed.operands:
            call.scripts.append(script_from(parsed.operands[0], f"{call.name} -c"))
        else:
            call.reasons.append(f"{call.name} -c has no command string")
        return
    call.read_only = False
    operands = parsed.operands
    if operands and operands[0].static != "-" and not parsed.has({"-s"}):
        _read_script(call, operands[0])
        return
    stdin = call.stdin
    if stdin is None or stdin.kind == "file":
        return
    if stdin.kind in ("heredoc", "herestring"):
        call.transparent = True
        call.scripts.append(Script(stdin.text or "", f"the input of {call.name}", stdin.exact))
    elif stdin.kind == "pipe":
        call.reasons.append(f"a shell reads its script from a pipe ({call.name})")
    else:
        call.reasons.append(f"a shell reads its script from redirected input ({call.name})")


_SCRIPT = Opts(short_arg="cEIOBTm", long_arg=frozenset({
    "command", "echo", "log-in", "log-out", "log-io", "log-timing", "logging-format",
    "output-limit"}))


def script(call: Call) -> None:
    """`script -c CMD [FILE]` runs CMD in a shell and records it to FILE."""
    parsed = parse(call.args, _SCRIPT)
    for word in parsed.operands[:1]:
        call.write(word)
    commands = parsed.values({"-c", "--command"})
    if commands:
        call.transparent = True
        call.scripts.append(script_from(commands[-1], "script -c"))
    else:
        call.read_only = False  # an interactive shell of its own


def eval_(call: Call) -> None:
    args = call.args[1:] if call.args and call.args[0].static == "--" else call.args
    if not args:
        return
    call.transparent = True
    text = " ".join(w.static if w.static is not None else w.display for w in args)
    exact = all(w.static is not None and w.stands_for is None for w in args)
    call.scripts.append(Script(text, "eval", exact, in_shell=True))


def source(call: Call) -> None:
    # The file can do anything: set variables, define functions, change directory.
    call.read_only = False
    call.opaque_vars = True
    call.chdir = "unknown"
    if call.args:
        _read_script(call, call.args[0])


def trap(call: Call) -> None:
    args = call.args[1:] if call.args and call.args[0].static == "--" else call.args
    if len(args) < 2 or (args[0].static or "").startswith("-"):
        return  # trap -p, trap -l, trap SIG (reset)
    if args[0].static not in ("", "-"):
        # The handler runs later, wherever the shell then is.
        call.scripts.append(script_from(args[0], "trap", in_shell=False, cwd_unknown=True))


def alias(call: Call) -> None:
    if any("=" in w.display for w in call.args):
        call.reasons.append("the line defines an alias, which can change what a command runs")


def enable(call: Call) -> None:
    if call.args:
        call.reasons.append("enable changes which builtins the shell runs")


def hash_(call: Call) -> None:
    if any((w.static or "").startswith("-") and "p" in (w.static or "") for w in call.args):
        call.reasons.append("hash -p changes which program a command name runs")


_POSIX = Opts(posix=True)

WRAPPERS: dict[str, Handler] = {
    "env": env,
    "command": command,
    "builtin": _wrapper(_POSIX, in_shell=True),
    "exec": _wrapper(Opts(short_arg="a", posix=True)),
    "nice": _wrapper(Opts(short_arg="n", long_arg=frozenset({"adjustment"}), posix=True)),
    "nohup": _wrapper(_POSIX),
    "time": _wrapper(Opts(short_arg="fo", long_arg=frozenset({"format", "output"}), posix=True),
                     writes=frozenset({"-o", "--output"})),
    "timeout": _wrapper(Opts(short_arg="sk", long_arg=frozenset({"signal", "kill-after"}),
                             posix=True), skip=1),
    "stdbuf": _wrapper(Opts(short_arg="ioe", long_arg=frozenset({"input", "output", "error"}),
                            posix=True)),
    "setsid": _wrapper(_POSIX),
    "coproc": coproc,
    "sudo": sudo,
    "doas": doas,
    "su": su,
    "xargs": xargs,
    **dict.fromkeys(SHELLS, shell),
    "script": script,
    "eval": eval_,
    "source": source,
    ".": source,
    "trap": trap,
    "alias": alias,
    "enable": enable,
    "hash": hash_,
}
