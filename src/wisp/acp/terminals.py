"""Bash in the editor's terminals (`terminal/*`), when the editor offers them: the user
watches the command run in the tool call's card, and can stop it there.

Above: the Bash tool, through `wisp.tools.editor_files.EditorTerminals`. Below: the
connection to the editor. The terminal is always released, and killed first when the
turn is cancelled or the command runs past its timeout: nothing is left running in the
editor on wisp's behalf.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wisp.acp.rpc import ConnectionClosed, Peer, RpcError
from wisp.jsontypes import JSON
from wisp.tools.editor_files import TerminalRun

OUTPUT_LIMIT = 1_000_000  # bytes the editor keeps (the model sees a clipped part anyway)


class Terminals:
    def __init__(self, peer: Peer, session_id: str, base_env: Mapping[str, str],
                 session_env: Mapping[str, str]) -> None:
        self._peer = peer
        self._session_id = session_id
        # Only what the session sets over the environment the editor started wisp with:
        # the editor's terminal has the rest already, and secrets need not travel.
        self._env = [{"name": k, "value": v} for k, v in session_env.items()
                     if base_env.get(k) != v]

    async def run(self, command: str, cwd: Path, timeout_s: float, abort: asyncio.Event,
                  tool_use_id: str | None) -> TerminalRun:
        created = await self._call("terminal/create", {
            "command": "bash", "args": ["-c", command], "cwd": str(cwd), "env": self._env,
            "outputByteLimit": OUTPUT_LIMIT})
        terminal = str((created or {}).get("terminalId", ""))
        if tool_use_id:
            self._peer.notify("session/update", {"sessionId": self._session_id, "update": {
                "sessionUpdate": "tool_call_update", "toolCallId": tool_use_id,
                "status": "in_progress",
                "content": [{"type": "terminal", "terminalId": terminal}]}})
        try:
            ending = await self._wait(terminal, timeout_s, abort)
            if ending != "exited":
                await self._call("terminal/kill", {"terminalId": terminal})
            output = await self._call("terminal/output", {"terminalId": terminal}) or {}
        except BaseException:  # the turn was cancelled, or the editor failed a request
            await asyncio.shield(self._end(terminal, kill=True))
            raise
        await self._end(terminal, kill=False)
        status = output.get("exitStatus") or {}
        return TerminalRun(str(output.get("output", "")), status.get("exitCode"),
                           status.get("signal"), ending, bool(output.get("truncated")))

    async def _wait(self, terminal: str, timeout_s: float, abort: asyncio.Event) -> str:
        exited = asyncio.ensure_future(self._call("terminal/wait_for_exit",
                                                  {"terminalId": terminal}))
        stopped = asyncio.ensure_future(abort.wait())
        try:
            done, _ = await asyncio.wait({exited, stopped}, timeout=timeout_s,
                                         return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopped.cancel()
        if exited in done:
            exited.result()  # its error, if the editor failed it
            return "exited"
        exited.cancel()
        return "interrupted" if abort.is_set() else "timeout"

    async def _end(self, terminal: str, *, kill: bool) -> None:
        """Nothing keeps running in the editor on wisp's behalf, whatever went wrong."""
        for method in ("terminal/kill", "terminal/release") if kill else ("terminal/release",):
            with contextlib.suppress(OSError):
                await self._call(method, {"terminalId": terminal})

    async def _call(self, method: str, params: JSON) -> Any:
        try:
            return await self._peer.request(method, {"sessionId": self._session_id, **params})
        except (RpcError, ConnectionClosed) as exc:
            raise OSError(f"{method}: {exc}") from exc
