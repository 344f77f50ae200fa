"""The subprocess link: an agent CLI (`wisp`, or the reference `claude`) spoken to over
stdin and stdout with the stream-json control protocol.

The child runs in a process group of its own. Closing the link closes its stdin, gives it
a moment to finish, then sends SIGTERM to the group (both CLIs kill their tools on it)
and SIGKILL if that was not enough; a cancelled caller skips the moment. Children still
alive when the interpreter exits are killed then. stdout lines have no length limit.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import signal
import sys
from collections import deque
from collections.abc import AsyncIterator, Callable

from wisp.jsontypes import JSON
from wisp.processes import kill_group
from wisp.sdk._launch import Launch
from wisp.sdk.errors import CLIConnectionError, CLINotFoundError

CHUNK = 1 << 16
GRACE_S = 5.0  # a closed stdin: time to finish before SIGTERM (the official SDK's too)
TERM_S = 5.0  # SIGTERM: time to clean up before SIGKILL
STDERR_TAIL_LINES = 50
# Every live child, so interpreter exit can still kill them.
_LIVE: set[asyncio.subprocess.Process] = set()


@atexit.register
def _kill_leftovers() -> None:
    for process in list(_LIVE):
        if process.returncode is None:
            kill_group(process.pid, signal.SIGKILL)


class SubprocessLink:
    def __init__(self, cli_path: str, launch: Launch, cwd: str,
                 stderr: Callable[[str], None] | None) -> None:
        self.cli_path = cli_path
        self.launch = launch
        self.cwd = cwd
        self.stderr = stderr
        self.process: asyncio.subprocess.Process | None = None
        self._stderr_tail: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
        self._stderr_task: asyncio.Task[None] | None = None
        self._input_open = False

    async def start(self) -> None:
        try:
            self.process = await asyncio.create_subprocess_exec(
                self.cli_path, *self.launch.args,
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, cwd=self.cwd, env=self.launch.env,
                start_new_session=True, limit=CHUNK)
        except FileNotFoundError as exc:
            raise CLINotFoundError(f"Claude Code not found at: {self.cli_path}",
                                   self.cli_path) from exc
        except OSError as exc:
            raise CLIConnectionError(f"Failed to start {self.cli_path}: {exc}") from exc
        _LIVE.add(self.process)
        self._input_open = True
        self._stderr_task = asyncio.ensure_future(self._read_stderr())

    def _proc(self) -> asyncio.subprocess.Process:
        if self.process is None:
            raise CLIConnectionError("Not connected: the CLI was not started.")
        return self.process

    async def send(self, frame: JSON) -> None:
        process = self._proc()
        if not self._input_open or process.stdin is None or process.returncode is not None:
            raise CLIConnectionError("Cannot write to the CLI: its input is closed "
                                     f"(exit code {process.returncode}).")
        line = json.dumps(frame, ensure_ascii=False) + "\n"
        try:
            process.stdin.write(line.encode("utf-8", "surrogatepass"))
            await process.stdin.drain()
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise CLIConnectionError(f"The CLI stopped reading its input: {exc}") from exc

    async def end_input(self) -> None:
        process = self.process
        if process is None or not self._input_open or process.stdin is None:
            return
        self._input_open = False
        with contextlib.suppress(Exception):
            process.stdin.close()
            await process.stdin.wait_closed()

    async def frames(self) -> AsyncIterator[JSON]:
        stdout = self._proc().stdout
        assert stdout is not None
        pending = b""
        while chunk := await stdout.read(CHUNK):
            pending += chunk
            if b"\n" not in chunk:
                continue
            *lines, pending = pending.split(b"\n")
            for raw in lines:
                frame = self._decode(raw)
                if frame is not None:
                    yield frame
        frame = self._decode(pending)  # a last line without its newline
        if frame is not None:
            yield frame

    def _decode(self, raw: bytes) -> JSON | None:
        text = raw.strip()
        if not text:
            return None
        try:
            value = json.loads(text)
        except ValueError:
            # Not a frame (a stray print, a line cut off by a crash): say so, read on.
            self._note(f"wisp.sdk: ignoring a stdout line that is not JSON: {text[:200]!r}")
            return None
        return value if isinstance(value, dict) else None

    async def _read_stderr(self) -> None:
        stream = self._proc().stderr
        assert stream is not None
        pending = b""
        while chunk := await stream.read(CHUNK):
            *lines, pending = (pending + chunk).split(b"\n")
            for raw in lines:
                self._note(raw.decode("utf-8", "replace").rstrip("\r"))
        if pending:
            self._note(pending.decode("utf-8", "replace"))

    def _note(self, line: str) -> None:
        self._stderr_tail.append(line)
        if self.stderr is None:
            sys.stderr.write(line + "\n")  # no callback: the CLI's stderr is ours, as usual
            return
        with contextlib.suppress(Exception):  # the caller's logger must not end us
            self.stderr(line)

    async def wait(self) -> int:
        code = await self._proc().wait()
        if self._stderr_task is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(self._stderr_task), 1)
        return code

    def stderr_text(self) -> str:
        return "\n".join(self._stderr_tail)

    async def close(self, force: bool) -> None:
        process = self.process
        if process is None:
            return
        try:
            await self.end_input()
            if process.returncode is None and not force:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(process.wait(), GRACE_S)
            if process.returncode is None:
                kill_group(process.pid, signal.SIGTERM)
                try:
                    await asyncio.wait_for(process.wait(), TERM_S)
                except TimeoutError:
                    kill_group(process.pid, signal.SIGKILL)
                    await process.wait()
            # The CLI is gone; anything its group left behind goes too.
            kill_group(process.pid, signal.SIGKILL)
        finally:
            _LIVE.discard(process)
            if self._stderr_task is not None:
                self._stderr_task.cancel()
