"""`--mcp-config` (JSON text or a file path) and initialize's `mcpServers`: entries in,
one `McpServer` per entry out.

Claude Code's shape: `{"mcpServers": {"name": {"type": "stdio", "command": ..., "args":
[...], "env": {...}}}}`, where a missing `type` means stdio, and `{"type": "http" | "sse",
"url": ..., "headers": {...}}` for a remote server. `${VAR}` / `${VAR:-default}` in
command, args, env, url and headers are expanded from the session's environment. An entry
wisp can't serve (another transport, a bad field, an unset variable) becomes a server
that reports "failed" with the reason: one bad entry must not cost the others.

The transports are imported here, when an entry names one: a run without remote servers
never loads the HTTP client.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from wisp.errors import UsageError
from wisp.jsontypes import JSON
from wisp.mcp.client import McpServer

if TYPE_CHECKING:
    from wisp.mcp.sdk_bridge import Send

_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def parse_mcp_configs(values: tuple[str, ...]) -> dict[str, JSON]:
    servers: dict[str, JSON] = {}
    for raw in values:
        text = raw if raw.lstrip().startswith("{") else _read(raw)
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise UsageError(f"Invalid --mcp-config: {exc.msg}") from None
        entries = data.get("mcpServers", data) if isinstance(data, dict) else None
        if not isinstance(entries, dict):
            raise UsageError("Invalid --mcp-config: expected an object of servers")
        servers.update({str(k): v for k, v in entries.items() if isinstance(v, dict)})
    return servers


def _read(path: str) -> str:
    try:
        return Path(path).expanduser().read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"Could not read --mcp-config file {path}: {exc.strerror}") from None


def build_server(name: str, entry: JSON, send: Send | None, cwd: Path | None,
                 environ: Mapping[str, str]) -> McpServer:
    from wisp.mcp.sdk_bridge import SdkMcpServer

    kind = str(entry.get("type") or "stdio")
    if kind == "sdk":
        if send is None:
            return Unavailable(name, kind, "SDK MCP servers are reached over the SDK's "
                               "control channel, which only --input-format stream-json has")
        return SdkMcpServer(name, send, source="sdk")
    if kind in ("http", "sse"):
        return _remote(name, kind, entry, environ)
    if kind != "stdio":
        return Unavailable(name, kind, f"{kind} MCP servers are not supported "
                           "(stdio, http, sse and sdk are)")
    try:
        command, args, env = _stdio_fields(entry, environ)
    except ValueError as exc:
        return Unavailable(name, kind, f"invalid config: {exc}")
    from wisp.mcp.stdio import StdioMcpServer

    return StdioMcpServer(name, command, args, env, cwd=cwd, environ=environ)


def _stdio_fields(entry: JSON, environ: Mapping[str, str]
                  ) -> tuple[str, list[str], dict[str, str]]:
    command, args, env = entry.get("command"), entry.get("args", []), entry.get("env", {})
    if not isinstance(command, str) or not command:
        raise ValueError("`command` must be a non-empty string")
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ValueError("`args` must be a list of strings")
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise ValueError("`env` must be an object of strings")
    missing: list[str] = []
    command = expand(command, environ, missing)
    args = [expand(a, environ, missing) for a in args]
    env = {str(k): expand(v, environ, missing) for k, v in env.items()}
    if missing:
        raise ValueError("missing environment variable(s): " + ", ".join(sorted(set(missing))))
    return command, args, env


def _remote(name: str, kind: str, entry: JSON, environ: Mapping[str, str]) -> McpServer:
    try:
        url, headers = _remote_fields(entry, environ)
    except ValueError as exc:
        return Unavailable(name, kind, f"invalid config: {exc}")
    if kind == "http":
        from wisp.mcp.streamable_http import HttpMcpServer

        return HttpMcpServer(name, url, headers, environ)
    from wisp.mcp.legacy_sse import SseMcpServer

    return SseMcpServer(name, url, headers, environ)


def _remote_fields(entry: JSON, environ: Mapping[str, str]) -> tuple[str, dict[str, str]]:
    url, headers = entry.get("url"), entry.get("headers", {})
    if not isinstance(url, str) or not url:
        raise ValueError("`url` must be a non-empty string")
    if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
        raise ValueError("`headers` must be an object of strings")
    missing: list[str] = []
    url = expand(url, environ, missing)
    headers = {str(k): expand(v, environ, missing) for k, v in headers.items()}
    if missing:
        raise ValueError("missing environment variable(s): " + ", ".join(sorted(set(missing))))
    if not url.lower().startswith(("http://", "https://")):
        raise ValueError(f"`url` must be an http:// or https:// URL, not {url!r}")
    if not any(k.lower() == "authorization" for k in headers):
        headers.update(stored_authorization(url, environ))
    for key, value in headers.items():
        # A line break would let a header smuggle another one (or a second request) in.
        if not key or any(c in key for c in ":\r\n ") or "\r" in value or "\n" in value:
            raise ValueError(f"header {key!r} has a name or value HTTP can't carry")
    return url, headers


def stored_authorization(url: str, environ: Mapping[str, str]) -> dict[str, str]:
    """The token an earlier OAuth flow stored for `url` (`wisp.mcp.oauth`), if any; read
    only when a file holds any (a plain run pays one stat)."""
    from wisp.paths import config_dir

    if not (config_dir(environ) / "mcp-oauth.json").is_file():
        return {}
    from wisp.mcp.oauth import TokenStore

    token = TokenStore(environ).bearer(url)
    return {"Authorization": f"Bearer {token}"} if token else {}


def expand(text: str, environ: Mapping[str, str], missing: list[str]) -> str:
    """`${VAR}` and `${VAR:-default}`; an unset variable without a default is noted in
    `missing`."""

    def value(match: re.Match[str]) -> str:
        found = environ.get(match.group(1))
        if found is not None:
            return found
        if match.group(2) is not None:
            return match.group(2)
        missing.append(match.group(1))
        return match.group(0)

    return _VARIABLE.sub(value, text)


class Unavailable(McpServer):
    """A configured server wisp can't reach: always "failed", with the reason."""

    def __init__(self, name: str, source: str, reason: str) -> None:
        super().__init__(name, source)
        self.reason = reason
        self.status, self.error = "failed", reason

    async def connect(self) -> None:
        self.status, self.error = "failed", self.reason
