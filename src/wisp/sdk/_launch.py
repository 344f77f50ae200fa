"""What a session is started with: the command-line flags, the environment and the
`initialize` request, worked out from `ClaudeAgentOptions` once and used by both
transports.

The in-process transport parses the same flags with wisp's own parser, so the two
transports cannot drift apart: an option means what its flag means to the CLI.
Configuration too big for one argv entry goes through `initialize` instead (Linux caps a
single argument at 128 KiB and the whole argv and environment at about 2 MiB).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from wisp.jsontypes import JSON

# One argv entry above this many UTF-8 bytes moves to `initialize` (or a file).
ARG_LIMIT = 64 * 1024
# The official Python SDK release whose protocol this one speaks (CLIs may gate on it).
SDK_VERSION = "0.2.189"
SKILLS_ALL = "all"


@dataclass
class Launch:
    """Flags (without the executable), environment overlay and initialize fields."""

    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    initialize: JSON = field(default_factory=dict)
    temp_files: list[Path] = field(default_factory=list)


def _too_long(text: str) -> bool:
    return len(text) * 4 > ARG_LIMIT and len(text.encode("utf-8")) > ARG_LIMIT


def plan_launch(options: Any) -> Launch:
    launch = Launch(args=["--output-format", "stream-json", "--verbose"])
    _system_prompt(options, launch)
    _tools(options, launch)
    _limits_and_models(options, launch)
    _session_flags(options, launch)
    _settings(options, launch)
    _mcp_servers(options, launch)
    _switches(options, launch)
    _thinking(options, launch)
    _output_format(options, launch)
    _agents(options, launch)
    launch.args.extend(["--input-format", "stream-json"])
    _extra_args(options, launch)
    launch.env = full_env(options)
    return launch


def _system_prompt(options: Any, launch: Launch) -> None:
    prompt = options.system_prompt
    if prompt is None:
        launch.args.extend(["--system-prompt", ""])  # the SDKs' default: no built-in prompt
        return
    if isinstance(prompt, str):
        _prompt_arg(launch, "--system-prompt", "systemPrompt", prompt)
        return
    kind = prompt.get("type")
    if kind == "file":
        launch.args.extend(["--system-prompt-file", str(prompt["path"])])
    elif kind == "custom":
        _prompt_arg(launch, "--system-prompt", "systemPrompt", str(prompt["prompt"]))
    elif kind == "preset" and "append" in prompt:
        _prompt_arg(launch, "--append-system-prompt", "appendSystemPrompt",
                    str(prompt["append"]))


def _prompt_arg(launch: Launch, flag: str, init_key: str, text: str) -> None:
    if _too_long(text):
        launch.initialize[init_key] = text
    else:
        launch.args.extend([flag, text])


def _tools(options: Any, launch: Launch) -> None:
    tools = options.tools
    if isinstance(tools, list):
        launch.args.extend(["--tools", ",".join(tools)])
    elif tools is not None:
        launch.args.extend(["--tools", "default"])  # the claude_code preset
    allowed = list(options.allowed_tools)
    skills = options.skills
    if skills == SKILLS_ALL:
        allowed += [] if "Skill" in allowed else ["Skill"]
    elif isinstance(skills, list):
        allowed += [f"Skill({name})" for name in skills if f"Skill({name})" not in allowed]
    if allowed:
        launch.args.extend(["--allowedTools", ",".join(allowed)])
    if options.disallowed_tools:
        launch.args.extend(["--disallowedTools", ",".join(options.disallowed_tools)])


def _limits_and_models(options: Any, launch: Launch) -> None:
    args = launch.args
    if options.max_turns:
        args.extend(["--max-turns", str(options.max_turns)])
    if options.max_budget_usd is not None:
        args.extend(["--max-budget-usd", str(options.max_budget_usd)])
    if options.task_budget is not None:
        args.extend(["--task-budget", str(options.task_budget["total"])])
    if options.model:
        args.extend(["--model", options.model])
    if options.fallback_model:
        args.extend(["--fallback-model", options.fallback_model])
    if options.betas:
        args.extend(["--betas", ",".join(options.betas)])
    tool_name = "stdio" if options.can_use_tool else options.permission_prompt_tool_name
    if tool_name:
        args.extend(["--permission-prompt-tool", tool_name])
    if options.permission_mode:
        args.extend(["--permission-mode", options.permission_mode])


def _session_flags(options: Any, launch: Launch) -> None:
    # `--flag=value`: a value starting with "-" can never be read as a flag of its own.
    args = launch.args
    if options.continue_conversation:
        args.append("--continue")
    if options.resume:
        args.append(f"--resume={options.resume}")
    if options.session_id:
        args.append(f"--session-id={options.session_id}")
    if options.fork_session:
        args.append("--fork-session")
    if options.resume_session_at:
        args.append(f"--resume-session-at={options.resume_session_at}")
    if options.resume_drops_turn is not None:
        args.append(f"--resume-drops-turn={options.resume_drops_turn}")


def _settings(options: Any, launch: Launch) -> None:
    value = _settings_value(options)
    if value is not None and _too_long(value):
        value = str(_temp_file(launch, value, ".json"))
    if value is not None:
        launch.args.extend(["--settings", value])
    for directory in options.add_dirs:
        launch.args.extend(["--add-dir", str(directory)])
    if options.setting_sources is not None or options.skills is not None:
        sources = options.setting_sources
        if sources is None:
            sources = ["user", "project"]  # skills need them to be found
        launch.args.append(f"--setting-sources={','.join(sources)}")
    for plugin in options.plugins:
        if plugin.get("type") != "local":
            raise ValueError(f"Unsupported plugin type: {plugin.get('type')}")
        launch.args.extend(["--plugin-dir", str(plugin["path"])])


def _settings_value(options: Any) -> str | None:
    """`settings` (JSON text or a file's path), with `sandbox` merged in when it is set."""
    value: str | None = options.settings
    if options.sandbox is None:
        return value
    loaded: JSON = {}
    if value is not None:
        text = value.strip()
        if not (text.startswith("{") and text.endswith("}")):
            text = (Path(options.cwd or "") / text).read_text(encoding="utf-8-sig")
        loaded = json.loads(text)
    loaded["sandbox"] = options.sandbox
    return json.dumps(loaded)


def _temp_file(launch: Launch, text: str, suffix: str) -> Path:
    import tempfile

    handle, name = tempfile.mkstemp(prefix="wisp-sdk-", suffix=suffix)
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(text)
    launch.temp_files.append(Path(name))
    return Path(name)


def sdk_servers(options: Any) -> dict[str, Any]:
    """The in-process MCP servers (`create_sdk_mcp_server`) by name: their instances."""
    servers = options.mcp_servers
    if not isinstance(servers, dict):
        return {}
    return {name: config["instance"] for name, config in servers.items()
            if isinstance(config, dict) and config.get("type") == "sdk"}


def _mcp_servers(options: Any, launch: Launch) -> None:
    servers = options.mcp_servers
    if not servers:
        return
    if not isinstance(servers, dict):
        launch.args.extend(["--mcp-config", str(servers)])  # a file path or JSON text
        return
    wire = {name: ({k: v for k, v in config.items() if k != "instance"}
                   if isinstance(config, dict) and config.get("type") == "sdk" else config)
            for name, config in servers.items()}
    text = json.dumps({"mcpServers": wire})
    if not _too_long(text):
        launch.args.extend(["--mcp-config", text])
        return
    # Too big for argv: external servers as initialize's `mcpServers`, in-process ones
    # named in `sdkMcpServers` (the TypeScript SDK's way; both CLIs read it).
    external = {n: c for n, c in wire.items() if c.get("type") != "sdk"}
    if external:
        launch.initialize["mcpServers"] = external
    named = [n for n, c in wire.items() if c.get("type") == "sdk"]
    if named:
        launch.initialize["sdkMcpServers"] = named


def _switches(options: Any, launch: Launch) -> None:
    for enabled, flag in (
        (options.include_partial_messages, "--include-partial-messages"),
        (options.include_hook_events, "--include-hook-events"),
        (options.strict_mcp_config, "--strict-mcp-config"),
    ):
        if enabled:
            launch.args.append(flag)
    if options.session_store is not None:
        launch.args.append("--session-mirror")


def _thinking(options: Any, launch: Launch) -> None:
    thinking = options.thinking
    if thinking is not None:
        kind = thinking["type"]
        if kind == "enabled":
            launch.args.extend(["--max-thinking-tokens", str(thinking["budget_tokens"])])
        else:
            launch.args.extend(["--thinking", kind])
        if kind != "disabled" and "display" in thinking:
            launch.args.extend(["--thinking-display", thinking["display"]])
    elif options.max_thinking_tokens is not None:
        launch.args.extend(["--max-thinking-tokens", str(options.max_thinking_tokens)])
    if options.effort is not None:
        launch.args.extend(["--effort", options.effort])


def _output_format(options: Any, launch: Launch) -> None:
    output = options.output_format
    if isinstance(output, dict) and output.get("type") == "json_schema":
        schema = output.get("schema")
        if schema is not None:
            text = json.dumps(schema)
            if _too_long(text):
                launch.initialize["jsonSchema"] = schema
            else:
                launch.args.extend(["--json-schema", text])


def _agents(options: Any, launch: Launch) -> None:
    """Agents always travel in `initialize`, as both official SDKs send them."""
    if options.agents:
        launch.initialize["agents"] = {
            name: {k: v for k, v in asdict(agent).items() if v is not None}
            for name, agent in options.agents.items()
        }
    if isinstance(options.skills, list):
        launch.initialize["skills"] = list(options.skills)
    if options.forward_subagent_text:
        launch.initialize["forwardSubagentText"] = True
    prompt = options.system_prompt
    if isinstance(prompt, dict):
        excluded = prompt.get("exclude_dynamic_sections")
        if prompt.get("type") == "preset" and isinstance(excluded, bool):
            launch.initialize["excludeDynamicSections"] = excluded
        snapshot = prompt.get("snapshot")
        if prompt.get("type") in ("preset", "custom") and isinstance(snapshot, bool):
            launch.initialize["systemPromptSnapshot"] = snapshot


def _extra_args(options: Any, launch: Launch) -> None:
    for flag, value in options.extra_args.items():
        if value is None:
            launch.args.append(f"--{flag}")
        elif str(value).startswith("-"):
            launch.args.append(f"--{flag}={value}")
        else:
            launch.args.extend([f"--{flag}", str(value)])


def session_env(options: Any) -> dict[str, str]:
    """What goes over the caller's environment for this session (never into os.environ)."""
    env: dict[str, str] = {"CLAUDE_CODE_ENTRYPOINT": "sdk-py", **options.env,
                           "CLAUDE_AGENT_SDK_VERSION": SDK_VERSION}
    # This SDK reads lines of any length: a wisp CLI need not shorten big frames for it.
    env.setdefault("WISP_MAX_LINE_CHARS", "0")
    if not any(key.upper() == "CLAUDE_CODE_SDK_READS_SESSION_STATE" for key in env):
        env["CLAUDE_CODE_SDK_READS_SESSION_STATE"] = "1"
    if options.enable_file_checkpointing:
        env["CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING"] = "true"
    if options.cwd:
        env["PWD"] = str(options.cwd)
    if options.client_app:
        env["CLAUDE_AGENT_SDK_CLIENT_APP"] = options.client_app
    return env


def full_env(options: Any, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The session's whole environment: the caller's (minus CLAUDECODE, which would make a
    nested CLI refuse to start) with the session's overlay on top."""
    inherited = os.environ if base is None else base
    env = {k: v for k, v in inherited.items() if k != "CLAUDECODE"}
    env.update(session_env(options))
    return env
