"""Give the agent your own tools: `@tool` functions served by `create_sdk_mcp_server`.

Shows: Python functions become tools the model can call. They are served by an MCP server
that lives in this process (no server process, no JSON-RPC over pipes: each call is a
plain `await` of your function). A tool of server "calc" named "add" is known to the model
as `mcp__calc__add`; listing those names in `allowed_tools` lets them run without asking.

Run it:

    export ANTHROPIC_API_KEY=sk-ant-...
    .venv/bin/python examples/custom_tool.py
    .venv/bin/python examples/custom_tool.py "What is 6 times 7, plus 0.5?"
    .venv/bin/python examples/offline.py custom_tool  # no key: a scripted model answers

Set ANTHROPIC_BASE_URL to use another Messages API endpoint.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from wisp.sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ResultMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    create_sdk_mcp_server,
    query,
    tool,
)

DEFAULT_QUESTION = "Using the calculator tools, what is (12.5 + 7.5) * 3?"


def _number(value: float) -> str:
    """2.0 -> "2", 2.5 -> "2.5": what a person would write."""
    return f"{value:g}"


# The schema maps argument names to Python types (all required). A JSON Schema dict or a
# TypedDict class works too. A tool returns MCP content: a list of text/image blocks.
@tool("add", "Add two numbers and return the sum.", {"a": float, "b": float})
async def add(args: dict[str, Any]) -> dict[str, Any]:
    total = args["a"] + args["b"]
    print(f"  [calc] add({_number(args['a'])}, {_number(args['b'])}) = {_number(total)}")
    return {"content": [{"type": "text", "text": _number(total)}]}


@tool("multiply", "Multiply two numbers and return the product.", {"a": float, "b": float})
async def multiply(args: dict[str, Any]) -> dict[str, Any]:
    product = args["a"] * args["b"]
    print(f"  [calc] multiply({_number(args['a'])}, {_number(args['b'])}) = {_number(product)}")
    return {"content": [{"type": "text", "text": _number(product)}]}


@tool("divide", "Divide a by b and return the quotient.", {"a": float, "b": float})
async def divide(args: dict[str, Any]) -> dict[str, Any]:
    if args["b"] == 0:
        # is_error tells the model the call failed; it can then try something else.
        return {"content": [{"type": "text", "text": "cannot divide by zero"}], "is_error": True}
    quotient = args["a"] / args["b"]
    print(f"  [calc] divide({_number(args['a'])}, {_number(args['b'])}) = {_number(quotient)}")
    return {"content": [{"type": "text", "text": _number(quotient)}]}


async def run(question: str) -> int:
    calculator = create_sdk_mcp_server(name="calc", version="1.0.0",
                                       tools=[add, multiply, divide])
    options = ClaudeAgentOptions(
        mcp_servers={"calc": calculator},
        # Pre-approve our tools: mcp__<server name>__<tool name>.
        allowed_tools=["mcp__calc__add", "mcp__calc__multiply", "mcp__calc__divide"],
        system_prompt="Do arithmetic only with the calculator tools, one step at a time.",
    )
    print(f"question: {question}")
    exit_code = 1
    async for message in query(prompt=question, options=options):
        if isinstance(message, AssistantMessage):
            for block in message.content:
                if isinstance(block, ToolUseBlock):
                    print(f"tool call: {block.name} {block.input}")
                elif isinstance(block, TextBlock):
                    print(f"answer: {block.text}")
        elif isinstance(message, UserMessage) and isinstance(message.content, list):
            # Tool results come back to the model in a user turn.
            for block in message.content:
                if isinstance(block, ToolResultBlock):
                    print(f"tool result: {_text_of(block)}")
        elif isinstance(message, ResultMessage):
            print(f"done: {message.subtype}, {message.num_turns} turns, "
                  f"${message.total_cost_usd or 0.0:.6f}")
            exit_code = 1 if message.is_error else 0
    return exit_code


def _text_of(block: ToolResultBlock) -> str:
    if isinstance(block.content, list):
        return " ".join(str(item.get("text", "")) for item in block.content)
    return str(block.content or "")


if __name__ == "__main__":
    raise SystemExit(asyncio.run(run(" ".join(sys.argv[1:]) or DEFAULT_QUESTION)))
