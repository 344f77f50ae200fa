"""Programs that run a program of their own language: sed, awk and jq.

The script is read as the program reads it (`sedscript`, `awkprog`), so what it writes,
reads or runs is found wherever it stands; a script that is not literal, comes from a
file, or cannot be read is inline code no rule can see into.
"""

from __future__ import annotations

import re

from wisp.shell.awkprog import awk_program_is_safe
from wisp.shell.call import Call
from wisp.shell.model import PathUse
from wisp.shell.options import long_option, parse, spec
from wisp.shell.sedscript import sed_effects
from wisp.shell.words import Word

_SED = spec("-n -e: -f: -i:: -l: -E -r -s -u -z --quiet --silent --debug --expression= "
            "--file= --follow-symlinks --in-place=? --line-length= --posix --regexp-extended "
            "--separate --sandbox --unbuffered --null-data --zero-terminated --help --version")
# Where `w` output goes without touching a file.
_STANDARD_STREAMS = frozenset({"/dev/stdout", "/dev/stderr"})


def _hidden(call: Call) -> None:
    call.read_only = False
    call.hidden_code = True


def _exact(path: str) -> Word:
    """A file name sed or jq takes as written: no glob, no `~`."""
    return Word(path, path, path)


def sed(call: Call) -> None:
    parsed = parse(call.args, _SED)
    call.unknown_words(parsed.unknown)
    scripts = parsed.values({"-e", "--expression"})
    script_files = parsed.values({"-f", "--file"})
    files = parsed.operands
    if not scripts and not script_files and files:
        scripts, files = files[:1], files[1:]
    for word in script_files:
        call.read(word)
    texts = [w.static for w in scripts]
    if script_files or any(text is None for text in texts):
        _hidden(call)
    else:
        effects = sed_effects("\n".join(t for t in texts if t is not None))
        if effects.unknown or effects.runs_code:
            _hidden(call)
        for path in effects.reads:
            call.read(_exact(path))
        for path in effects.writes:
            if path not in _STANDARD_STREAMS:
                call.write(_exact(path))
    in_place = parsed.has({"-i", "--in-place"})
    for word in files:
        call.use(word, "write" if in_place else "read")


# The options gawk and mawk share, and gawk's; mawk's `-W …` is not known.
_AWK = spec("-F: -v: -f: -e: -E: -b -c -C -M -n -N -O -P -r -s -S -t -V -h -g -i: -l: "
            "-L:: -d:: -D:: -o:: -p:: -W: --field-separator= --assign= --file= --source= "
            "--exec= --characters-as-bytes --traditional --copyright --gen-pot --lint=? "
            "--bignum --use-lc-numeric --non-decimal-data --optimize --no-optimize --posix "
            "--re-interval --sandbox --lint-old --version --help --include= --load= "
            "--dump-variables=? --debug=? --pretty-print=? --profile=?")
# Load code from files, write report files, or start a debugger reading commands.
_AWK_UNSAFE = frozenset({"-i", "-l", "-d", "-D", "-o", "-p", "-W", "--include", "--load",
                         "--dump-variables", "--debug", "--pretty-print", "--profile"})
_AWK_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=")


def awk(call: Call) -> None:
    parsed = parse(call.args, _AWK)
    call.unknown_words(parsed.unknown)
    programs = parsed.values({"-e", "--source"})
    program_files = parsed.values({"-f", "-E", "--file", "--exec"})
    operands = parsed.operands
    if not programs and not program_files and operands:
        programs, operands = operands[:1], operands[1:]
    for word in program_files:
        call.read(word)
    if program_files or parsed.has(_AWK_UNSAFE) or not all(
            w.static is not None and awk_program_is_safe(w.static) for w in programs):
        _hidden(call)
    for word in [*parsed.values({"-v", "--assign"}), *operands]:
        assignment = _AWK_ASSIGNMENT.match(word.display)
        if assignment is None:
            call.read(word)
        elif not awk_program_is_safe(assignment[1]):
            _hidden(call)  # `ARGV=…`, `ENVIRON=…`


_JQ = spec("-r -j -a -c -n -e -s -S -C -M -R -h -V -0 -b -f -L: --tab --indent= --args "
           "--jsonargs --seq --stream --stream-errors --exit-status --raw-output "
           "--raw-output0 --join-output --ascii-output --compact-output --null-input --slurp "
           "--sort-keys --color-output --monochrome-output --raw-input --unbuffered "
           "--from-file --binary --debug-dump-disasm --debug-trace=? --help --version "
           "--build-configuration --arg --argjson --slurpfile --rawfile --argfile")
# Options followed by two words: a name, then a value (a file for the last three).
_JQ_PAIRS = {"arg": False, "argjson": False, "slurpfile": True, "rawfile": True,
             "argfile": True}
_JQ_MODULES = re.compile(r"\b(?:import|include|modulemeta|get_search_list)\b")


def jq(call: Call) -> None:
    """jq reads files and writes none; what matters is which files."""
    args = _jq_pairs(call)
    parsed = parse(args, _JQ)
    call.unknown_words(parsed.unknown)
    for word in parsed.values({"-L"}):
        call.read(word, True)
    operands = parsed.operands
    if parsed.has({"-f", "--from-file"}):
        files = operands  # the program file first, then the inputs
    else:
        program = operands[0].static if operands else None
        if operands and (program is None or _JQ_MODULES.search(program)):
            call.uses.append(PathUse("read", None))  # modules from a search path
        files = operands[1:]
    if parsed.has({"--args", "--jsonargs"}):
        files = files[:0] if not parsed.has({"-f", "--from-file"}) else files[:1]
    for word in files:
        call.read(word)


def _jq_pairs(call: Call) -> list[Word]:
    """`--rawfile NAME FILE` and the like taken out of the arguments, their files read."""
    rest: list[Word] = []
    i = 0
    args = call.args
    while i < len(args):
        text = args[i].static or ""
        name = long_option(text[2:], _JQ) if text.startswith("--") and "=" not in text else None
        if name in _JQ_PAIRS:
            if _JQ_PAIRS[name] and i + 2 < len(args):
                call.read(args[i + 2])
            i += 3
            continue
        if text == "--":
            rest.extend(args[i:])
            break
        rest.append(args[i])
        i += 1
    return rest
