"""Every flag the official SDKs can send is one wisp accepts, now that an unknown flag is
an error: read from the SDKs' own command builders, and sent by real SDK queries with
most options set (through a wrapper that records the argv wisp receives)."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import wisp
from tests.conftest import wisp_command
from tests.sdk.test_ts_sdk import TS_DIR, drive, node  # noqa: F401  (fixtures)
from wisp.launch.argv import FLAGS
from wisp.launch.unsupported import UNSUPPORTED
from wisp.testing import reply

FLAG = re.compile(r'"(--[a-z][\w-]*)"')
TS_SDK = TS_DIR / "node_modules" / "@anthropic-ai" / "claude-agent-sdk" / "sdk.mjs"
# What the SDKs send that wisp does not implement: accepted, and named in one warning.
IGNORED_BY_WISP = ["--task-budget"]


def python_builder_flags() -> set[str]:
    spec = importlib.util.find_spec("claude_agent_sdk")
    if spec is None or spec.origin is None:
        pytest.skip("claude-agent-sdk is not installed (bash scripts/install-sdk-deps)")
    source = Path(spec.origin).parent / "_internal" / "transport" / "subprocess_cli.py"
    return set(FLAG.findall(source.read_text(encoding="utf-8")))


def ts_builder_flags() -> set[str]:
    """The flags between the builder's fixed start and the environment it sets up next:
    the rest of the bundle holds other programs' flags (git's)."""
    if not TS_SDK.exists():
        pytest.skip("the TypeScript SDK is not installed (bash scripts/install-sdk-deps)")
    bundle = TS_SDK.read_text(encoding="utf-8")
    start = bundle.index('"--output-format","stream-json","--verbose","--input-format"')
    end = bundle.index("CLAUDE_CODE_ENTRYPOINT", start)
    return set(FLAG.findall(bundle[start:end]))


def wisp_sdk_flags() -> set[str]:
    source = Path(wisp.__file__).parent / "sdk" / "_launch.py"
    return set(FLAG.findall(source.read_text(encoding="utf-8")))


def takes_value(flag: str) -> bool:
    spec = FLAGS.get(flag)
    return (spec[1] != "flag") if spec is not None else UNSUPPORTED.get(flag) != "flag"


@pytest.mark.parametrize("builder", [python_builder_flags, ts_builder_flags, wisp_sdk_flags])
def test_every_flag_a_builder_emits_is_accepted(builder, tmp_path):
    flags = builder()
    assert len(flags) > 30, flags  # the builder was found, not an empty slice
    argv = [token for flag in sorted(flags)
            for token in ([f"{flag}=x"] if takes_value(flag) else [flag])]
    done = subprocess.run([*wisp_command(), *argv, "--help"], capture_output=True, text=True,
                          timeout=30, check=False, cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, ""), argv


def recording_executable(tmp_path: Path) -> str:
    """An executable that writes its argv to $WISP_ARGV_LOG, then runs wisp."""
    wrapper = tmp_path / "wisp-recording"
    wrapper.write_text(
        f"#!{sys.executable}\nimport json, os, sys\n"
        "with open(os.environ['WISP_ARGV_LOG'], 'w') as log:\n"
        "    json.dump(sys.argv[1:], log)\n"
        "from wisp.cli.main import main\nraise SystemExit(main())\n")
    wrapper.chmod(0o755)
    return str(wrapper)


def flags_of(argv: list[str]) -> set[str]:
    return {token.partition("=")[0] for token in argv if token.startswith("--")}


def test_a_python_sdk_query_with_most_options_runs(server, work, env, tmp_path):
    sdk = pytest.importorskip("claude_agent_sdk")
    server.script(reply.text("all set"))
    (work / "plugin").mkdir()
    log = tmp_path / "argv.json"
    lines: list[str] = []
    options = sdk.ClaudeAgentOptions(
        cli_path=recording_executable(tmp_path), cwd=str(work),
        env={**env, "WISP_ARGV_LOG": str(log)}, stderr=lines.append,
        system_prompt="You help.", tools=["Read", "Bash"], allowed_tools=["Read"],
        disallowed_tools=["WebFetch"], max_turns=3, max_budget_usd=1.5,
        task_budget={"total": 5000}, model="claude-sonnet-4-5",
        fallback_model="claude-haiku-4-5", betas=["context-1m-2025-08-07"],
        permission_mode="acceptEdits", permission_prompt_tool_name="stdio",
        settings=json.dumps({"permissions": {"allow": ["Read"]}}), add_dirs=[str(tmp_path)],
        include_partial_messages=True, include_hook_events=True, strict_mcp_config=True,
        setting_sources=["user", "project"], plugins=[{"type": "local",
                                                       "path": str(work / "plugin")}],
        thinking={"type": "enabled", "budget_tokens": 1024, "display": "summarized"},
        effort="low", extra_args={"replay-user-messages": None})

    async def go() -> list[Any]:
        return [m async for m in sdk.query(prompt="hello", options=options)]

    messages = asyncio.run(asyncio.wait_for(go(), 60))
    [result] = [m for m in messages if isinstance(m, sdk.ResultMessage)]
    assert (result.is_error, result.result) == (False, "all set")
    sent = flags_of(json.loads(log.read_text()))
    assert len(sent) >= 25 and set(IGNORED_BY_WISP) <= sent
    assert [line for line in lines if "option" in line] == [
        f"wisp: warning: ignoring options wisp does not support: {', '.join(IGNORED_BY_WISP)}"]


def test_a_ts_sdk_query_with_most_options_runs(drive, server, work, tmp_path):  # noqa: F811
    server.script(reply.text("all set"))
    (work / "plugin").mkdir()
    log = tmp_path / "argv.json"
    run = drive("many_options.mjs", WISP_CLI=recording_executable(tmp_path),
                WISP_ARGV_LOG=str(log))
    assert (run.result["is_error"], run.result["result"]) == (False, "all set")
    sent = flags_of(json.loads(log.read_text()))
    ignored = sorted(sent & set(UNSUPPORTED))
    assert len(sent) >= 25 and {"--agent", "--task-budget", "--permission-prompts",
                                "--debug-file"} <= set(ignored)
    assert "--thinking-display" in sent and "--thinking-display" not in ignored
    warnings = [line for line in run.stderr.splitlines() if "option" in line]
    assert len(warnings) == 1 and warnings[0].startswith(
        "wisp: warning: ignoring options wisp does not support: ")
    assert set(warnings[0].split(": ")[-1].split(", ")) == set(ignored)
