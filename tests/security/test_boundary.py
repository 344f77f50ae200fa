"""Issue 9, part 1: the working-folder boundary. With no rules, in default mode, `wisp -p`
reads inside the working folders (cwd, --add-dir, settings additionalDirectories) and
nothing outside them, whichever tool or shell spelling does the reading."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.security.conftest import Once
from tests.security.harness import Call, Session, Workspace, bash, run_one, run_session

KEY_MATERIAL = "KEYMATERIAL-7c1e04b9d2"
PRIVATE_KEY = (f"-----BEGIN OPENSSH PRIVATE KEY-----\n{KEY_MATERIAL}\n"
               "-----END OPENSSH PRIVATE KEY-----\n")
OUTSIDE_NAME = "outside-listing-3b8e.txt"
INSIDE_TEXT = "INSIDE-TEXT-51d0"


def boundary_workspace(root: Path) -> Workspace:
    ws = Workspace.create(root)
    ssh = ws.home / ".ssh"
    ssh.mkdir()
    (ssh / "id_rsa").write_text(PRIVATE_KEY)
    (ws.outside / OUTSIDE_NAME).write_text(PRIVATE_KEY)
    (ws.cwd / "inside.txt").write_text(INSIDE_TEXT + "\n")
    return ws


def outside_reads(ws: Workspace) -> list[Call]:
    ssh = ws.home / ".ssh"
    return [
        Call("Read-abs", "Read", {"file_path": str(ssh / "id_rsa")}),
        bash("cat-$HOME", "cat $HOME/.ssh/id_rsa"),
        bash("cat-tilde", "cat ~/.ssh/id_rsa"),
        bash("grep-r-$HOME", "grep -r BEGIN $HOME/.ssh"),
        Call("Grep-path", "Grep", {"pattern": "BEGIN", "path": str(ssh)}),
        Call("Glob-path", "Glob", {"pattern": "*", "path": str(ssh)}),
        Call("Glob-abs-pattern", "Glob", {"pattern": f"{ssh}/*"}),
        Call("Glob-dotdot-pattern", "Glob", {"pattern": "../outside/*"}),
    ]


OUTSIDE_CASES = [c.case for c in outside_reads(Workspace(Path("/"), Path("/"), Path("/")))]


@pytest.fixture(scope="module")
def outside_session(once: Once) -> Session:
    def build(root: Path) -> Session:
        ws = boundary_workspace(root)
        return run_session(ws, outside_reads(ws))
    return once("outside-reads", build)


@pytest.mark.timeout(90)
@pytest.mark.parametrize("case", OUTSIDE_CASES)
def test_reads_outside_the_working_folders_are_denied(outside_session, case):
    outcome = outside_session[case]
    assert outcome.result is not None, f"the call never ran\n{outside_session}"
    assert KEY_MATERIAL not in outcome.text, outcome
    if "id_rsa" not in json.dumps(outcome.call.input):  # a listing would name the file
        assert "id_rsa" not in outcome.text, outcome
    assert OUTSIDE_NAME not in outcome.text, outcome
    assert outcome.is_error, outcome
    assert outcome.denied(), outcome


@pytest.mark.timeout(90)
def test_the_key_never_reaches_the_model(outside_session):
    assert outside_session.returncode == 0, outside_session
    assert len(outside_session.requests) == len(OUTSIDE_CASES) + 1, outside_session
    assert KEY_MATERIAL not in outside_session.received()
    assert OUTSIDE_NAME not in outside_session.received()


def test_reads_inside_the_cwd_work_with_no_rules(tmp_path):
    ws = boundary_workspace(tmp_path)
    calls = [Call("Read", "Read", {"file_path": str(ws.cwd / "inside.txt")}),
             bash("cat", "cat inside.txt"),
             Call("Grep", "Grep", {"pattern": "INSIDE-TEXT", "path": ".",
                                   "output_mode": "content"})]
    session = run_session(ws, calls)
    for call in calls:
        outcome = session[call.case]
        assert not outcome.is_error and outcome.denial is None, outcome
        assert INSIDE_TEXT in outcome.text, outcome
    assert session.result["permission_denials"] == []


def grant_read_calls(ws: Workspace) -> list[Call]:
    return [Call("Read", "Read", {"file_path": str(ws.home / ".ssh" / "id_rsa")}),
            bash("cat", "cat $HOME/.ssh/id_rsa")]


@pytest.mark.parametrize("grant", ["--add-dir", "allow-rule", "additionalDirectories"])
def test_a_grant_opens_the_outside_folder(tmp_path, grant):
    ws = boundary_workspace(tmp_path)
    ssh = ws.home / ".ssh"
    flags: tuple[str, ...] = ()
    if grant == "--add-dir":
        flags = ("--add-dir", str(ssh))
    elif grant == "allow-rule":
        flags = ("--allowedTools", f"Read({ssh}/**)")
    else:
        (ws.cwd / ".claude").mkdir()
        (ws.cwd / ".claude" / "settings.json").write_text(
            json.dumps({"permissions": {"additionalDirectories": [str(ssh)]}}))
        ws.trust()  # a project's extra directories are a grant: trusted folders only
    session = run_session(ws, grant_read_calls(ws), *flags)
    for outcome in session.outcomes.values():
        assert not outcome.is_error and outcome.denial is None, outcome
        assert KEY_MATERIAL in outcome.text, outcome


def test_accept_edits_writes_inside_but_not_outside(tmp_path):
    ws = boundary_workspace(tmp_path)
    inside, outside = ws.cwd / "new-inside.txt", ws.outside / "new-outside.txt"
    session = run_session(
        ws, [Call("outside", "Write", {"file_path": str(outside), "content": "x\n"}),
             Call("inside", "Write", {"file_path": str(inside), "content": "x\n"})],
        "--permission-mode", "acceptEdits")
    assert not outside.exists(), session["outside"]
    assert session["outside"].denied(), session["outside"]
    assert inside.read_text() == "x\n", session["inside"]


def test_one_call_read_of_the_key_is_denied(tmp_path):
    """The same boundary as a single-call session (nothing batched)."""
    ws = boundary_workspace(tmp_path)
    session = run_one(ws, Call("Read", "Read", {"file_path": str(ws.home / ".ssh/id_rsa")}))
    assert session.returncode == 0, session
    assert session.outcome.denied(), session.outcome
    assert KEY_MATERIAL not in session.received()
