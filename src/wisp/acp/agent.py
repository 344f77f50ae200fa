"""The ACP agent: the editor's requests, each turned into runtime calls.

Above: `wisp.acp.server` (the stdio loop) through `Peer`. Below: one `AcpSession` per
session the editor opened. `initialize` is answered from constants, before anything
heavy is imported: the editor waits for it before it shows the agent.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wisp.acp.rpc import (
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    RESOURCE_NOT_FOUND,
    Peer,
    RpcError,
)
from wisp.jsontypes import JSON

if TYPE_CHECKING:
    from wisp.acp.session import AcpSession

PROTOCOL_VERSION = 1


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("wisp-agent")
    except PackageNotFoundError:
        return "0"


class AcpAgent:
    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.peer: Peer | None = None
        self.sessions: dict[str, AcpSession] = {}
        self.client_caps: JSON = {}

    # Dispatch --------------------------------------------------------------------------

    async def handle(self, method: str, params: JSON) -> Any:
        name = "_" + method.replace("/", "_")
        handler = getattr(self, name, None) if method.count("/") <= 1 else None
        if handler is None or method.startswith("_"):
            raise RpcError(METHOD_NOT_FOUND, f"Method not found: {method}")
        return await handler(params)

    async def notified(self, method: str, params: JSON) -> None:
        if method == "session/cancel":
            self.session(params).cancel()
        # Unknown notifications are ignored, as JSON-RPC asks.

    def session(self, params: JSON) -> AcpSession:
        key = params.get("sessionId")
        found = self.sessions.get(key) if isinstance(key, str) else None
        if found is None:
            raise RpcError(RESOURCE_NOT_FOUND, f"Session not found: {key}", {"uri": key})
        return found

    # Connection ------------------------------------------------------------------------

    async def _initialize(self, params: JSON) -> JSON:
        caps = params.get("clientCapabilities")
        self.client_caps = caps if isinstance(caps, dict) else {}
        return {
            "protocolVersion": PROTOCOL_VERSION,
            "agentCapabilities": {
                "loadSession": True,
                "promptCapabilities": {"image": True, "embeddedContext": True,
                                       "audio": False},
                "mcpCapabilities": {"http": True, "sse": True},
                "sessionCapabilities": {"resume": {}, "close": {}, "list": {}, "fork": {}},
            },
            "agentInfo": {"name": "wisp", "title": "wisp", "version": _version()},
            "authMethods": [],
        }

    async def _authenticate(self, params: JSON) -> JSON:
        return {}  # wisp reads its credentials from the environment, as in the terminal

    # Sessions --------------------------------------------------------------------------

    async def _session_new(self, params: JSON) -> JSON:
        acp = await self._open(params, resume=None)
        return self._described(acp)

    async def _session_load(self, params: JSON) -> JSON:
        from wisp.acp.content import replay

        acp = await self._open(params, resume=_session_id(params))
        for update in replay(acp.runtime.conversation, str(acp.cwd)):
            acp.send(update)
        answer = self._described(acp)
        del answer["sessionId"]
        return answer

    async def _session_resume(self, params: JSON) -> JSON:
        acp = self.sessions.get(_session_id(params)) or await self._open(
            params, resume=_session_id(params))
        answer = self._described(acp)
        del answer["sessionId"]
        return answer

    async def _session_fork(self, params: JSON) -> JSON:
        """A new session that starts from a copy of that one's conversation."""
        acp = await self._open(params, resume=_session_id(params), fork=True)
        return self._described(acp)

    async def _session_list(self, params: JSON) -> JSON:
        from wisp.acp.listing import list_sessions

        cwd = params.get("cwd")
        return {"sessions": list_sessions(self.env, cwd if isinstance(cwd, str) else None)}

    async def _session_close(self, params: JSON) -> JSON:
        acp = self.session(params)
        del self.sessions[acp.session_id]
        acp.cancel()
        await acp.aclose()
        return {}

    async def _open(self, params: JSON, resume: str | None, *,
                    fork: bool = False) -> AcpSession:
        from wisp.acp.opening import open_session

        if self.peer is None:
            raise RpcError(INVALID_PARAMS, "not connected")
        cwd = params.get("cwd")
        if not isinstance(cwd, str) or not os.path.isabs(cwd):
            raise RpcError(INVALID_PARAMS, "cwd must be an absolute path")
        acp = await open_session(self.peer, self.env, Path(cwd), resume=resume, fork=fork,
                                 servers=params.get("mcpServers"), caps=self.client_caps)
        self.sessions[acp.session_id] = acp
        return acp

    def _described(self, acp: AcpSession) -> JSON:
        acp.send(acp.commands_update())
        # The agent loop loads after this answer is written, while the user types, not
        # when the first prompt comes (it would make that turn several times as slow).
        asyncio.get_running_loop().call_soon(_preload_engine)
        return {"sessionId": acp.session_id, "modes": acp.modes(),
                "configOptions": acp.config_options()}

    # Turns and settings ----------------------------------------------------------------

    async def _session_prompt(self, params: JSON) -> JSON:
        from wisp.acp.content import prompt_content

        acp = self.session(params)
        try:
            content = prompt_content(params.get("prompt"))
        except ValueError as exc:
            raise RpcError(INVALID_PARAMS, str(exc)) from exc
        return await acp.prompt(content)

    async def _session_cancel(self, params: JSON) -> None:
        self.session(params).cancel()  # also as a request, for clients that send one

    async def _session_set_mode(self, params: JSON) -> JSON:
        self.session(params).set_mode(str(params.get("modeId")))
        return {}

    async def _session_set_model(self, params: JSON) -> JSON:
        self.session(params).set_model(str(params.get("modelId")))
        return {}

    async def _session_set_config_option(self, params: JSON) -> JSON:
        acp = self.session(params)
        option, value = params.get("configId"), str(params.get("value"))
        if option == "mode":
            acp.set_mode(value)
        elif option == "model":
            acp.set_model(value)
        else:
            raise RpcError(INVALID_PARAMS, f"Unknown config option: {option}")
        return {"configOptions": acp.config_options()}

    async def aclose(self) -> None:
        """The editor went away: every turn ends, every session closes (its transcript
        complete, its processes gone)."""
        sessions, self.sessions = list(self.sessions.values()), {}
        for acp in sessions:
            acp.cancel()
        for acp in sessions:
            await acp.aclose()


def _preload_engine() -> None:
    with contextlib.suppress(Exception):  # a failure shows on the first turn, as ever
        import_module("wisp.engine.loop")


def _session_id(params: JSON) -> str:
    key = params.get("sessionId")
    if not isinstance(key, str) or not key:
        raise RpcError(INVALID_PARAMS, "sessionId is required")
    return key
