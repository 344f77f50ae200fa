"""Helpers for tool tests: run a tool call to completion in a fresh event loop."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from wisp.tools.base import Tool, ToolContext, ToolResult


class Caller:
    """Runs one tool call per `asyncio.run`, sharing session state between calls."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self.state: dict[str, Any] = {}

    def __call__(self, tool: Tool, tool_input: dict[str, Any], **ctx_args: Any) -> ToolResult:
        async def main() -> ToolResult:
            ctx = ToolContext(cwd=ctx_args.pop("cwd", self.cwd), state=self.state, **ctx_args)
            return await tool.run(tool_input, ctx)

        return asyncio.run(main())


@pytest.fixture
def call(tmp_path: Path) -> Caller:
    return Caller(tmp_path)


def process_gone(pid: int) -> bool:
    """True when `pid` no longer runs. A zombie counts as gone: it is dead, merely unreaped
    by whichever ancestor inherited it."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def wait_until(condition: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()
