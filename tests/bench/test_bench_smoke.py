"""The bench runner must keep working; this runs it once, cheaply, without the reference.

Only the shape of the output is checked, never a timing: benchmarks are not timed tests.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_quick_version_scenario_produces_a_row(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "run.py"), "--quick", "--scenario", "version",
         "--no-reference", "--no-src", "--out", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| `--version` |")]
    wall = [row for row in rows if "| wall time |" in row]
    assert len(wall) == 1, proc.stdout
    assert "absent" in wall[0]  # the reference column says it was not run
    assert "failed" not in proc.stdout
    saved = json.loads((tmp_path / "latest.json").read_text())
    assert saved["meta"]["reference"] is None
    assert len(saved["rows"]) == len(rows)
    row = next(r for r in saved["rows"] if r["metric"] == "wall")
    assert row["wisp"]["n"] == 1 and row["reference"] is None
