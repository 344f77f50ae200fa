"""Records what the reference CLI does as fixtures under tests/fixtures/reference/, from
the scenarios the tests run on wisp (tests/commands/scenarios.py,
tests/checkpoints/scenarios.py). Offline: the reference talks only to the scripted server.

    .venv/bin/python -m tests.record_reference [commands] [checkpoints] [requests] [refusal]
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.checkpoints.scenarios import disabled_scenario, rewind_scenario
from tests.commands.scenarios import duplex_scenario, print_scenario
from tests.refrun import REFERENCE, have_reference, save_fixture
from tests.refusal.scenarios import refusal_scenario
from tests.request_parity.scenarios import options_scenario

Scenario = Callable[[str, Path], dict[str, Any]]
GROUPS: dict[str, dict[str, Scenario]] = {
    "commands": {"duplex": duplex_scenario, "print": print_scenario},
    "checkpoints": {"rewind": rewind_scenario, "disabled": disabled_scenario},
    "requests": {"options": options_scenario},
    "refusal": {"refusal": refusal_scenario},
}


def reference_version() -> str:
    out = subprocess.run([str(REFERENCE), "--version"], capture_output=True, text=True,
                         timeout=60, check=False).stdout
    return out.split()[0] if out.split() else "unknown"


def main(argv: list[str]) -> int:
    if not have_reference():
        print(f"no reference CLI at {REFERENCE}", file=sys.stderr)
        return 1
    version = reference_version()
    for group in argv or list(GROUPS):
        for name, scenario in GROUPS[group].items():
            with tempfile.TemporaryDirectory() as tmp:
                observations = scenario("reference", Path(tmp))
            save_fixture(f"{group}/{name}.json",
                         {"reference_version": version, "observations": observations})
            print(f"recorded {group}/{name}.json (reference {version})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
