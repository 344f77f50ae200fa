"""Sessions as the reference CLI keeps them (tests/fixtures/reference/sessions, recorded from
Claude Code 2.1.332 by tests/sessions/reference_cases.py): wisp must observe the same, and
when .bench-cache has the reference, the reference is run again to check the fixtures still
hold. See reference_cases.py for what each case does."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.sessions import reference_cases as cases

pytest.importorskip("claude_agent_sdk")
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
CASES = [pytest.param(name, marks=needs_git) if name == "transcript_metadata" else name
         for name in cases.CASES]


def wisp_expected(case: str) -> dict[str, Any]:
    """The fixture, but for wisp's one deliberate difference (issue 28): a fork's copied
    lines get fresh uuids, as the SDKs' fork_session gives them, where the reference's
    `--fork-session` keeps the source's (so one uuid named lines of two files).
    tests/sessions/test_resume.py checks the fresh uuids and what they copy."""
    expected: dict[str, Any] = cases.fixture(case)
    for observed in expected.values():
        if isinstance(observed, dict) and "fork_lines" in observed:
            observed["fork_lines"] = ["<uuid>" for _ in observed["fork_lines"]]
    return expected


@pytest.mark.parametrize("case", CASES)
def test_wisp_matches_the_reference(case: str, tmp_path: Path) -> None:
    assert cases.CASES[case](cases.wisp_cli(tmp_path)) == wisp_expected(case)


@pytest.mark.skipif(not cases.REFERENCE.exists(), reason="reference CLI not installed "
                    "(python bench/run.py --install-reference, or set WISP_REFERENCE_CLI)")
@pytest.mark.parametrize("case", CASES)
def test_the_reference_still_behaves_so(case: str, tmp_path: Path) -> None:
    assert cases.CASES[case](cases.reference_cli(tmp_path)) == cases.fixture(case)
