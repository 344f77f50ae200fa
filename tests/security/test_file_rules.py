"""Issue 9, part 5: file rules cover the file, not the tool. An `Edit(./secret/**)` deny
holds against every tool and path spelling that would change the folder, a
`Read(./secret/**)` deny against every tool that would reveal it, and output redirection
does not ride on an allow rule for the command."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.security.conftest import Once
from tests.security.harness import Call, Session, Workspace, bash, run_one, run_session, snapshot

ORIGINAL = "original secret content\n"
SECRET_TOKEN = "hunter2-9f3a6c"
SECRET_LINE = f"SECRETLINE={SECRET_TOKEN}"
PUBLIC_LINE = "SECRETLINE=public-value"


def secret_workspace(root: Path) -> Workspace:
    ws = Workspace.create(root)
    (ws.cwd / "secret").mkdir()
    (ws.cwd / "secret" / "x").write_text(ORIGINAL)
    (ws.cwd / "sub").mkdir()
    (ws.cwd / "a").write_text("a\n")
    os.symlink("secret", ws.cwd / "link")
    return ws


# --- Edit(./secret/**): no tool, no spelling changes the folder -------------------------

EDIT_SETUP = ("--disallowedTools", "Edit(./secret/**)",
              "--allowedTools", "Write", "--allowedTools", "Bash")


def edit_calls(ws: Workspace) -> list[Call]:
    def write(case: str, path: str) -> Call:
        return Call(case, "Write", {"file_path": path, "content": "pwned\n"})

    return [
        write("Write-absolute", str(ws.cwd / "secret" / "x")),
        write("Write-dotdot", "sub/../secret/x"),
        write("Write-symlinked-folder", str(ws.cwd / "link" / "x")),
        write("Write-new-file-via-symlink", str(ws.cwd / "link" / "new.txt")),
        bash("echo-redirect", "echo y > secret/x"),
        bash("tee", "tee secret/x"),
        bash("cp", "cp a secret/x"),
        bash("mv", "mv a secret/x"),
        bash("sed-i", "sed -i s/a/b/ secret/x"),
        bash("touch", "touch secret/new"),
        bash("rm", "rm secret/x"),
        bash("ln-s", "ln -s a secret/l"),
        bash("dd", "dd of=secret/x"),
        bash("truncate", "truncate -s0 secret/x"),
        bash("chmod", "chmod 000 secret/x"),
    ]


EDIT_CASES = [c.case for c in edit_calls(Workspace(Path("/"), Path("/"), Path("/")))]


def edit_session(root: Path) -> Session:
    ws = secret_workspace(root)
    (ws.cwd / "secret" / "x").chmod(0o644)
    baseline = snapshot(ws.cwd / "secret")

    def probe(_call: Call) -> bool:
        unchanged = snapshot(ws.cwd / "secret") == baseline
        for entry in (ws.cwd / "secret").iterdir():  # put everything back
            entry.unlink()
        (ws.cwd / "secret" / "x").write_text(ORIGINAL)
        (ws.cwd / "secret" / "x").chmod(0o644)
        (ws.cwd / "a").write_text("a\n")
        return unchanged

    return run_session(ws, edit_calls(ws), *EDIT_SETUP, probe=probe)


@pytest.mark.timeout(90)
@pytest.mark.parametrize("case", EDIT_CASES)
def test_edit_deny_holds_for_every_tool_and_spelling(once: Once, case):
    session = once("edit-deny", edit_session)
    outcome = session[case]
    assert outcome.result is not None, f"the call never ran\n{session}"
    assert outcome.observed is True, f"secret/ changed\n{outcome}"
    assert outcome.denied(), outcome


def test_without_the_deny_the_same_setup_writes(tmp_path):
    """The control for the table above: the allow rules alone do let the write through."""
    ws = secret_workspace(tmp_path)
    session = run_session(ws, [Call("Write", "Write", {"file_path": str(ws.cwd / "secret/x"),
                                                       "content": "pwned\n"}),
                               bash("touch", "touch secret/new")],
                          "--allowedTools", "Write", "--allowedTools", "Bash")
    assert (ws.cwd / "secret" / "x").read_text() == "pwned\n", session["Write"]
    assert (ws.cwd / "secret" / "new").exists(), session["touch"]


# --- Read(./secret/**): nothing reveals the folder --------------------------------------

READ_SETUP = ("--disallowedTools", "Read(./secret/**)",
              "--allowedTools", "Bash(cat:*)", "--allowedTools", "Bash(grep:*)")


def read_workspace(root: Path) -> Workspace:
    ws = secret_workspace(root)
    (ws.cwd / "secret" / "x").write_text(SECRET_LINE + "\n")
    (ws.cwd / "public.txt").write_text(PUBLIC_LINE + "\n")
    return ws


def read_calls(ws: Workspace) -> list[Call]:
    return [
        Call("Read", "Read", {"file_path": str(ws.cwd / "secret" / "x")}),
        *(Call(f"Grep-{mode}", "Grep", {"pattern": "SECRETLINE", "path": ".",
                                        "output_mode": mode})
          for mode in ("files_with_matches", "content", "count")),
        Call("Glob", "Glob", {"pattern": "**/*", "path": "."}),
        bash("cat", "cat secret/x"),
        bash("grep-r", "grep -r SECRETLINE ."),
        bash("head", "head secret/x"),
        bash("sed-n", "sed -n 1p secret/x"),
    ]


def read_session(root: Path) -> Session:
    ws = read_workspace(root)
    return run_session(ws, read_calls(ws), *READ_SETUP)


READ_CASES = [c.case for c in read_calls(Workspace(Path("/"), Path("/"), Path("/")))]
SEARCHES = {"Grep-files_with_matches", "Grep-content", "Grep-count", "Glob", "grep-r"}


@pytest.mark.timeout(90)
@pytest.mark.parametrize("case", READ_CASES)
def test_read_deny_holds_for_every_tool(once: Once, case):
    session = once("read-deny", read_session)
    outcome = session[case]
    assert outcome.result is not None, f"the call never ran\n{session}"
    assert SECRET_TOKEN not in outcome.text, outcome
    if case in SEARCHES:  # a search may run, but must not list the denied file
        assert "secret/x" not in outcome.text, outcome
    else:
        assert outcome.denied(), outcome


@pytest.mark.timeout(90)
def test_the_secret_never_reaches_the_model(once: Once):
    session = once("read-deny", read_session)
    assert SECRET_TOKEN not in session.received(), session


# --- output redirection is a write of its own -------------------------------------------

def test_redirection_does_not_ride_on_an_echo_allow_rule(tmp_path):
    ws = Workspace.create(tmp_path)
    pwned = ws.outside / "pwned"
    session = run_session(ws, [bash("redirect", f"echo hacked > {pwned}"),
                               bash("plain", "echo hi")],
                          "--allowedTools", "Bash(echo:*)")
    assert not pwned.exists(), session["redirect"]
    assert session["redirect"].denied(), session["redirect"]
    assert not session["plain"].is_error and "hi" in session["plain"].text, session["plain"]


def test_one_call_write_through_a_symlink_is_denied(tmp_path):
    """A single-call session, nothing batched: the symlinked folder case on its own."""
    ws = secret_workspace(tmp_path)
    session = run_one(ws, Call("link", "Write", {"file_path": str(ws.cwd / "link" / "x"),
                                                 "content": "pwned\n"}), *EDIT_SETUP)
    assert (ws.cwd / "secret" / "x").read_text() == ORIGINAL, session.outcome
    assert session.outcome.denied(), session.outcome


# --- beyond the list: programs that run a command or code the analysis cannot see --
# A deny on the file must still hold: fail closed means asking (so denying in -p), since
# the rule cannot be checked against what these run.

HIDDEN_RUNNERS = [
    ("script-c", "script -qc 'rm f' /dev/null"),
    ("awk-system", "awk 'BEGIN{system(\"rm f\")}'"),
    ("sed-e", "sed -n '1e rm f' a"),
    ("perl-e", "perl -e 'unlink \"f\"'"),
    ("python-c", "python3 -c 'import os; os.remove(\"f\")'"),
    ("tar-checkpoint-exec", "tar -cf /dev/null a --checkpoint=1 --checkpoint-action=exec='rm f'"),
]


def runner_workspace(root: Path) -> Workspace:
    ws = Workspace.create(root)
    (ws.cwd / "f").write_text("keep\n")
    (ws.cwd / "a").write_text("a\n")
    return ws


def hidden_runner_session(root: Path) -> Session:
    ws = runner_workspace(root)

    def survived(_call: Call) -> bool:
        alive = (ws.cwd / "f").exists()
        (ws.cwd / "f").write_text("keep\n")
        return alive

    return run_session(ws, [bash(case, command) for case, command in HIDDEN_RUNNERS],
                       "--disallowedTools", "Edit(./f)", "--allowedTools", "Bash",
                       probe=survived)


@pytest.mark.timeout(90)
@pytest.mark.parametrize(("case", "command"), HIDDEN_RUNNERS, ids=[c for c, _ in HIDDEN_RUNNERS])
def test_edit_deny_holds_against_hidden_command_runners(once: Once, case, command):
    session = once("hidden-runners", hidden_runner_session)
    outcome = session[case]
    assert outcome.result is not None, f"the call never ran\n{session}"
    assert outcome.observed is True, outcome
    assert outcome.denied(), outcome


def test_the_hidden_runners_really_delete_when_run_by_bash(tmp_path):
    failures = []
    for case, command in HIDDEN_RUNNERS:
        ws = runner_workspace(tmp_path / case)
        subprocess.run(["/bin/bash", "-c", command], cwd=ws.cwd, timeout=10, check=False,
                       stdin=subprocess.DEVNULL, capture_output=True)
        if (ws.cwd / "f").exists():
            failures.append(case)
    assert failures == [], f"these do not delete f when run: {failures}"
