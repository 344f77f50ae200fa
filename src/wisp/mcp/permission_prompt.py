"""`--permission-prompt-tool mcp__server__tool`: an MCP tool decides gated tool calls.

Above: the tool runner, which asks when the rules leave a call at "ask". Below: whatever
MCP tool carries that name once servers are connected. The tool gets
`{tool_name, input, tool_use_id}` and answers with text holding the same JSON as a
`can_use_tool` answer: `{"behavior":"allow","updatedInput":…}` or
`{"behavior":"deny","message":…}`.

The tool is looked up when the first ask comes, not at start-up: SDK-hosted servers are
only known after their handshake, and a run that never asks must not fail (the reference
behaves the same way; docs/protocol.md, "Requests wisp sends to the host"). A name that matches no
tool is a configuration error that
ends the process with exit 1.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from wisp.errors import UsageError
from wisp.jsonsafe import loads_bounded
from wisp.jsontypes import JSON
from wisp.permissions.engine import Verdict
from wisp.tools.base import Tool, ToolContext


class McpPermissionPrompt:
    def __init__(
        self, name: str, tools: Callable[[], dict[str, Tool]], context: Callable[[], ToolContext]
    ) -> None:
        self.name = name
        self._tools = tools
        self._context = context

    async def __call__(
        self, tool: Tool, tool_input: JSON, tool_use_id: str, verdict: Verdict
    ) -> tuple[Verdict, JSON]:
        available = self._tools()
        prompt = available.get(self.name)
        if prompt is None:
            mcp = sorted(n for n in available if n.startswith("mcp__"))
            raise UsageError(
                f"MCP tool {self.name} (passed via --permission-prompt-tool) "
                f"not found. Available MCP tools: {', '.join(mcp) or 'none'}"
            )
        result = await prompt.run(
            {"tool_name": tool.name, "input": tool_input, "tool_use_id": tool_use_id},
            self._context(),
        )
        if result.is_error:
            return Verdict(
                "deny", f"Permission prompt tool failed: {_text(result.content)}", "host"
            ), tool_input
        return interpret(_text(result.content), tool_input)


def interpret(text: str, tool_input: JSON) -> tuple[Verdict, JSON]:
    try:
        answer = loads_bounded(text)  # a server's text: deep nesting is just malformed
    except ValueError:
        answer = None
    if not isinstance(answer, dict) or answer.get("behavior") not in ("allow", "deny"):
        return Verdict(
            "deny", f"The permission prompt tool gave no decision: {text[:200]!r}", "host"
        ), tool_input
    if answer["behavior"] == "allow":
        updated = answer.get("updatedInput")
        return Verdict("allow", source="host"), updated if isinstance(updated, dict) else tool_input
    return Verdict(
        "deny", str(answer.get("message") or "Denied by the permission prompt tool"), "host"
    ), tool_input


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return str(content)
