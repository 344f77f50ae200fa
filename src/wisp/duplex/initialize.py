"""The `initialize` control request: apply the config the SDKs deliver there exactly as
its argv twin would, then describe this CLI in the response."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from wisp import PROTOCOL_VERSION, __version__
from wisp.hooks.model import CallbackHook, HookMatcher
from wisp.mcp.sdk_bridge import SdkMcpServer
from wisp.models import catalog
from wisp.prompts.system import system_blocks

if TYPE_CHECKING:
    from wisp.duplex.server import DuplexServer

JSON = dict[str, Any]


def callback_matchers(hooks: Any) -> list[HookMatcher]:
    matchers: list[HookMatcher] = []
    if not isinstance(hooks, dict):
        return matchers
    for event, entries in hooks.items():
        for entry in entries or []:
            if not isinstance(entry, dict):
                continue
            timeout = entry.get("timeout")
            actions = tuple(CallbackHook(str(cid), float(timeout) if timeout else None)
                            for cid in entry.get("hookCallbackIds") or [])
            matchers.append(HookMatcher(str(event), entry.get("matcher"), actions))
    return matchers


def _system_prompt(server: DuplexServer, request: JSON) -> bool:
    prompt = request.get("systemPrompt")
    append = request.get("appendSystemPrompt")
    if prompt is None and append is None:
        return False
    if isinstance(prompt, list):
        prompt = "\n\n".join(str(p) for p in prompt if p)
    custom = prompt if isinstance(prompt, str) else server.opts.system_prompt
    extra = append if isinstance(append, str) else server.opts.append_system_prompt
    server.ctx.config.system_blocks = system_blocks(server.opts.cwd, custom, extra)
    return True


def _sdk_mcp_servers(server: DuplexServer, request: JSON) -> bool:
    names = request.get("sdkMcpServers")
    if not isinstance(names, list):
        return False
    manifests = request.get("sdkMcpServerManifests") or {}
    for name in map(str, names):
        manifest = manifests.get(name) if isinstance(manifests, dict) else None
        server.mcp_servers[name] = SdkMcpServer(name, server.mcp_send, manifest=manifest)
    server.mcp_connected = False
    return True


async def apply_initialize(server: DuplexServer, request: JSON) -> JSON:
    applied: JSON = {}
    matchers = callback_matchers(request.get("hooks"))
    if server.ctx.hooks is not None and matchers:
        server.ctx.hooks.add(matchers)
    applied["hooks_applied"] = True
    if isinstance(request.get("agents"), dict):
        server.agents = dict(request["agents"])
    schema = request.get("jsonSchema")
    if isinstance(schema, dict):
        from wisp.engine.structured import enable_structured_output

        enable_structured_output(server.ctx.config, schema)
    _system_prompt(server, request)
    if _sdk_mcp_servers(server, request):
        await server.ensure_mcp()
    if isinstance(request.get("title"), str):
        server.title = request["title"]
    for key in ("settings", "disallowedTools", "managedSettings"):
        if key in request:
            applied[_applied_key(key)] = _apply_extra(server, key, request[key])
    if "mcpServers" in request:
        applied["mcp_servers_applied"] = False  # only SDK-hosted servers are supported
    return applied


def _applied_key(key: str) -> str:
    return {"settings": "settings_applied", "disallowedTools": "disallowed_tools_applied",
            "managedSettings": "managed_settings_applied"}[key]


def _apply_extra(server: DuplexServer, key: str, value: Any) -> bool:
    if key == "disallowedTools" and isinstance(value, list):
        for name in map(str, value):
            server.base_tools.pop(name, None)
        server.refresh_tools()
        return True
    if isinstance(value, dict):
        server.flag_settings.update(value)
        return True
    return False


def initialize_response(server: DuplexServer, applied: JSON) -> JSON:
    default = catalog.resolve_model(None, server.env)
    models = [{"value": "default", "resolvedModel": default, "displayName": "Default",
               "description": f"Use the default model ({default})"}]
    for alias in catalog.DEFAULT_ALIASES:
        resolved = catalog.resolve_model(alias, server.env)
        models.append({"value": alias, "resolvedModel": resolved,
                       "displayName": alias.capitalize(), "description": resolved})
    return {
        "commands": [],
        "agents": [{"name": n, "description": (a or {}).get("description", "")}
                   for n, a in server.agents.items()],
        "output_style": "default",
        "available_output_styles": ["default"],
        "models": models,
        "account": {"apiKeySource": server.ctx.config.api_key_source,
                    "apiProvider": "firstParty"},
        "pid": os.getpid(),
        "claude_code_version": PROTOCOL_VERSION,
        "wisp_version": __version__,
        "current_permission_mode": server.tool_state.policy.mode,
        "hook_on_failure_supported": True,
        "session_state": server.state.state,
        **applied,
    }
