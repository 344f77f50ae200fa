"""What known commands read and write, and whether they change anything.

Each entry of `COMMANDS` annotates a `Call`. A command missing from the table is unknown:
its arguments are mentions and it is never read-only. A false "read-only" lets a command
skip a prompt, so every reader here lists the options that make it write or execute.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from wisp.permissions.shell.call import Call, Handler, Inner
from wisp.permissions.shell.model import PathUse, UseKind
from wisp.permissions.shell.options import Opts, Parsed, parse
from wisp.permissions.shell.paths import here
from wisp.permissions.shell.words import Word


def _fs(*names: str) -> frozenset[str]:
    return frozenset(names)


_NO_OPTS = Opts()
_RECURSIVE = _fs("-r", "-R", "--recursive")


def unknown(call: Call) -> None:
    call.read_only = False
    call.unknown_program = True
    parsed = parse(call.args, _NO_OPTS)
    for _, value in parsed.flags:
        if value is not None:  # the value of `--opt=value`
            call.mention(value)
    for word in parsed.operands:
        call.mention(word)


def quiet(call: Call) -> None:
    """Commands that touch no file (echo, pwd, true, …)."""


@dataclass(frozen=True, slots=True)
class Reader:
    """A command that reads its operands."""

    opts: Opts = _NO_OPTS
    recursive: frozenset[str] = frozenset()
    always_recursive: bool = False
    # With no operand it reads the working directory (ls, du); `cwd_if_recursive`: only
    # when recursive (grep -r).
    cwd_default: bool = False
    cwd_if_recursive: bool = False
    # The first operand is a pattern or program, unless one of `pattern_opts` gave it.
    pattern_first: bool = False
    pattern_opts: frozenset[str] = frozenset()
    reads: frozenset[str] = frozenset()
    writes: frozenset[str] = frozenset()
    # Options that make it write or run other programs.
    unsafe: frozenset[str] = frozenset()
    is_recursive: Callable[[Parsed], bool] | None = None

    def __call__(self, call: Call) -> None:
        parsed = parse(call.args, self.opts)
        recursive = self.always_recursive or parsed.has(self.recursive) or bool(
            self.is_recursive and self.is_recursive(parsed))
        for word in parsed.values(self.reads):
            call.read(word)
        for word in parsed.values(self.writes):
            call.write(word)
        if parsed.has(self.unsafe):
            call.read_only = False
        operands = parsed.operands
        if self.pattern_first and not parsed.has(self.pattern_opts):
            operands = operands[1:]
        for word in operands:
            call.read(word, recursive)
        if not operands and (self.cwd_default or (recursive and self.cwd_if_recursive)):
            call.here("read", recursive)


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


def _grep_recursive(parsed: Parsed) -> bool:
    return any(value.static == "recurse" for value in parsed.values({"-d", "--directories"}))


_GREP = Reader(
    opts=Opts(short_arg="efmABCdD", long_arg=_fs(
        "regexp", "file", "max-count", "after-context", "before-context", "context",
        "directories", "devices", "include", "exclude", "exclude-from", "exclude-dir",
        "label", "binary-files", "group-separator")),
    recursive=_RECURSIVE | {"--dereference-recursive"},
    is_recursive=_grep_recursive,
    cwd_if_recursive=True,
    pattern_first=True,
    pattern_opts=_fs("-e", "-f", "--regexp", "--file"),
    reads=_fs("-f", "--file", "--exclude-from"),
)

_RG = Reader(
    opts=Opts(short_arg="ABCdEefgjMmrTt", long_arg=_fs(
        "after-context", "before-context", "context", "max-depth", "encoding", "regexp",
        "file", "glob", "iglob", "threads", "max-columns", "max-count", "replace", "type",
        "type-not", "type-add", "type-clear", "pre", "pre-glob", "sort", "sortr", "colors",
        "context-separator", "field-context-separator", "field-match-separator",
        "path-separator", "ignore-file", "max-filesize", "dfa-size-limit",
        "regex-size-limit", "engine", "hostname-bin", "hyperlink-format")),
    always_recursive=True,
    cwd_default=True,
    pattern_first=True,
    pattern_opts=_fs("-e", "-f", "--regexp", "--file", "--files", "--type-list"),
    reads=_fs("-f", "--file", "--ignore-file"),
    # --pre and --hostname-bin run a program of the caller's choosing.
    unsafe=_fs("--pre", "--hostname-bin"),
)

# sed: `s` commands are removed first (their text may hold any letter), then y commands and
# addresses; what remains are command letters. w/W write files, e runs commands, r/R read
# files the analysis cannot see.
_SED_SUBST = re.compile(
    r"s([^\w\s\\])((?:\\.|(?!\1)[^\\])*)\1((?:\\.|(?!\1)[^\\])*)\1([^;}\n]*)", re.S)
_SED_Y = re.compile(r"y([^\w\s\\])(?:\\.|(?!\1)[^\\])*\1(?:\\.|(?!\1)[^\\])*\1", re.S)
_SED_ADDRESS = re.compile(r"/(?:\\.|[^\\/])*/|\\(.)(?:\\.|(?!\1)[^\\])*\1", re.S)
_SED_UNSAFE = re.compile(r"[wWeRr]")
_SED = Opts(short_arg="efl", short_opt="i", long_arg=_fs("expression", "file", "line-length"))


def sed_script_is_safe(script: str) -> bool:
    if any(set(m[4]) & {"e", "w", "W"} for m in _SED_SUBST.finditer(script)):
        return False
    rest = _SED_ADDRESS.sub(" ", _SED_Y.sub(" ", _SED_SUBST.sub(" ", script)))
    return _SED_UNSAFE.search(rest) is None


def sed(call: Call) -> None:
    parsed = parse(call.args, _SED)
    scripts = parsed.values({"-e", "--expression"})
    script_files = parsed.values({"-f", "--file"})
    files = parsed.operands
    if not scripts and not script_files and files:
        scripts, files = files[:1], files[1:]
    for word in script_files:
        call.read(word)
    if script_files or not all(w.static is not None and sed_script_is_safe(w.static)
                               for w in scripts):
        call.read_only = False
        call.hidden_code = True
    in_place = parsed.has({"-i", "--in-place"})
    for word in files:
        call.use(word, "write" if in_place else "read")


_AWK = Opts(short_arg="eEfFilvW", short_opt="dDopL", long_arg=_fs(
    "source", "exec", "file", "field-separator", "include", "load", "assign"))
# -i inplace writes files; -l loads native code; -o/-p/-d write report files.
_AWK_UNSAFE = _fs("-i", "-l", "-o", "-p", "-d", "-D", "-W", "--include", "--load",
                  "--pretty-print", "--profile", "--dump-variables", "--debug")
_AWK_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def _awk_program_is_safe(program: str) -> bool:
    # Output redirection, pipes, system() and @load/@include can all run or write things;
    # `>` may also be a comparison, which is the conservative mistake.
    return not any(token in program for token in ("system", "|", ">", "@"))


def awk(call: Call) -> None:
    parsed = parse(call.args, _AWK)
    programs = parsed.values({"-e", "--source"})
    program_files = parsed.values({"-f", "-E", "--file", "--exec"})
    operands = parsed.operands
    if not programs and not program_files and operands:
        programs, operands = operands[:1], operands[1:]
    for word in program_files:
        call.read(word)
    if program_files or parsed.has(_AWK_UNSAFE) or not all(
            w.static is not None and _awk_program_is_safe(w.static) for w in programs):
        call.read_only = False
        call.hidden_code = True
    for word in operands:
        if not _AWK_ASSIGNMENT.match(word.display):
            call.read(word)


def _first_reads_second_writes(opts: Opts) -> Handler:
    """`uniq IN OUT`, `xxd IN OUT`."""

    def handler(call: Call) -> None:
        operands = parse(call.args, opts).operands
        for word in operands[:1]:
            call.read(word)
        for word in operands[1:]:
            call.write(word)

    return handler


FILE_TESTS = _fs("-a", "-b", "-c", "-d", "-e", "-f", "-g", "-h", "-k", "-p", "-r", "-s",
                 "-u", "-w", "-x", "-G", "-L", "-N", "-O", "-S")
FILE_COMPARISONS = _fs("-nt", "-ot", "-ef")


def test(call: Call) -> None:
    args = call.args
    if call.name == "[" and args and args[-1].static == "]":
        args = args[:-1]
    for i, word in enumerate(args):
        if word.static in FILE_TESTS and i + 1 < len(args):
            call.read(args[i + 1])
        elif word.static in FILE_COMPARISONS and 0 < i < len(args) - 1:
            call.read(args[i - 1])
            call.read(args[i + 1])


_DATE = Opts(short_arg="dfrs", short_opt="I", long_arg=_fs("date", "file", "reference", "set"))


def date(call: Call) -> None:
    parsed = parse(call.args, _DATE)
    for word in parsed.values({"-f", "--file", "-r", "--reference"}):
        call.read(word)
    # `date MMDDhhmm` sets the clock like -s does; only `+FORMAT` operands are harmless.
    if parsed.has({"-s", "--set"}) or any(
            not w.display.startswith("+") for w in parsed.operands):
        call.read_only = False


def hostname(call: Call) -> None:
    parsed = parse(call.args, Opts(short_arg="F", long_arg=_fs("file")))
    if parsed.operands or parsed.has({"-F", "--file", "-b", "--boot"}):
        call.read_only = False


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


_GIT = Opts(short_arg="Cc", long_arg=_fs("git-dir", "work-tree", "namespace", "config-env",
                                         "super-prefix"), posix=True)
_GIT_READ_ONLY = _fs("status", "log", "diff", "show", "branch", "rev-parse", "ls-files",
                     "blame", "ls-tree", "rev-list", "describe")
_GIT_BRANCH_LISTING = _fs("-a", "-r", "-v", "-vv", "--all", "--remotes", "--list",
                          "--show-current", "--verbose", "--no-color", "--color",
                          "--no-abbrev", "--merged", "--no-merged", "--contains",
                          "--no-contains")
# Options that run configured programs or write files from read-only subcommands.
_GIT_UNSAFE = ("--output", "--ext-diff", "--textconv", "--open-files-in-pager")


def _git_subcommand_is_read_only(sub: str, rest: list[Word]) -> bool:
    if sub not in _GIT_READ_ONLY:
        return False
    texts = [w.static if w.static is not None else w.value for w in rest]
    # An argument we cannot read might be any option.
    if any(t is None or t.startswith(_GIT_UNSAFE) for t in texts):
        return False
    if sub == "branch":
        options = [t for t in texts if t and t.startswith("-")]
        names = [t for t in texts if not t or not t.startswith("-")]
        listing = all(t.split("=")[0] in _GIT_BRANCH_LISTING or t.startswith(("--sort=",
                      "--format=", "--color=")) for t in options)
        return listing and (not names or "--list" in options or "-l" in options)
    return True


def git(call: Call) -> None:
    parsed = parse(call.args, _GIT)
    # -c and --config-env can set core.pager, diff.external, … which run programs.
    unsafe = parsed.has({"-c", "--config-env", "--exec-path"})
    chdirs = parsed.values({"-C"})
    base = chdirs[-1] if len(chdirs) == 1 else None
    for word in parsed.values({"--git-dir", "--work-tree"}):
        call.read(word, True)
    operands = parsed.operands
    sub = operands[0].static if operands else ""
    rest = operands[1:]
    for i, word in enumerate(rest):
        text = word.static or ""
        if text.startswith("--output="):
            call.write(word.tail(len("--output=")))
        elif text == "--output" and i + 1 < len(rest):
            call.write(rest[i + 1])
    read_only = not unsafe and (not operands or (
        sub is not None and _git_subcommand_is_read_only(sub, rest)))
    if not operands:
        return
    kind: UseKind = "read" if read_only else "write"
    if base is not None:
        call.use(base, kind, True)
    elif chdirs:
        call.uses.append(PathUse(kind, None, True))
    else:
        call.here(kind, True)
    if sub == "diff" and any(w.static == "--no-index" for w in rest):
        for word in parse(rest, _NO_OPTS).operands:
            call.read(word)
    call.read_only = call.read_only and read_only


_FIND_EXEC = _fs("-exec", "-execdir", "-ok", "-okdir")
_FIND_WRITES_ONE = _fs("-fprint", "-fprint0", "-fls")
_FIND_EXPRESSION_START = ("-", "(", "!", ")", ",")


def _find_start(args: list[Word]) -> tuple[list[Word], list[Word]]:
    i = 0
    while i < len(args):  # -H -L -P -D opts -O3 come before the start paths
        text = args[i].static or ""
        if text in ("-H", "-L", "-P") or text.startswith("-O"):
            i += 1
        elif text == "-D":
            i += 2
        else:
            break
    start = i
    while i < len(args) and not args[i].display.startswith(_FIND_EXPRESSION_START):
        i += 1
    return args[start:i], args[i:]


def _find_exec(call: Call, expression: list[Word], at: int,
               placeholder: tuple[PathUse, ...]) -> int:
    end = at + 1
    while end < len(expression):
        text = expression[end].static
        if text == ";" or (text == "+" and "{}" in (expression[end - 1].static or "")):
            break
        end += 1
    words = [Word(w.display, stands_for=placeholder) if "{}" in w.display else w
             for w in expression[at + 1 : end]]
    if words:
        # -execdir runs in each found file's directory: relative paths are unknown there.
        call.inners.append(Inner(words, cwd_unknown=expression[at].static in
                                 ("-execdir", "-okdir")))
    return end + 1


def find(call: Call) -> None:
    starts, expression = _find_start(call.args)
    placeholder: list[PathUse] = []
    for word in starts:
        placeholder.extend(call.resolve(word, "read", True))
    if not starts:
        placeholder = here("read", True, call.cwd)
    call.uses.extend(placeholder)
    i = 0
    while i < len(expression):
        text = expression[i].static
        if text in _FIND_EXEC:
            call.read_only = False
            i = _find_exec(call, expression, i, tuple(placeholder))
            continue
        if text == "-delete":
            call.read_only = False
            call.uses.extend(PathUse("write", u.path, True) for u in placeholder)
        elif text in _FIND_WRITES_ONE or text == "-fprintf":
            if i + 1 < len(expression):
                call.write(expression[i + 1])
        elif text == "-files0-from" and i + 1 < len(expression):
            call.read(expression[i + 1])
        i += 1


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


def _readers() -> dict[str, Handler]:
    plain = Reader()
    table: dict[str, Handler] = dict.fromkeys(
        ("cat", "rev", "comm", "readlink", "realpath", "md5sum", "sha1sum", "sha224sum",
         "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum", "sum", "tac", "zcat",
         "expand", "unexpand", "fold", "fmt"), plain)
    table.update({
        "head": Reader(Opts(short_arg="nc", long_arg=_fs("lines", "bytes"))),
        "tail": Reader(Opts(short_arg="ncs", long_arg=_fs(
            "lines", "bytes", "pid", "sleep-interval", "max-unchanged-stats"))),
        "less": Reader(Opts(short_arg="bhjkoOpPtTxyz#", long_arg=_fs("log-file", "LOG-FILE")),
                       unsafe=_fs("-o", "-O", "--log-file", "--LOG-FILE")),
        "more": Reader(Opts(short_arg="n")),
        "grep": _GREP, "egrep": _GREP, "fgrep": _GREP, "zgrep": _GREP,
        "rgrep": Reader(_GREP.opts, always_recursive=True, cwd_default=True,
                        pattern_first=True, pattern_opts=_GREP.pattern_opts,
                        reads=_GREP.reads),
        "rg": _RG,
        "cut": Reader(Opts(short_arg="bcfd", long_arg=_fs(
            "bytes", "characters", "fields", "delimiter", "output-delimiter"))),
        "sort": Reader(Opts(short_arg="kotST", long_arg=_fs(
            "key", "output", "field-separator", "buffer-size", "temporary-directory",
            "compress-program", "files0-from", "batch-size", "parallel", "random-source",
            "sort")), writes=_fs("-o", "--output"), reads=_fs("--files0-from", "--random-source"),
            unsafe=_fs("--compress-program")),
        "wc": Reader(Opts(long_arg=_fs("files0-from")), reads=_fs("--files0-from")),
        "diff": Reader(Opts(short_arg="CUFIxXSWLD", long_arg=_fs(
            "context", "unified", "show-function-line", "ignore-matching-lines", "exclude",
            "exclude-from", "starting-file", "width", "label", "ifdef", "from-file",
            "to-file", "line-format", "horizon-lines", "tabsize", "color", "palette")),
            recursive=_RECURSIVE, reads=_fs("-X", "--exclude-from", "--from-file", "--to-file")),
        "cmp": Reader(Opts(short_arg="in", long_arg=_fs("ignore-initial", "bytes"))),
        "file": Reader(Opts(short_arg="efFmP", long_arg=_fs(
            "exclude", "exclude-quiet", "files-from", "separator", "magic-file", "parameter")),
            reads=_fs("-f", "--files-from", "-m", "--magic-file"),
            unsafe=_fs("-C", "--compile")),
        "stat": Reader(Opts(short_arg="c", long_arg=_fs("format", "printf"))),
        "ls": Reader(Opts(short_arg="ITw", long_arg=_fs(
            "block-size", "format", "hide", "ignore", "indicator-style", "quoting-style",
            "sort", "tabsize", "time", "time-style", "width")),
            recursive=_fs("-R", "--recursive"), cwd_default=True),
        "du": Reader(Opts(short_arg="dBtX", long_arg=_fs(
            "max-depth", "block-size", "threshold", "exclude-from", "exclude", "files0-from",
            "time-style")), always_recursive=True, cwd_default=True,
            reads=_fs("-X", "--exclude-from", "--files0-from")),
        "df": Reader(Opts(short_arg="Btx", long_arg=_fs("block-size", "type", "exclude-type"))),
        "tree": Reader(Opts(short_arg="LPIHTo", long_arg=_fs(
            "filelimit", "timefmt", "sort", "charset")), always_recursive=True,
            cwd_default=True, writes=_fs("-o")),
        "nl": Reader(Opts(short_arg="bdfhilnsvw")),
        "paste": Reader(Opts(short_arg="d", long_arg=_fs("delimiters"))),
        "join": Reader(Opts(short_arg="aejotv12")),
        "od": Reader(Opts(short_arg="AjNt", short_opt="wS")),
        "hexdump": Reader(Opts(short_arg="efns"), reads=_fs("-f")),
        "strings": Reader(Opts(short_arg="ntTe", long_arg=_fs(
            "bytes", "radix", "target", "encoding"))),
        "base64": Reader(Opts(short_arg="w", long_arg=_fs("wrap"))),
        "base32": Reader(Opts(short_arg="w", long_arg=_fs("wrap"))),
        "jq": Reader(Opts(short_arg="fL", long_arg=_fs(
            "arg", "argjson", "slurpfile", "rawfile", "indent", "from-file")),
            pattern_first=True, pattern_opts=_fs("-f", "--from-file"),
            reads=_fs("-f", "--from-file")),
        "sed": sed, "awk": awk, "gawk": awk, "mawk": awk, "nawk": awk,
        "uniq": _first_reads_second_writes(Opts(short_arg="fsw", long_arg=_fs(
            "skip-fields", "skip-chars", "check-chars"))),
        "xxd": _first_reads_second_writes(Opts(short_arg="cglosn")),
        "test": test, "[": test,
        "git": git, "find": find, "date": date, "hostname": hostname,
    })
    return table


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


# tar options that run a command of the archive author's (or the model's) choosing.
_TAR_EXEC = ("--checkpoint-action", "--to-command", "--use-compress-program", "--info-script",
             "--new-volume-script", "--rsh-command", "-I", "-F")


def tar(call: Call) -> None:
    if any(w.display.startswith(_TAR_EXEC) for w in call.args):
        call.hidden_code = True
    unknown(call)


_QUIET = ("echo", "printf", "pwd", "true", "false", ":", "whoami", "id", "uname", "basename",
          "dirname", "which", "type", "sleep", "seq", "tr", "expr", "nproc", "arch", "tty",
          "groups", "logname", "printenv", "exit", "return", "break", "continue", "shift",
          "wait", "read", "mapfile", "readarray", "getopts", "let", "umask", "ulimit",
          "jobs", "unalias", "set", "shopt")

COMMANDS: dict[str, Handler] = {
    **dict.fromkeys(_QUIET, quiet),
    **_readers(),
    **_writers(),
    "cd": cd, "pushd": pushd, "popd": popd,
    **dict.fromkeys(_INTERPRETERS, interpreter),
    **{f"python3.{minor}": interpreter for minor in range(6, 16)},
    "tar": tar,
}
