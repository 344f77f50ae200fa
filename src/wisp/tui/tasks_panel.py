"""Background tasks in the terminal UI: the /tasks panel (Ctrl+T), and the turns their
endings wake.

The panel lists the session's tasks (subagents and background commands) with their
status and age; picking one shows the end of its output and offers to stop it while it
runs. A background task that finishes while no prompt runs is owed a turn (the model
reads its notice, as print mode and the SDKs do): `watch` waits on the registry's change
signal, which costs nothing while nothing changes, and starts that turn once the UI is
idle.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from rich.console import Group
from rich.text import Text

from wisp.textsafe import safe, safe_line
from wisp.tui.dialog import Picker

if TYPE_CHECKING:
    from wisp.engine.tasks import Task
    from wisp.tui.app import TuiApp

OUTPUT_LINES = 12
OUTPUT_BYTES = 64 * 1024
_MARKS = {"running": "◐", "completed": "✓", "failed": "✗", "killed": "■"}


async def watch(app: TuiApp) -> None:
    """Runs a woken turn whenever a finished background task is owed one and the UI is
    idle; ends with the runtime (a new conversation starts another watcher)."""
    runtime = app.runtime
    while app.runtime is runtime:
        if runtime.tasks.has_wake() and not app.busy:
            app.wake_turn()
        await runtime.tasks.changed()


def describe(task: Task) -> str:
    seconds = task.elapsed_ms() // 1000
    kind = "command" if task.task_type == "local_bash" else (task.agent_type or "agent")
    return safe_line(f"{_MARKS.get(task.status, '?')} {task.description} · {kind} · "
                     f"{task.status} · {seconds}s")


async def show(app: TuiApp) -> None:
    tasks = [t for t in app.runtime.tasks.tasks.values() if t.backgrounded] or list(
        app.runtime.tasks.tasks.values())
    if not tasks:
        app.view.print_text("No background tasks in this session.", "yellow")
        return
    newest = list(reversed(tasks))[:9]
    picked = await app.show_dialog(list_picker(newest))
    if picked is None or picked == len(newest):
        return
    await _one(app, newest[picked])


def list_picker(tasks: list[Task]) -> Picker:
    choices = [describe(t) for t in tasks] + ["Close"]
    return Picker(Text("Background tasks", style="bold"), choices, refusal=len(choices) - 1)


async def _one(app: TuiApp, task: Task) -> None:
    choices = ["Stop it", "Back"] if task.running else ["Back"]
    title = Group(Text(describe(task), style="bold"),
                  Text(safe_line(task.output_file), style="dim"),
                  Text(_tail(task.output_file), style="dim"))
    picked = await app.show_dialog(Picker(title, choices, refusal=len(choices) - 1))
    if picked == 0 and task.running:
        app.runtime.tasks.stop(task.task_id)
        app.view.print_text(f"■ Stopped {safe_line(task.description)}", "yellow")


def _tail(path: str) -> str:
    """The last lines of a task's output file (a subagent has none until it reports)."""
    try:
        with open(path, "rb") as handle:
            handle.seek(0, 2)
            size = handle.tell()
            handle.seek(max(0, size - OUTPUT_BYTES))
            data = handle.read()
    except OSError:
        return "(no output yet)"
    lines = data.decode("utf-8", "replace").rstrip("\n").split("\n")[-OUTPUT_LINES:]
    return safe("\n".join(lines)) if any(lines) else "(no output yet)"


def cancel(watcher: asyncio.Task[None] | None) -> None:
    if watcher is not None and not watcher.done():
        watcher.cancel()
