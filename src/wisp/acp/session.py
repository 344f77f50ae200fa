"""One ACP session: a wisp `Runtime` an editor drives.

Above: `wisp.acp.agent`, which routes the editor's `session/*` requests here. Below: the
runtime, opened with an `UpdateProjection` as its sink, this session as its permission
host, and (when the editor offers them) the editor's `fs/*` methods as the file tools'
files. The session is a wisp session: its transcript is the one the terminal UI and
`--resume` read, so a conversation moves between the editor and the terminal.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wisp.acp.rpc import INVALID_PARAMS, ConnectionClosed, Peer, RpcError
from wisp.acp.updates import UpdateProjection, tool_call
from wisp.diagnostics import warn
from wisp.engine.outcome import Aborted, Failed, LimitHit
from wisp.jsontypes import JSON
from wisp.permissions.engine import Verdict
from wisp.rules import Rule

if TYPE_CHECKING:
    from wisp.runtime.quiet import QuietTurn
    from wisp.runtime.runtime import Runtime
    from wisp.tools.base import Tool

MODES = [("default", "Default", "Ask before edits and commands the rules do not allow"),
         ("acceptEdits", "Accept Edits", "Edits in the working folders without asking"),
         ("plan", "Plan Mode", "Read and plan; no edits, no commands"),
         ("dontAsk", "Don't Ask", "Deny whatever the rules do not allow"),
         ("bypassPermissions", "Bypass Permissions", "Allow every call")]
OPTIONS = [{"optionId": "allow_once", "name": "Allow", "kind": "allow_once"},
           {"optionId": "allow_always", "name": "Always Allow", "kind": "allow_always"},
           {"optionId": "reject_once", "name": "Reject", "kind": "reject_once"},
           {"optionId": "reject_always", "name": "Always Reject", "kind": "reject_always"}]
REFUSED = "The user refused this call in the editor."


def bypass_offered(env: dict[str, str]) -> bool:
    """As Claude Code: bypassing every check is not offered to root outside a sandbox."""
    return os.geteuid() != 0 or bool(env.get("IS_SANDBOX"))


class EditorFiles:
    """`fs/read_text_file` and `fs/write_text_file`: the editor's buffers for the tools."""

    def __init__(self, peer: Peer, session_id: str) -> None:
        self._peer = peer
        self._session_id = session_id

    async def read(self, path: Path) -> str:
        try:
            answer = await self._peer.request("fs/read_text_file", {
                "sessionId": self._session_id, "path": str(path)})
        except RpcError as exc:
            raise OSError(exc.message) from exc
        return str((answer or {}).get("content", ""))

    async def write(self, path: Path, text: str) -> None:
        try:
            await self._peer.request("fs/write_text_file", {
                "sessionId": self._session_id, "path": str(path), "content": text})
        except RpcError as exc:
            raise OSError(exc.message) from exc


