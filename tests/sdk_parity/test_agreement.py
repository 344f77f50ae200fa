"""Every registered scenario, run through all three backends in one test: their
summaries must be equal, except for the keys a scenario declares as legitimately
different (each of those is asserted per backend, with the reason, in its own module).

Under pytest-xdist the per-backend tests of one scenario may run on different workers,
so the comparison cannot be made across them; it is made here instead."""

from __future__ import annotations

import difflib
import pprint
from pathlib import Path
from typing import Any

import pytest

# Importing the modules registers their scenarios (the names below are for that only).
from tests.sdk_parity import (  # noqa: F401
    test_client,
    test_hooks,
    test_mcp,
    test_options,
    test_permissions,
    test_query,
    test_sessions,
)
from tests.sdk_parity.harness import BACKENDS, SCENARIOS, open_backend


def _run(name: str, backend: str, root: Path) -> Any:
    """The backend's summary; a scenario that raises errors the test (three backends
    raising the same error would otherwise look like agreement)."""
    fn, differs = SCENARIOS[name]
    with open_backend(backend, root / backend) as b:
        summary = b.run(fn)
    return {k: v for k, v in summary.items() if k not in differs}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_backends_agree(name: str, tmp_path: Path) -> None:
    summaries = {}
    for backend in BACKENDS:
        try:
            summaries[backend] = _run(name, backend, tmp_path)
        except pytest.skip.Exception:  # the official SDK is not installed
            continue
    if len(summaries) < 2:
        pytest.skip("fewer than two backends available")
    # The official SDK is the reference when present.
    reference_name = "official" if "official" in summaries else next(iter(summaries))
    reference = summaries[reference_name]
    for backend, summary in summaries.items():
        if summary != reference:
            diff = "\n".join(difflib.unified_diff(
                pprint.pformat(reference, width=100).splitlines(),
                pprint.pformat(summary, width=100).splitlines(),
                reference_name, backend, lineterm=""))
            pytest.fail(f"{name}: {backend} differs from {reference_name}:\n{diff}",
                        pytrace=False)
