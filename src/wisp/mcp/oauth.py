"""MCP's OAuth flow for a remote server that answers 401: the authorization code grant
with PKCE (S256), as MCP's authorization spec lays it out.

1. Discovery: the protected resource's metadata (RFC 9728; its URL from the 401's
   `WWW-Authenticate: Bearer resource_metadata="…"`, else the server's origin
   `/.well-known/oauth-protected-resource`) names the authorization server, whose metadata
   (RFC 8414, `/.well-known/oauth-authorization-server`) names its endpoints.
2. Registration: dynamic client registration (RFC 7591) as a public client, once per
   server; the client id is kept with the tokens.
3. `mcp_authenticate` answers `{authUrl, requiresUserAction: true, callbackExpected}`: the
   host opens the URL; the authorization server redirects to a listener wisp runs on
   127.0.0.1 (or to the host's own `redirectUri`, whose final URL the host hands back
   with `mcp_oauth_callback_url`). The code is exchanged for tokens, which are stored for
   this user (`<config dir>/mcp-oauth.json`, mode 0600, by server URL) and sent as
   `Authorization: Bearer` from then on, this session and the next. `mcp_clear_auth`
   forgets them.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
import os
import re
import secrets
import time
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urljoin, urlparse

from wisp.errors import McpError
from wisp.jsontypes import JSON
from wisp.models.http import request

STORE_FILE = "mcp-oauth.json"
CALLBACK_PATH = "/callback"
_RESOURCE_METADATA = re.compile(r'resource_metadata="([^"]+)"')


class TokenStore:
    """Tokens and client registrations by server URL, in one file only this user reads."""

    def __init__(self, env: Mapping[str, str]) -> None:
        from wisp.paths import config_dir

        self.path = config_dir(env) / STORE_FILE

    def _all(self) -> JSON:
        try:
            doc = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return doc if isinstance(doc, dict) else {}

    def get(self, url: str) -> JSON:
        entry = self._all().get(url)
        return entry if isinstance(entry, dict) else {}

    def put(self, url: str, entry: JSON | None) -> None:
        doc = self._all()
        if entry is None:
            doc.pop(url, None)
        else:
            doc[url] = entry
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        temporary = self.path.with_suffix(".tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            json.dump(doc, handle)
        os.replace(temporary, self.path)  # readers see the old file or the new one

    def bearer(self, url: str) -> str | None:
        token = self.get(url).get("access_token")
        return token if isinstance(token, str) and token else None


async def _get_json(url: str) -> JSON:
    response = await request("GET", url, {"accept": "application/json"})
    body = await response.read()
    await response.aclose()
    if not 200 <= response.status < 300:
        raise McpError(f"{url} answered {response.status}")
    try:
        doc = json.loads(body)
    except ValueError:
        raise McpError(f"{url} did not answer JSON") from None
    if not isinstance(doc, dict):
        raise McpError(f"{url} did not answer a JSON object")
    return doc


async def _post(url: str, body: bytes, kind: str) -> JSON:
    response = await request("POST", url, {"content-type": kind, "accept": "application/json"},
                             body)
    data = await response.read()
    await response.aclose()
    try:
        doc = json.loads(data)
    except ValueError:
        doc = None
    if not 200 <= response.status < 300 or not isinstance(doc, dict):
        raise McpError(f"{url} answered {response.status}: {data[:200]!r}")
    return doc


async def discover(server_url: str, challenge: str | None) -> JSON:
    """The authorization server's metadata for the MCP server at `server_url`."""
    found = _RESOURCE_METADATA.search(challenge or "")
    origin = "{0.scheme}://{0.netloc}".format(urlparse(server_url))
    resource = await _get_json(found.group(1) if found else
                               urljoin(origin, "/.well-known/oauth-protected-resource"))
    servers = resource.get("authorization_servers")
    if not isinstance(servers, list) or not servers or not isinstance(servers[0], str):
        raise McpError(f"{server_url} names no authorization server")
    issuer = servers[0].rstrip("/")
    metadata = await _get_json(urljoin(issuer + "/", ".well-known/oauth-authorization-server"))
    for key in ("authorization_endpoint", "token_endpoint"):
        if not isinstance(metadata.get(key), str):
            raise McpError(f"{issuer} names no {key}")
    return metadata


