"""Shared by the sandbox tests: whether bubblewrap really works here, and the settings
that turn the sandbox on.

Without a working bubblewrap these tests skip with the probe's reason, unless
WISP_REQUIRE_SANDBOX=1 (set by .ci/run, which installs bubblewrap): then they fail, so
a broken install can never pass as "skipped".
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from tests.duplex.conftest import duplex
from wisp.sandbox.probe import probe

JSON = dict[str, Any]
__all__ = ["duplex", "sandbox_settings"]


def sandbox_settings(**sandbox: Any) -> str:
    """`--settings` JSON turning the sandbox on (with auto-allow unless overridden)."""
    return json.dumps({"sandbox": {"enabled": True, "autoAllowBashIfSandboxed": True,
                                   **sandbox}})


@pytest.fixture(scope="session")
def bwrap() -> None:
    found = probe(os.environ)
    if found.mechanism == "bubblewrap":
        return
    reason = f"bubblewrap cannot run here: {found.bwrap.error}"
    if os.environ.get("WISP_REQUIRE_SANDBOX") == "1":
        pytest.fail(f"WISP_REQUIRE_SANDBOX=1 but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def landlock() -> None:
    """Landlock is a kernel feature (5.13+, on at boot): where it is missing, the fallback
    cannot be tested, whatever is installed."""
    found = probe({**os.environ, "WISP_BWRAP": ""})
    if found.mechanism != "landlock":
        pytest.skip(f"Landlock cannot run here: {found.landlock_error}")
