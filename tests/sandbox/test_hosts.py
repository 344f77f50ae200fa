"""The sandbox under every host that drives wisp: the duplex protocol (as an SDK speaks
it, without one), the official Python SDK's and TypeScript SDK's `sandbox` option (which
they forward inside `--settings`), and wisp.sdk in-process and as a subprocess."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tests.needs import missing, node_or_skip
from tests.sandbox import generated
from tests.sandbox.conftest import sandbox_settings
from tests.sdk.conftest import sdk_env, wisp_executable
from wisp.testing import ScriptedServer, reply

pytestmark = pytest.mark.usefixtures("bwrap")
SANDBOX = {"enabled": True, "autoAllowBashIfSandboxed": True}


def escape_script(server: ScriptedServer, outside: Path, inside: Path) -> dict[str, Any]:
    """The model writes outside (inline python: no rule can see it) and inside, then asks
    to leave the sandbox for the outside write. Returns that last call's input."""
    override = {"command": generated.write("node", str(outside), "override"),
                "dangerouslyDisableSandbox": True}
    server.script(reply.tool_use("Bash", {"command": generated.write("python", str(outside),
                                                                      "x")}),
                  reply.tool_use("Bash", {"command": generated.write("perl", str(inside),
                                                                      "in")}),
                  reply.tool_use("Bash", override), reply.text("done"))
    return override


def test_duplex_asks_the_host_only_to_leave_the_sandbox(duplex, server, wisp, tmp_path):
    outside, inside = tmp_path / "outside.txt", wisp.cwd / "inside.txt"
    override = escape_script(server, outside, inside)
    proc = duplex("--permission-prompt-tool", "stdio", "--settings", sandbox_settings())
    proc.initialize()
    proc.user("go")
    ask = proc.wait_request("can_use_tool")
    assert ask["request"]["input"] == override
    assert ask["request"]["decision_reason_type"] == "sandboxOverride"
    assert not outside.exists() and inside.read_text() == "in"  # no prompt for those
    proc.answer(ask, {"behavior": "allow"})
    proc.wait_frame("result")
    assert proc.finish() == 0
    assert outside.read_text() == "override"  # approved: it ran outside the sandbox
    [init] = proc.of("system", "init")
    assert init["sandbox"]["mechanism"] == "bubblewrap"
    assert len(proc.of("control_request")) == 1


def _official_sdk() -> None:
    pytest.importorskip("claude_agent_sdk",
                        reason="claude-agent-sdk is not installed (scripts/install-sdk-deps)")


def _python_sdk_run(cli: str, work: Path, env: dict[str, str]) -> tuple[list[Any], list[str]]:
    from claude_agent_sdk import ClaudeAgentOptions, PermissionResultDeny, query

    asked: list[str] = []

    async def can_use_tool(name: str, tool_input: dict[str, Any], context: Any) -> Any:
        asked.append(tool_input["command"])
        return PermissionResultDeny(message="stay inside")

    async def prompt():  # can_use_tool needs a streaming prompt
        yield {"type": "user", "message": {"role": "user", "content": "go"},
               "parent_tool_use_id": None, "session_id": ""}

    options = ClaudeAgentOptions(cli_path=cli, cwd=str(work), env=env, sandbox=SANDBOX,
                                 can_use_tool=can_use_tool)

    async def collect() -> list[Any]:
        return [m async for m in query(prompt=prompt(), options=options)]

    return asyncio.run(asyncio.wait_for(collect(), 60)), asked


def test_python_sdk_sandbox_option(server, tmp_path):
    _official_sdk()
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    outside, inside = tmp_path / "outside.txt", work / "inside.txt"
    override = escape_script(server, outside, inside)
    messages, asked = _python_sdk_run(wisp_executable(tmp_path), work, sdk_env(server, home))
    init = next(m for m in messages if getattr(m, "subtype", "") == "init")
    assert init.data["sandbox"]["mechanism"] == "bubblewrap"
    assert asked == [override["command"]]
    assert not outside.exists() and inside.read_text() == "in"


