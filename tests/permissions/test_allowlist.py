"""The pieces of the read-only allowlist on their own: getopt-style option parsing, sed
scripts and awk programs read as sed and awk read them, and bash arithmetic. Harmless
spellings that merely look dangerous stay read-only; the dangerous ones are found wherever
they stand."""

from __future__ import annotations

import pytest

from wisp.shell import analyse
from wisp.shell.arith import is_plain
from wisp.shell.awkprog import awk_program_is_safe
from wisp.shell.options import Parsed, parse, spec
from wisp.shell.sedscript import sed_effects
from wisp.shell.words import Word

SORT = spec("-o: -u -k: --output= --unique --key= --debug --dictionary-order --help")


def parsed(*words: str) -> Parsed:
    return parse([Word.literal(w) for w in words], SORT)


@pytest.mark.parametrize(("words", "flag", "value"), [
    (("--output=F",), "--output", "F"),
    (("--o=F",), "--output", "F"),
    (("--ou", "F"), "--output", "F"),
    (("--outpu", "F", "x"), "--output", "F"),
    (("-oF",), "-o", "F"),
    (("-uoF",), "-o", "F"),
    (("-u", "-o", "F"),  "-o", "F"),
])
def test_long_options_by_any_unambiguous_prefix(words: tuple[str, ...], flag: str,
                                                value: str) -> None:
    result = parsed(*words)
    assert result.unknown == []
    assert [w.static for w in result.values({flag})] == [value]


@pytest.mark.parametrize("words", [("--d",), ("--frob",), ("-z",), ("--unique=x",)])
def test_unknown_ambiguous_or_misused_options_are_unknown(words: tuple[str, ...]) -> None:
    assert parsed(*words).unknown


def test_options_after_operands_and_after_double_dash() -> None:
    result = parsed("f", "--o=F", "--", "--output=G")
    assert [w.static for w in result.values({"--output"})] == ["F"]
    assert [w.static for w in result.operands] == ["f", "--output=G"]


@pytest.mark.parametrize(("script", "reads", "writes", "runs"), [
    ("1,5p", [], [], False),
    ("s/a/b/g", [], [], False),
    ("s/w/e/", [], [], False),                      # letters in a regex are data
    ("s,x,w out,", [], [], False),                  # and in a replacement
    ("/w out/d", [], [], False),                    # and in an address
    ("\\,w,d", [], [], False),
    ("1a w out", [], [], False),                    # `a` text runs to the end of the line
    ("# w out\np", [], [], False),                  # a comment
    ("y/abc/wer/", [], [], False),
    (":w\nbw", [], [], False),                      # labels
    ("w out", [], ["out"], False),
    ("1,$W out", [], ["out"], False),
    ("/x/{p;w out\n}", [], ["out"], False),
    ("s/a/b/gw out", [], ["out"], False),
    ("\\cxcw out", [], ["out"], False),
    ("1a foo\nw out", [], ["out"], False),
    ("r in", ["in"], [], False),
    ("1!R in", ["in"], [], False),
    ("e touch m", [], [], True),
    ("s/a/touch m/e", [], [], True),
    ("2e", [], [], True),
])
def test_sed_scripts(script: str, reads: list[str], writes: list[str], runs: bool) -> None:
    effects = sed_effects(script)
    assert not effects.unknown
    assert (effects.reads, effects.writes, effects.runs_code) == (reads, writes, runs)


@pytest.mark.parametrize("script", ["k", "s/a/b", "s/a/b/X", "y/a/", "p junk"])
def test_sed_scripts_sed_would_refuse_are_unknown(script: str) -> None:
    assert sed_effects(script).unknown


@pytest.mark.parametrize(("program", "safe"), [
    ("{print $1}", True),
    ("$3 > 100 {print $1}", True),
    ('{print "a>b|c"}', True),
    ("/a>b|c/ {print}", True),
    ("{x = $1 / 2; print x}", True),
    ("{if (a > b) print a}", True),
    ("{print (a > b)}", True),
    ("END {print NR}", True),
    ("{systime_ = 1; print}", True),
    ('{print > "out"}', False),
    ('{print $1 / 2 > "out"}', False),
    ('{print | "sh"}', False),
    ('BEGIN {system("x")}', False),
    ('BEGIN {"date" | getline d}', False),
    ('BEGIN {getline l < "/etc/passwd"}', False),
    ("BEGIN {print ENVIRON[\"HOME\"]}", False),
    ('BEGIN {ARGV[1] = "/etc/shadow"; ARGC = 2}', False),
    ('BEGIN {f = "system"; @f("x")}', False),
    ("{print 'quoted'}", False),  # not awk: cannot be tokenised
])
def test_awk_programs(program: str, safe: bool) -> None:
    assert awk_program_is_safe(program) is safe


@pytest.mark.parametrize(("text", "plain"), [
    ("1 + 2 * 3", True),
    ("i++", True),
    ("x << 2 | 0x1f", True),
    ("a[3] + $# + ${#n}", True),
    ("RANDOM % 6", True),
    ("a[$(id)]", False),
    ("'a[1]'", False),
    ("$1", False),
    ("s", False),
    ("\\x", False),
])
def test_arithmetic(text: str, plain: bool) -> None:
    values = {"i": "0", "x": "4", "a": "", "n": "", "s": "a[$(id)]"}
    assert is_plain(text, lambda name, depth: is_plain(values.get(name, ""),
                                                        lambda n, d: False, depth)) is plain


@pytest.mark.parametrize("command", [
    "sed -n '/w/p' f", "sed '1a wow' f", "awk '$1 > 3' f", "git log --no-ext-diff -1",
    "git diff --no-color", "git log -S needle", "sort -k2 -t: f", "grep -e -x f",
])
def test_harmless_spellings_stay_read_only(command: str) -> None:
    assert analyse(command, cwd="/w", env={}).read_only, command
