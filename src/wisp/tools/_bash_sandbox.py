"""The Bash tool's side of the OS sandbox: launching a command in it, telling the model
what it refused, and letting go of a background command's placeholders when it ends.

Above: `wisp.tools.bash`. Below: the session's `CommandSandbox` (`wisp.sandbox.runner`).
"""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Sequence
from pathlib import Path

from wisp.sandbox.runner import CommandSandbox, Launch, SandboxUnavailable
from wisp.tools.base import ToolResult


def launch(sandbox: CommandSandbox, inner: Sequence[str], env: dict[str, str],
           cwd: Path) -> Launch | ToolResult:
    try:
        return sandbox.launch(inner, env, str(cwd))
    except SandboxUnavailable as exc:
        return ToolResult.error(str(exc))
    except OSError as exc:
        return ToolResult.error(f"The sandbox could not be set up for this command: {exc}")


def with_violations(result: ToolResult, sandbox: CommandSandbox, command: str,
                    started: Launch, cwd: str) -> ToolResult:
    """`result` with a `<sandbox_violations>` note when the sandbox refused something."""
    from wisp.sandbox.violations import note

    data = result.data if isinstance(result.data, dict) else {}
    output = f"{data.get('stdout', '')}\n{data.get('stderr', '')}"
    reports = sandbox.violations(command, output, started, cwd)
    if not reports or not isinstance(result.content, str):
        return result
    block = note(reports)
    if data:
        data = {**data, "stderr": f"{data.get('stderr', '')}\n{block}".lstrip("\n")}
    return ToolResult(f"{result.content}\n{block}", result.is_error, data or result.data)


def release_when_done(proc: subprocess.Popen[bytes], started: Launch) -> None:
    """A background command's placeholders stay until it exits."""
    async def watch() -> None:
        delay = 0.01
        while proc.poll() is None:
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.5)
        started.release()

    task = asyncio.ensure_future(watch())
    _WATCHERS.add(task)
    task.add_done_callback(_WATCHERS.discard)


_WATCHERS: set[asyncio.Task[None]] = set()