def test_wisp_sdk_sandbox_option_in_process_and_as_a_subprocess(server, tmp_path):
    from wisp.sdk import ClaudeAgentOptions, ResultMessage, query

    home = tmp_path / "home"
    home.mkdir()
    for transport, cli in (("inprocess", None), ("subprocess", wisp_executable(tmp_path))):
        work = tmp_path / transport
        work.mkdir()
        outside, inside = tmp_path / f"{transport}-out.txt", work / "inside.txt"
        escape_script(server, outside, inside)
        options = ClaudeAgentOptions(cli_path=cli, cwd=str(work), env=sdk_env(server, home),
                                     sandbox=SANDBOX)

        async def collect(opts: Any = options) -> list[Any]:
            return [m async for m in query(prompt="go", options=opts)]

        messages = asyncio.run(asyncio.wait_for(collect(), 60))
        result = next(m for m in messages if isinstance(m, ResultMessage))
        assert [d["tool_input"].get("dangerouslyDisableSandbox")
                for d in result.permission_denials] == [True], transport
        assert not outside.exists() and inside.read_text() == "in", transport


def test_typescript_sdk_sandbox_option(server, tmp_path):
    import subprocess

    from tests.sdk.test_ts_sdk import SDK_PACKAGE, TS_DIR

    node = node_or_skip()
    if not SDK_PACKAGE.exists():
        missing("the TypeScript SDK is not installed (bash scripts/install-sdk-deps)",
                "WISP_REQUIRE_NODE")
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    outside, inside = tmp_path / "outside.txt", work / "inside.txt"
    escape_script(server, outside, inside)
    env = {**sdk_env(server, home), "WISP_CLI": wisp_executable(tmp_path),
           "WISP_WORK": str(work), "SANDBOX": json.dumps(SANDBOX)}
    done = subprocess.run([node, str(TS_DIR / "sandbox.mjs")], cwd=TS_DIR, env=env,
                          capture_output=True, text=True, timeout=90, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    messages = [json.loads(line)["message"] for line in done.stdout.splitlines()
                if line.startswith('{"message"')]
    [init] = [m for m in messages if m.get("subtype") == "init"]
    assert init["sandbox"]["mechanism"] == "bubblewrap"
    [result] = [m for m in messages if m.get("type") == "result"]
    assert [d["tool_input"].get("dangerouslyDisableSandbox")
            for d in result["permission_denials"]] == [True]
    assert not outside.exists() and inside.read_text() == "in"


def test_nothing_is_left_behind_when_the_host_ends_wisp_mid_command(duplex, server, wisp):
    """The SDKs end wisp with SIGTERM, which leaves without atexit: the placeholders of a
    running command (here `.mcp.json`) and the session's temp folder go all the same."""
    import os
    import signal
    import time

    server.script(reply.tool_use("Bash", {"command": "sleep 30"}), reply.text("done"))
    proc = duplex("--settings", sandbox_settings())
    proc.initialize()
    proc.user("go")
    placeholder = wisp.cwd / ".mcp.json"
    deadline = time.monotonic() + 15
    while not placeholder.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert placeholder.exists()  # the command is running
    [init] = proc.of("system", "init")
    assert init["sandbox"]["enabled"]
    os.kill(proc.proc.pid, signal.SIGTERM)
    assert proc.proc.wait(15) == 143
    assert sorted(p.name for p in wisp.cwd.iterdir()) == []


def test_the_next_session_cleans_up_after_a_killed_one(duplex, server, wisp):
    """SIGKILL leaves no chance to clean up: the next sandboxed session on the machine
    removes the dead process's placeholders (from its ledger) and temp folders."""
    import os
    import signal
    import time

    server.script(reply.tool_use("Bash", {"command": "sleep 30"}), reply.text("done"))
    proc = duplex("--settings", sandbox_settings())
    proc.initialize()
    proc.user("go")
    placeholder = wisp.cwd / ".mcp.json"
    deadline = time.monotonic() + 15
    while not placeholder.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    pid = proc.proc.pid
    [init] = proc.of("system", "init")
    assert init["sandbox"]["enabled"] and placeholder.exists()
    os.kill(pid, signal.SIGKILL)
    proc.proc.wait(15)
    assert placeholder.exists()  # nobody was left to remove it
    server.script(reply.text("hi"))
    assert wisp("-p", "hi", "--settings", sandbox_settings()).returncode == 0
    assert sorted(p.name for p in wisp.cwd.iterdir()) == []
    from wisp.sandbox.runner import temp_root

    leftovers = [n for n in os.listdir(os.path.join(temp_root(), f"wisp-{os.getuid()}"))
                 if n.startswith((f"sandbox-{pid}-", f"placeholders-{pid}"))]
    assert leftovers == []
