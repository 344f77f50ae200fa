"""The session's tasks: subagents and background commands, by id.

Every Task call is a task ("local_agent", id `a` + 16 hex digits); so is a Bash call with
`run_in_background` ("local_bash", id `b` + 8 characters). The registry names each, reports
its life as events (TaskStarted, TaskStep while a subagent works, then TaskUpdated and
TaskNotified when it ends; BackgroundTasksChanged as background tasks come and go), stops
one on request (`stop_task`), and keeps the notices the model is owed: a background task
that ends is announced to the model at its next model call, and one that finished (rather
than being stopped) wakes an idle session for a turn of its own (`has_wake`).

Above: the Task tool's runner (`wisp.engine.subagents`), Bash (through `ToolContext.tasks`,
the `BackgroundTasks` protocol), the agent loop (which delivers notices) and the front
ends (which wait for background work and run the turns it wakes). Below: the OS. A
background command runs in its own session (so one `killpg` ends its whole tree), writes
stdout and stderr to its output file, and is registered in `processes`, a registry of
its own: an interrupt leaves background work running (as the reference does); `stop`,
`aclose` and the exit-time reaper end it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import string
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from wisp.engine.events import (
    BackgroundTasksChanged,
    EventSink,
    TaskNotified,
    TaskStarted,
    TaskStep,
    TaskUpdated,
)
from wisp.jsontypes import JSON
from wisp.processes import ProcessRegistry, kill_group

if TYPE_CHECKING:
    import subprocess

# secrets, subprocess and tempfile are imported where used: every session builds a
# registry at start-up, few ever start a task.

TaskType = Literal["local_agent", "local_bash"]
Status = Literal["running", "completed", "failed", "killed"]
# A background command may run this long unless its call says otherwise (the Bash
# schema's `timeout`), and never longer than the ceiling.
DEFAULT_BACKGROUND_TIMEOUT_MS = 600_000
MAX_BACKGROUND_TIMEOUT_MS = 7_200_000
_ALNUM = string.digits + string.ascii_lowercase


def agent_task_id() -> str:
    import secrets

    return "a" + secrets.token_hex(8)


def command_task_id() -> str:
    import secrets

    return "b" + "".join(secrets.choice(_ALNUM) for _ in range(8))


def new_run_id() -> str:
    """Names one run of a task: the start time in base 36, then random hex."""
    import secrets

    ms, digits = int(time.time() * 1000), ""
    while ms:
        ms, rem = divmod(ms, 36)
        digits = _ALNUM[rem] + digits
    return f"{digits.rjust(9, '0')}-{secrets.token_hex(4)}"


def now_ms() -> int:
    return int(time.time() * 1000)


class Notice:
    """A notification the model is owed. `wake`: it may start a turn of its own (a task
    that finished); a stopped task's notice waits for the next turn instead."""

    __slots__ = ("run_id", "text", "wake")

    def __init__(self, text: str, wake: bool, run_id: str) -> None:
        self.text = text
        self.wake = wake
        self.run_id = run_id


class Task:
    __slots__ = ("agent_type", "announced", "backgrounded", "description", "handle",
                 "on_stop", "output_file", "prompt", "run_id", "started", "status", "task_id",
                 "task_type", "tool_use_id")

    def __init__(self, task_id: str, task_type: TaskType, description: str,
                 tool_use_id: str, *, agent_type: str = "", prompt: str | None = None,
                 backgrounded: bool = False, output_file: str = "") -> None:
        self.task_id = task_id
        self.run_id = new_run_id()
        self.task_type: TaskType = task_type
        self.description = description
        self.tool_use_id = tool_use_id
        self.agent_type = agent_type
        self.prompt = prompt
        self.backgrounded = backgrounded
        self.output_file = output_file
        self.started = time.monotonic()
        self.status: Status = "running"
        self.handle: asyncio.Future[Any] | None = None  # what runs it (a subagent's loop)
        self.on_stop: Callable[[], None] | None = None
        self.announced: TaskStarted | None = None  # the event that announced it

    @property
    def running(self) -> bool:
        return self.status == "running"

    def elapsed_ms(self) -> int:
        return int((time.monotonic() - self.started) * 1000)


