"""In-process MCP tools: the `@tool` decorator, `create_sdk_mcp_server`, and the server
that answers the JSON-RPC the CLI sends over the control channel (`mcp_message`).

The official SDK builds an `mcp.server.Server` and runs it over an in-memory transport;
wisp must not need the `mcp` package, so `SdkMcpServer` speaks the small part of MCP an
SDK server uses (initialize, ping, tools/list, tools/call, cancellation) itself, giving the
same answers: a failing, unknown or badly-called tool is an `isError` result the model can
read, never a protocol error.

The JSON-RPC exchange itself is in `wisp.sdk._mcp_connection`, and the JSON Schema of a
tool's declared input in `wisp.sdk._mcp_schema`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from wisp.jsontypes import JSON
from wisp.sdk._mcp_connection import SdkMcpConnection
from wisp.sdk._mcp_schema import input_json_schema
from wisp.sdk.types import McpSdkServerConfig

logger = logging.getLogger(__name__)

T = TypeVar("T")
V = TypeVar("V")

# The key under which a tool's result-size hint travels (clients drop unknown annotations).
MAX_RESULT_SIZE_META = "anthropic/maxResultSizeChars"

_HINTS = ("title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
_SNAKE_HINTS = {
    "read_only_hint": "readOnlyHint",
    "destructive_hint": "destructiveHint",
    "idempotent_hint": "idempotentHint",
    "open_world_hint": "openWorldHint",
    "max_result_size_chars": "maxResultSizeChars",
}


class ToolAnnotations:
    """Hints about a tool's behaviour, shown to the model in `tools/list`.

    Takes each hint in its wire spelling (`readOnlyHint`) or in snake_case
    (`read_only_hint`); given both, the wire spelling wins. `maxResultSizeChars` is a
    Claude Code hint, not an MCP one: how large a result may be before the CLI stores it
    in a file and shows a preview. It is sent in the tool's `_meta`. Unknown keywords are
    kept in `extra` and not sent.
    """

    def __init__(
        self,
        *,
        title: str | None = None,
        readOnlyHint: bool | None = None,
        read_only_hint: bool | None = None,
        destructiveHint: bool | None = None,
        destructive_hint: bool | None = None,
        idempotentHint: bool | None = None,
        idempotent_hint: bool | None = None,
        openWorldHint: bool | None = None,
        open_world_hint: bool | None = None,
        maxResultSizeChars: int | None = None,
        max_result_size_chars: int | None = None,
        **extra: Any,
    ) -> None:
        self.title = title
        self.readOnlyHint = _first(readOnlyHint, read_only_hint)
        self.destructiveHint = _first(destructiveHint, destructive_hint)
        self.idempotentHint = _first(idempotentHint, idempotent_hint)
        self.openWorldHint = _first(openWorldHint, open_world_hint)
        self.maxResultSizeChars = _first(maxResultSizeChars, max_result_size_chars)
        self.extra: dict[str, Any] = dict(extra)

    # snake_case reads, as mcp 2.x names them
    @property
    def read_only_hint(self) -> bool | None:
        return self.readOnlyHint

    @property
    def destructive_hint(self) -> bool | None:
        return self.destructiveHint

    @property
    def idempotent_hint(self) -> bool | None:
        return self.idempotentHint

    @property
    def open_world_hint(self) -> bool | None:
        return self.openWorldHint

    @property
    def max_result_size_chars(self) -> int | None:
        return self.maxResultSizeChars

    def to_wire(self) -> JSON:
        """The MCP `annotations` object: the hints that are set."""
        return {k: getattr(self, k) for k in _HINTS if getattr(self, k) is not None}

    def _fields(self) -> JSON:
        return {**self.to_wire(), "maxResultSizeChars": self.maxResultSizeChars, **self.extra}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ToolAnnotations):
            return NotImplemented
        return self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self._fields().items() if v is not None)
        return f"ToolAnnotations({shown})"


def _first(wire: V | None, snake: V | None) -> V | None:
    return wire if wire is not None else snake


@dataclass
class SdkMcpTool(Generic[T]):
    """A tool served in-process: what `@tool` returns and `create_sdk_mcp_server` takes."""

    name: str
    description: str
    input_schema: type[T] | dict[str, Any]
    handler: Callable[[T], Awaitable[dict[str, Any]]]
    annotations: ToolAnnotations | None = None


ToolHandler = Callable[[Any], Awaitable[dict[str, Any]]]


def tool(
    name: str,
    description: str,
    input_schema: type | dict[str, Any],
    annotations: ToolAnnotations | None = None,
) -> Callable[[ToolHandler], SdkMcpTool[Any]]:
    """Turns an async function taking the arguments dict into an `SdkMcpTool`.

    `input_schema` is a JSON Schema (a dict with string "type" and "properties"), a dict
    of argument names to Python types (all required; `Annotated[t, "text"]` adds a
    description), or a TypedDict class. The function returns
    `{"content": [...], "is_error": bool}`; raising is reported to the model as an error.
    """

    def wrap(handler: ToolHandler) -> SdkMcpTool[Any]:
        return SdkMcpTool(name, description, input_schema, handler, annotations)

    return wrap


# Annotations ------------------------------------------------------------------------------


def _annotations_wire(annotations: Any) -> JSON | None:
    """The `annotations` object; also takes an mcp `ToolAnnotations` or a mapping."""
    if annotations is None:
        return None
    if isinstance(annotations, ToolAnnotations):
        return annotations.to_wire()
    dump = getattr(annotations, "model_dump", None)
    raw = dump(by_alias=True, exclude_none=True) if callable(dump) else annotations
    if not isinstance(raw, Mapping):
        return None
    hints = {_SNAKE_HINTS.get(k, k): v for k, v in raw.items()}
    return {k: hints[k] for k in _HINTS if hints.get(k) is not None}


def _max_result_size(annotations: Any) -> Any:
    if isinstance(annotations, Mapping):
        return annotations.get("maxResultSizeChars", annotations.get("max_result_size_chars"))
    return getattr(annotations, "maxResultSizeChars", None)


# Results ----------------------------------------------------------------------------------


def _error_result(text: str) -> JSON:
    return {"content": [{"type": "text", "text": text}], "isError": True}


def _mcp_content(items: list[dict[str, Any]]) -> list[JSON]:
    """A handler's content as MCP content: text and images pass; resource links and text
    resources become text (what the CLI shows); anything else is dropped with a warning."""
    content: list[JSON] = []
    for item in items:
        kind = item.get("type")
        if kind == "text":
            content.append({"type": "text", "text": item["text"]})
        elif kind == "image":
            content.append({"type": "image", "data": item["data"], "mimeType": item["mimeType"]})
        elif kind == "resource_link":
            parts = [str(p) for p in (item.get("name"), item.get("uri"), item.get("description"))
                     if p]
            content.append({"type": "text", "text": "\n".join(parts) or "Resource link"})
        elif kind == "resource":
            resource = item.get("resource") or {}
            if "text" in resource:
                content.append({"type": "text", "text": resource["text"]})
            else:
                logger.warning("Dropping a binary embedded resource from a tool result")
        else:
            logger.warning("Dropping content of unsupported type %r from a tool result", kind)
    return content


# The server -------------------------------------------------------------------------------


class SdkMcpServer:
    """An MCP server living in the SDK process.

    `handle` answers one JSON-RPC message from the CLI; `list_tools` and `call_tool` are
    the same operations for direct use. `tools` maps names to tools (a later tool of the
    same name replaces an earlier one). A host serving several CLI sessions at once gives
    each its own `connect()`, so that request ids and cancellations stay per session.
    """

    def __init__(
        self, name: str, version: str = "1.0.0", tools: list[SdkMcpTool[Any]] | None = None
    ) -> None:
        self.name = name
        self.version = version
        self.tools: dict[str, SdkMcpTool[Any]] = {t.name: t for t in tools or []}
        # Built up front, as the official SDK does, so a bad declaration fails here.
        self._schemas: dict[str, tuple[SdkMcpTool[Any], JSON]] = {
            n: (t, input_json_schema(t.input_schema)) for n, t in self.tools.items()
        }
        self._shared = SdkMcpConnection(self)

    def __repr__(self) -> str:
        return f"SdkMcpServer({self.name!r}, {self.version!r}, tools={list(self.tools)})"

    def _schema(self, tool_def: SdkMcpTool[Any]) -> JSON:
        cached = self._schemas.get(tool_def.name)
        if cached is None or cached[0] is not tool_def:
            cached = (tool_def, input_json_schema(tool_def.input_schema))
            self._schemas[tool_def.name] = cached
        return cached[1]

    def list_tools(self) -> list[JSON]:
        """The `tools` of a `tools/list` result."""
        listed: list[JSON] = []
        for tool_def in self.tools.values():
            entry: JSON = {"name": tool_def.name, "inputSchema": self._schema(tool_def)}
            if tool_def.description is not None:
                entry["description"] = tool_def.description
            annotations = _annotations_wire(tool_def.annotations)
            if annotations is not None:
                entry["annotations"] = annotations
            size = _max_result_size(tool_def.annotations)
            if size is not None:
                entry["_meta"] = {MAX_RESULT_SIZE_META: size}
            listed.append(entry)
        return listed

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None) -> JSON:
        """Runs a tool; the MCP `tools/call` result (`content`, `isError`). Never raises for
        an unknown tool, invalid arguments or a failing handler: those are error results."""
        tool_def = self.tools.get(name)
        if tool_def is None:
            return _error_result(f"Tool '{name}' not found")
        args = arguments if arguments is not None else {}
        try:
            import jsonschema  # only when a tool is called: it is slow to import

            try:
                jsonschema.validate(instance=args, schema=self._schema(tool_def))
            except jsonschema.ValidationError as exc:
                return _error_result(f"Input validation error: {exc.message}")
            result = await tool_def.handler(args)
            is_error = result.get("is_error", False)
            return {
                "content": _mcp_content(result.get("content", [])),
                "isError": is_error if isinstance(is_error, bool) else bool(is_error),
            }
        except Exception as exc:
            return _error_result(str(exc))

    def connect(self) -> SdkMcpConnection:
        """A connection of its own for one client (one CLI session)."""
        return SdkMcpConnection(self)

    async def handle(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """Answers one JSON-RPC message on the connection every caller of this method
        shares: the response for a request, None for a notification or a response."""
        return await self._shared.handle(message)


def create_sdk_mcp_server(
    name: str, version: str = "1.0.0", tools: list[SdkMcpTool[Any]] | None = None
) -> McpSdkServerConfig:
    """An in-process MCP server for `ClaudeAgentOptions.mcp_servers`."""
    return {"type": "sdk", "name": name, "instance": SdkMcpServer(name, version, tools)}


__all__ = [
    "McpSdkServerConfig",
    "SdkMcpConnection",
    "SdkMcpServer",
    "SdkMcpTool",
    "ToolAnnotations",
    "create_sdk_mcp_server",
    "tool",
]
