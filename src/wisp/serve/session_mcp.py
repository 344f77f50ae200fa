"""A served agent's MCP servers, connected by the service (never from inside the session's
sandbox), with the bearer tokens of the session's vaults.

Each turn starts by connecting the servers not yet connected (`tools`); a server that
cannot be reached, or refuses its credential, is a `session.error`
(`mcp_connection_failed_error` / `mcp_authentication_failed_error`, naming it) and its
tools are left out of that turn; the turn goes on. The model sees each enabled tool of
the server's `mcp_toolset` as `mcp__<server>__<tool>`; its calls are logged as
`agent.mcp_tool_use` / `agent.mcp_tool_result` (`wisp.serve.projection`).

The credential is looked up again before every call: one archived, deleted or expired
since the connection was made fails the call at once, with a `session.error` and an
error result the model reads, instead of going on with a token the vault no longer
holds. A server that needs no token is connected without one when no vault has one.

Where the service may connect: an environment whose `networking` is `limited` reaches
only its `allowed_hosts` unless `allow_mcp_servers` is set; and, as for webhooks,
only public addresses unless `WISP_SERVE_MCP_ALLOW_PRIVATE=1`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from wisp.jsontypes import JSON
from wisp.mcp.client import McpServer, McpTool, mcp_tool_name
from wisp.serve import egress, shapes
from wisp.serve.store.offload import off_loop
from wisp.serve.vaults import Vaults
from wisp.tools.base import ToolContext, ToolResult

if TYPE_CHECKING:
    from wisp.serve.session_log import SessionLog
    from wisp.serve.store.base import Store
    from wisp.serve.tool_plan import ToolPlan
    from wisp.tools.base import Tool

ALLOW_PRIVATE = "WISP_SERVE_MCP_ALLOW_PRIVATE"


def build_server(name: str, url: str, headers: dict[str, str],
                 env: Mapping[str, str]) -> McpServer:
    """Streamable HTTP, or the legacy HTTP+SSE transport for a URL ending in /sse. Each
    connection goes to an address checked public at that moment (`egress.public_address`),
    so a name that resolved to a public address at the check cannot send the connection
    to a private one afterwards (DNS rebinding)."""
    resolve = None if env.get(ALLOW_PRIVATE) == "1" else egress.public_address
    if urlsplit(url).path.rstrip("/").endswith("/sse"):
        from wisp.mcp.legacy_sse import SseMcpServer

        return SseMcpServer(name, url, headers, env, resolve=resolve)
    from wisp.mcp.streamable_http import HttpMcpServer

    return HttpMcpServer(name, url, headers, env, resolve=resolve)


async def egress_refusal(url: str, environment: JSON | None,
                         env: Mapping[str, str]) -> str | None:
    """Why the service may not connect to `url` for this environment (None: it may)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    config = (environment or {}).get("config") or {}
    networking = config.get("networking") or {}
    if (config.get("type") == "cloud" and networking.get("type") == "limited"
            and not networking.get("allow_mcp_servers")
            and host not in [h.lower() for h in networking.get("allowed_hosts") or []]):
        return (f"{host} is not among the environment's allowed_hosts and its networking "
                "does not set allow_mcp_servers")
    if env.get(ALLOW_PRIVATE) == "1":
        return None
    try:
        egress.refuse_private_literal(host)
        await egress.public_address(host, parts.port or (443 if parts.scheme == "https"
                                                         else 80))
    except egress.EgressRefused as exc:
        return str(exc).replace("webhooks are delivered", "MCP servers are reached").replace(
            egress.ALLOW_PRIVATE, ALLOW_PRIVATE)
    return None


