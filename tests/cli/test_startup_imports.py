"""What start-up must not pay for: `--version` imports no more than the entry point, and
print mode reaches its first frame without calling compile() (docs/benchmarks.md, "Where a
`-p` run's start-up goes")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import wisp_command

# Runs wisp's entry point with builtins.compile watched: every call made by anything but
# the import system (which compiles sources that have no bytecode yet) is reported on
# stderr's last line. A NamedTuple with string annotations is such a caller (typing's
# ForwardRef), and the first compile() of a process also builds the AST types.
_WATCHED = """
import builtins, json, sys
calls = []
real = builtins.compile
def watched(source, filename, mode, *args, **kwargs):
    caller = sys._getframe(1).f_globals.get("__name__", "")
    if not caller.startswith(("importlib", "_frozen_importlib")):
        calls.append(f"{caller}: compile({str(source)[:40]!r}, {mode!r})")
    return real(source, filename, mode, *args, **kwargs)
builtins.compile = watched
from wisp.cli.main import main
code = main(sys.argv[1:])
sys.stdout.flush()
sys.stderr.write("\\n" + json.dumps(calls) + "\\n")
sys.exit(code)
"""


def test_version_imports_only_the_entry_point():
    done = subprocess.run([sys.executable, "-X", "importtime", *wisp_command()[1:], "--version"],
                          capture_output=True, text=True, check=True, timeout=30)
    imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines()
                if line.startswith("import time:") and "|" in line}
    assert {m for m in imported if m.startswith("wisp")} == {"wisp", "wisp.cli", "wisp.cli.main"}
    assert "pathlib" not in imported


def test_print_mode_writes_its_first_frame_without_compiling(tmp_path: Path):
    # No key and no endpoint: the run writes `system/init` (everything before it, as a
    # run with a key does) and its error result, and ends without a model call.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "CLAUDE_", "OPENAI_", "WISP_"))}
    env["HOME"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", _WATCHED, "-p", "hi", "--output-format", "stream-json",
         "--verbose"],
        capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path, check=False)
    frames = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 1, done.stderr  # not logged in, as meant
    assert frames[0]["type"] == "system" and frames[0]["subtype"] == "init", done.stderr
    assert json.loads(done.stderr.splitlines()[-1]) == []
