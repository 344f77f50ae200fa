"""The session's OAuth flows for its remote MCP servers (`wisp.mcp.oauth` does the
protocol): started by a host's `mcp_authenticate`, completed by the redirect reaching
wisp's listener or the host's `mcp_oauth_callback_url`, undone by `mcp_clear_auth`. A
server authorized is reconnected with its new token at once."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping

from wisp.diagnostics import warn
from wisp.errors import ControlError, McpError
from wisp.jsontypes import JSON
from wisp.mcp.client import McpServer
from wisp.mcp.oauth import CallbackListener, Flow, TokenStore, discover, register

Reconnect = Callable[[McpServer], Awaitable[None]]
LISTEN_S = 600.0  # how long wisp's listener waits for the user to finish in the browser


class OAuthFlows:
    def __init__(self, environ: Mapping[str, str], reconnect: Reconnect) -> None:
        self.store = TokenStore(environ)
        self._reconnect = reconnect
        self._flows: dict[str, Flow] = {}
        self._waiting: set[asyncio.Task[None]] = set()

    async def start(self, server: McpServer, redirect_uri: str | None) -> JSON:
        url = _remote_url(server)
        try:
            metadata = await discover(url, server.auth_challenge)
            listener = CallbackListener() if redirect_uri is None else None
            redirect = await listener.start() if listener is not None else str(redirect_uri)
            flow = Flow(url, metadata, await register(metadata, redirect), redirect)
        except McpError as exc:
            raise ControlError(f"MCP OAuth for {server.name} failed: {exc}", "mcp_auth_failed"
                               ) from None
        self._flows[server.name] = flow
        if listener is not None:
            task = asyncio.ensure_future(self._listen(server, flow, listener))
            self._waiting.add(task)
            task.add_done_callback(self._waiting.discard)
        return {"authUrl": flow.authorization_url(), "requiresUserAction": True,
                "callbackExpected": listener is None}

    async def _listen(self, server: McpServer, flow: Flow, listener: CallbackListener) -> None:
        try:
            callback = await asyncio.wait_for(asyncio.shield(listener.received), LISTEN_S)
            await self.finish(server, callback)
        except (TimeoutError, ControlError) as exc:
            warn(f"wisp: MCP OAuth for {server.name} did not complete: {exc}\n")
        finally:
            await listener.close()

    async def finish(self, server: McpServer, callback_url: str) -> JSON:
        flow = self._flows.get(server.name)
        if flow is None:
            raise ControlError(f"no OAuth flow is waiting for {server.name}", "not_found")
        try:
            entry = await flow.complete(callback_url)
        except McpError as exc:
            raise ControlError(f"MCP OAuth for {server.name} failed: {exc}",
                               "mcp_auth_failed") from None
        self._flows.pop(server.name, None)
        self.store.put(flow.server_url, entry)
        _set_bearer(server, str(entry["access_token"]))
        await self._reconnect(server)
        return {}

    def clear(self, server: McpServer) -> None:
        self.store.put(_remote_url(server), None)
        headers = getattr(server, "headers", None)
        if isinstance(headers, dict):
            headers.pop("Authorization", None)

    async def aclose(self) -> None:
        for task in set(self._waiting):
            task.cancel()


def _remote_url(server: McpServer) -> str:
    url = getattr(server, "url", None)
    if not isinstance(url, str):
        raise ControlError(f"{server.name} is not a remote (http or sse) server: it takes no "
                           "OAuth", "unsupported_transport")
    return url


def _set_bearer(server: McpServer, token: str) -> None:
    headers = getattr(server, "headers", None)
    if isinstance(headers, dict):
        headers["Authorization"] = f"Bearer {token}"
