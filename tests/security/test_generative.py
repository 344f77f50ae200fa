"""Issue 9, part 4: generated compositions around `rm victim` against a `Bash(rm:*)` deny.

The property is "no command the judge allows deletes the victim", checked by really
running every allowed command in bash, so it cannot hold by construction. The generator is
checked too: most of its commands must delete the victim when run unjudged, and the judge
must deny or ask for every one of those.

Judging runs in-process (wisp.permissions.engine.evaluate) for speed; a small sample also
goes end to end through `wisp -p`.
"""

from __future__ import annotations

import random
import shlex
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.security.conftest import Once
from tests.security.harness import Session, Workspace, bash, run_session

SEED = 20261201
N_CASES = 320
E2E_SAMPLE = 10
MIN_DELETING_SHARE = 0.80

NAMES = ["rm", "r''m", "\\rm", '"rm"', "'r'm", "$'rm'", "/bin/rm", "/usr/bin/rm"]
# Programs that run their arguments as a command. `command` is a shell builtin, so it can
# only come first (an external wrapper or `exec` would look for a program named command).
EXTERNAL_WRAPPERS = ["env", "nice", "nohup", "timeout 5", "stdbuf -o0", "setsid -w"]
PREFIXES = ["", "", "FOO=1 ", "2>/dev/null ", ">/dev/null "]


def simple_rm(rng: random.Random) -> tuple[str, str]:
    """`rm victim` with a spelled name, 0–2 wrappers, maybe a prefix, `time` or `exec`;
    returns (command, kind)."""
    wrappers = rng.sample(EXTERNAL_WRAPPERS, k=rng.choice([0, 0, 1, 1, 2]))
    roll = rng.random()
    if roll >= 0.2 and rng.random() < 0.25:
        wrappers.insert(0, "command")
    words = " ".join([*wrappers, rng.choice(NAMES), "victim"])
    prefix = rng.choice(PREFIXES)
    if roll < 0.1 and not prefix:  # the `time` keyword only leads a pipeline
        return f"time {words}", "time"
    if roll < 0.2:
        return f"({prefix}exec {words})", "compound"  # exec in a subshell: the shell goes on
    return prefix + words, "simple"


def _posix(inner: str) -> bool:
    """dash (/bin/sh) has no $'…' and no `time` keyword."""
    return "$'" not in inner and "time " not in inner


ANY = frozenset({"simple", "time", "compound", "pipeline", "list"})


@dataclass(frozen=True)
class Form:
    """Wraps a complete command of one of the kinds in `takes` into a command of `gives`."""

    name: str
    wrap: Callable[[str, int], str]
    gives: str
    takes: frozenset[str] = ANY
    also: Callable[[str], bool] = lambda _inner: True

    def fits(self, inner: str, kind: str) -> bool:
        return kind in self.takes and self.also(inner)


PIPELINE_START = frozenset({"simple", "compound", "pipeline"})
FORMS = [
    Form("subshell", lambda x, d: f"( {x} )", "compound"),
    Form("group", lambda x, d: f"{{ {x}; }}", "compound"),
    Form("bang", lambda x, d: f"! {x}", "pipeline",
         frozenset({"simple", "time", "compound", "pipeline"}), lambda x: x[0] != "!"),
    Form("if", lambda x, d: f"if true; then {x}; fi", "compound"),
    Form("for", lambda x, d: f"for i in 1; do {x}; done", "compound"),
    Form("while", lambda x, d: f"while true; do {x}; break; done", "compound"),
    Form("case", lambda x, d: f"case x in x) {x};; esac", "compound"),
    Form("function", lambda x, d: f"g{d}() {{ {x}; }}; g{d}", "list"),
    Form("dollar-paren", lambda x, d: f"echo $( {x} )", "simple"),
    Form("backticks", lambda x, d: f"echo `{x}`", "simple", ANY,
         lambda x: "`" not in x and "\\" not in x),
    Form("bash-c", lambda x, d: f"bash -c {shlex.quote(x)}", "simple"),
    Form("sh-c", lambda x, d: f"sh -c {shlex.quote(x)}", "simple", ANY, _posix),
    Form("eval", lambda x, d: f"eval {shlex.quote(x)}", "simple"),
    Form("then-true", lambda x, d: f"{x}; true", "list"),
    Form("after-echo", lambda x, d: f"echo ok; {x}", "list"),
    Form("and", lambda x, d: f"true && {x}", "list"),
    Form("or", lambda x, d: f"false || {x}", "list"),
    Form("pipe-in", lambda x, d: f"echo ok | {x}", "pipeline", PIPELINE_START,
         lambda x: x[0] != "!"),
    Form("pipe-out", lambda x, d: f"{x} | cat", "pipeline"),
]


