"""The editor side of the ACP tests: Zed's Python client (`agent-client-protocol`) with a
`Client` that records every session update, answers permission requests from a script,
and serves `fs/*` from its own buffers (unsaved text wins over the disk, as in Zed).

The agent is a real process: `wisp acp`, or Zed's adapter running `wisp` (or the
reference CLI) through `CLAUDE_CODE_EXECUTABLE`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, spawn_agent_process
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    CreateTerminalResponse,
    DeniedOutcome,
    FileSystemCapabilities,
    KillTerminalResponse,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

ADAPTER_DIR = Path(__file__).parent / "adapter"
ADAPTER_JS = (ADAPTER_DIR / "node_modules" / "@zed-industries" / "claude-agent-acp" / "dist"
              / "index.js")
Update = dict[str, Any]


class Terminal:
    """One command in the editor's terminal panel, with all it printed."""

    def __init__(self, proc: asyncio.subprocess.Process, argv: list[str],
                 env: dict[str, str]) -> None:
        self.proc = proc
        self.argv = argv
        self.env = env
        self.output = b""
        self.killed = self.released = False
        self._reading = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        while chunk := await self.proc.stdout.read(65536):
            self.output += chunk

    async def finished(self) -> None:
        await self._reading
        await self.proc.wait()


@dataclass
class Editor:
    """One editor window: what the agent told it, and how it answers."""

    answers: list[str] = field(default_factory=list)  # option kinds, in order; "cancel"
    buffers: dict[str, str] = field(default_factory=dict)  # unsaved text by absolute path
    updates: list[Update] = field(default_factory=list)
    permission_requests: list[Update] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    writes: list[tuple[str, str]] = field(default_factory=list)
    on_update: Callable[[Update], None] | None = None
    terminals: dict[str, Terminal] = field(default_factory=dict)

    # acp.Client ------------------------------------------------------------------------

    async def request_permission(self, options: Any, session_id: str, tool_call: Any,
                                 **kwargs: Any) -> RequestPermissionResponse:
        self.permission_requests.append({
            "options": [o.model_dump(by_alias=True) for o in options],
            "toolCall": tool_call.model_dump(by_alias=True, exclude_none=True)})
        kind = self.answers.pop(0) if self.answers else "reject_once"
        chosen = [o for o in options if o.kind == kind]
        if kind == "cancel" or not chosen:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=chosen[0].option_id))

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        data = update.model_dump(by_alias=True, exclude_none=True)
        self.updates.append(data)
        if self.on_update is not None:
            self.on_update(data)

    async def read_text_file(self, path: str, session_id: str, limit: int | None = None,
                             line: int | None = None, **kwargs: Any) -> ReadTextFileResponse:
        self.reads.append(path)
        text = self.buffers[path] if path in self.buffers else Path(path).read_text()
        if line is not None or limit is not None:
            lines = text.splitlines(keepends=True)
            start = max((line or 1) - 1, 0)
            text = "".join(lines[start:start + limit if limit else None])
        return ReadTextFileResponse(content=text)

    async def write_text_file(self, content: str, path: str, session_id: str,
                              **kwargs: Any) -> WriteTextFileResponse:
        self.writes.append((path, content))
        self.buffers[path] = content  # the editor's buffer, not yet saved
        return WriteTextFileResponse()

    def on_connect(self, conn: Any) -> None:
        pass

    # Terminals: real processes, as an editor's terminal panel runs them ----------------

    async def create_terminal(self, command: str, session_id: str, *,
                              args: list[str] | None = None, env: Any = None,
                              cwd: str | None = None, output_byte_limit: int | None = None,
                              **kwargs: Any) -> CreateTerminalResponse:
        extra = {e.name: e.value for e in env or []}
        proc = await asyncio.create_subprocess_exec(
            command, *(args or []), cwd=cwd, env={**os.environ, **extra},
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
            start_new_session=True)
        key = f"term-{len(self.terminals) + 1}"
        self.terminals[key] = Terminal(proc, [command, *(args or [])], extra)
        return CreateTerminalResponse(terminal_id=key)

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str,
                                     **kwargs: Any) -> WaitForTerminalExitResponse:
        term = self.terminals[terminal_id]
        await term.finished()
        return WaitForTerminalExitResponse(exit_code=term.proc.returncode)

    async def terminal_output(self, session_id: str, terminal_id: str,
                              **kwargs: Any) -> TerminalOutputResponse:
        term = self.terminals[terminal_id]
        done = term.proc.returncode is not None
        if done:
            await term.finished()
        status = TerminalExitStatus(exit_code=term.proc.returncode) if done else None
        return TerminalOutputResponse(output=term.output.decode(errors="replace"),
                                      truncated=False, exit_status=status)

    async def kill_terminal(self, session_id: str, terminal_id: str,
                            **kwargs: Any) -> KillTerminalResponse:
        term = self.terminals[terminal_id]
        term.killed = True
        with contextlib.suppress(ProcessLookupError):
            os.killpg(term.proc.pid, signal.SIGKILL)
        await term.finished()
        return KillTerminalResponse()

    async def release_terminal(self, session_id: str, terminal_id: str,
                               **kwargs: Any) -> ReleaseTerminalResponse:
        term = self.terminals[terminal_id]
        with contextlib.suppress(ProcessLookupError):
            os.killpg(term.proc.pid, signal.SIGKILL)
        term.released = True
        return ReleaseTerminalResponse()

    # Reading what came ----------------------------------------------------------------

    def of(self, kind: str) -> list[Update]:
        return [u for u in self.updates if u.get("sessionUpdate") == kind]

    def text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u["content"].get("text", "") for u in self.of(kind))

    def clear(self) -> None:
        self.updates.clear()
        self.permission_requests.clear()


def capabilities(fs: bool, terminal: bool) -> ClientCapabilities:
    return ClientCapabilities(fs=FileSystemCapabilities(read_text_file=fs, write_text_file=fs),
                              terminal=terminal)


@contextlib.asynccontextmanager
async def connect(command: list[str], editor: Editor, env: dict[str, str], cwd: Path,
                  *, fs: bool = False, terminal: bool = False
                  ) -> AsyncIterator[tuple[Any, Any]]:
    """Starts the agent in its own process group and initializes it; on the way out the
    whole group is gone (the adapter's children included)."""
    # `setsid` execs the agent as the leader of a new process group (its pid is the
    # group's id), so everything it starts can be found and ended.
    async with spawn_agent_process(lambda _agent: editor, "setsid", *command, env=env,
                                   cwd=cwd) as (conn, proc):
        try:
            caps = capabilities(fs, terminal)
            await asyncio.wait_for(conn.initialize(protocol_version=PROTOCOL_VERSION,
                                                   client_capabilities=caps), 30)
            yield conn, proc
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)


def adapter_command(node: str) -> list[str]:
    return [node, str(ADAPTER_JS)]
