"""The official Python SDK's own end-to-end tests, run against wisp and the reference CLI,
side by side.

    .venv/bin/python bench/sdk_e2e.py --repo GITDIR [--only wisp|reference] [-k EXPR]
                                      [--json PATH] [--timeout S]
    .venv/bin/python bench/sdk_e2e.py --tests DIR ...

The tests are `e2e-tests/` of claude-agent-sdk-python. PyPI's sdist does not ship them
(checked: claude_agent_sdk-0.2.189.tar.gz has tests/ and examples/ only), so they come from
a folder (`--tests`) or from a git checkout or mirror of the SDK's repository (`--repo`:
`git show HEAD:e2e-tests/…`). They are written for the real API; here every CLI talks to
the same offline stand-in (benchlib/mimic.py: it does what the tests' plain instructions
ask), so a test both CLIs fail is asking more of the model than the stand-in gives.

Each side runs the unmodified test files under pytest with the installed official SDK;
only the SDK's CLI lookup is pointed at the CLI under test (`SubprocessCLITransport.
_find_cli`). wisp is the console script of this checkout; the reference is the CLI the
SDK bundles (claude_agent_sdk/_bundled/claude), or $WISP_REFERENCE_CLI. Both get their own
HOME, `ANTHROPIC_BASE_URL` at the stand-in, `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`
and `IS_SANDBOX=1` (root may bypass permissions only in a sandbox). Each test has
`--timeout` seconds (default 120). Prints a table of each test's outcome per CLI and the
pass counts.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchlib import mimic

from wisp.testing import ScriptedServer, reply

ROOT = Path(__file__).resolve().parents[1]
WISP_BIN = ROOT / ".venv" / "bin" / "wisp"
# Loaded into each pytest run: points the SDK at the CLI under test, and bounds each test.
PLUGIN = '''
import os, signal
import pytest
from claude_agent_sdk._internal.transport import subprocess_cli

subprocess_cli.SubprocessCLITransport._find_cli = lambda self: os.environ["E2E_CLI"]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    def expired(signum, frame):
        raise TimeoutError("test timed out")
    signal.signal(signal.SIGALRM, expired)
    signal.alarm(int(os.environ.get("E2E_TIMEOUT", "120")))
    try:
        yield
    finally:
        signal.alarm(0)
'''


def reference_cli() -> Path | None:
    import claude_agent_sdk

    named = os.environ.get("WISP_REFERENCE_CLI")
    bundled = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
    path = Path(named) if named else bundled
    return path if path.exists() else None


def gather_tests(folder: Path, args: argparse.Namespace) -> None:
    """The e2e test files into `folder`, from `--tests` or `--repo`."""
    folder.mkdir(parents=True)
    if args.tests:
        for source in Path(args.tests).glob("*.py"):
            (folder / source.name).write_text(source.read_text())
        return
    names = subprocess.run(["git", "--git-dir", args.repo, "ls-tree", "--name-only", "HEAD",
                            "e2e-tests/"], capture_output=True, text=True, check=True)
    for name in names.stdout.split():
        if name.endswith(".py"):
            text = subprocess.run(["git", "--git-dir", args.repo, "show", f"HEAD:{name}"],
                                  capture_output=True, text=True, check=True).stdout
            (folder / Path(name).name).write_text(text)


def run_side(name: str, cli: Path, work: Path, server: ScriptedServer,
             args: argparse.Namespace) -> dict[str, str]:
    """Runs the tests against one CLI; returns {test id: passed|failed|skipped}."""
    home, cwd = work / name / "home", work / name / "cwd"
    home.mkdir(parents=True)
    cwd.mkdir(parents=True)
    (work / "e2e_cli_plugin.py").write_text(PLUGIN)
    report = work / f"{name}.xml"
    env = {**{k: v for k, v in os.environ.items()
              if not k.startswith(("ANTHROPIC_", "CLAUDE_", "WISP_"))},
           "HOME": str(home), "ANTHROPIC_BASE_URL": server.url,
           "ANTHROPIC_API_KEY": "sk-ant-test", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
           "DISABLE_AUTOUPDATER": "1", "IS_SANDBOX": "1", "E2E_CLI": str(cli),
           "E2E_TIMEOUT": str(args.timeout), "PYTHONPATH": str(work)}
    command = [sys.executable, "-m", "pytest", str(work / "e2e-tests"), "-p",
               "e2e_cli_plugin", "-p", "no:cacheprovider", "-q", "-o", "addopts=",
               "-c", str(work / "pytest.ini"), "--rootdir", str(work), f"--junitxml={report}",
               *(["-k", args.k] if args.k else [])]
    (work / "pytest.ini").write_text("[pytest]\nmarkers =\n    e2e: real API\n")
    proc = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True,
                          check=False)
    if not report.exists():
        raise SystemExit(f"{name}: pytest wrote no report\n{proc.stdout[-3000:]}\n"
                         f"{proc.stderr[-3000:]}")
    return outcomes(report)


def outcomes(report: Path) -> dict[str, str]:
    """{test: "passed" | "skipped" | "failed: <the first line of why>"}."""
    seen: dict[str, str] = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        test = f"{case.get('classname', '').rsplit('.', 1)[-1]}::{case.get('name')}"
        failed = case.find("failure")
        failed = failed if failed is not None else case.find("error")
        if case.find("skipped") is not None:
            seen[test] = "skipped"
        elif failed is not None:
            why = (failed.get("message") or "").strip().splitlines()
            seen[test] = "failed: " + (why[0][:200] if why else "")
        else:
            seen[test] = "passed"
    return seen


def table(results: dict[str, dict[str, str]]) -> str:
    sides = list(results)
    tests = sorted({t for seen in results.values() for t in seen})
    lines = ["| test | " + " | ".join(sides) + " |", "|---|" + "---|" * len(sides)]
    lines += [f"| {t} | " + " | ".join(results[s].get(t, "-").split(":")[0] for s in sides)
              + " |" for t in tests]
    lines.append("| **passed** | " + " | ".join(
        f"{sum(v == 'passed' for v in results[s].values())} of {len(results[s])}"
        for s in sides) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--tests", help="a folder holding the e2e test files")
    source.add_argument("--repo", help="a git dir of claude-agent-sdk-python")
    parser.add_argument("--only", choices=("wisp", "reference"))
    parser.add_argument("-k", help="pytest -k expression")
    parser.add_argument("--timeout", type=int, default=120)
    parser.add_argument("--json", help="also write the outcomes as JSON here")
    parser.add_argument("--dump", help="write every request the stand-in got here (JSONL)")
    args = parser.parse_args()
    clis = {"wisp": WISP_BIN, "reference": reference_cli()}
    with tempfile.TemporaryDirectory(prefix="sdk-e2e-") as tmp, \
            ScriptedServer(default=reply.dynamic(mimic.answer)) as server:
        work = Path(tmp)
        gather_tests(work / "e2e-tests", args)
        results: dict[str, dict[str, str]] = {}
        for name, cli in clis.items():
            if args.only not in (None, name):
                continue
            if cli is None:
                print(f"{name}: not installed, skipped", file=sys.stderr)
                continue
            results[name] = run_side(name, cli, work, server, args)
        if args.dump:
            Path(args.dump).write_text("".join(json.dumps(r.body) + "\n"
                                               for r in server.requests))
    print(table(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
