"""Sessions as the reference CLI keeps them (tests/fixtures/reference/sessions, recorded from
Claude Code 2.1.332 by tests/sessions/reference_cases.py): wisp must observe the same, and
when .bench-cache has the reference, the reference is run again to check the fixtures still
hold. See reference_cases.py for what each case does."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.sessions import reference_cases as cases

pytest.importorskip("claude_agent_sdk")
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
CASES = [pytest.param(name, marks=needs_git) if name == "transcript_metadata" else name
         for name in cases.CASES]


@pytest.mark.parametrize("case", CASES)
def test_wisp_matches_the_reference(case: str, tmp_path: Path) -> None:
    assert cases.CASES[case](cases.wisp_cli(tmp_path)) == cases.fixture(case)


@pytest.mark.skipif(not cases.REFERENCE.exists(), reason="reference CLI not installed "
                    "(python bench/run.py --install-reference, or set WISP_REFERENCE_CLI)")
@pytest.mark.parametrize("case", CASES)
def test_the_reference_still_behaves_so(case: str, tmp_path: Path) -> None:
    assert cases.CASES[case](cases.reference_cli(tmp_path)) == cases.fixture(case)
