"""`!cmd`: run a shell command directly, show its output, and hand it to the model as
context with the next prompt (nothing is sent to the model by itself).

The command runs in the session's environment and working folder, in its own process
group (registered with the session, so closing the UI ends it), and Esc or Ctrl+C kills
it. Its output is captured like the Bash tool's: the head and tail are kept, and a long
output is saved whole to a file named in the result.
"""

from __future__ import annotations

import asyncio
import codecs
from typing import TYPE_CHECKING

from rich.text import Text

from wisp.processes import kill_group
from wisp.processes.output import CappedText, clip
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
    app.runtime.track_process(proc.pid)
    captured = CappedText(CONTEXT_CAP // 2, spill=True)
    try:
        await _read(proc, captured)
        await proc.wait()
    except asyncio.CancelledError:
        kill_group(proc.pid)
        app.view.print_text("  ⎿ Interrupted", "yellow")
        raise
    finally:
        app.runtime.untrack_process(proc.pid)
        captured.close()
    output, _ = clip(captured.segments(), CONTEXT_CAP, captured.spill_path)
    failed = proc.returncode != 0
    shown = output.strip("\n") + (f"\n(exit status {proc.returncode})" if failed else "")
    app.view.collapsed = None
    app.print(render.Renderer(app.width(), app.env).ansi(
        render.result_block(shown, failed, full_path=captured.spill_path,
                            width=app.width())))
    app.pending_context.append(
        f"<bash-input>{command}</bash-input>\n<bash-stdout>{output}</bash-stdout>")


async def _read(proc: asyncio.subprocess.Process, captured: CappedText) -> None:
    assert proc.stdout is not None
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    while chunk := await proc.stdout.read(65536):
        captured.add(decoder.decode(chunk))
    captured.add(decoder.decode(b"", final=True))
