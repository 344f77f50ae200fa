"""`ToolPlan`: which tools a session's agent has, where each call runs (here in the
cloud, or by the client), and which ones ask the client first (`always_ask`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wisp.jsontypes import JSON
from wisp.mcp.client import mcp_tool_name
from wisp.serve.toolset import BUILTIN_NAMES, SERVER_RUN, TOOLSET_NAMES, TOOLSET_TYPE

# The rule family each file tool is judged under; Bash has none (see `allow_rules`).
FAMILY_OF = {"Read": "Read", "Glob": "Read", "Grep": "Read", "Write": "Edit",
             "Edit": "Edit", "Bash": "", "WebFetch": "WebFetch"}


class ToolPlan:
    """Which tools the agent has, where each runs, and which ask first."""

    def __init__(self, agent: Mapping[str, Any], environment: JSON | None) -> None:
        config = (environment or {}).get("config") or {}
        self.self_hosted = config.get("type") == "self_hosted"
        self.toolset: dict[str, str] = {}  # name → "allow" | "ask"
        self.custom: list[JSON] = []
        self.web_fetch: JSON = {}  # web_fetch's options (domains, max_content_tokens)
        # MCP toolsets by server name, and model tool name → (server, tool) once connected.
        self.mcp_toolsets: dict[str, JSON] = {}
        self.mcp_calls: dict[str, tuple[str, str]] = {}
        for tool in agent.get("tools") or []:
            if tool.get("type") == TOOLSET_TYPE:
                self.toolset.update(_toolset_policies(tool))
                self.web_fetch = next((c for c in tool.get("configs") or []
                                       if c.get("name") == "web_fetch"), {})
            elif tool.get("type") == "custom":
                self.custom.append(tool)
            elif tool.get("type") == "mcp_toolset":
                self.mcp_toolsets[str(tool.get("mcp_server_name"))] = tool

    def route(self, name: str) -> tuple[str, str]:
        if name in self.toolset:
            here = not self.self_hosted or name in SERVER_RUN
            return ("cloud" if here else "client"), self.toolset[name]
        if any(tool.get("name") == name for tool in self.custom):
            return "custom", "allow"
        call = self.mcp_call(name)
        if call is not None:
            return "mcp", self.mcp_setting(*call)[1]
        # A name the agent has no tool for: the engine answers the model with an error
        # here; no client could run it (an `agent.custom_tool_use` would wait forever).
        return "cloud", "allow"

    def mcp_call(self, name: str) -> tuple[str, str] | None:
        """(server, tool) of an MCP tool's model name: as connected, or, before the
        servers are (a session recovered after a crash), read off the name."""
        if name in self.mcp_calls:
            return self.mcp_calls[name]
        for server in self.mcp_toolsets:
            prefix = mcp_tool_name(server, "")
            if name.startswith(prefix) and len(name) > len(prefix):
                return server, name[len(prefix):]
        return None

    def mcp_setting(self, server: str, tool: str) -> tuple[bool, str]:
        """Whether the server's toolset enables `tool`, and its policy ("allow"/"ask")."""
        toolset = self.mcp_toolsets.get(server) or {}
        default = toolset.get("default_config") or {}
        config = next((c for c in toolset.get("configs") or [] if c.get("name") == tool),
                      default)
        return config.get("enabled", True) is not False, _policy_of(config)

    def allow_rules(self, workspace: Path) -> tuple[str, ...]:
        """Cloud toolset tools the agent config enables run without a question here
        (`always_ask` ones after the client's confirmation), on the session's workspace
        only. Rules name wisp's tools (`Read`, `Edit`…), which the toolset's calls are
        judged as; Bash needs none (the session's sandbox allows what it holds); the
        server's deny rules and protected paths still hold. `web_fetch` runs here in
        every environment."""
        from wisp.serve.containment import workspace_rules

        here = [n for n in self.toolset if not self.self_hosted or n in SERVER_RUN]
        families = {FAMILY_OF[BUILTIN_NAMES[name]] for name in here}
        rules = [rule for rule in workspace_rules(workspace)
                 if rule.split("(", 1)[0] in families]
        return (*rules, *(["WebFetch"] if "WebFetch" in families else []))


def _toolset_policies(tool: JSON) -> dict[str, str]:
    default = tool.get("default_config") or {}
    default_on = default.get("enabled", True) is not False
    default_policy = _policy_of(default)
    overrides = {c.get("name"): c for c in tool.get("configs") or [] if isinstance(c, dict)}
    policies: dict[str, str] = {}
    for name in TOOLSET_NAMES:
        config = overrides.get(name, {})
        if config.get("enabled", default_on) is False:
            continue
        policies[name] = _policy_of(config) if "permission_policy" in config else default_policy
    return policies


def _policy_of(config: JSON) -> str:
    policy = config.get("permission_policy") or {}
    return "ask" if policy.get("type") == "always_ask" else "allow"
