"""The official Python Agent SDK drives `wisp` in a project with CLAUDE.md memory, file
agents, a skill, an output style and a plugin, and the model receives what each says.

The SDK sends `--system-prompt ""` by default, so memory must not depend on wisp's own
system prompt: it travels at the start of the first user message, as the reference
places it. `setting_sources` unset loads every source; a list restricts them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from tests.mcp.conftest import gone, needs_mcp, pids
from tests.project import tree
from wisp.testing import ScriptedServer, reply

sdk = pytest.importorskip(
    "claude_agent_sdk", reason="claude-agent-sdk is not installed (bash scripts/install-sdk-deps)"
)
from claude_agent_sdk import (  # noqa: E402
    AgentDefinition,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    ResultMessage,
    SystemMessage,
    query,
)

T = TypeVar("T")


def run(coro: Awaitable[T], timeout: float = 90) -> T:
    return asyncio.run(asyncio.wait_for(coro, timeout))  # type: ignore[arg-type]


def config_dir(env: dict[str, str]) -> Path:
    return Path(env["HOME"]) / ".claude"


def options(cli: str, work: Path, env: dict[str, str], **kwargs: Any) -> ClaudeAgentOptions:
    extra = {"CLAUDE_CONFIG_DIR": str(config_dir(env))}
    return ClaudeAgentOptions(cli_path=cli, cwd=str(work), env={**env, **extra}, **kwargs)


async def collect(prompt: str, opts: ClaudeAgentOptions) -> list[Any]:
    return [m async for m in query(prompt=prompt, options=opts)]


def init_of(messages: list[Any]) -> dict[str, Any]:
    return next(m.data for m in messages
                if isinstance(m, SystemMessage) and m.subtype == "init")


def result_of(messages: list[Any]) -> ResultMessage:
    [result] = [m for m in messages if isinstance(m, ResultMessage)]
    return result


def test_memory_reaches_the_model_with_setting_sources_unset_and_follows_them(
        server: ScriptedServer, cli: str, work: Path, env: dict[str, str]) -> None:
    tree.memory_files(work, config_dir(env))
    server.script(reply.text("one"), reply.text("two"))
    everything = run(collect("hi", options(cli, work, env)))
    user_only = run(collect("hi", options(cli, work, env, setting_sources=["user"])))
    assert result_of(everything).result == "one" and result_of(user_only).result == "two"
    first, second = (tree.user_text(r.body) for r in server.requests)
    for mark in (tree.USER_RULE, tree.PROJECT_RULE, tree.IMPORTED_RULE, tree.LOCAL_RULE):
        assert mark in first
    assert str(work / "CLAUDE.md") in first
    assert tree.USER_RULE in second
    assert tree.PROJECT_RULE not in second and tree.LOCAL_RULE not in second
    recalls = [m for m in everything
               if isinstance(m, SystemMessage) and m.subtype == "memory_recall"]
    assert len(recalls) == 1 and len(recalls[0].data["memories"]) == 4


def test_file_agents_are_listed_merged_and_run_with_their_prompt(
        server: ScriptedServer, cli: str, work: Path, env: dict[str, str]) -> None:
    tree.agent_file(work, "reviewer")
    tree.agent_file(work, "auditor")
    server.script(
        reply.tool_use("Task", {"description": "audit", "prompt": "audit it",
                                "subagent_type": "auditor"}),
        reply.text("audited"),
        reply.tool_use("Task", {"description": "review", "prompt": "review it",
                                "subagent_type": "reviewer"}),
        reply.text("reviewed"), reply.text("all done"))
    sdk_agent = AgentDefinition(description="the SDK's reviewer", prompt="SDK-REVIEWER-PROMPT")
    opts = options(cli, work, env, agents={"reviewer": sdk_agent})

    async def scenario() -> tuple[dict[str, Any] | None, list[Any]]:
        async with ClaudeSDKClient(opts) as client:
            info = await client.get_server_info()
            await client.query("check everything")
            return info, [m async for m in client.receive_response()]

    info, messages = run(scenario())
    assert info is not None
    listed = {a["name"]: a["description"] for a in info["agents"]}
    assert listed["auditor"] == "Reviews diffs"
    assert listed["reviewer"] == "the SDK's reviewer"  # the explicit definition wins
    assert {"auditor", "reviewer"} <= set(init_of(messages)["agents"])
    audit_child, review_child = server.requests[1].body, server.requests[3].body
    assert tree.AGENT_PROMPT in tree.system_text(audit_child)
    assert "SDK-REVIEWER-PROMPT" in tree.system_text(review_child)
    assert tree.AGENT_PROMPT not in tree.system_text(review_child)
    assert result_of(messages).result == "all done"


def test_a_skill_body_loads_only_when_the_model_asks(
        server: ScriptedServer, cli: str, work: Path, env: dict[str, str]) -> None:
    tree.skill(work)
    server.script(reply.tool_use("Skill", {"skill": "pdf", "args": "report.pdf"}),
                  reply.text("summarised"))
    messages = run(collect("summarise report.pdf", options(cli, work, env)))
    assert init_of(messages)["skills"] == ["pdf"]
    first, second = (r.body for r in server.requests)
    assert tree.SKILL_BODY not in tree.all_text(first)
    assert "Work with PDF files" in tree.all_text(first)
    assert tree.SKILL_BODY in tree.all_text(second["messages"][-1])
    assert result_of(messages).result == "summarised"


def test_the_output_style_reaches_the_model_even_with_the_sdks_empty_prompt(
        server: ScriptedServer, cli: str, work: Path, env: dict[str, str]) -> None:
    tree.output_style(work, local=True)
    tree.write(work / ".claude" / "settings.json", '{"outputStyle": "Explanatory"}')
    server.script(reply.text("ok"))

    async def scenario() -> tuple[dict[str, Any] | None, list[Any]]:
        async with ClaudeSDKClient(options(cli, work, env)) as client:
            info = await client.get_server_info()
            await client.query("hi")
            return info, [m async for m in client.receive_response()]

    info, messages = run(scenario())
    assert info is not None and info["output_style"] == "Terse"
    assert {"default", "Terse"} <= set(info["available_output_styles"])
    assert init_of(messages)["output_style"] == "Terse"
    assert tree.STYLE_BODY in tree.system_text(server.requests[0].body)


@needs_mcp
def test_the_plugins_option_loads_a_plugin_whose_four_parts_work(
        server: ScriptedServer, cli: str, work: Path, env: dict[str, str],
        tmp_path: Path) -> None:
    pid_file = tmp_path / "calc.pids"
    root = tree.plugin(tmp_path / "deployer", pid_file)
    tool = tree.plugin_tool()
    server.script(
        reply.tool_use(tool, {"a": 20, "b": 22}),
        reply.tool_use("Task", {"description": "check", "prompt": "check it",
                                "subagent_type": "deployer:checker"}),
        reply.text("checked"), reply.text("shipped"))
    opts = options(cli, work, env, plugins=[{"type": "local", "path": str(root)}],
                   allowed_tools=[tool])
    messages = run(collect("/deployer:ship staging", opts))
    init = init_of(messages)
    assert [p["name"] for p in init["plugins"]] == ["deployer"]
    assert "deployer:ship" in init["slash_commands"]
    assert "PLUGIN-COMMAND-6a7b: deploy staging now." in tree.all_text(
        server.requests[0].body)
    result = next(b for b in server.requests[1].body["messages"][-1]["content"]
                  if b["type"] == "tool_result")
    assert result["content"] == [{"type": "text", "text": "42"}]
    assert (work / "hook.log").read_text() == f"{tree.HOOK_MARK} {tool}\n"
    assert tree.PLUGIN_AGENT_PROMPT in tree.system_text(server.requests[2].body)
    assert result_of(messages).result == "shipped"
    [pid] = pids(pid_file)
    assert gone(pid)


def test_context_usage_counts_the_memory_files(
        server: ScriptedServer, cli: str, work: Path, env: dict[str, str]) -> None:
    tree.memory_files(work, config_dir(env))

    async def scenario() -> Any:
        async with ClaudeSDKClient(options(cli, work, env)) as client:
            return await client.get_context_usage()

    usage = run(scenario())
    files = usage["memoryFiles"]
    assert [f["type"] for f in files] == ["user", "project", "project", "local"]
    assert files[1]["path"] == str(work / "CLAUDE.md") and all(f["tokens"] > 0 for f in files)
    memory = next(c for c in usage["categories"] if c["id"] == "memory_files")
    assert memory["tokens"] >= sum(f["tokens"] for f in files)
