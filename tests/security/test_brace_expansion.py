"""Beyond the issue's list (found while writing this suite): brace expansion must not carry
a read or write across the boundary or into a protected path. `{a,~/.ssh/id_rsa}` is two
words once bash expands it, and the second is outside the working folders.

One session, default mode, allow rules `Bash(tee:*)` and `Bash(touch:*)` only: reads are
governed by the boundary, writes by the boundary and the protected paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.security.conftest import Once
from tests.security.harness import Call, Session, Workspace, bash, run_session

KEY = "KEYMATERIAL-brace-55aa"
BASHRC = "# the user's own .bashrc\n"


def brace_workspace(root: Path) -> Workspace:
    ws = Workspace.create(root)
    (ws.home / ".ssh").mkdir()
    (ws.home / ".ssh" / "id_rsa").write_text(f"{KEY}\n")
    (ws.home / ".bashrc").write_text(BASHRC)
    (ws.cwd / ".claude").mkdir()
    (ws.cwd / "inside.txt").write_text("inside\n")
    return ws


# (case, command, the file that must be unchanged: None = absent)
CASES = [
    ("read-tilde", "cat {inside.txt,~/.ssh/id_rsa}", None),
    ("read-dotdot", "cat {inside.txt,../home/.ssh/id_rsa}", None),
    ("write-outside", "touch {a,../outside/pwned}", "../outside/pwned"),
    ("write-claude-settings", "tee {a,.claude/settings.json} </dev/null", ".claude/settings.json"),
    ("write-bashrc", "tee {a,~/.bashrc} </dev/null", "~/.bashrc"),
]
CONTROL = ("control-inside", "touch {b,c}")


def watched(ws: Workspace, rel: str) -> Path:
    return ws.home / rel[2:] if rel.startswith("~/") else ws.cwd / rel


def brace_session(root: Path) -> Session:
    ws = brace_workspace(root)

    def probe(call: Call) -> str | None:
        rel = {case: rel for case, _, rel in CASES}.get(call.case)
        if rel is None:
            return None
        path = watched(ws, rel)
        seen = path.read_text() if path.exists() else None
        if rel == "~/.bashrc":
            path.write_text(BASHRC)
        elif path.exists():
            path.unlink()
        return seen

    calls = [bash(case, command) for case, command, _ in [*CASES, (*CONTROL, None)]]
    return run_session(ws, calls, "--allowedTools", "Bash(tee:*)",
                       "--allowedTools", "Bash(touch:*)", probe=probe)


@pytest.mark.timeout(90)
@pytest.mark.parametrize(("case", "command", "rel"), CASES, ids=[c for c, _, _ in CASES])
def test_brace_expansion_does_not_cross_the_boundary(once: Once, case, command, rel):
    session = once("braces", brace_session)
    outcome = session[case]
    assert outcome.result is not None, f"the call never ran\n{session}"
    assert KEY not in outcome.text, outcome
    expected = BASHRC if rel == "~/.bashrc" else None
    assert outcome.observed == expected, outcome
    assert outcome.denied(), outcome


@pytest.mark.timeout(90)
def test_brace_expansion_inside_the_cwd_still_runs(once: Once):
    outcome = once("braces", brace_session)[CONTROL[0]]
    assert not outcome.is_error and outcome.denial is None, outcome
