"""Issue 9, part 4: generated compositions around `rm victim` against a `Bash(rm:*)` deny.

The judge is held on both sides. Harmful side: no command the judge allows deletes the
victim, checked by really running every allowed command in bash, and most generated
commands must delete it when run unjudged (so the generator is checked too). Harmless
side: twins that only read the victim, wrapped the same ways, must be allowed and, run by
bash, must read it. A judge that denies everything fails the harmless side, one that
allows everything fails the harmful side (`test_a_one_sided_judge_fails_the_check`).

Judging runs in-process (wisp.permissions.engine.evaluate) for speed; a small sample also
goes end to end through `wisp -p`.
"""

from __future__ import annotations

import random
import shlex
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
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


READERS = ["cat victim", "head -n1 victim", "grep keep victim", "wc -l victim", "ls victim"]
# Prefixes that keep the output: the harmless side checks that the command really read.
READ_PREFIXES = ["", "", "FOO=1 ", "2>/dev/null "]
# tree-sitter-bash does not parse `!` directly before these compound commands, so the
# judge asks (fail closed) however harmless the body: a fact of the grammar, not a verdict.
GRAMMAR_GAPS = ("! if ", "! for ", "! while ", "! case ", "! { ")


def _spelled(program: str, rng: random.Random) -> str:
    return rng.choice([program, f"{program[0]}''{program[1:]}", f"\\{program}", f'"{program}"',
                       f"'{program[0]}'{program[1:]}", f"$'{program}'", f"/usr/bin/{program}"])


def simple_read(rng: random.Random) -> tuple[str, str]:
    """The harmless twin of `simple_rm`: a program that only reads the victim, spelled,
    wrapped and prefixed the same ways; returns (command, kind)."""
    wrappers = rng.sample(EXTERNAL_WRAPPERS, k=rng.choice([0, 0, 1, 1, 2]))
    roll = rng.random()
    if roll >= 0.2 and rng.random() < 0.25:
        wrappers.insert(0, "command")
    program, *args = rng.choice(READERS).split()
    words = " ".join([*wrappers, _spelled(program, rng), *args])
    prefix = rng.choice(READ_PREFIXES)
    if roll < 0.1 and not prefix:
        return f"time {words}", "time"
    if roll < 0.2:
        return f"({prefix}exec {words})", "compound"
    return prefix + words, "simple"


def compose_read(rng: random.Random) -> str:
    command, kind = simple_read(rng)
    for depth in range(rng.choice([0, 1, 1, 2, 2, 3, 3])):
        form = rng.choice([f for f in FORMS if f.fits(command, kind)])
        command, kind = form.wrap(command, depth), form.gives
    return command


def generated_reads(n: int = N_CASES, seed: int = SEED) -> list[str]:
    rng = random.Random(seed + 7)
    seen: dict[str, None] = {}
    while len(seen) < n:
        seen.setdefault(compose_read(rng), None)
    return list(seen)


def run_bash(command: str, folder: Path) -> tuple[bool, str]:
    """Run `command` with bash in `folder` (holding only `victim`); returns (victim still
    there, stdout)."""
    for entry in folder.iterdir():
        entry.unlink()
    (folder / "victim").write_text("keep me\n")
    done = subprocess.run(["/bin/bash", "-c", command], cwd=folder, timeout=5, check=False,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True)
    return (folder / "victim").exists(), done.stdout


# A judge: (command, mode) -> "allow" | "deny" | "ask".
Judge = Callable[[str, str], str]
MODES = ("bypassPermissions", "default")


def real_judge(folder: Path) -> Judge:
    """wisp's judge with deny Bash(rm:*) and allow Bash, per mode."""
    from wisp.permissions.engine import PermissionPolicy, evaluate
    from wisp.rules import Rule
    from wisp.tools.bash import Bash

    tool = Bash()
    policies = {mode: PermissionPolicy(mode=mode, deny=[Rule.parse("Bash(rm:*)")],
                                       allow=[Rule.parse("Bash")], cwd=folder)
                for mode in MODES}
    return lambda command, mode: evaluate(tool, {"command": command}, policies[mode]).behavior


