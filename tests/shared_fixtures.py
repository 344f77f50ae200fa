"""Fixtures that live beside the checkout, in `../shared` (the reference measurements of
Claude Code the tests compare against), found relative to the repository root.

A missing fixture fails the test that needs it, loudly: a comparison that silently runs
on nothing is a green that means nothing. `WISP_NO_SHARED_FIXTURES=1` opts out on a
machine that deliberately has no `../shared`, and those tests then skip with the reason.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
OPT_OUT = "WISP_NO_SHARED_FIXTURES"


def shared_path(relative: str) -> Path:
    """`../shared/<relative>` beside the checkout; fails (or, opted out, skips) when it is
    missing."""
    path = SHARED / relative
    if path.exists():
        return path
    reason = f"shared fixture {path} is missing (the checkout needs ../shared beside it)"
    if os.environ.get(OPT_OUT) == "1":
        pytest.skip(f"{reason}; {OPT_OUT}=1 opts out")
    pytest.fail(f"{reason}; set {OPT_OUT}=1 to skip these tests deliberately", pytrace=False)
