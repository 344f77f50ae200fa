"""Records the reference CLI's behaviour in each scenario as a fixture:
tests/fixtures/reference/<hooks|control>/<scenario>.json, holding the digest the parity
tests compare and the frames it came from (long strings cut).

    .venv/bin/python -m tests.reference_parity.record [scenario ...]

Needs the reference in .bench-cache/ (`python bench/run.py --install-reference`) or
WISP_REFERENCE_CLI. Everything runs on 127.0.0.1 against wisp's scripted model server.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.reference_parity.driver import REFERENCE, Run, drive, reference_cli
from tests.reference_parity.scenarios import CASES, Case

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "reference"
_KEEP = 300  # characters of a long string kept in the stored frames
_BULKY = 1500  # a control answer longer than this is stored as its keys


def fixture_path(case: Case) -> Path:
    return FIXTURES / case.kind / f"{case.scenario.name}.json"


def reference_version() -> str:
    done = subprocess.run([str(REFERENCE), "--version"], capture_output=True, text=True,
                          timeout=30, check=False)
    return done.stdout.strip()


def trimmed(value: Any, work: str) -> Any:
    if isinstance(value, str):
        value = value.replace(work, "<tmp>")
        return value if len(value) <= _KEEP else value[:_KEEP] + f"…[{len(value)} chars]"
    if isinstance(value, list):
        return [trimmed(v, work) for v in value]
    if isinstance(value, dict):
        return {k: trimmed(v, work) for k, v in value.items()}
    return value


def frames_of(run: Run) -> list[Any]:
    """The exchange, without the bulky parts that say nothing about the scenario: system/init
    and long control answers are kept as their keys only; the scenario's temporary folder
    is written `<tmp>`."""
    work = str(run.work.resolve().parent)  # the home folder beside it too
    kept = []
    for entry in run.frames:
        frame = entry["frame"]
        if frame.get("type") == "system" and frame.get("subtype") == "init":
            frame = {"type": "system", "subtype": "init", "keys": sorted(frame)}
        elif frame.get("type") == "control_response" and len(json.dumps(frame)) > _BULKY:
            # The initialize answer, the reference's skill and model lists, context usage.
            response = frame["response"]
            frame = {"type": "control_response", "request_id": response.get("request_id"),
                     "keys": sorted(response.get("response") or {})}
        kept.append({"dir": entry["dir"], "frame": trimmed(frame, work)})
    return kept


async def record(case: Case) -> Path:
    run = await drive(reference_cli(), case.scenario)
    path = fixture_path(case)
    path.parent.mkdir(parents=True, exist_ok=True)
    fixture = {
        "scenario": case.scenario.name,
        "reference": reference_version(),
        "recorded_with": "python -m tests.reference_parity.record " + case.scenario.name,
        "digest": case.digest(run, case.scenario),
        "frames": frames_of(run),
    }
    path.write_text(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n")
    return path


def main(names: list[str]) -> int:
    if not REFERENCE.exists():
        print(f"the reference CLI is not installed at {REFERENCE}", file=sys.stderr)
        return 1
    for name in names or list(CASES):
        path = asyncio.run(record(CASES[name]))
        print(f"recorded {path.relative_to(FIXTURES.parents[2])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
