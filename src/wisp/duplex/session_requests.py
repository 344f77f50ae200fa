"""The host's session requests beyond the SDKs' basic contract: the prompt queue
(`cancel_async_message`), tasks (`background_tasks`), MCP servers called or told directly
(`mcp_call`, `mcp_message`, `set_mcp_permission_mode_override`, `mcp_clear_auth`),
feedback (`message_rated`, `submit_feedback`), side model calls (`side_question`,
`generate_session_title`) and `end_session`; and the subtypes wisp refuses with a precise
error (`wisp.wire.host_requests.UNAVAILABLE`). docs/protocol.md tables them all.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from wisp.errors import ControlError, ModelAPIError
from wisp.jsontypes import JSON
from wisp.mcp.client import McpServer, mcp_tool_name
from wisp.rules import Rule
from wisp.stamps import new_uuid
from wisp.wire import frames
from wisp.wire import host_requests as h

if TYPE_CHECKING:
    from wisp.duplex.server import DuplexServer



def register_session_requests(server: DuplexServer) -> None:
    s = SessionRequests(server)
    on = server.dispatcher.on
    on(h.CANCEL_ASYNC_MESSAGE, s.cancel_async_message)
    on(h.BACKGROUND_TASKS, s.background_tasks)
    on(h.SET_MCP_PERMISSION_MODE_OVERRIDE, s.set_mcp_permission_mode_override)
    on(h.MCP_CALL, s.mcp_call)
    on(h.MCP_MESSAGE_IN, s.mcp_message)
    on(h.MCP_CLEAR_AUTH, s.mcp_clear_auth)
    on(h.MCP_AUTHENTICATE, s.mcp_authenticate)
    on(h.MCP_OAUTH_CALLBACK_URL, s.mcp_oauth_callback_url)
    on(h.MESSAGE_RATED, s.message_rated)
    on(h.SUBMIT_FEEDBACK, s.submit_feedback)
    on(h.END_SESSION, s.end_session)
    on(h.GENERATE_SESSION_TITLE, s.generate_session_title)
    on(h.SIDE_QUESTION, s.side_question)
    for subtype, why in h.UNAVAILABLE.items():
        server.dispatcher.register(subtype, _refusal(subtype, why))
    for subtype in h.SENT_TO_HOST:
        server.dispatcher.register(subtype, _wrong_way(subtype))


def _refusal(subtype: str, why: str) -> Any:
    async def refuse(request: JSON) -> None:
        raise ControlError(f"{subtype} is not available in wisp: {why}", "not_available")

    return refuse


def _wrong_way(subtype: str) -> Any:
    async def refuse(request: JSON) -> None:
        raise ControlError(f"{subtype} is a request wisp sends to its host; a host does "
                           "not send it to wisp", "wrong_direction")

    return refuse


class SessionRequests:
    def __init__(self, server: DuplexServer) -> None:
        self.server = server

    async def cancel_async_message(self, request: h.CancelAsyncMessage) -> JSON:
        """Drops a prompt still waiting in the queue; one already running stays (false)."""
        return {"cancelled": self.server.prompts.cancel(request["message_uuid"])}

    async def background_tasks(self, request: h.BackgroundTasks) -> JSON:
        # wisp runs a foreground call to its end (a call the model wanted in the
        # background asked for it with run_in_background): nothing moves, and the answer
        # says so (the TS SDK reads a missing `backgrounded` as true).
        return {"backgrounded": False}

    async def set_mcp_permission_mode_override(
            self, request: h.SetMcpPermissionModeOverride) -> JSON:
        """`default`: every tool of the server asks first, whatever the session's mode
        allows (an ask rule on `mcp__<server>`); `auto` or null: the override is gone."""
        found = self._server(request["serverName"])
        rule = Rule.parse(mcp_tool_name(found.name, "x").rsplit("__", 1)[0])
        self.server.runtime.remove_rule(rule, ("ask",))
        if request["mode"] == "default":
            self.server.runtime.add_rule("ask", rule)
        return {}

    async def mcp_call(self, request: h.McpCall) -> JSON:
        """Calls the tool now, for the host: no model turn, no permission prompt (the
        control channel is trusted). The server's own result comes back."""
        name = request["tool"]
        await self.server.mcp.settle()
        for server in self.server.mcp.servers.values():
            for spec in server.tools if server.status == "connected" else []:
                if mcp_tool_name(server.name, str(spec.get("name"))) == name:
                    return await server.call_tool(str(spec.get("name")),
                                                  request.get("arguments") or {})
        raise ControlError(f"No such MCP tool: {name}", "not_found")

    async def mcp_message(self, request: h.McpMessageIn) -> JSON:
        """A message an SDK-hosted server sends of its own accord: a notification (a
        changed tool list re-lists its tools); requests from a server are not served."""
        found = self._server(request["server_name"])
        message = request["message"]
        method = message.get("method")
        if isinstance(method, str) and "id" not in message:
            found.notified(method, message.get("params"))
            return {}
        raise ControlError(f"MCP server {found.name} may only send notifications here",
                           "unsupported_mcp_message")

    async def mcp_clear_auth(self, request: h.McpClearAuth) -> JSON:
        """Forgets the server's stored OAuth tokens (and stops sending them)."""
        self.server.mcp.oauth.clear(self._server(request["serverName"]))
        return {}

    async def mcp_authenticate(self, request: h.McpAuthenticate) -> JSON:
        """`{authUrl, requiresUserAction, callbackExpected}`: the host opens `authUrl`;
        the server is reconnected once the code comes back (`wisp.mcp.auth_flow`)."""
        found = self._server(request["serverName"])
        return await self.server.mcp.oauth.start(found, request.get("redirectUri"))

    async def mcp_oauth_callback_url(self, request: h.McpOAuthCallbackUrl) -> JSON:
        found = self._server(request["serverName"])
        return await self.server.mcp.oauth.finish(found, request["callbackUrl"])

    async def message_rated(self, request: h.MessageRated) -> JSON:
        return {}  # the reference logs a product event; wisp sends no telemetry

    async def submit_feedback(self, request: h.SubmitFeedback) -> JSON:
        """Nothing is uploaded (wisp has no feedback service); with `save_locally` the
        report is kept under the config folder and its id is answered."""
        if not request.get("save_locally"):
            return {"unavailable": True,
                    "failure_reason": "wisp has no feedback service; ask to save_locally"}
        from wisp.paths import config_dir

        feedback_id = new_uuid()
        folder = config_dir(self.server.env) / "feedback"
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        report = {"id": feedback_id, "time": time.time(), "description": request["description"],
                  "session_id": self.server.session.session_id}
        (folder / f"{feedback_id}.json").write_text(json.dumps(report) + "\n")
        return {"feedback_id": feedback_id, "saved_path": str(folder / f"{feedback_id}.json")}

    async def end_session(self, request: h.EndSession) -> JSON:
        """As stdin EOF: queued prompts still run, then the process exits."""
        self.server.end_input()
        return {}

    async def generate_session_title(self, request: h.GenerateSessionTitle) -> JSON:
        title = await self._aside(self.server.runtime.session_title(request.get("description")))
        if request.get("persist") and title:
            self.server.title = title
            self.server.runtime.rename(title)
        return {"title": title or None}

    async def side_question(self, request: h.SideQuestion) -> JSON:
        """A model call beside the conversation. Its start is reported first
        (`control_request_progress`, as the reference's), so a host that times its
        requests knows the answer is coming."""
        from wisp.control.dispatcher import HANDLING

        self.server.sink.write(frames.system("control_request_progress",
                                             self.server.session.session_id,
                                             request_id=HANDLING.get(), status="started"))
        answer = await self._aside(self.server.runtime.side_answer(request["question"],
                                                                   request.get("history")))
        return {"response": answer or None, "synthetic": False}

    async def _aside(self, call: Any) -> str:
        try:
            text: str = await call
        except ModelAPIError as exc:
            raise ControlError(exc.message, "api_error") from None
        return text

    def _server(self, name: str) -> McpServer:
        found = self.server.mcp.get(name)
        if found is None:
            raise ControlError(f"MCP server not found: {name}", "not_found")
        return found
