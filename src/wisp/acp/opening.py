"""Opening a session's `Runtime` for the editor: a new conversation, or a wisp session
resumed (`session/load`, `session/resume`) from the transcript the terminal UI and
`--resume` share.

Above: `wisp.acp.agent`. Below: `wisp.runtime`, built from a plain `RuntimeConfig`.
Imported on the first `session/new`, never before `initialize` is answered.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wisp.acp.rpc import INVALID_PARAMS, RESOURCE_NOT_FOUND, Peer, RpcError
from wisp.acp.session import AcpSession, mcp_config
from wisp.acp.updates import UpdateProjection
from wisp.errors import UsageError
from wisp.jsontypes import JSON
from wisp.runtime.config import RuntimeConfig
from wisp.runtime.runtime import Runtime
from wisp.sessions.resume import SessionNotFound


class _Relay:
    """The runtime's sink, connected to the session once it exists (the runtime is built
    first: its session id names the ACP session)."""

    def __init__(self) -> None:
        self.target: UpdateProjection | None = None

    def emit(self, event: object) -> None:
        if self.target is not None:
            self.target.emit(event)


async def open_session(peer: Peer, env: dict[str, str], cwd: Path, *, resume: str | None,
                       servers: Any, caps: JSON, fork: bool = False) -> AcpSession:
    if not cwd.is_dir():
        raise RpcError(INVALID_PARAMS, f"No such folder: {cwd}")
    config = RuntimeConfig(cwd=cwd, env=dict(env), resume=resume, fork_session=fork,
                           include_partial_messages=True, mcp_config=mcp_config(servers))
    relay = _Relay()
    try:
        runtime = Runtime.open(config, relay)
    except SessionNotFound as exc:
        raise RpcError(RESOURCE_NOT_FOUND, str(exc), {"uri": resume}) from exc
    except UsageError as exc:
        raise RpcError(INVALID_PARAMS, str(exc)) from exc
    session_id = runtime.session.session_id
    projection = UpdateProjection(
        lambda update: peer.notify("session/update",
                                   {"sessionId": session_id, "update": update}), str(cwd))
    relay.target = projection
    acp = AcpSession(peer, session_id, cwd, runtime, projection=projection, caps=caps,
                     base_env=env)
    await runtime.connect_mcp()  # the editor's servers are ready for the first prompt
    return acp
