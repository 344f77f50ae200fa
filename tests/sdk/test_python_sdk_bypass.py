"""The official Python SDK's `set_permission_mode("bypassPermissions")` against real `wisp`:
refused (error_code bypass_not_launched) unless wisp was launched with a bypass flag, here
`--allow-dangerously-skip-permissions` passed through the SDK's `extra_args`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.sdk.test_python_sdk import SANDBOX, options, result_of, run, write_then

sdk = pytest.importorskip(
    "claude_agent_sdk", reason="claude-agent-sdk is not installed (bash scripts/install-sdk-deps)"
)
from claude_agent_sdk import ClaudeSDKClient, ResultMessage  # noqa: E402


def recording_cli(cli: str, tmp_path: Path) -> tuple[str, Path]:
    """A `cli_path` that runs `cli` and keeps a copy of its stdout: the SDK surfaces only a
    control error's message, and the test also wants the `error_code` on the wire."""
    log = tmp_path / "stdout.ndjson"
    shim = tmp_path / "recording-wisp"
    shim.write_text(
        f"#!{sys.executable}\n"
        "import subprocess, sys\n"
        f"proc = subprocess.Popen([{cli!r}, *sys.argv[1:]], stdout=subprocess.PIPE)\n"
        f"with open({str(log)!r}, 'ab') as log:\n"
        "    for line in proc.stdout:\n"
        "        log.write(line)\n"
        "        log.flush()\n"
        "        sys.stdout.buffer.write(line)\n"
        "        sys.stdout.buffer.flush()\n"
        "sys.exit(proc.wait())\n"
    )
    shim.chmod(0o755)
    return str(shim), log


def control_errors(log: Path) -> list[dict[str, Any]]:
    frames = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    return [f["response"] for f in frames
            if f.get("type") == "control_response" and f["response"].get("subtype") == "error"]


def test_sdk_switch_to_bypass_is_refused_without_the_launch_flag(server, cli, work, env,
                                                                 tmp_path):
    shim, log = recording_cli(cli, tmp_path)

    async def scenario() -> str:
        async with ClaudeSDKClient(options(shim, work, env, extra_env=SANDBOX)) as client:
            try:
                await client.set_permission_mode("bypassPermissions")
            except Exception as exc:  # the SDK raises a bare Exception with the message
                return str(exc)
        return "accepted"

    message = run(scenario())
    assert message == (
        "Cannot set permission mode to bypassPermissions: the session was not launched with "
        "--dangerously-skip-permissions or --allow-dangerously-skip-permissions.")
    errors = control_errors(log)
    assert [e["error_code"] for e in errors] == ["bypass_not_launched"]


def test_sdk_switch_to_bypass_is_accepted_with_allow_dangerously_skip_permissions(
        server, cli, work, env):
    target = work / "bypassed.txt"
    write_then(server, target)
    opts = options(cli, work, env, extra_env=SANDBOX,
                   extra_args={"allow-dangerously-skip-permissions": None})

    async def scenario() -> list[Any]:
        async with ClaudeSDKClient(opts) as client:
            await client.set_permission_mode("bypassPermissions")
            await client.query("write")
            return [m async for m in client.receive_response()]

    messages = run(scenario())
    assert target.read_text() == "from the model\n"  # the Write ran without a prompt
    assert not result_of(messages).permission_denials
    assert all(not isinstance(m, ResultMessage) or not m.is_error for m in messages)
