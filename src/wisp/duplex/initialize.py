"""The `initialize` control request: apply the config the SDKs deliver there exactly as
its argv twin would, then describe this CLI in the response."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from wisp.duplex.init_answer import answer, applied_flags, commands
from wisp.errors import ControlError
from wisp.hooks.model import CallbackHook, HookMatcher, is_hook_event
from wisp.jsontypes import JSON
from wisp.wire.protocol import INITIALIZE, Initialize

if TYPE_CHECKING:
    from wisp.duplex.server import DuplexServer



def callback_matchers(hooks: Any) -> list[HookMatcher]:
    """SDK hooks by event. Events wisp never fires (a newer SDK's) are left out."""
    matchers: list[HookMatcher] = []
    if not isinstance(hooks, dict):
        return matchers
    for event, entries in hooks.items():
        if not is_hook_event(event):
            continue
        for entry in entries or []:
            if not isinstance(entry, dict):
                continue
            timeout = entry.get("timeout")
            # The SDKs read an unknown onFailure as "block": only "continue" fails open.
            blocks = entry.get("onFailure", "continue") != "continue"
            actions = tuple(
                CallbackHook(str(cid), float(timeout) if timeout else None, blocks)
                for cid in entry.get("hookCallbackIds") or []
            )
            matchers.append(HookMatcher(event, entry.get("matcher"), actions))
    return matchers


def _system_prompt(server: DuplexServer, request: Initialize) -> bool:
    prompt = request.get("systemPrompt")
    append = request.get("appendSystemPrompt")
    if prompt is None and append is None:
        return False
    if isinstance(prompt, list):
        prompt = "\n\n".join(str(p) for p in prompt if p)
    custom = prompt if isinstance(prompt, str) else server.opts.runtime.system_prompt
    extra = append if isinstance(append, str) else server.opts.runtime.append_system_prompt
    server.runtime.set_system_prompt(custom, extra)
    return True


def _sdk_mcp_servers(server: DuplexServer, request: Initialize) -> bool:
    names = request.get("sdkMcpServers")
    if not isinstance(names, list):
        return False
    server.mcp.add_sdk([str(n) for n in names], request.get("sdkMcpServerManifests"))
    return True


def _mcp_servers(server: DuplexServer, request: Initialize) -> None:
    """TypeScript's `mcpServers` delivered in initialize rather than `--mcp-config`."""
    entries = request.get("mcpServers")
    if isinstance(entries, dict):
        server.mcp.add_configured({str(k): v for k, v in entries.items() if isinstance(v, dict)})
        server.start_mcp()


async def apply_initialize(server: DuplexServer, raw: Mapping[str, Any]) -> JSON:
    """Applies an `initialize` request: the handler's (already checked) or the one the
    early path answered (checked there too; checking again costs nothing)."""
    request = INITIALIZE.parse(raw)
    matchers = callback_matchers(request.get("hooks"))
    server.runtime.add_hook_matchers(matchers)
    agents = request.get("agents")
    if isinstance(agents, dict):
        server.agents = dict(agents)
        server.runtime.define_agents(agents)  # as --agents: Task can launch them
    schema = request.get("jsonSchema")
    if schema is not None:
        from wisp.engine.structured import schema_problem

        problem = schema_problem(schema) if isinstance(schema, dict) else "not a JSON object"
        if problem is not None:
            raise ControlError(f"Invalid jsonSchema: {problem}", "invalid_schema")
        server.runtime.enable_structured_output(schema)
    _system_prompt(server, request)
    _mcp_servers(server, request)
    if _sdk_mcp_servers(server, request):
        await server.connect_mcp()
    title = request.get("title")
    if isinstance(title, str):
        server.title = title
        _persist_title(server, title)
    if request.get("forwardSubagentText") is True:  # as --forward-subagent-text
        server.frames.forward_subagent_text = True
    for key in ("settings", "disallowedTools", "managedSettings"):
        if key in request:
            _apply_extra(server, key, request[key])
    return applied_flags(request)


async def reapply_initialize(server: DuplexServer, raw: Mapping[str, Any]) -> JSON:
    """A later `initialize` (a host attaching again): the one-time config (hooks, agents,
    system prompt, schema, settings) stays as the first one set it, so callbacks never
    fire twice; a title and SDK-hosted servers not known yet are still taken (seed 000).
    The answer says `hooks_applied: false` when it carried hooks, as the SDKs expect."""
    request = INITIALIZE.parse(raw)
    title = request.get("title")
    if isinstance(title, str) and title.strip():
        server.title = title
    names = request.get("sdkMcpServers")
    if isinstance(names, list):
        fresh = [str(n) for n in names if server.mcp.get(str(n)) is None]
        if fresh:
            server.mcp.add_sdk(fresh, request.get("sdkMcpServerManifests"))
            await server.connect_mcp()
            server.refresh_tools()
    flags = {key: False for key in applied_flags(request) if key != "hooks_applied"}
    return {**flags, "hooks_applied": not callback_matchers(request.get("hooks"))}


def _persist_title(server: DuplexServer, title: str) -> None:
    """A new session's title goes in its transcript at once (a `custom-title` line), as the
    reference writes it; a resumed session keeps the title it has."""
    from wisp.sessions.transcript import TranscriptWriter

    recorder = server.session.recorder
    if title.strip() and isinstance(recorder, TranscriptWriter) \
            and not server.runtime.resumed:
        recorder.set_title(title.strip(), agent_name=False)


def _apply_extra(server: DuplexServer, key: str, value: Any) -> None:
    if key == "disallowedTools" and isinstance(value, list):
        for name in map(str, value):
            server.base_tools.pop(name, None)
        server.refresh_tools()
    elif isinstance(value, dict):
        server.flag_settings.update(value)


def initialize_response(server: DuplexServer, applied: JSON) -> JSON:
    return answer(
        env=server.env,
        agents=server.agents,
        api_key_source=server.runtime.api_key_source,
        permission_mode=server.tool_state.policy.mode,
        session_state=server.state.state,
        applied=applied,
        commands=commands(server.runtime.cwd, server.env, server.runtime.project),
        project=server.runtime.project,
    )