class AcpSession:
    def __init__(self, peer: Peer, session_id: str, cwd: Path, runtime: Runtime, *,
                 projection: UpdateProjection, caps: JSON, base_env: dict[str, str]) -> None:
        self.peer = peer
        self.session_id = session_id
        self.cwd = cwd
        self.runtime = runtime
        self.projection = projection
        self.cancelled = False
        self._turn = asyncio.Lock()  # one prompt at a time, as in the terminal
        self._followers: set[asyncio.Task[None]] = set()  # turns background work wakes
        runtime.connect_host(self.ask)
        fs = caps.get("fs") or {}
        if fs.get("readTextFile") and fs.get("writeTextFile"):
            runtime.use_editor_files(EditorFiles(peer, session_id))
        if caps.get("terminal") is True:
            from wisp.acp.terminals import Terminals

            runtime.use_editor_terminals(Terminals(peer, session_id, base_env, runtime.env))

    def send(self, update: JSON) -> None:
        self.peer.notify("session/update", {"sessionId": self.session_id, "update": update})

    # Prompting -------------------------------------------------------------------------

    async def prompt(self, content: list[JSON]) -> JSON:
        async with self._turn:
            self.cancelled = False
            turns = self.runtime.run_until_quiet(content)
            first = await anext(turns)
        if first.more:
            self._follow(turns)
        else:
            await turns.aclose()
        outcome = first.outcome
        if self.cancelled or isinstance(outcome, Aborted):
            return {"stopReason": "cancelled"}
        if isinstance(outcome, LimitHit):
            return {"stopReason": "max_turn_requests"}
        if isinstance(outcome, Failed):
            raise RpcError(-32603, outcome.message)
        return {"stopReason": "end_turn"}

    def _follow(self, turns: AsyncGenerator[QuietTurn, None]) -> None:
        """Background work the prompt started is still going: the turns its end wakes
        run after `session/prompt` has answered, and the editor sees them as
        `session/update` notifications (which ACP allows at any time), as it saw the
        prompt's. A new prompt or a cancel ends the wait (`Runtime.run_until_quiet`)."""
        follower = asyncio.ensure_future(_drain(turns))
        self._followers.add(follower)
        follower.add_done_callback(self._followers.discard)

    def cancel(self) -> None:
        self.cancelled = True
        self.runtime.interrupt()

    # Permission ------------------------------------------------------------------------

    async def ask(self, tool: Tool, tool_input: JSON, tool_use_id: str,
                  verdict: Verdict) -> tuple[Verdict, JSON]:
        call = tool_call({"id": tool_use_id, "name": tool.name, "input": tool_input},
                         str(self.cwd))
        del call["sessionUpdate"]
        try:
            answer = await self.peer.request("session/request_permission", {
                "sessionId": self.session_id, "toolCall": call, "options": OPTIONS})
        except (RpcError, ConnectionClosed):
            return Verdict("deny", REFUSED, "host"), tool_input
        outcome = (answer or {}).get("outcome") or {}
        chosen = outcome.get("optionId") if outcome.get("outcome") == "selected" else None
        if chosen is None or self.cancelled:
            self.cancel()  # the editor cancelled the prompt
            return Verdict("deny", REFUSED, "host"), tool_input
        if chosen == "allow_always":
            self.runtime.add_rule("allow", Rule(tool.name, None, rank=6))  # this session only
        elif chosen == "reject_always":
            self.runtime.add_rule("deny", Rule(tool.name, None, rank=6))
        if chosen in ("allow_once", "allow_always"):
            return Verdict("allow", source="host"), tool_input
        return Verdict("deny", REFUSED, "host"), tool_input

    # Settings --------------------------------------------------------------------------

    def modes(self) -> JSON:
        offered = [m for m in MODES
                   if m[0] != "bypassPermissions" or bypass_offered(self.runtime.env)]
        return {"currentModeId": self.runtime.session.permission_mode,
                "availableModes": [{"id": i, "name": n, "description": d}
                                   for i, n, d in offered]}

    def set_mode(self, mode: str) -> None:
        if mode not in {m["id"] for m in self.modes()["availableModes"]}:
            raise RpcError(INVALID_PARAMS, f"Unknown mode: {mode}")
        self.runtime.set_permission_mode(mode)  # type: ignore[arg-type]
        self.send({"sessionUpdate": "current_mode_update", "currentModeId": mode})

    def models(self) -> list[JSON]:
        """The aliases a user knows, each with the model it means here."""
        from wisp.models import catalog

        env = self.runtime.env
        rows = [{"value": alias, "name": alias.capitalize(),
                 "description": catalog.resolve_model(alias, env)}
                for alias in catalog.DEFAULT_ALIASES]
        current = self.runtime.session.model
        if not any(r["description"] == current for r in rows):
            rows.insert(0, {"value": current, "name": current, "description": current})
        return rows

    def current_model(self) -> str:
        current = self.runtime.session.model
        return next((r["value"] for r in self.models() if r["description"] == current),
                    current)

    def set_model(self, model: str) -> None:
        from wisp.errors import UsageError

        try:
            self.runtime.set_model(model)
        except UsageError as exc:
            raise RpcError(INVALID_PARAMS, str(exc)) from exc

    def config_options(self) -> list[JSON]:
        modes = self.modes()
        return [
            {"id": "mode", "name": "Mode", "category": "mode", "type": "select",
             "currentValue": modes["currentModeId"],
             "options": [{"value": m["id"], "name": m["name"], "description": m["description"]}
                         for m in modes["availableModes"]]},
            {"id": "model", "name": "Model", "category": "model", "type": "select",
             "currentValue": self.current_model(), "options": self.models()}]

    def commands_update(self) -> JSON:
        from wisp.commands.prompts import listing
        from wisp.paths import config_dir

        rows = listing(self.cwd, config_dir(self.runtime.env), self.runtime.project)
        commands = []
        for row in rows:
            command: JSON = {"name": row["name"], "description": row.get("description", "")}
            if row.get("argumentHint"):
                command["input"] = {"hint": row["argumentHint"]}
            commands.append(command)
        return {"sessionUpdate": "available_commands_update", "availableCommands": commands}

    async def aclose(self) -> None:
        await self.runtime.aclose()  # ends the wait of any turns still being followed
        followers = list(self._followers)
        if followers:
            await asyncio.wait(followers)


async def _drain(turns: AsyncGenerator[QuietTurn, None]) -> None:
    """Runs the woken turns: each reports itself through the session's updates. A
    configuration error found mid-turn ends the following (its turn has ended)."""
    from wisp.errors import UsageError

    try:
        async for _turn in turns:
            pass
    except UsageError as exc:
        warn(f"wisp acp: {exc}\n")


def mcp_config(servers: Any) -> tuple[str, ...]:
    """The editor's MCP servers (stdio, HTTP, SSE) as a `--mcp-config` document."""
    if not isinstance(servers, list) or not servers:
        return ()
    found: JSON = {}
    for server in servers:
        if not isinstance(server, dict) or not isinstance(server.get("name"), str):
            raise RpcError(INVALID_PARAMS, "Each MCP server needs a name")
        pairs = {p.get("name"): p.get("value") for p in server.get("headers") or server.get(
            "env") or [] if isinstance(p, dict)}
        if server.get("type") in ("http", "sse"):
            found[server["name"]] = {"type": server["type"], "url": server.get("url"),
                                     "headers": pairs}
        else:
            found[server["name"]] = {"type": "stdio", "command": server.get("command"),
                                     "args": server.get("args") or [], "env": pairs}
    return (json.dumps({"mcpServers": found}),)
