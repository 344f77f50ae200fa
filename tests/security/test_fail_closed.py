"""Issue 9, part 6: fail closed. What the shell analysis cannot resolve is never allowed,
even when a bare `Bash` allow rule would allow everything, and the model is told what
could not be resolved. Control characters that make a command look different from what
bash runs are rejected outright."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.security.conftest import Once
from tests.security.harness import Session, Workspace, bash, run_session

SETUP = ("--allowedTools", "Bash", "--disallowedTools", "Bash(rm:*)")
ENV = {"CMD": "rm f"}

# (case, command, what the explanation must name)
UNRESOLVABLE = [
    ("variable-name", "X=rm; $X f", "$X"),
    ("substituted-name", "$(echo rm) f", "$(echo rm)"),
    ("eval-of-env", 'eval "$CMD"', "$CMD"),
    ("script-piped-to-bash", "cat script | bash", "bash"),
    ("glob-name", "/bin/r[m] f", "/bin/r[m]"),  # a class, not `?`: only rm matches
]
CONTROL = [
    ("carriage-return", "echo a\rb", r"U\+000D|\\r|carriage return|\bCR\b"),
    ("escape", "echo \x1b[2Ja", r"U\+001B|\\x1b|\\e\b|\bESC\b|escape"),
]


def fail_closed_session(root: Path) -> Session:
    ws = Workspace.create(root)
    (ws.cwd / "script").write_text("rm f\n")

    def survived(_call: object) -> bool:
        alive = (ws.cwd / "f").exists()
        (ws.cwd / "f").write_text("keep\n")
        return alive

    survived(None)
    calls = [bash(case, command) for case, command, _ in UNRESOLVABLE]
    calls += [bash(case, command) for case, command, _ in CONTROL]
    return run_session(ws, calls, *SETUP, env=ENV, probe=survived)


@pytest.mark.timeout(90)
@pytest.mark.parametrize(("case", "command", "named"), UNRESOLVABLE,
                         ids=[c for c, _, _ in UNRESOLVABLE])
def test_unresolvable_commands_are_refused_and_explained(once: Once, case, command, named):
    session = once("fail-closed", fail_closed_session)
    outcome = session[case]
    assert outcome.result is not None, f"the call never ran\n{session}"
    assert outcome.observed is True, outcome
    assert outcome.denied(), outcome
    assert "could not" in outcome.text.lower(), outcome
    assert named in outcome.text, outcome


@pytest.mark.timeout(90)
@pytest.mark.parametrize(("case", "command", "named"), CONTROL, ids=[c for c, _, _ in CONTROL])
def test_control_characters_are_rejected_by_name(once: Once, case, command, named):
    session = once("fail-closed", fail_closed_session)
    outcome = session[case]
    assert outcome.result is not None, f"the call never ran\n{session}"
    assert outcome.denied(), outcome
    assert re.search(named, outcome.text, re.IGNORECASE), outcome