def notice_text(task: Task, status: str, summary: str, result: str | None = None) -> str:
    """What the model reads when a task it started in the background ends."""
    lines = [
        "An automatic notice from wisp, not a message from the user: a task you started "
        "in the background has ended.",
        "<task-notification>",
        f"<task-id>{task.task_id}</task-id>",
        f"<tool-use-id>{task.tool_use_id}</tool-use-id>",
        f"<output-file>{task.output_file}</output-file>",
        f"<status>{status}</status>",
        f"<summary>{summary}</summary>",
    ]
    if result is not None:
        lines.append(f"<result>{result}</result>")
    lines.append("</task-notification>")
    return "\n".join(lines)


class TaskRegistry:
    """The tasks of one session. `sink` is the session's (main thread's) event sink;
    `where` gives the cwd and session id, which name the folder of output files."""

    def __init__(self, sink: EventSink, where: Callable[[], tuple[Path, str]]) -> None:
        self.sink = sink
        self._where = where
        self.tasks: dict[str, Task] = {}
        self.notices: list[Notice] = []
        self.processes = ProcessRegistry()
        self._changed = asyncio.Event()

    # Naming and announcing ---------------------------------------------------------

    def output_dir(self) -> Path:
        import tempfile

        from wisp.paths import project_key

        cwd, session_id = self._where()
        uid = os.getuid() if hasattr(os, "getuid") else 0
        return (Path(tempfile.gettempdir()) / f"wisp-{uid}" / project_key(cwd) / session_id
                / "tasks")

    def new_task(self, task_type: TaskType, description: str, tool_use_id: str, *,
                 agent_type: str = "", prompt: str | None = None,
                 backgrounded: bool = False) -> Task:
        task_id = agent_task_id() if task_type == "local_agent" else command_task_id()
        output = self.output_dir() / f"{task_id}.output"
        return Task(task_id, task_type, description, tool_use_id, agent_type=agent_type,
                    prompt=prompt, backgrounded=backgrounded, output_file=str(output))

    def start(self, task: Task) -> None:
        self.tasks[task.task_id] = task
        task.announced = TaskStarted(
            task.task_id, task.agent_type, task.description, tool_use_id=task.tool_use_id,
            task_type=task.task_type, backgrounded=task.backgrounded, prompt=task.prompt,
            run_id=task.run_id)
        if task.backgrounded:
            self._background_changed()
        self.sink.emit(task.announced)

    def step(self, task: Task, description: str, tool_name: str, usage: JSON) -> None:
        if task.running:
            self.sink.emit(TaskStep(task.task_id, description, tool_name, usage))

    def finish(self, task: Task, status: Literal["completed", "failed"], summary: str, *,
               usage: JSON | None = None, report: bool = False,
               notice: str | None = None) -> bool:
        """Ends a running task (False if it had ended already, e.g. stopped)."""
        if not task.running:
            return False
        task.status = status
        self._ended(task, status, status, summary, usage=usage, report=report)
        if notice is not None:
            self.notices.append(Notice(notice, True, task.run_id))
        self._signal()
        return True

    def stop(self, task_id: str) -> None:
        """`stop_task`: ends a running task and everything it started. An unknown or
        finished task is no error (the reference answers success either way)."""
        task = self.tasks.get(task_id)
        if task is None or not task.running:
            return
        task.status = "killed"
        self._ended(task, "killed", "stopped", task.description)
        if task.backgrounded:
            summary = f'Task "{task.description}" was stopped before it finished'
            self.notices.append(Notice(notice_text(task, "killed", summary), False,
                                       task.run_id))
        if task.on_stop is not None:
            task.on_stop()
        if task.task_type == "local_bash":
            self._trailer(task, "[killed]")
        if task.handle is not None and not task.handle.done():
            task.handle.cancel()
        self._signal()

    def _ended(self, task: Task, status: str, notified: str, summary: str, *,
               usage: JSON | None = None, report: bool = False) -> None:
        self.sink.emit(TaskUpdated(task.task_id, {"status": status, "end_time": now_ms()}))
        self.sink.emit(TaskNotified(task.task_id, notified, summary, task.output_file,
                                    usage=usage, report=report))
        if task.backgrounded:
            self._background_changed()

    def _background_changed(self) -> None:
        running = tuple(t.announced for t in self.tasks.values()
                        if t.backgrounded and t.running and t.announced is not None)
        self.sink.emit(BackgroundTasksChanged(running))

    # What front ends wait for ------------------------------------------------------

    def busy(self) -> bool:
        """A background task is still running."""
        return any(t.backgrounded and t.running for t in self.tasks.values())

    def agents_busy(self) -> bool:
        """A background subagent is still running: its end will want a turn, so a
        session that has one is not idle (the SDKs keep stdin open until it is)."""
        return any(t.backgrounded and t.running and t.task_type == "local_agent"
                   for t in self.tasks.values())

    def has_wake(self) -> bool:
        return any(n.wake for n in self.notices)

    def take_notices(self) -> list[Notice]:
        taken, self.notices = self.notices, []
        return taken

    async def changed(self) -> None:
        """Returns at the next change: a task started or ended, a notice came."""
        await self._changed.wait()

    async def wait_for_wake(self) -> bool:
        """True once a notice wants a turn; False when none can come any more (no
        background task is running)."""
        while not self.has_wake():
            if not self.busy():
                return False
            await self.changed()
        return True

    def _signal(self) -> None:
        event, self._changed = self._changed, asyncio.Event()
        event.set()

    # Background commands (the BackgroundTasks protocol of wisp.tools.base) ---------

    def start_command(self, spawn: Callable[[Path], subprocess.Popen[bytes]], *,
                      description: str, tool_use_id: str,
                      timeout_ms: int | None) -> tuple[str, str]:
        """Starts a command in the background: `spawn(output_file)` starts it (writing
        there; OSError if it can't). Returns the task id and the output file."""
        task = self.new_task("local_bash", description, tool_use_id, backgrounded=True)
        path = Path(task.output_file)
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        proc = spawn(path)
        self.processes.add(proc.pid)
        task.on_stop = lambda: kill_group(proc.pid)
        self.start(task)
        limit = timeout_ms if timeout_ms and timeout_ms > 0 else DEFAULT_BACKGROUND_TIMEOUT_MS
        task.handle = asyncio.ensure_future(
            self._watch(task, proc, min(limit, MAX_BACKGROUND_TIMEOUT_MS) / 1000))
        return task.task_id, task.output_file

    async def _watch(self, task: Task, proc: subprocess.Popen[bytes], timeout_s: float
                     ) -> None:
        deadline = time.monotonic() + timeout_s
        delay = 0.005
        timed_out = False
        try:
            while proc.poll() is None and task.running:
                if time.monotonic() >= deadline:
                    timed_out = True
                    break
                await asyncio.sleep(delay)
                delay = min(delay * 2, 0.1)
        finally:
            # The command is over (or must be): whatever it left in its group goes too.
            kill_group(proc.pid)
            with contextlib.suppress(Exception):  # subprocess.TimeoutExpired
                proc.wait(timeout=5)
            self.processes.discard(proc.pid)
        if not task.running:
            return  # stopped: stop() reported it
        self._command_ended(task, proc.returncode, timed_out, timeout_s)

    @staticmethod
    def _trailer(task: Task, line: str) -> None:
        """The last line of a background command's output file: how it ended."""
        with contextlib.suppress(OSError), open(task.output_file, "a", encoding="utf-8") as out:
            out.write(f"\n{line}\n")

    def _command_ended(self, task: Task, returncode: int | None, timed_out: bool,
                       timeout_s: float) -> None:
        code = 128 - returncode if returncode is not None and returncode < 0 else returncode
        described = f'Background command "{task.description}"'
        if timed_out:
            summary = f"{described} timed out after {timeout_s:g}s and was stopped"
            trailer = f"[timed out after {timeout_s:g}s]"
        elif code == 0:
            summary = f"{described} completed (exit code 0)"
            trailer = "[exited with code 0]"
        else:
            summary = f"{described} failed with exit code {code}"
            trailer = f"[exited with code {code}]"
        self._trailer(task, trailer)
        status: Literal["completed", "failed"] = (
            "completed" if code == 0 and not timed_out else "failed")
        self.finish(task, status, summary,
                    notice=notice_text(task, status, summary))

    # Ending ------------------------------------------------------------------------

    def end_all(self) -> list[asyncio.Future[Any]]:
        """Ends every running task now, quietly (the session is ending: no one is left to
        tell). Returns what still has to finish unwinding."""
        handles = []
        for task in self.tasks.values():
            if not task.running:
                continue
            task.status = "killed"
            if task.on_stop is not None:
                task.on_stop()
            if task.handle is not None and not task.handle.done():
                task.handle.cancel()
                handles.append(task.handle)
        self.processes.kill_all()
        self._signal()
        return handles

    async def aclose(self) -> None:
        """The session ends: every running task is ended and waited for."""
        handles = self.end_all()
        if handles:
            await asyncio.wait(handles, timeout=10)