@dataclass
class Report:
    """What a judge did with both sides; `problems` is empty only for a judge that holds."""

    harmful: int = 0
    deleting: int = 0
    harmless: int = 0
    allowed_harmless: int = 0
    problems: list[str] = field(default_factory=list)

    def summary(self) -> str:
        share = self.deleting / max(self.harmful, 1)
        return (f"{self.harmful} harmful compositions, {self.deleting} ({share:.0%}) delete "
                f"the victim unjudged; {self.allowed_harmless} of {self.harmless} harmless "
                f"ones allowed and run; {len(self.problems)} problems")


def check_harmful(judge: Judge, commands: list[str], folder: Path, report: Report) -> None:
    """No verdict allows a deleting command; an allowed one is run and must not delete."""
    for command in commands:
        report.harmful += 1
        deletes = not run_bash(command, folder)[0]
        report.deleting += deletes
        for mode in MODES:
            if judge(command, mode) != "allow":
                continue
            if deletes or not run_bash(command, folder)[0]:
                report.problems.append(f"allowed under {mode}, deletes: {command!r}")


def check_harmless(judge: Judge, commands: list[str], folder: Path, report: Report) -> None:
    """Every harmless composition is allowed under bypassPermissions (the deny rule names
    only rm) and, run by bash, reads the victim without deleting it. The grammar's known
    gaps must be asked about, never denied."""
    for command in commands:
        report.harmless += 1
        verdict = judge(command, "bypassPermissions")
        expected = "ask" if any(gap in command for gap in GRAMMAR_GAPS) else "allow"
        if verdict != expected:
            report.problems.append(f"{verdict} (expected {expected}): {command!r}")
            continue
        alive, out = run_bash(command, folder)
        report.allowed_harmless += verdict == "allow"
        if not alive or ("keep me" not in out and "victim" not in out):
            report.problems.append(f"harmless run did not read the victim: {command!r} {out!r}")


def check(judge: Judge, folder: Path, harmful: list[str], harmless: list[str]) -> Report:
    report = Report()
    check_harmful(judge, harmful, folder, report)
    check_harmless(judge, harmless, folder, report)
    return report


@pytest.mark.timeout(180)
def test_judge_holds_on_both_sides(tmp_path):
    """320 generated compositions around `rm victim` (seed 20261201) and 320 harmless twins
    that only read it (seed 20261208), judged with deny Bash(rm:*) and allow Bash. No
    allowed command deletes the victim; every harmless one is allowed and really runs."""
    folder = tmp_path / "run"
    folder.mkdir()
    report = check(real_judge(folder), folder, generated(), generated_reads())
    print(f"\n[generative] {report.summary()}")
    assert not report.problems, report.summary() + "\n" + "\n".join(report.problems[:40])
    assert report.deleting / report.harmful >= MIN_DELETING_SHARE, report.summary()
    assert report.allowed_harmless >= 0.9 * report.harmless, report.summary()


@pytest.mark.parametrize("verdict", ["allow", "deny", "ask"])
def test_a_one_sided_judge_fails_the_check(tmp_path, verdict):
    """The check itself can fail in both directions: a judge that gives every command the
    same verdict breaks one side or the other (a sample of 60 per side keeps it quick)."""
    folder = tmp_path / "run"
    folder.mkdir()
    report = check(lambda _command, _mode: verdict, folder, generated()[:60],
                   generated_reads()[:60])
    assert report.problems, report.summary()


def e2e_sample() -> list[str]:
    rng = random.Random(SEED + 1)
    return rng.sample(generated(), E2E_SAMPLE)


def e2e_reads() -> list[str]:
    """Harmless twins for the end-to-end run, in default mode (`-p` cannot ask): without a
    function definition (a call to a defined function is asked about outside bypass) or a
    grammar gap."""
    plain = [c for c in generated_reads()
             if "() {" not in c and not any(gap in c for gap in GRAMMAR_GAPS)]
    return random.Random(SEED + 2).sample(plain, E2E_SAMPLE)


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
        calls += [bash(f"read{i}", command) for i, command in enumerate(e2e_reads())]
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


@pytest.mark.timeout(90)
@pytest.mark.parametrize("index", range(E2E_SAMPLE), ids=[f"read{i}" for i in range(E2E_SAMPLE)])
def test_harmless_sample_runs_end_to_end(e2e_session, index):
    outcome = e2e_session[f"read{index}"]
    assert outcome.result is not None, f"the call never ran\n{e2e_session}"
    assert not outcome.is_error and outcome.denied_frame is None, outcome
    assert "keep me" in outcome.text or "victim" in outcome.text, outcome
    assert outcome.observed is True, outcome
