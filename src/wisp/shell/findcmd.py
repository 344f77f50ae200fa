"""find: start paths, then an expression every primary of which must be known.

Tests and plain actions are harmless; `-exec`/`-execdir`/`-ok`/`-okdir` run a command of
their own (reported as such), `-delete` removes what it finds, `-fprint*`/`-fls` write a
file, `-newer`-like tests and `-files0-from` read one. An unknown primary is an unknown
word, so the command is not read-only.
"""

from __future__ import annotations

from wisp.shell.call import Call, Inner
from wisp.shell.model import PathUse
from wisp.shell.paths import here
from wisp.shell.words import Word

_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_NO_ARGUMENT = frozenset({
    "-empty", "-executable", "-readable", "-writable", "-nouser", "-nogroup", "-true",
    "-false", "-depth", "-d", "-mount", "-xdev", "-noleaf", "-ignore_readdir_race",
    "-noignore_readdir_race", "-daystart", "-follow", "-warn", "-nowarn", "-print", "-print0",
    "-ls", "-prune", "-quit", "-a", "-and", "-o", "-or", "-not", "!", "(", ")", ",", "-help",
    "--help", "-version", "--version"})
_DATA_ARGUMENT = frozenset({
    "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex",
    "-lname", "-ilname", "-type", "-xtype", "-size", "-perm", "-user", "-group", "-uid",
    "-gid", "-links", "-inum", "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin",
    "-used", "-fstype", "-context", "-maxdepth", "-mindepth", "-regextype", "-printf"})
_READ_ARGUMENT = frozenset({"-samefile", "-newer", "-anewer", "-cnewer"})
_WRITE_ARGUMENT = frozenset({"-fprint", "-fprint0", "-fls"})
_EXPRESSION_START = ("-", "(", "!", ")", ",")
_NEWER_XY = frozenset("aBcm")


def _start(args: list[Word]) -> tuple[list[Word], list[Word]]:
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
    while i < len(args) and not args[i].display.startswith(_EXPRESSION_START):
        i += 1
    return args[start:i], args[i:]


def _exec(call: Call, expression: list[Word], at: int, placeholder: tuple[PathUse, ...]
          ) -> int:
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
    starts, expression = _start(call.args)
    placeholder: list[PathUse] = []
    for word in starts:
        placeholder.extend(call.resolve(word, "read", True))
    if not starts:
        placeholder = here("read", True, call.cwd)
    call.uses.extend(placeholder)
    i = 0
    while i < len(expression):
        i = _primary(call, expression, i, tuple(placeholder))


def _primary(call: Call, expression: list[Word], i: int,
             placeholder: tuple[PathUse, ...]) -> int:
    """Judge the primary at `i`; returns where the next one starts."""
    text = expression[i].static
    if text in _EXEC:
        call.read_only = False
        return _exec(call, expression, i, placeholder)
    if text == "-delete":
        call.read_only = False
        call.uses.extend(PathUse("write", u.path, True) for u in placeholder)
        return i + 1
    if text in _NO_ARGUMENT:
        return i + 1
    if i + 1 >= len(expression):
        call.read_only = False  # find refuses a primary missing its argument
        return i + 1
    return _with_argument(call, text, expression[i + 1], i, expression[i].display)


def _with_argument(call: Call, text: str | None, argument: Word, i: int, shown: str) -> int:
    if text in _READ_ARGUMENT or _newer_file(text):
        call.read(argument)
    elif text in _WRITE_ARGUMENT or text == "-fprintf":
        call.write(argument)
        return i + (3 if text == "-fprintf" else 2)
    elif text == "-files0-from":
        if argument.static != "-":
            call.read(argument)
        call.uses.append(PathUse("read", None, True))  # the start paths it lists
    elif text not in _DATA_ARGUMENT and not (text or "").startswith("-newer"):
        call.unknown_words([shown])  # -newerXt takes a date; anything else is unknown
        return i + 1
    return i + 2


def _newer_file(text: str | None) -> bool:
    """`-newerXY FILE` (Y not `t`, which takes a date)."""
    return (text is not None and len(text) == 8 and text.startswith("-newer")
            and text[6] in _NEWER_XY | {"t"} and text[7] in _NEWER_XY)
