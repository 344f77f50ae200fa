"""The body of the `initialize` answer, as a pure function of cheap facts.

Kept free of engine imports so the early path (`wisp.duplex.early`) can answer before the
engine loads; the regular handler (`wisp.duplex.initialize`) builds the same answer from
the live session.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wisp import PROTOCOL_VERSION, __version__
from wisp.jsontypes import JSON
from wisp.models import catalog

if TYPE_CHECKING:
    from wisp.project.context import ProjectContext

_EXTRA_FLAGS = {"settings": "settings_applied", "managedSettings": "managed_settings_applied"}


def applied_flags(request: Mapping[str, Any]) -> JSON:
    """The `*_applied` acknowledgements for what the request carried. TS ends the session
    when one it depends on is missing (docs/protocol.md, "The initialize handshake")."""
    flags: JSON = {"hooks_applied": True}
    for key, flag in _EXTRA_FLAGS.items():
        if key in request:
            flags[flag] = isinstance(request[key], dict)
    if "disallowedTools" in request:
        flags["disallowed_tools_applied"] = isinstance(request["disallowedTools"], list)
    if "mcpServers" in request:
        flags["mcp_servers_applied"] = isinstance(request["mcpServers"], dict)
    return flags


def models(env: Mapping[str, str]) -> list[JSON]:
    default = catalog.resolve_model(None, env)
    listed = [
        {
            "value": "default",
            "resolvedModel": default,
            "displayName": "Default",
            "description": f"Use the default model ({default})",
        }
    ]
    for alias in catalog.DEFAULT_ALIASES:
        resolved = catalog.resolve_model(alias, env)
        listed.append(
            {
                "value": alias,
                "resolvedModel": resolved,
                "displayName": alias.capitalize(),
                "description": resolved,
            }
        )
    return listed


def answer(
    *,
    env: Mapping[str, str],
    agents: Mapping[str, Any],
    api_key_source: str,
    permission_mode: str,
    session_state: str,
    applied: JSON,
    commands: list[JSON] | None = None,
    project: ProjectContext | None = None,
) -> JSON:
    """`agents` are the host's; a project's file agents come first (a host's agent of the
    same name replaces one)."""
    listed = {**(project.agents if project is not None else {}), **agents}
    return {
        "commands": commands or [],
        "agents": [
            {"name": name, "description": _description(agent)} for name, agent in listed.items()
        ],
        "output_style": project.style_name() if project is not None else "default",
        "available_output_styles": (project.available_styles() if project is not None
                                    else ["default"]),
        "models": models(env),
        "account": {"apiKeySource": api_key_source, "apiProvider": "firstParty"},
        "pid": os.getpid(),
        "claude_code_version": PROTOCOL_VERSION,
        "wisp_version": __version__,
        "current_permission_mode": permission_mode,
        "hook_on_failure_supported": True,
        "session_state": session_state,
        **applied,
    }


def commands(cwd: Path, env: Mapping[str, str], project: ProjectContext | None = None
             ) -> list[JSON]:
    """The slash commands a prompt may name (the SDKs' `supportedCommands()`)."""
    from wisp.commands.prompts import listing
    from wisp.paths import config_dir

    return listing(cwd, config_dir(env), project)


def _description(agent: Any) -> str:
    return str(agent.get("description", "")) if isinstance(agent, dict) else ""
