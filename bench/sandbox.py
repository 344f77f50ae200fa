"""What the OS sandbox costs per command: ten Bash `echo` calls through `wisp -p`,
sandboxed and not, and the reference CLI side by side when it is installed.

    .venv/bin/python bench/sandbox.py [--runs 5] [--commands 10] [--reference PATH]
                                      [--install-reference]

Each run is one `-p` session whose scripted model (wisp.testing.ScriptedServer on
127.0.0.1) asks for `--commands` Bash calls in a row, then answers. The per-command
overhead is the slope between runs of 1 and 1 + `--commands` commands, sandboxed minus
plain (medians over `--runs`); what is left at one command is paid once per session. The reference
(Claude Code 2.1.332, found in .bench-cache/claude-code like the other benches, or
installed there with --install-reference) gets the same script and the same
`{"sandbox": {"enabled": true, "autoAllowBashIfSandboxed": true}}` settings; it needs
bubblewrap and socat for its sandbox. Targets (issue 24): at most 10 ms per command, and
wisp's sandboxed run at most 0.2x the reference's. Not a timed test: it reports.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchlib import clis

from wisp.testing import ScriptedServer, reply

SANDBOX = {"sandbox": {"enabled": True, "autoAllowBashIfSandboxed": True}}
PLAIN: dict[str, object] = {}


def _env(cli: str, home: Path, base_url: str) -> dict[str, str]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
           "LANG": "C.UTF-8", "ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": "sk-bench",
           "CLAUDE_CODE_MAX_RETRIES": "1", **clis.OFFLINE_ENV}
    if cli == "wisp":
        env["WISP_CONFIG_DIR"] = str(home / ".wisp")
        env["PYTHONPYCACHEPREFIX"] = str(clis.PYC_WARM)  # as installed: bytecode cached
    return env


def one_run(binary: list[str], cli: str, settings: dict[str, object], commands: int,
            work: Path) -> tuple[float, bool]:
    """Seconds for one `-p` session of `commands` Bash calls, and whether all succeeded."""
    home = work / f"home-{cli}"
    home.mkdir(exist_ok=True)
    folder = work / f"cwd-{cli}"
    folder.mkdir(exist_ok=True)
    with ScriptedServer() as server:
        server.script(*[reply.tool_use("Bash", {"command": f"echo sandbox-bench-{i}"})
                        for i in range(commands)], reply.text("done"))
        argv = [*binary, "-p", "go", "--output-format", "stream-json", "--verbose",
                "--settings", json.dumps(settings)]
        started = time.perf_counter()
        done = subprocess.run(argv, cwd=folder, env=_env(cli, home, server.url),
                              capture_output=True, text=True, timeout=300, check=False)
        elapsed = time.perf_counter() - started
    frames = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    results = [b for f in frames if f.get("type") == "user"
               for b in f["message"]["content"] if b.get("type") == "tool_result"]
    ok = done.returncode == 0 and len(results) == commands and not any(
        b.get("is_error") for b in results)
    if not ok:
        sys.stderr.write(f"{cli} run failed (rc {done.returncode}): {done.stderr[-800:]}\n")
    return elapsed, ok


def measure(binary: list[str], cli: str, runs: int, commands: int, work: Path
            ) -> dict[str, float]:
    """Medians of: a run of one command and of 1 + `commands`, plain and sandboxed.
    The slope between them is what each further command costs; the rest of the
    difference at one command is what a sandboxed session pays once (probe, setup)."""
    one_run(binary, cli, SANDBOX, commands, work)  # warm caches and the page cache
    samples: dict[str, list[float]] = {}
    for _ in range(runs):  # interleaved, so drift hits every variant alike
        for name, settings in (("plain", PLAIN), ("sandboxed", SANDBOX)):
            for count in (1, commands + 1):
                elapsed = one_run(binary, cli, settings, count, work)[0]
                samples.setdefault(f"{name}_{count}", []).append(elapsed)
    m = {key: statistics.median(values) for key, values in samples.items()}
    n = commands + 1
    slope_plain = (m[f"plain_{n}"] - m["plain_1"]) / commands
    slope_boxed = (m[f"sandboxed_{n}"] - m["sandboxed_1"]) / commands
    per_command = slope_boxed - slope_plain
    return {"plain_s": m["plain_1"] + slope_plain * (commands - 1),
            "sandboxed_s": m["sandboxed_1"] + slope_boxed * (commands - 1),
            "per_command_ms": per_command * 1000,
            "per_session_ms": (m["sandboxed_1"] - m["plain_1"] - per_command) * 1000}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--commands", type=int, default=10)
    parser.add_argument("--reference", help="path to the reference `claude` binary")
    parser.add_argument("--install-reference", action="store_true",
                        help="npm install the pinned reference into .bench-cache if absent")
    args = parser.parse_args()
    reference = clis.find_reference(args.reference)
    if reference is None and args.install_reference:
        reference = clis.install_reference()
    wisp = [str(clis.WISP_BIN)] if clis.WISP_BIN.exists() else [sys.executable, "-m", "wisp"]
    clis.prepare_bytecode()
    rows: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        rows["wisp"] = measure(wisp, "wisp", args.runs, args.commands, work)
        if reference is not None:
            if not (shutil.which("bwrap") and shutil.which("socat")):
                sys.stderr.write("the reference's sandbox needs bwrap and socat\n")
            rows["reference"] = measure([str(reference)], "reference", args.runs,
                                        args.commands, work)
    report(rows, args.commands)


def report(rows: dict[str, dict[str, float]], commands: int) -> None:
    print(f"| CLI | {commands} plain (s) | {commands} sandboxed (s) | sandbox per command "
          "(ms) | sandbox once per session (ms) |")
    print("|---|---|---|---|---|")
    for name, row in rows.items():
        print(f"| {name} | {row['plain_s']:.3f} | {row['sandboxed_s']:.3f} | "
              f"{row['per_command_ms']:.1f} | {row['per_session_ms']:.0f} |")
    wisp = rows["wisp"]
    print(f"\nwisp per-command overhead: {wisp['per_command_ms']:.1f} ms (target <= 10 ms)")
    if "reference" in rows:
        ref = rows["reference"]
        cost = wisp["sandboxed_s"] - wisp["plain_s"]
        ref_cost = ref["sandboxed_s"] - ref["plain_s"]
        print(f"{commands} sandboxed commands, whole run, wisp / reference: "
              f"{wisp['sandboxed_s'] / ref['sandboxed_s']:.2f}x (target <= 0.2x)")
        print(f"what the sandbox adds to that run, wisp / reference: "
              f"{cost / max(ref_cost, 1e-9):.2f}x; per command: "
              f"{wisp['per_command_ms'] / max(ref['per_command_ms'], 1e-9):.2f}x")
    else:
        print("reference CLI not found (.bench-cache/claude-code): run with "
              "--install-reference to compare")


if __name__ == "__main__":
    main()
