"""Issue 25: compositions of what bash evaluates, mini-languages, option spellings and
environment prefixes, inside the wrappers of the generative test (test_generative.py).

Each composition runs unjudged by bash in a scratch git repository (the oracle for damage)
and is judged in default mode and under rules for the programs it names.
"""

from __future__ import annotations

import random
import shlex
import subprocess

import pytest

from tests.security.test_generative import EXTERNAL_WRAPPERS, FORMS, SEED

N_PAYLOADS = 360
MIN_DAMAGING_SHARE = 0.60
# Ways to create the marker `m`.
ACTIONS = ["touch m", ": > m", "mkdir m", "cp f m"]
SED_ADDRESSES = ["", "1", "$", "/x/", "\\cxc", "1,$", "/x/,+1", "1~1"]
SED_BEFORE = ["", "p;", "h;", "y/x/y/;", "# note\n", "{p;};", "s/q/r/g;", "1d;"]
SED_DANGER = ["w out", "W out", "e {act}", "s/x/y/w out", "s/x/{act}/e", "s|x|y|gw out",
              "{{w out\n}}"]
AWK_BEFORE = ["", "x = 1; ", "if ($1 > 0) y = 2; ", "n = split($0, a, \"/\"); ",
              "s = \"a>b|c\"; "]
AWK_DANGER = ["print > \"out\"", "print $0 >> \"out\"", "print | \"{act}\"",
              "system(\"{act}\")", "\"{act}\" | getline", "o = \"out\"; printf \"x\" > o"]


def _evaluated(rng: random.Random) -> str:
    act = rng.choice(ACTIONS)
    template = rng.choice([
        "let 'a[$({act})]'", "x='a[$({act})]'; echo $((x))", "x='a[$({act})]'; (( x ))",
        "printf -v 'a[$({act})]' x", "read 'a[$({act})]' <<< x", "[[ -v 'a[$({act})]' ]]",
        "test -v 'a[$({act})]'", "declare 'a[$({act})]=1'", "x='$({act})'; echo ${{x@P}}",
        "x='a[$({act})]'; echo ${{!x}}", "i='b[$({act})]'; a[$i]=1",
        "x='a[$({act})]'; [[ $x -gt 0 ]]", "PS4='$({act})'; set -x; :",
        "mapfile -C '{act} #' -c 1 a <<< x"])
    return template.format(act=act)


def _sed(rng: random.Random) -> str:
    script = (rng.choice(SED_BEFORE) + rng.choice(SED_ADDRESSES)
              + rng.choice(SED_DANGER).format(act=rng.choice(ACTIONS)))
    spelling = rng.choice(["{s}", "-n {s}", "-e {s}", "--expr={s}", "--e {s}", "-n -e p -e {s}"])
    return "sed " + spelling.format(s=shlex.quote(script)) + " f"


def _awk(rng: random.Random) -> str:
    program = rng.choice(AWK_BEFORE) + rng.choice(AWK_DANGER).format(act=rng.choice(ACTIONS))
    block = rng.choice(["{{{p}}}", "BEGIN {{{p}}}", "NR == 1 {{{p}}}", "/x/ {{{p}}}"])
    return "awk " + shlex.quote(block.format(p=program)) + " f"


def _spelling(rng: random.Random) -> str:
    output = "--output"[: rng.randint(3, 8)]
    in_place = "--in-place"[: rng.randint(3, 10)]
    return rng.choice([f"sort {output}=out f", f"sort {output} out f", "sort -oout f",
                       f"sed {in_place} s/x/z/ f", f"sed {in_place}=.b s/x/z/ f",
                       "sort -u -o out f", f"git log {'--output'}=out -1",
                       f"find . -name f -{rng.choice(['fprint', 'fprint0', 'fls'])} out"])


