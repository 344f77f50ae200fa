"""bench/sdk.py must keep working; this runs it once with --quick (a few samples, 10
sessions, short clients), without the reference CLI.

Only the shape of the output is checked, never a timing: benchmarks are not timed tests.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

EXPECTED_ROWS = [
    "first `query()` in a fresh process (import + query)",
    "in-process `query()` overhead beyond the exchange",
    "`ClaudeSDKClient.connect()`",
    "`ClaudeSDKClient.disconnect()` after a turn",
    "per-turn overhead beyond the exchange",
    "10 concurrent in-process sessions: completed",
    "RSS with one in-process session open",
    "RSS after 20 turns ÷ after 10",
]


@pytest.mark.timeout(600)
def test_quick_run_prints_the_table_and_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "sdk.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "sdk.py"), "--quick", "--no-reference",
         "--json", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=580, check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert "| what | median | target | met? |" in lines
    rows = {line.split(" | ")[0].removeprefix("| "): line for line in lines
            if line.startswith("| ") and not line.startswith("| what")}
    for what in EXPECTED_ROWS:
        assert what in rows, f"no row {what!r} in:\n{proc.stdout}"
        assert rows[what].rstrip().endswith(("met |", "MISSED |", "— |")), rows[what]
    # Every session of the concurrent run completed: a correctness check, not a timing.
    assert "10/10" in rows["10 concurrent in-process sessions: completed"]

    saved = json.loads(out.read_text())
    assert saved["meta"]["quick"] is True and saved["meta"]["reference"] is None
    assert [r["what"] for r in saved["rows"]] == list(rows)
    for row in saved["rows"]:
        assert row["met"] in ("met", "MISSED", "—")
    assert saved["samples"]["concurrent"][0]["completed"] == 10
    # The subprocess comparison ran when the official SDK is installed.
    compared = [w for w in rows if w.startswith("subprocess, cli=wisp")]
    assert compared or "claude-agent-sdk is not installed" in proc.stdout


def test_sdk_layers_bench_prints_its_table() -> None:
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "bench" / "sdk_layers.py"
    done = subprocess.run([sys.executable, str(script), "--blocks", "1", "--turns", "2"],
                          check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ")]
    assert len(rows) == 4 and "what the SDK layer adds" in rows[-1]
    assert all(row.rstrip(" |").endswith("ms") for row in rows[1:])
