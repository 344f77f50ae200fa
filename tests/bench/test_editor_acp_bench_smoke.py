"""bench/editor_acp.py must keep working: one cheap run, checking the table's shape only
(benchmarks are not timed tests)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_one_run_prints_every_row() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "editor_acp.py"), "--n", "1"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    header = next(line for line in proc.stdout.splitlines() if line.startswith("| |"))
    assert "wisp acp" in header
    for key in ("initialize", "session/new", "first chunk", "prompt end"):
        row = next(line for line in proc.stdout.splitlines() if line.startswith(f"| {key} |"))
        cells = [c.strip() for c in row.strip("|").split("|")[1:]]
        assert cells and all(c.isdigit() for c in cells), row
    assert "per update" in proc.stdout
