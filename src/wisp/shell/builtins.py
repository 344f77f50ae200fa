"""bash builtins whose operands bash evaluates: variable names (`read NAME`, `printf -v`,
`mapfile`, `getopts`, `test -v`), arithmetic (`let`) and callbacks (`mapfile -C`).

A name must be a plain identifier (`a[…]` is a subscript bash evaluates, running any
`$(…)` in it), and binding a variable bash runs as code (PS4, PROMPT_COMMAND, BASH_ENV, ENV)
is never harmless.
"""

from __future__ import annotations

from wisp.shell.arith import CODE_VARIABLES, is_identifier, is_name_or_element
from wisp.shell.call import Call, Handler
from wisp.shell.options import parse, spec
from wisp.shell.words import Word

FILE_TESTS = frozenset({"-a", "-b", "-c", "-d", "-e", "-f", "-g", "-h", "-k", "-p", "-r",
                        "-s", "-u", "-w", "-x", "-G", "-L", "-N", "-O", "-S"})
FILE_COMPARISONS = frozenset({"-nt", "-ot", "-ef"})


def bind(call: Call, word: Word | None, *, element: bool = False) -> None:
    """`word` names a variable the command assigns."""
    text = word.static if word is not None else None
    plain = is_name_or_element(text) if element else is_identifier(text)
    if not plain:
        shown = word.display if word is not None else "(missing)"
        call.reasons.append(f"{call.name} names a variable with {shown!r}, which is not a "
                            "plain name: bash evaluates what it holds")
    elif text is not None and text.split("[")[0] in CODE_VARIABLES:
        call.reasons.append(f"{call.name} sets {text}, which bash runs as code")


_READ = spec("-e -r -s -a: -d: -i: -n: -N: -p: -t: -u:")


def read(call: Call) -> None:
    parsed = parse(call.args, _READ)
    call.unknown_words(parsed.unknown)
    for word in [*parsed.values({"-a"}), *parsed.operands]:
        bind(call, word)


_MAPFILE = spec("-t -d: -n: -O: -s: -u: -C: -c:")


def mapfile(call: Call) -> None:
    parsed = parse(call.args, _MAPFILE)
    call.unknown_words(parsed.unknown)
    if parsed.has({"-C"}):
        call.reasons.append(f"{call.name} -C runs a callback bash evaluates as code")
    for word in parsed.values({"-n", "-O", "-s", "-u", "-c"}):
        if not (word.static or "").isdigit():
            call.read_only = False
    for word in parsed.operands[:1]:
        bind(call, word)
    if len(parsed.operands) > 1:
        call.read_only = False


def printf(call: Call) -> None:
    args = call.args
    if args and args[0].static == "-v":
        bind(call, args[1] if len(args) > 1 else None, element=False)
    elif args and (args[0].static or "").startswith("-v"):
        bind(call, args[0].tail(2))


def getopts(call: Call) -> None:
    if len(call.args) >= 2:
        bind(call, call.args[1])


def let(call: Call) -> None:
    for word in call.args:
        text = word.static
        if text is None or not call.arith_ok(text):
            call.reasons.append(f"let evaluates {word.display!r} as arithmetic, which can "
                                "run code")


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
        elif word.static in ("-v", "-R") and i + 1 < len(args):
            name = args[i + 1]
            if not is_name_or_element(name.static):
                call.reasons.append(f"{call.name} -v names a variable with "
                                    f"{name.display!r}: bash evaluates its subscript")


BUILTINS: dict[str, Handler] = {
    "read": read, "mapfile": mapfile, "readarray": mapfile, "printf": printf,
    "getopts": getopts, "let": let, "test": test, "[": test,
}
