"""The agent's requests of its SDK host, answered by the caller's Python callbacks:
`can_use_tool` (a permission decision), `hook_callback` (a hook's output) and
`mcp_message` (JSON-RPC for an in-process MCP server). Shared by both transports: the
subprocess link's requests arrive as frames, the in-process link's as direct calls.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from wisp.jsontypes import JSON
from wisp.sdk._launch import sdk_servers
from wisp.sdk.errors import ClaudeSDKError
from wisp.sdk.types import (
    PermissionResultAllow,
    PermissionResultDeny,
    PermissionUpdate,
    ToolPermissionContext,
)

# How a link reaches `HostAnswers.answer`: request body in, answer body out.
Answer = Callable[[JSON], Awaitable[JSON]]


class HostAnswers:
    def __init__(self, options: Any) -> None:
        self.options = options
        self.servers = _connections(sdk_servers(options))
        self.hook_callbacks: dict[str, Any] = {}

    @property
    def needed(self) -> bool:
        """Whether the agent may ask us anything at all."""
        return bool(self.servers or self.options.hooks or self.options.can_use_tool)

    def register_hook(self, callback: Any) -> str:
        """The id the agent will name `callback` by in its `hook_callback` requests."""
        callback_id = f"hook_{len(self.hook_callbacks)}"
        self.hook_callbacks[callback_id] = callback
        return callback_id

    async def answer(self, request: JSON) -> JSON:
        """The body of our answer to one of the agent's requests; raising makes it an error
        answer. Called directly by the in-process link, from frames by the subprocess one."""
        subtype = request.get("subtype")
        if subtype == "can_use_tool":
            return await self._can_use_tool(request)
        if subtype == "hook_callback":
            return await self._hook_callback(request)
        if subtype == "mcp_message":
            return await self._mcp_message(request)
        if subtype == "elicitation":
            # Asked only when no Elicitation hook answered (`wisp.sdk.elicitation`): a
            # decline, as the official TypeScript SDK answers without `onElicitation`.
            return {"action": "decline"}
        raise ClaudeSDKError(f"Unsupported control request subtype: {subtype}")

    async def _can_use_tool(self, request: JSON) -> JSON:
        callback = self.options.can_use_tool
        if callback is None:
            raise ClaudeSDKError("canUseTool callback is not provided")
        context = ToolPermissionContext(
            signal=None,
            suggestions=[PermissionUpdate.from_dict(s) for s in
                         request.get("permission_suggestions") or []],
            tool_use_id=request.get("tool_use_id"),
            agent_id=request.get("agent_id"),
            blocked_path=request.get("blocked_path"),
            decision_reason=request.get("decision_reason"),
            title=request.get("title"),
            display_name=request.get("display_name"),
            description=request.get("description"),
        )
        original = request.get("input") or {}
        result = await callback(str(request.get("tool_name")), original, context)
        if isinstance(result, PermissionResultAllow):
            body: JSON = {"behavior": "allow", "updatedInput": result.updated_input
                          if result.updated_input is not None else original}
            if result.updated_permissions is not None:
                body["updatedPermissions"] = [u if isinstance(u, dict) else u.to_dict()
                                              for u in result.updated_permissions]
            return body
        if isinstance(result, PermissionResultDeny):
            body = {"behavior": "deny", "message": result.message}
            if result.interrupt:
                body["interrupt"] = True
            return body
        raise TypeError("can_use_tool must return PermissionResultAllow or "
                        f"PermissionResultDeny, got {type(result).__name__}")

    async def _hook_callback(self, request: JSON) -> JSON:
        callback_id = str(request.get("callback_id"))
        callback = self.hook_callbacks.get(callback_id)
        if callback is None:
            raise ClaudeSDKError(f"No hook callback found for ID: {callback_id}")
        output = await callback(request.get("input"), request.get("tool_use_id"),
                                {"signal": None})
        if not isinstance(output, dict):
            raise TypeError(f"hook callback {getattr(callback, '__name__', callback_id)} "
                            f"must return a dict, got {type(output).__name__}")
        # Python spells the reserved words with a trailing underscore.
        renames = {"async_": "async", "continue_": "continue"}
        raw: JSON = dict(output)
        return {renames.get(key, key): value for key, value in raw.items()}

    async def _mcp_message(self, request: JSON) -> JSON:
        name, message = request.get("server_name"), request.get("message")
        if not isinstance(name, str) or not isinstance(message, dict):
            raise ClaudeSDKError("Missing server_name or message for MCP request")
        server = self.servers.get(name)
        if server is None:
            reply: JSON | None = {"jsonrpc": "2.0", "id": message.get("id"), "error": {
                "code": -32601, "message": f"Server '{name}' not found"}}
        else:
            try:
                reply = await server.handle(message)
            except Exception as exc:
                reply = {"jsonrpc": "2.0", "id": message.get("id"), "error": {
                    "code": -32603, "message": str(exc) or type(exc).__name__}}
        # A notification has no reply, but the request that carried it wants one.
        return {"mcp_response": reply if reply is not None else {"jsonrpc": "2.0", "result": {}}}


def _connections(instances: dict[str, Any]) -> dict[str, Any]:
    """A connection of this session to each in-process MCP server: a server shared by
    several sessions keeps their request ids and cancellations apart."""
    connections = {}
    for name, instance in instances.items():
        if not callable(getattr(instance, "connect", None)):
            raise TypeError(
                f"ClaudeAgentOptions.mcp_servers[{name!r}] has an instance wisp.sdk cannot "
                f"serve ({type(instance).__name__}); build it with "
                "wisp.sdk.create_sdk_mcp_server")
        connections[name] = instance.connect()
    return connections
