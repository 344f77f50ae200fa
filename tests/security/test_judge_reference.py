"""Issue 25, differential: the same cases run through the reference CLI (Claude Code
2.1.332, in .bench-cache/ or at $WISP_REFERENCE_CLI) and through wisp, in print mode
against the scripted server, each in a fresh scratch repository. Where the reference
refuses a command, wisp must refuse it too; every case that does damage must be refused
by wisp whatever the reference does (that half is test_judge_classes). Skipped when the
reference is not installed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.refrun import REFERENCE, Place, have_reference, print_run
from tests.security.judge_cases import ALL, EVERYDAY, Case, Scratch
from wisp.testing import ScriptedServer, reply

pytestmark = pytest.mark.skipif(not have_reference(),
                                reason=f"the reference CLI is not installed at {REFERENCE}")


def _run(which: str, root: Path, case: Case) -> tuple[bool, list[str]]:
    """Whether `which` refused the call (a permission denial), and the damage done."""
    scratch = Scratch(root)
    with ScriptedServer(reply.tool_use("Bash", {"command": case.command}, id="toolu_ref25"),
                        reply.text("done")) as server:
        place = Place(root / which, server, env={"HOME": str(scratch.home)})
        place.work = scratch.work
        flags = ("--allowedTools", ",".join(case.rules)) if case.rules else ()
        _, _, frames = print_run(which, place, "-p", "go", "--output-format", "stream-json",
                                 "--verbose", *flags)
    result: dict[str, Any] = next((f for f in frames if f.get("type") == "result"), {})
    denied = any(d.get("tool_use_id") == "toolu_ref25"
                 for d in result.get("permission_denials") or [])
    return denied, scratch.damage()


@pytest.mark.timeout(300)
@pytest.mark.parametrize("case", ALL, ids=[c.case for c in ALL])
def test_wisp_refuses_what_the_reference_refuses(tmp_path: Path, case: Case) -> None:
    reference_denied, reference_damage = _run("reference", tmp_path / "ref", case)
    wisp_denied, wisp_damage = _run("wisp", tmp_path / "wisp", case)
    report = json.dumps({"case": case.case, "reference_denied": reference_denied,
                         "reference_damage": reference_damage, "wisp_denied": wisp_denied})
    print(f"\n[judge-reference] {report}")
    assert wisp_damage == [], report
    assert wisp_denied or not reference_denied, report


@pytest.mark.timeout(300)
@pytest.mark.parametrize("command", EVERYDAY)
def test_wisp_allows_the_everyday_commands_the_reference_allows(tmp_path: Path,
                                                                command: str) -> None:
    case = Case("everyday", "everyday", command)
    reference_denied, _ = _run("reference", tmp_path / "ref", case)
    wisp_denied, _ = _run("wisp", tmp_path / "wisp", case)
    report = json.dumps({"command": command, "reference_denied": reference_denied,
                         "wisp_denied": wisp_denied})
    print(f"\n[judge-reference-everyday] {report}")
    assert reference_denied or not wisp_denied, report
