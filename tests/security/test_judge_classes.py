"""Issue 25, classes 1-5: the shell judge allows a command only when every word of it has a
known, harmless meaning. Each case is shown to do damage when bash runs it unjudged (the
oracle), then judged in-process under its rules (never allowed), and a sample goes end to
end through `wisp -p`: denied, reported in permission_denials, and nothing changed on disk.
The harmless side is held too: an everyday corpus stays allowed without a prompt."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from tests.security.conftest import Once
from tests.security.harness import Call, Session, Workspace, bash, run_session
from tests.security.judge_cases import (
    ALL,
    CLASSES,
    EVERYDAY,
    READS_WITHOUT_PRINTING,
    SECRET,
    Case,
    Scratch,
)

IDS = [c.case for c in ALL]


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Scratch:
    return Scratch(tmp_path_factory.mktemp("judge25"))


def judge(scratch: Scratch, command: str, rules: tuple[str, ...] = (), mode: str = "default", *,
          tool: str = "Bash", tool_input: dict[str, str] | None = None) -> str:
    from wisp.permissions.engine import PermissionPolicy, evaluate
    from wisp.permissions.modes import PermissionMode
    from wisp.rules import Rule
    from wisp.tools.bash import Bash
    from wisp.tools.read import Read
    from wisp.tools.write import Write

    tools = {"Bash": Bash(), "Read": Read(), "Write": Write()}
    mode_name: PermissionMode = mode  # type: ignore[assignment]
    policy = PermissionPolicy(mode=mode_name, allow=[Rule.parse(r) for r in rules],
                              cwd=scratch.work, env=scratch.env())
    return evaluate(tools[tool], tool_input or {"command": command}, policy).behavior


def test_every_case_does_damage_when_run_unjudged(scratch: Scratch) -> None:
    """Guards the table: each command really runs code, writes, or reads outside."""
    harmless = [c.case for c in ALL if not scratch.run(c.command)]
    assert harmless == [], f"these cases did nothing when run by bash: {harmless}"
    assert scratch.state() == scratch.baseline


@pytest.mark.parametrize("case", ALL, ids=IDS)
def test_the_judge_does_not_allow_it(scratch: Scratch, case: Case) -> None:
    verdict = judge(scratch, case.command, case.rules)
    assert verdict != "allow", case


@pytest.mark.parametrize("command", READS_WITHOUT_PRINTING)
def test_files_a_list_names_are_unknown_reads(scratch: Scratch, command: str) -> None:
    assert judge(scratch, command) != "allow"
    assert judge(scratch, command, ("Bash(wc:*)", "Bash(du:*)", "Bash(printf:*)")) != "allow"


@pytest.mark.parametrize("command", EVERYDAY)
def test_everyday_commands_stay_read_only(scratch: Scratch, command: str) -> None:
    assert judge(scratch, command) == "allow", command


@pytest.mark.parametrize(("command", "rules", "mode"), [
    ("LC_ALL=C git log -1", ("Bash(git:*)",), "default"),
    ("GIT_PAGER=cat git log -1", ("Bash(GIT_PAGER=cat git log:*)",), "default"),
    ("TZ=UTC date", (), "default"),
    ("mv f g", ("Bash(mv:*)",), "default"),
    ("echo x > v.txt", ("Bash(echo:*)", "Edit(./v.txt)"), "default"),
    ("echo x > v.txt", ("Bash(echo:*)",), "acceptEdits"),
    ("git log -1 > log.txt", ("Bash(git:*)",), "acceptEdits"),
    ("cat ../outside/secret", ("Read(../outside/**)",), "default"),
    ("git commit -m x", ("Bash(git commit:*)",), "default"),
])
def test_what_rules_and_modes_still_grant(scratch: Scratch, command: str,
                                          rules: tuple[str, ...], mode: str) -> None:
    assert judge(scratch, command, rules, mode) == "allow"


def test_bare_file_rules_stop_at_the_working_folders(scratch: Scratch) -> None:
    outside = str(scratch.outside / "secret")
    inside = str(scratch.work / "f")
    assert judge(scratch, "", ("Read",), tool="Read", tool_input={"file_path": inside}) \
        == "allow"
    assert judge(scratch, "", ("Read",), tool="Read", tool_input={"file_path": outside}) \
        != "allow"
    written = {"file_path": str(scratch.outside / "new.txt"), "content": "x"}
    assert judge(scratch, "", ("Write",), tool="Write", tool_input=written) != "allow"
    assert judge(scratch, "", ("Read(//" + str(scratch.outside).lstrip("/") + "/**)",),
                 tool="Read", tool_input={"file_path": outside}) == "allow"


# -- end to end -------------------------------------------------------------------------

def e2e_sample() -> list[Case]:
    """Every case of the small classes, every third of the large ones."""
    picked: list[Case] = []
    for cases in CLASSES.values():
        step = 1 if len(cases) <= 12 else 3
        picked.extend(cases[::step])
    return picked


def _sessions() -> dict[tuple[str, ...], list[Case]]:
    by_rules: dict[tuple[str, ...], list[Case]] = defaultdict(list)
    for case in e2e_sample():
        by_rules[case.rules].append(case)
    return dict(by_rules)


SESSIONS = _sessions()
E2E = [(rules, case) for rules, cases in SESSIONS.items() for case in cases]


def _session(root: Path, rules: tuple[str, ...]) -> Session:
    ws = Workspace.create(root)
    scratch = Scratch(root)
    calls = [bash(case.case, case.command) for case in SESSIONS[rules]]

    def probe(_call: object) -> list[str]:
        found = scratch.damage()
        scratch.reset()
        return found

    flags = ("--allowedTools", ",".join(rules)) if rules else ()
    return run_session(ws, calls, *flags, probe=probe, timeout=150)


@pytest.mark.timeout(180)
@pytest.mark.parametrize(("rules", "case"), E2E, ids=[c.case for _, c in E2E])
def test_denied_end_to_end(once: Once, rules: tuple[str, ...], case: Case) -> None:
    session = once(f"judge25-{json.dumps(rules)}", lambda root: _session(root, rules))
    outcome = session[case.case]
    assert outcome.result is not None, f"the call never ran\n{session}"
    assert outcome.observed == [], outcome
    assert outcome.denied(), outcome


@pytest.mark.timeout(120)
def test_bare_file_rules_stop_at_the_working_folders_end_to_end(tmp_path: Path) -> None:
    """`--allowedTools Read,Write`: the file tools run inside the working folder, and are
    refused outside it (the model never sees the secret, nothing is written there)."""
    ws = Workspace.create(tmp_path)
    scratch = Scratch(tmp_path)
    calls = [
        Call("read-inside", "Read", {"file_path": str(scratch.work / "f")}),
        Call("read-outside", "Read", {"file_path": str(scratch.outside / "secret")}),
        Call("write-outside", "Write", {"file_path": str(scratch.outside / "new.txt"),
                                        "content": "x"}),
    ]
    session = run_session(ws, calls, "--allowedTools", "Read,Write")
    assert not session["read-inside"].is_error, session["read-inside"]
    assert session["read-outside"].denied(), session["read-outside"]
    assert session["write-outside"].denied(), session["write-outside"]
    assert SECRET not in session.received()
    assert not (scratch.outside / "new.txt").exists()