def _environment(rng: random.Random) -> str:
    harmless = rng.choice(["", "LC_ALL=C ", "TZ=UTC ", "NO_COLOR=1 "])
    return harmless + rng.choice([
        "GIT_EXTERNAL_DIFF=./x.sh git diff", "env GIT_EXTERNAL_DIFF=./x.sh git diff",
        "export GIT_EXTERNAL_DIFF=./x.sh; git diff", "BASH_ENV=./x.sh bash -c :",
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.q GIT_CONFIG_VALUE_0='!touch m' git q"])


PAYLOADS = [_evaluated, _sed, _awk, _spelling, _environment]


def compose_payload(rng: random.Random) -> str:
    command = rng.choice(PAYLOADS)(rng)
    wrappers = rng.sample(EXTERNAL_WRAPPERS, k=rng.choice([0, 0, 1]))
    # Wrappers run programs, not shell code: only a simple command goes inside them.
    if wrappers and ";" not in command and "<<<" not in command and "[[" not in command:
        command = " ".join([*wrappers, command])
    kind = "list" if ";" in command else "simple"
    for depth in range(rng.choice([0, 1, 1, 2])):
        form = rng.choice([f for f in FORMS if f.fits(command, kind)])
        command, kind = form.wrap(command, depth), form.gives
    return command


def generated_payloads(n: int = N_PAYLOADS, seed: int = SEED) -> list[str]:
    rng = random.Random(seed + 25)
    seen: dict[str, None] = {}
    while len(seen) < n:
        seen.setdefault(compose_payload(rng), None)
    return list(seen)


@pytest.mark.timeout(300)
def test_no_allowed_composition_does_damage(tmp_path):
    """360 compositions (seed 20261226), each run unjudged by bash in a scratch git
    repository, and judged in default mode and under rules for the programs they name
    (`Bash(git:*)`, `Bash(bash:*)`, `Bash(echo:*)`, …, which grant neither an assignment
    that steers the program nor what bash evaluates). None that does damage is allowed."""
    from tests.security.judge_cases import Scratch
    from wisp.permissions.engine import PermissionPolicy, evaluate
    from wisp.rules import Rule
    from wisp.tools.bash import Bash

    scratch = Scratch(tmp_path)
    tool = Bash()
    rules = [Rule.parse(f"Bash({name}:*)") for name in (
        "git diff", "git q", "bash -c", "echo", "true", "let", "printf", "read", "test",
        "declare", "set", ":")]
    policies = {"default": PermissionPolicy(cwd=scratch.work, env=scratch.env()),
                "rules": PermissionPolicy(allow=rules, cwd=scratch.work, env=scratch.env())}
    commands = generated_payloads()
    damaging, broken = 0, []
    for command in commands:
        damage = scratch.run(command)
        damaging += bool(damage)
        verdicts = {name: evaluate(tool, {"command": command}, policy).behavior
                    for name, policy in policies.items()}
        if damage and "allow" in verdicts.values():
            broken.append(f"  {command!r} {verdicts} did {damage}")
    share = damaging / len(commands)
    summary = (f"{len(commands)} compositions (seed {SEED + 25}); {damaging} ({share:.0%}) "
               "do damage unjudged")
    print(f"\n[generative-25] {summary}")
    assert not broken, summary + "\nallowed and did damage:\n" + "\n".join(broken[:40])
    assert share >= MIN_DAMAGING_SHARE, summary


# The harmless twins: the same script shapes, addresses, spellings and wrappers, with only
# commands that print (sed) and programs that print to stdout and compute (awk). A judge
# that asks about every sed or awk script passes the side above and fails this one.
SED_HARMLESS = ["p", "=", "l", "s/x/y/", "s/x/y/g", "s|x|y|2", "y/x/z/", "{p;}", "n;p", "N;P;D"]
AWK_HARMLESS = ["print", "print $0", "print NR, $1", "printf \"%s\\n\", $0",
                "print length($0)", "print toupper($0)", "gsub(/x/, \"y\"); print",
                "print substr($0, 1, 1)", "s = s $0; print s"]
N_TWINS = 200


def _sed_twin(rng: random.Random) -> str:
    script = (rng.choice([b for b in SED_BEFORE if "#" not in b]) + rng.choice(SED_ADDRESSES)
              + rng.choice(SED_HARMLESS))
    spelling = rng.choice(["{s}", "-n {s}", "-e {s}", "--expr={s}", "-n -e p -e {s}",
                           "-E {s}", "--quiet {s}"])
    return "sed " + spelling.format(s=shlex.quote(script)) + " f"


def _awk_twin(rng: random.Random) -> str:
    program = rng.choice(AWK_BEFORE) + rng.choice(AWK_HARMLESS)
    block = rng.choice(["{{{p}}}", "NR == 1 {{{p}}}", "/x/ {{{p}}}", "END {{{p}}}"])
    return "awk " + shlex.quote(block.format(p=program)) + " f"


def generated_twins(n: int = N_TWINS, seed: int = SEED) -> list[str]:
    rng = random.Random(seed + 26)
    seen: dict[str, None] = {}
    while len(seen) < n:
        command = rng.choice([_sed_twin, _awk_twin])(rng)
        wrappers = rng.sample(EXTERNAL_WRAPPERS, k=rng.choice([0, 0, 1]))
        seen.setdefault(" ".join([*wrappers, command]), None)
    return list(seen)


@pytest.mark.timeout(300)
def test_harmless_sed_and_awk_scripts_are_allowed_and_run(tmp_path):
    """200 twins (seed 20261227): bash runs each unjudged in the scratch repository and it
    must succeed and do no damage (the oracle that they are harmless), and the judge must
    allow each in default mode, read-only, with no rule."""
    from tests.security.judge_cases import Scratch
    from wisp.permissions.engine import PermissionPolicy, evaluate
    from wisp.tools.bash import Bash

    scratch = Scratch(tmp_path)
    policy = PermissionPolicy(cwd=scratch.work, env=scratch.env())
    not_harmless, asked = [], []
    for command in generated_twins():
        done = subprocess.run(["/bin/bash", "-c", command], cwd=scratch.work,
                              env=scratch.env(), stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=10, check=False, text=True)
        damage = scratch.damage(done.stdout + done.stderr)
        scratch.reset()
        if damage or done.returncode != 0:
            not_harmless.append(f"  {command!r} rc={done.returncode} {damage} {done.stderr!r}")
        verdict = evaluate(Bash(), {"command": command}, policy).behavior
        if verdict != "allow":
            asked.append(f"  {command!r}: {verdict}")
    assert not not_harmless, "twins that are not harmless:\n" + "\n".join(not_harmless[:20])
    assert not asked, f"{len(asked)} harmless twins not allowed:\n" + "\n".join(asked[:40])
