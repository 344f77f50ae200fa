"""Issue 9, part 3: a `Bash(rm:*)` deny rule holds however `rm` is spelled, wrapped,
quoted, nested or hidden, both when every other command is allowed (`--allowedTools Bash`)
and in default mode. Each spelling runs in a cwd holding `f` (the file it targets) and
`victim`; both must survive, and the model must get a reported denial.

All spellings of one setup run in one wisp session (a probe between calls checks and
restores the files), so the table costs two processes, not eighty."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.security.conftest import SANDBOX, Once
from tests.security.harness import Session, Workspace, bash, run_one, run_session

SPELLINGS = [
    ("abs-path", "/bin/rm f"),
    ("env", "env rm f"),
    ("command", "command rm f"),
    ("command-p", "command -p rm f"),
    ("builtin-exec", "builtin exec rm f"),
    ("exec", "exec rm f"),
    ("nice", "nice rm f"),
    ("nohup", "nohup rm f"),
    ("time", "time rm f"),
    ("timeout", "timeout 5 rm f"),
    ("stdbuf", "stdbuf -o0 rm f"),
    ("setsid", "setsid -w rm f"),
    ("xargs", "echo f | xargs rm"),
    ("empty-quotes", "r''m f"),
    ("backslash", "\\rm f"),
    ("double-quoted", '"rm" f'),
    ("single-quoted", "'rm' f"),
    ("tab", "rm\tf"),
    ("variable", "X=rm; $X f"),
    ("assignment-prefix", "FOO=1 rm f"),
    ("redirect-prefix", "2>/dev/null rm f"),
    ("subshell", "(rm f)"),
    ("group", "{ rm f; }"),
    ("bang", "! rm f"),
    ("if", "if true; then rm f; fi"),
    ("for", "for i in 1; do rm f; done"),
    ("while", "while true; do rm f; break; done"),
    ("case", "case x in x) rm f;; esac"),
    ("function", "g() { rm f; }; g"),
    ("command-substitution", "echo $(rm f)"),
    ("backticks", "echo `rm f`"),
    ("bash-c", "bash -c 'rm f'"),
    ("sh-c", 'sh -c "rm f"'),
    ("eval", "eval 'rm f'"),
    ("find-exec", "find . -name f -exec rm {} \\;"),
    ("heredoc", "bash <<'EOF'\nrm f\nEOF"),
    ("herestring", "bash <<< 'rm f'"),
    ("pipe-to-sh", "echo rm f | sh"),
    ("glob-name", "/bin/r[m] f"),  # a class, not `?`: /bin/r? matches rg where ripgrep is
    # `!` before a compound command: found by the generative test (test_generative.py).
    ("bang-group", "! { rm f; }"),
    ("bang-if", "! if true; then rm f; fi"),
    ("bang-for", "! for i in 1; do rm f; done"),
    ("bang-while", "! while true; do rm f; break; done"),
]
# Not an rm: shows what each setup does with an ordinary writing command.
CONTROL = ("control-touch", "touch made.txt")
FIND_DELETE = ("find-delete", "find . -name f -delete")

ALLOW_ALL = ("--allowedTools", "Bash")
BYPASS = ("--permission-mode", "bypassPermissions")
SETUPS = {
    "allow-Bash": ("--disallowedTools", "Bash(rm:*)", *ALLOW_ALL),
    "default-mode": ("--disallowedTools", "Bash(rm:*)"),
    # Not in the list, but a deny rule must hold in bypassPermissions too.
    "bypass": ("--disallowedTools", "Bash(rm:*)", *BYPASS),
}
# find -delete removes files without running rm: an Edit deny on the file is what holds it.
FIND_SETUPS = {
    "allow-Bash": ("--disallowedTools", "Edit(./f)", *ALLOW_ALL),
    "default-mode": ("--disallowedTools", "Edit(./f)"),
}


def files_workspace(root: Path) -> Workspace:
    ws = Workspace.create(root)
    for name in ("f", "victim"):
        (ws.cwd / name).write_text(f"{name} must survive\n")
    return ws


def survivors(ws: Workspace) -> dict[str, bool]:
    """Which of the two files are still there; both are put back for the next call."""
    seen = {name: (ws.cwd / name).exists() for name in ("f", "victim")}
    for name in ("f", "victim"):
        (ws.cwd / name).write_text(f"{name} must survive\n")
    return seen


def spelling_session(root: Path, setup: str) -> Session:
    ws = files_workspace(root)
    calls = [bash(case, command) for case, command in [*SPELLINGS, CONTROL]]
    return run_session(ws, calls, *SETUPS[setup], probe=lambda _call: survivors(ws),
                       env=SANDBOX if setup == "bypass" else None)


BOTH_SURVIVE = {"f": True, "victim": True}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("setup", SETUPS)
@pytest.mark.parametrize(("case", "command"), SPELLINGS, ids=[c for c, _ in SPELLINGS])
def test_rm_deny_holds_for_every_spelling(once: Once, setup, case, command):
    session = once(f"spellings-{setup}", lambda root: spelling_session(root, setup))
    outcome = session[case]
    assert outcome.result is not None, f"the call never ran\n{session}"
    assert outcome.observed == BOTH_SURVIVE, outcome
    assert outcome.is_error, outcome
    assert outcome.denied(), outcome


@pytest.mark.timeout(120)
@pytest.mark.parametrize("setup", SETUPS)
def test_control_command_shows_each_setup(once: Once, setup):
    """Everything but rm runs under allow-Bash and bypass; default mode asks (denied)."""
    session = once(f"spellings-{setup}", lambda root: spelling_session(root, setup))
    outcome = session[CONTROL[0]]
    assert outcome.result is not None, f"the call never ran\n{session}"
    if setup == "default-mode":
        assert outcome.denied(), outcome
    else:
        assert not outcome.is_error and outcome.denial is None, outcome


@pytest.mark.parametrize("setup", FIND_SETUPS)
def test_find_delete_is_held_by_an_edit_deny(tmp_path, setup):
    ws = files_workspace(tmp_path)
    session = run_one(ws, bash(*FIND_DELETE), *FIND_SETUPS[setup])
    assert (ws.cwd / "f").exists(), session.outcome
    assert session.outcome.denied(), session.outcome


QUOTING_BUGS = [
    ("comment-quote-newline", "echo x #'\nrm v.txt"),
    ("ansi-c-escaped-quote", "echo $'\\'' ; rm v.txt #'"),
]


@pytest.mark.parametrize(("case", "command"), QUOTING_BUGS, ids=[c for c, _ in QUOTING_BUGS])
def test_an_echo_allow_rule_does_not_cover_a_hidden_rm(tmp_path, case, command):
    ws = Workspace.create(tmp_path)
    victim = ws.cwd / "v.txt"
    victim.write_text("keep\n")
    session = run_one(ws, bash(case, command), "--allowedTools", "Bash(echo:*)")
    assert victim.exists(), session.outcome
    assert session.outcome.denied(), session.outcome


def test_the_spelling_table_really_deletes_when_run_by_bash(tmp_path):
    """Guards the table itself: run unjudged by bash, every spelling deletes `f`, so a
    file that survives above survived because wisp refused the command."""
    failures = []
    for case, command in [*SPELLINGS, FIND_DELETE]:
        folder = tmp_path / case
        folder.mkdir()
        (folder / "f").write_text("x")
        subprocess.run(["/bin/bash", "-c", command], cwd=folder, timeout=5, check=False,
                       stdin=subprocess.DEVNULL, capture_output=True)
        if (folder / "f").exists():
            failures.append(case)
    assert failures == [], f"these spellings do not delete f when run: {failures}"