class SessionMcp:
    """The MCP connections of one session's driver."""

    def __init__(self, store: Store, session: JSON, agent: Mapping[str, Any],
                 environment: JSON | None, *, env: Mapping[str, str], log: SessionLog,
                 plan: ToolPlan) -> None:
        self.store = store
        self.session_id = str(session["id"])
        self.vault_ids: list[str] = list(session.get("vault_ids") or [])
        self.entries: list[JSON] = list(agent.get("mcp_servers") or [])
        self.environment = environment
        self.env = env
        self.log = log
        self.plan = plan
        self.servers: dict[str, McpServer] = {}
        self.with_token: set[str] = set()  # servers connected with a vault's token
        self.vaults_of = self.session_id  # the session whose owner's vaults are used

    def share_vaults(self, session: SessionMcp) -> None:
        """A session thread authenticates with its session's vaults."""
        self.vault_ids, self.vaults_of = session.vault_ids, session.vaults_of

    def _vaults(self) -> Vaults | None:
        owner = self.store.owner_of("session", self.vaults_of)
        return None if owner is None else Vaults(self.store, owner)

    async def token(self, url: str) -> str:
        """The vaults' token for `url` now; `LookupError` saying why there is none. Read
        off the event loop (`off_loop`): the session's owner, its vaults, a credential
        and its secret are store reads, each a round trip on PostgreSQL."""
        return await off_loop(self.store, self._token, url)

    def _token(self, url: str) -> str:
        vaults = self._vaults()
        if vaults is None:
            raise LookupError("the session is gone")
        return vaults.bearer_for(self.vault_ids, url)

    def failed(self, kind: str, server: str, message: str) -> None:
        self.log.emit(shapes.session_error(kind, message, mcp_server_name=server))

    async def tools(self) -> dict[str, Tool]:
        out: dict[str, Tool] = {}
        for entry in self.entries:
            name = str(entry["name"])
            server = self.servers.get(name)
            if server is None or server.status != "connected":
                server = await self._connect(name, str(entry["url"]))
            if server is None:
                continue
            for spec in server.tools:
                tool = str(spec.get("name"))
                enabled, _ = self.plan.mcp_setting(name, tool)
                if enabled:
                    model_name = mcp_tool_name(name, tool)
                    self.plan.mcp_calls[model_name] = (name, tool)
                    out[model_name] = ServedMcpTool(self, server, spec, str(entry["url"]))
        return out

    async def _connect(self, name: str, url: str) -> McpServer | None:
        refusal = await egress_refusal(url, self.environment, self.env)
        if refusal is not None:
            self.failed("mcp_connection_failed_error", name, f"{url}: {refusal}")
            return None
        try:
            token: str | None = await self.token(url)
            missing = ""
        except LookupError as exc:
            token, missing = None, f" ({exc})"
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        server = build_server(name, url, headers, self.env)
        await server.connect()
        if server.status != "connected":
            auth = server.status == "needs-auth"
            self.failed("mcp_authentication_failed_error" if auth
                        else "mcp_connection_failed_error", name,
                        f"MCP server {name} ({url}): {server.error}"
                        + (missing if auth else ""))
            return None
        self.servers[name] = server
        self.with_token.discard(name)
        if token:
            self.with_token.add(name)
        return server

    async def close(self) -> None:
        servers, self.servers = list(self.servers.values()), {}
        for server in servers:
            await server.close()


class ServedMcpTool(McpTool):
    """A tool of a connected server, its credential checked before each call. The agent
    config's `permission_policy` is the gate (a `ConfirmedTool` around it asks the client
    when it says `always_ask`): the permission engine has nothing more to judge."""

    def __init__(self, owner: SessionMcp, server: McpServer, spec: JSON, url: str) -> None:
        super().__init__(server, spec)
        self.owner = owner
        self.url = url

    def is_read_only(self, tool_input: JSON) -> bool:
        return True

    async def run(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        from wisp.mcp.remote import RemoteMcpServer

        name = self.server.name
        try:
            token: str | None = await self.owner.token(self.url)
        except LookupError as exc:
            if name in self.owner.with_token:
                message = f"MCP server {name} ({self.url}): {exc}"
                self.owner.failed("mcp_authentication_failed_error", name, message)
                return ToolResult.error(message)
            token = None  # a server that needed no token still needs none
        if token and isinstance(self.server, RemoteMcpServer):
            self.server.headers["Authorization"] = f"Bearer {token}"
        return await super().run(tool_input, ctx)