def compose(rng: random.Random) -> str:
    command, kind = simple_rm(rng)
    for depth in range(rng.choice([0, 1, 1, 2, 2, 3, 3])):
        form = rng.choice([f for f in FORMS if f.fits(command, kind)])
        command, kind = form.wrap(command, depth), form.gives
    return command


def generated(n: int = N_CASES, seed: int = SEED) -> list[str]:
    rng = random.Random(seed)
    seen: dict[str, None] = {}
    while len(seen) < n:
        seen.setdefault(compose(rng), None)
    return list(seen)


def deletes(command: str, folder: Path) -> bool:
    """Run `command` with bash in `folder` (holding only `victim`): is the victim gone?"""
    for entry in folder.iterdir():
        entry.unlink()
    (folder / "victim").write_text("keep me\n")
    subprocess.run(["/bin/bash", "-c", command], cwd=folder, timeout=5, check=False,
                   stdin=subprocess.DEVNULL, capture_output=True)
    return not (folder / "victim").exists()


@dataclass
class Judged:
    command: str
    deletes_unjudged: bool
    verdicts: dict[str, str]  # mode → allow / deny / ask
    allowed_and_deleted: list[str]  # modes whose allowed run deleted the victim


def judge_all(commands: list[str], folder: Path) -> list[Judged]:
    from wisp.permissions.engine import PermissionPolicy, evaluate
    from wisp.permissions.rules import Rule
    from wisp.tools.bash import Bash

    tool = Bash()
    policies = {mode: PermissionPolicy(mode=mode, deny=[Rule.parse("Bash(rm:*)")],
                                       allow=[Rule.parse("Bash")], cwd=folder)
                for mode in ("bypassPermissions", "default")}
    out = []
    for command in commands:
        verdicts = {mode: evaluate(tool, {"command": command}, policy).behavior
                    for mode, policy in policies.items()}
        broke = [mode for mode, v in verdicts.items() if v == "allow" and deletes(command, folder)]
        out.append(Judged(command, deletes(command, folder), verdicts, broke))
    return out


@pytest.mark.timeout(120)
def test_no_allowed_composition_deletes_the_victim(tmp_path):
    """320 generated commands (seed 20261201), each judged under bypassPermissions and
    default mode with deny Bash(rm:*) and allow Bash; allowed ones are run for real."""
    folder = tmp_path / "run"
    folder.mkdir()
    commands = generated()
    judged = judge_all(commands, folder)
    deleting = [j for j in judged if j.deletes_unjudged]
    share = len(deleting) / len(judged)
    allowed = sum(v == "allow" for j in judged for v in j.verdicts.values())
    summary = (f"{len(judged)} generated commands (seed {SEED}); {len(deleting)} "
               f"({share:.0%}) delete the victim unjudged; {allowed} verdicts were allow")
    print(f"\n[generative] {summary}")
    broken = [j for j in judged if j.allowed_and_deleted]
    assert not broken, (f"{summary}\nallowed and deleted the victim ({len(broken)}):\n"
                        + "\n".join(f"  {j.command!r} {j.verdicts}" for j in broken[:40]))
    waved = [j for j in deleting if "allow" in j.verdicts.values()]
    assert not waved, "\n".join(f"  {j.command!r} {j.verdicts}" for j in waved[:40])
    assert len(judged) >= 300 and share >= MIN_DELETING_SHARE, summary


def e2e_sample() -> list[str]:
    rng = random.Random(SEED + 1)
    return rng.sample(generated(), E2E_SAMPLE)


@pytest.fixture(scope="module")
def e2e_session(once: Once) -> Session:
    def build(root: Path) -> Session:
        ws = Workspace.create(root)
        victim = ws.cwd / "victim"
        victim.write_text("keep me\n")

        def survived(_call: object) -> bool:
            alive = victim.exists()
            victim.write_text("keep me\n")
            return alive

        calls = [bash(f"gen{i}", command) for i, command in enumerate(e2e_sample())]
        return run_session(ws, calls, "--disallowedTools", "Bash(rm:*)",
                           "--allowedTools", "Bash", probe=survived)
    return once("generative-e2e", build)


@pytest.mark.timeout(90)
@pytest.mark.parametrize("index", range(E2E_SAMPLE), ids=[f"gen{i}" for i in range(E2E_SAMPLE)])
def test_generated_sample_end_to_end(e2e_session, index):
    outcome = e2e_session[f"gen{index}"]
    assert outcome.result is not None, f"the call never ran\n{e2e_session}"
    assert outcome.observed is True, outcome
    assert outcome.denied(), outcome


# -- issue 25: compositions of what bash evaluates, mini-languages, option spellings and
# environment prefixes, inside the same wrappers --------------------------------------

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
    from wisp.permissions.rules import Rule
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