async def register(metadata: JSON, redirect_uri: str) -> str:
    endpoint = metadata.get("registration_endpoint")
    if not isinstance(endpoint, str):
        raise McpError("the authorization server takes no client registration; configure "
                       "the server's token in its `headers`")
    answer = await _post(endpoint, json.dumps({
        "client_name": "wisp", "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
        "token_endpoint_auth_method": "none"}).encode(), "application/json")
    client_id = answer.get("client_id")
    if not isinstance(client_id, str):
        raise McpError("the authorization server registered no client_id")
    return client_id


class Flow:
    """One authorization in progress: PKCE verifier, state, where the code comes back."""

    def __init__(self, server_url: str, metadata: JSON, client_id: str,
                 redirect_uri: str) -> None:
        self.server_url = server_url
        self.metadata = metadata
        self.client_id = client_id
        self.redirect_uri = redirect_uri
        self.verifier = secrets.token_urlsafe(48)
        self.state = secrets.token_urlsafe(24)
        self.done: asyncio.Future[JSON] = asyncio.get_running_loop().create_future()

    def authorization_url(self) -> str:
        challenge = base64.urlsafe_b64encode(
            hashlib.sha256(self.verifier.encode()).digest()).rstrip(b"=").decode()
        query = {"response_type": "code", "client_id": self.client_id,
                 "redirect_uri": self.redirect_uri, "state": self.state,
                 "code_challenge": challenge, "code_challenge_method": "S256",
                 "resource": self.server_url}
        endpoint = str(self.metadata["authorization_endpoint"])
        return endpoint + ("&" if "?" in endpoint else "?") + urlencode(query)

    async def complete(self, callback_url: str) -> JSON:
        """Exchanges the code the redirect carried for tokens (the state must match)."""
        query = parse_qs(urlparse(callback_url).query)
        if query.get("state", [""])[0] != self.state:
            raise McpError("the authorization callback's state does not match")
        if "error" in query:
            raise McpError(f"authorization refused: {query['error'][0]}")
        code = query.get("code", [""])[0]
        if not code:
            raise McpError("the authorization callback carries no code")
        tokens = await _post(str(self.metadata["token_endpoint"]), urlencode({
            "grant_type": "authorization_code", "code": code, "redirect_uri": self.redirect_uri,
            "client_id": self.client_id, "code_verifier": self.verifier,
            "resource": self.server_url}).encode(), "application/x-www-form-urlencoded")
        if not isinstance(tokens.get("access_token"), str):
            raise McpError("the token endpoint gave no access_token")
        expires = tokens.get("expires_in")
        entry: JSON = {"access_token": tokens["access_token"], "client_id": self.client_id}
        if isinstance(tokens.get("refresh_token"), str):
            entry["refresh_token"] = tokens["refresh_token"]
        if isinstance(expires, (int, float)):
            entry["expires_at"] = time.time() + expires
        return entry


class CallbackListener:
    """A one-request HTTP listener on 127.0.0.1 for the authorization redirect."""

    def __init__(self) -> None:
        self.url = ""
        self.received: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._server: asyncio.Server | None = None

    async def start(self) -> str:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}{CALLBACK_PATH}"
        return self.url

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(Exception):
            line = (await asyncio.wait_for(reader.readline(), 10)).decode("latin-1")
            target = line.split(" ")[1] if line.count(" ") >= 2 else "/"
            if urlparse(target).path == CALLBACK_PATH and not self.received.done():
                self.received.set_result(self.url + "?" + urlparse(target).query)
            page = b"Authorization received: you can close this window."
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: "
                         + str(len(page)).encode() + b"\r\nconnection: close\r\n\r\n" + page)
            await writer.drain()
        writer.close()

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()


def store_path(env: Mapping[str, str]) -> Path:
    return TokenStore(env).path
