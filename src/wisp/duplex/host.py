"""Requests wisp sends to the SDK host: `can_use_tool` and `hook_callback`.

A host that errors, withdraws the request, or has closed stdin denies the tool call
(it never hangs the run): the dispatcher fails pending requests at EOF. The requester is
the dispatcher over stdout and stdin, or an in-process SDK's direct answer.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from wisp.control.dispatcher import Requester
from wisp.duplex.state import StateReporter
from wisp.errors import RequestFailed
from wisp.jsontypes import JSON
from wisp.permissions.engine import Verdict
from wisp.rules import EDIT_TOOLS
from wisp.stamps import new_uuid
from wisp.tools.base import Tool
from wisp.wire.protocol import CanUseTool, Elicitation, HookCallback, PermissionAnswer

if TYPE_CHECKING:
    from wisp.runtime.runtime import Runtime

# Who left the call at "ask" (Verdict.source) → the SDKs' `decision_reason_type` values.
REASON_TYPES = {"rule": "rule", "mode": "mode", "hook": "hook", "config": "other",
                "sandboxOverride": "sandboxOverride"}


def suggestions(tool: Tool, mode: str, verdict: Verdict | None = None,
                paths: list[str] | None = None) -> list[JSON]:
    source = verdict.source if verdict is not None else ""
    if tool.asks_user or source in ("protected", "analysis", "sandboxOverride"):
        return []  # no mode or rule can grant these; only this one answer can
    if source == "boundary" and paths:
        folders = sorted({os.path.dirname(os.path.abspath(p)) for p in paths})
        return [{"type": "addDirectories", "directories": folders, "destination": "session"}]
    if tool.name in EDIT_TOOLS and mode == "default":
        return [{"type": "setMode", "mode": "acceptEdits", "destination": "session"}]
    return [
        {
            "type": "addRules",
            "rules": [{"toolName": tool.name}],
            "behavior": "allow",
            "destination": "session",
        }
    ]


class HostBridge:
    def __init__(
        self,
        requester: Requester,
        state: StateReporter,
        runtime: Runtime,
        on_interrupt: Callable[[], object],
        may_bypass: bool = False,
    ) -> None:
        self.requester = requester
        self.may_bypass = may_bypass
        self.state = state
        self.runtime = runtime  # the mode it asks in; where the answer's updates go
        self.on_interrupt = on_interrupt

    async def can_use_tool(
        self, tool: Tool, tool_input: JSON, tool_use_id: str, verdict: Verdict
    ) -> tuple[Verdict, JSON]:
        request: CanUseTool = {
            "subtype": "can_use_tool",
            "tool_name": tool.name,
            "display_name": tool.name,
            "input": tool_input,
            "description": tool.describe(tool_input),
            "permission_suggestions": suggestions(tool, self.runtime.permission_mode, verdict,
                                                  tool.target_paths(tool_input)),
            "decision_reason_type": REASON_TYPES.get(verdict.source, "other"),
            "tool_use_id": tool_use_id,
        }
        if verdict.message:
            request["decision_reason"] = verdict.message
        if tool.asks_user:  # only a person can answer it (ExitPlanMode): the reference's flag
            request["requires_user_interaction"] = True
        paths = tool.target_paths(tool_input)
        if paths:
            request["blocked_path"] = paths[0]
        self.state.begin_wait()
        try:
            answer = await self.requester.request(request)
        except RequestFailed as exc:
            return Verdict("deny", f"Permission request failed: {exc}", "host"), tool_input
        finally:
            self.state.end_wait()
        # Read with .get and isinstance: it is the host's word, its shape unchecked.
        return self._interpret(cast(PermissionAnswer, answer), tool_input)

    def _interpret(self, answer: PermissionAnswer, tool_input: JSON) -> tuple[Verdict, JSON]:
        if answer.get("behavior") == "allow":
            updated = answer.get("updatedInput")
            self.runtime.apply_permission_updates(answer.get("updatedPermissions"),
                                                  may_bypass=self.may_bypass)
            return Verdict("allow", source="host"), updated if isinstance(
                updated, dict
            ) else tool_input
        message = str(answer.get("message") or "The host denied this tool call.")
        if answer.get("interrupt"):
            self.on_interrupt()
        return Verdict("deny", message, "host"), tool_input

    async def elicit(self, server: str, params: JSON) -> JSON:
        """Asks the host what an MCP server's `elicitation/create` wants; a host that
        fails (the Python SDK has no handler) cancels, as the reference answers then; one that
        answers nonsense declines."""
        request: Elicitation = {"subtype": "elicitation", "mcp_server_name": server,
                                "message": str(params.get("message") or "")}
        if params.get("mode") == "url":
            request["mode"] = "url"
            if isinstance(params.get("url"), str):
                request["url"] = params["url"]
            if isinstance(params.get("elicitationId"), str):
                request["elicitation_id"] = params["elicitationId"]
        elif isinstance(params.get("requestedSchema"), dict):
            request["mode"] = "form"
            request["requested_schema"] = params["requestedSchema"]
            # The fields' order as the server wrote them (the reference sends it: a host
            # decoding JSON into an unordered map would lose it).
            fields = params["requestedSchema"].get("properties")
            if isinstance(fields, dict):
                request["property_order"] = list(fields)
        self.state.begin_wait()
        try:
            answer = await self.requester.request(request)
        except RequestFailed:  # a host with no handler: nobody answered (the reference's)
            return {"action": "cancel"}
        finally:
            self.state.end_wait()
        action = answer.get("action")
        if action not in ("accept", "decline", "cancel"):
            return {"action": "decline"}
        content = answer.get("content")
        return ({"action": action, "content": content}
                if action == "accept" and isinstance(content, dict) else {"action": action})

    async def hook_callback(
        self, callback_id: str, hook_input: JSON, tool_use_id: str | None, timeout: float | None
    ) -> JSON:
        # Like the reference, events without a tool call get a fresh id of their own.
        request: HookCallback = {
            "subtype": "hook_callback",
            "callback_id": callback_id,
            "input": hook_input,
            "tool_use_id": tool_use_id or new_uuid(),
        }
        return await self.requester.request(request, timeout)
