"""Drives one CLI through the official Python SDK (`claude-agent-sdk`) and prints JSON.

Run by the bench runner in its own process, with the CLI's bench environment: the SDK
passes its own environment on to the CLI it spawns, and a fresh process keeps the SDK's
import cost and event loop out of the runner.

    python bench/sdk_driver.py overhead --cli PATH --cwd DIR --queries 3 --turns 10
    python bench/sdk_driver.py bigout --cli PATH --cwd DIR
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from claude_agent_sdk import (
    ClaudeAgentOptions,
    ClaudeSDKClient,
    ResultMessage,
    ToolResultBlock,
    UserMessage,
    query,
)

# A hung CLI must fail the run, not stall the bench: the SDK itself waits 60 s for initialize.
TIMEOUT = 180.0


# The CLI's stderr, so a failed run can say why (the SDK itself reports only an exit code).
CLI_STDERR: list[str] = []


def _options(args: argparse.Namespace, **extra: Any) -> ClaudeAgentOptions:
    return ClaudeAgentOptions(cli_path=args.cli, cwd=args.cwd, stderr=CLI_STDERR.append, **extra)


async def _one_query(args: argparse.Namespace) -> float:
    t0 = time.perf_counter()
    results = [m async for m in query(prompt="hi", options=_options(args))]
    wall = time.perf_counter() - t0  # the generator has closed the transport by now
    _check(results)
    return wall


async def overhead(args: argparse.Namespace) -> dict[str, Any]:
    queries = [await _one_query(args) for _ in range(args.queries)]
    t0 = time.perf_counter()
    turns: list[float] = []
    async with ClaudeSDKClient(options=_options(args)) as client:
        connect = time.perf_counter() - t0
        for i in range(args.turns):
            t = time.perf_counter()
            await client.query(f"hi {i}")
            _check([m async for m in client.receive_response()])
            turns.append(time.perf_counter() - t)
    return {"query": queries, "connect": connect, "client_turn": turns}


async def bigout(args: argparse.Namespace) -> dict[str, Any]:
    """What of the 10 MB tool output reaches the SDK, and whether the SDK survives it."""
    options = _options(args, permission_mode="bypassPermissions")
    t0 = time.perf_counter()
    received: list[int] = []
    outcome = "ok"
    try:
        async for message in query(prompt="[[bench:bigout]] go", options=options):
            received.extend(_tool_result_chars(message))
            if isinstance(message, ResultMessage) and message.is_error:
                outcome = f"error result: {message.result or message.subtype}"
    except Exception as exc:  # the point is to report what the SDK raises, whatever it is
        outcome = f"{type(exc).__name__}: {str(exc)[:160]}"
    return {"wall": time.perf_counter() - t0, "chars": received, "outcome": outcome}


def _tool_result_chars(message: object) -> list[int]:
    if not isinstance(message, UserMessage) or isinstance(message.content, str):
        return []
    sizes = []
    for block in message.content:
        if isinstance(block, ToolResultBlock):
            content = block.content
            sizes.append(len(content if isinstance(content, str) else json.dumps(content)))
    return sizes


def _check(messages: list[Any]) -> None:
    results = [m for m in messages if isinstance(m, ResultMessage)]
    if len(results) != 1 or results[0].is_error:
        raise RuntimeError(f"expected one successful result, got {results}")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["overhead", "bigout"])
    parser.add_argument("--cli", required=True)
    parser.add_argument("--cwd", required=True, type=Path)
    parser.add_argument("--queries", type=int, default=3)
    parser.add_argument("--turns", type=int, default=10)
    args = parser.parse_args()
    run = overhead if args.mode == "overhead" else bigout
    try:
        out = asyncio.run(asyncio.wait_for(run(args), TIMEOUT))
    except Exception as exc:  # report what the SDK saw and what the CLI said, briefly
        tail = "\n".join(CLI_STDERR[-12:])
        sys.stderr.write(f"CLI stderr (last lines):\n{tail}\n{type(exc).__name__}: {exc}\n")
        return 1
    sys.stdout.write(json.dumps(out) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
