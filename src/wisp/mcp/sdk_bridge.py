"""MCP servers that live in the SDK process, reached with `mcp_message` control requests.

The Python SDK needs the full handshake (initialize → notifications/initialized →
tools/list) before `tools/call`; the TypeScript SDK has already run it and sends manifests
in `initialize`, which we use when present. Each server tool becomes a wisp tool named
`mcp__<server>__<tool>`.
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import ClassVar

from wisp import __version__
from wisp.tools.base import JSON, Tool, ToolContext, ToolKind, ToolResult

Send = Callable[[str, JSON], Awaitable[JSON]]
PROTOCOL = "2025-06-18"


class McpError(Exception):
    pass


@dataclass
class SdkMcpServer:
    name: str
    send: Send
    manifest: JSON | None = None
    status: str = "pending"
    error: str | None = None
    server_info: JSON | None = None
    tools: list[JSON] = field(default_factory=list)
    enabled: bool = True
    source: str = "sdk"
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    async def rpc(self, method: str, params: JSON | None = None) -> JSON:
        message: JSON = {"jsonrpc": "2.0", "id": next(self._ids), "method": method}
        if params is not None:
            message["params"] = params
        reply = await self.send(self.name, message)
        response = reply.get("mcp_response", reply)
        if isinstance(response, dict) and "error" in response:
            error = response["error"]
            raise McpError(error.get("message") if isinstance(error, dict) else str(error))
        result = response.get("result") if isinstance(response, dict) else None
        return result if isinstance(result, dict) else {}

    async def connect(self) -> None:
        try:
            if self.manifest and self.manifest.get("toolsListResult"):
                self.server_info = (self.manifest.get("initializeResult") or {}).get("serverInfo")
                self.tools = list(self.manifest["toolsListResult"].get("tools") or [])
            else:
                await self._handshake()
            self.status = "connected"
        except Exception as exc:  # a broken host server is reported, never fatal
            self.status, self.error = "failed", str(exc)

    async def _handshake(self) -> None:
        init = await self.rpc(
            "initialize",
            {
                "protocolVersion": PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "wisp", "version": __version__},
            },
        )
        self.server_info = init.get("serverInfo")
        await self.send(self.name, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        listed = await self.rpc("tools/list", {})
        self.tools = list(listed.get("tools") or [])

    def as_tools(self) -> list[Tool]:
        if not self.enabled or self.status != "connected":
            return []
        return [McpTool(self, spec) for spec in self.tools if isinstance(spec, dict)]

    def status_entry(self) -> JSON:
        entry: JSON = {
            "name": self.name,
            "status": self.status if self.enabled else "disabled",
            "config": {"type": "sdk", "name": self.name},
            "scope": "dynamic",
            "tools": [{"name": t.get("name")} for t in self.tools],
        }
        if self.server_info:
            entry["serverInfo"] = self.server_info
        if self.error:
            entry["error"] = self.error
        return entry


class McpTool(Tool):
    """One tool of an SDK-hosted server. Tool's class attributes become per-instance here,
    since every server brings its own tools."""

    kind: ClassVar[ToolKind] = "execute"

    def __init__(self, server: SdkMcpServer, spec: JSON) -> None:
        self.server = server
        self.tool_name = str(spec.get("name"))
        self.name = f"mcp__{server.name}__{self.tool_name}"  # type: ignore[misc]
        self.description = str(spec.get("description") or "")  # type: ignore[misc]
        schema = spec.get("inputSchema")
        self.input_schema = schema if isinstance(schema, dict) else {"type": "object"}  # type: ignore[misc]
        annotations = spec.get("annotations") or {}
        self.read_only = (
            bool(annotations.get("readOnlyHint")) if isinstance(annotations, dict) else False
        )

    def is_read_only(self, tool_input: JSON) -> bool:
        return self.read_only

    async def run(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        try:
            result = await self.server.rpc(
                "tools/call", {"name": self.tool_name, "arguments": tool_input}
            )
        except Exception as exc:
            return ToolResult.error(f"MCP tool {self.name} failed: {exc}")
        content = [_block(b) for b in result.get("content") or [] if isinstance(b, dict)]
        is_error = bool(result.get("isError"))
        return ToolResult(content=content or "", is_error=is_error, data=content)


def _block(block: JSON) -> JSON:
    if block.get("type") == "image":
        return {
            "type": "image",
            "source": {
                "type": "base64",
                "media_type": block.get("mimeType"),
                "data": block.get("data"),
            },
        }
    if block.get("type") == "text":
        return {"type": "text", "text": str(block.get("text", ""))}
    return {"type": "text", "text": str(block)}
