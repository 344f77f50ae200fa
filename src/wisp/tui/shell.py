"""`!cmd`: run a shell command directly, show its output, and hand it to the model as
context with the next prompt (nothing is sent to the model by itself).

The command runs in the session's environment and working folder, in its own process
group, and is killed with its group on Esc/Ctrl+C or when the UI exits. Its output is
read in full but shown shortened, like a tool result.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from typing import TYPE_CHECKING

from rich.text import Text

from wisp.tui import render

if TYPE_CHECKING:
    from wisp.tui.app import TuiApp

CONTEXT_CAP = 30_000  # characters of output passed on to the model


async def run_shell(app: TuiApp, command: str) -> None:
    if not command:
        return
    line = Text("! ", style="bold magenta")
    line.append(render.safe(command))
    app.print(render.Renderer(app.width(), app.env).ansi(Text(""), line))
    proc = await asyncio.create_subprocess_shell(
        command, cwd=app.config.cwd, env=app.runtime.env, start_new_session=True,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT)
    app.runtime.session.processes.add(proc.pid)
    try:
        data, _ = await proc.communicate()
    except asyncio.CancelledError:
        _kill(proc.pid)
        raise
    finally:
        app.runtime.session.processes.discard(proc.pid)
    output = data.decode("utf-8", "replace")
    failed = proc.returncode != 0
    shown = output if not failed else f"{output}\n(exit status {proc.returncode})"
    app.view.collapsed = None
    app.print(render.Renderer(app.width(), app.env).ansi(
        render.result_block(shown.strip("\n"), failed)))
    app.pending_context.append(
        f"<bash-input>{command}</bash-input>\n"
        f"<bash-stdout>{output[:CONTEXT_CAP]}</bash-stdout>")


def _kill(pgid: int) -> None:
    with contextlib.suppress(OSError):
        os.killpg(pgid, signal.SIGKILL)
