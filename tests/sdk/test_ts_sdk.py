"""The official TypeScript Agent SDK (@anthropic-ai/claude-agent-sdk) drives the real `wisp`
process through `pathToClaudeCodeExecutable`. Small node scripts in tests/sdk/ts/ print
every SDK message as a JSON line; these tests read them."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.needs import missing, node_or_skip
from wisp.testing import reply

TS_DIR = Path(__file__).parent / "ts"
SDK_PACKAGE = TS_DIR / "node_modules" / "@anthropic-ai" / "claude-agent-sdk" / "package.json"
JSON = dict[str, Any]


@dataclass
class NodeRun:
    returncode: int
    stderr: str
    messages: list[JSON] = field(default_factory=list)
    summary: JSON = field(default_factory=dict)

    def of(self, kind: str, subtype: str | None = None) -> list[JSON]:
        return [
            m
            for m in self.messages
            if m.get("type") == kind and (subtype is None or m.get("subtype") == subtype)
        ]

    @property
    def result(self) -> JSON:
        [result] = self.of("result")
        return result


@pytest.fixture
def node() -> str:
    found = node_or_skip()
    if not SDK_PACKAGE.exists():
        missing("the TypeScript SDK is not installed (bash scripts/install-sdk-deps)",
                "WISP_REQUIRE_NODE")
    return found


@pytest.fixture
def drive(node, cli, work, env):
    assert not cli.endswith((".js", ".mjs", ".ts")), "TS would run such a path through node"

    def run_script(script: str, timeout: float = 60, **extra_env: str) -> NodeRun:
        proc = subprocess.run(
            [node, str(TS_DIR / script)],
            cwd=TS_DIR,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            env={**env, "WISP_CLI": cli, "WISP_WORK": str(work), **extra_env},
        )
        run = NodeRun(proc.returncode, proc.stderr)
        for line in proc.stdout.splitlines():
            if line.startswith("{"):
                data = json.loads(line)
                if "message" in data:
                    run.messages.append(data["message"])
                else:
                    run.summary = data["summary"]
        assert run.returncode == 0, f"node failed: {proc.stderr[-3000:]}"
        return run

    return run_script


def test_string_prompt_query(drive, server, work):
    server.script(reply.text("hello from wisp"))
    run = drive("query.mjs")
    [init] = run.of("system", "init")
    assert init["cwd"] == str(work)
    [assistant] = run.of("assistant")
    assert assistant["message"]["content"] == [{"type": "text", "text": "hello from wisp"}]
    assert run.result["subtype"] == "success" and run.result["result"] == "hello from wisp"
    # TS sends block-list content and puts the (empty) system prompt in initialize.
    body = server.requests[0].body
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "say hi"}]}]
    assert body.get("system") in (None, [])


def test_can_use_tool_rewrites_the_input(drive, server, work):
    target = work / "ts.txt"
    server.script(
        reply.tool_use("Write", {"file_path": str(target), "content": "model\n"}),
        reply.text("written"),
    )
    run = drive("can_use_tool.mjs")
    assert run.result["is_error"] is False
    assert target.read_text() == "FROM THE TS HOST\n"
    [call] = run.summary["calls"]
    assert call["toolName"] == "Write" and call["input"]["content"] == "model\n"
    assert call["toolUseID"].startswith("toolu_")
    assert call["blockedPath"] == str(target)


def test_in_process_mcp_tool(drive, server):
    server.script(reply.tool_use("mcp__calc__add", {"a": 40, "b": 2}), reply.text("forty-two"))
    run = drive("mcp_tool.mjs")
    [init] = run.of("system", "init")
    assert "mcp__calc__add" in init["tools"]
    assert run.summary["calls"] == [{"a": 40, "b": 2}]
    assert run.result["result"] == "forty-two"
    tool_result = server.requests[1].body["messages"][-1]["content"][0]
    assert tool_result["type"] == "tool_result"
    assert tool_result["content"] == [{"type": "text", "text": "42"}]


def test_set_mcp_servers_adds_a_server_whose_tool_then_runs(drive, server):
    server.script(reply.tool_use("mcp__calc__add", {"a": 2, "b": 3}), reply.text("five"))
    run = drive("set_mcp_servers.mjs")
    assert run.summary["added"] == {"added": ["calc"], "removed": [], "errors": {}}
    [row] = run.summary["status"]
    assert (row["name"], row["status"], row["transport"]) == ("calc", "connected", "sdk")
    assert row["tools"] == [{"name": "add", "annotations": {}}]
    assert run.summary["calls"] == [{"a": 2, "b": 3}]
    assert run.result["result"] == "five"
    assert "mcp__calc__add" in [t["name"] for t in server.requests[0].body["tools"]]


def test_continue_false_from_a_hook_ends_the_run_with_a_success(drive, server, work):
    server.script(reply.tool_use("Bash", {"command": "echo ran"}), reply.text("never sent"))
    run = drive("hook_stop.mjs", HOOK_CASE="stop")
    assert run.summary["seen"] == ["PreToolUse"]
    result = run.result
    assert (result["subtype"], result["is_error"], result["terminal_reason"]) == (
        "success", False, "hook_stopped")
    assert len(server.requests) == 1


def test_a_user_prompt_submit_block_ends_the_run_with_a_success(drive, server):
    run = drive("hook_stop.mjs", HOOK_CASE="block")
    assert run.result["subtype"] == "success" and run.result["is_error"] is False
    assert run.result["result"].startswith("UserPromptSubmit operation blocked by hook:\n"
                                           "not from this host")
    [notice] = run.of("system", "informational")
    assert notice["prevent_continuation"] is True
    assert server.requests == []


def test_host_requests_of_seed_000(drive, server):
    """Seed 000's host requests through the TS SDK's own methods: each is answered (the
    side model calls by the scripted server), and the hosted-only ones are refused with
    their reason, not "unsupported"."""
    server.script(reply.text("Parser fixes"), reply.text("Nothing is left."),
                  reply.text("hi"))
    run = drive("host_requests.mjs")
    summary = run.summary
    assert summary["backgrounded"] is False and summary["cancelled"] is False
    assert summary["title"] == "Parser fixes"
    assert summary["side"] == {"response": "Nothing is left.", "synthetic": False}
    assert summary["cwd"]["status"] == "ok" and summary["cwd"]["changed"] is False
    assert summary["feedback"]["unavailable"] is True
    assert summary["ultrareview"].startswith("ultrareview_launch is not available in wisp")
    assert run.result["result"] == "hi"


def test_an_mcp_elicitation_is_answered_by_on_elicitation(drive, server):
    """An MCP server's `elicitation/create` reaches the TS SDK's `onElicitation` (as an
    `elicitation` control request), and its answer reaches the server."""
    import sys

    elicit = Path(__file__).resolve().parents[1] / "mcp" / "elicit_server.py"
    server.script(reply.tool_use("mcp__elicit__ask", {}), reply.text("hello Grace"))
    run = drive("elicitation.mjs", WISP_PYTHON=sys.executable, WISP_ELICIT=str(elicit))
    [asked] = run.summary["asked"]
    assert (asked["serverName"], asked["message"], asked["mode"]) == (
        "elicit", "Who are you?", "form")
    assert asked["requestedSchema"]["required"] == ["name"]
    tool_result = server.requests[1].body["messages"][-1]["content"][0]
    assert json.loads(tool_result["content"][0]["text"])["answer"] == {
        "action": "accept", "content": {"name": "Grace"}}
    assert run.result["result"] == "hello Grace"


def test_a_ts_session_store_mirrors_and_resumes(drive, server, tmp_path):
    """The TS SDK's `sessionStore`: mirrored as the session runs (`--session-mirror`), and
    a resume with the local transcripts gone comes from the store."""
    server.script(reply.text("noted"), reply.text("it was 42"))
    run = drive("session_store.mjs", CLAUDE_CONFIG_DIR=str(tmp_path / "config"))
    summary = run.summary
    assert summary["stored"] == ["user", "assistant"]
    assert summary["resumed"] == "it was 42"
    assert "remember 42" in json.dumps(server.requests[-1].body["messages"][0])
