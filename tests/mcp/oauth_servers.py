"""An MCP server behind OAuth, with its own authorization server, on one 127.0.0.1 port:
`/mcp` (the `mcp` package's streamable HTTP app) answers 401 with
`WWW-Authenticate: Bearer resource_metadata=...` unless the request carries the token
this authorization server issued; the metadata documents (RFC 9728, RFC 8414),
`/register` (dynamic client registration), `/authorize` (approves at once and redirects
with a code) and `/token` (checks the PKCE verifier against the challenge) are MCP's
authorization flow in miniature. `state` records what happened."""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any
from urllib.parse import parse_qs, urlencode

from tests.mcp.remote_servers import App, Receive, Scope, Send, remote_app

TOKEN = "tok-granted"


async def _reply(send: Send, status: int, body: Any = b"",
                 headers: dict[str, str] | None = None) -> None:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    kind = {} if isinstance(body, bytes) else {"content-type": "application/json"}
    await send({"type": "http.response.start", "status": status, "headers": [
        (k.encode(), v.encode()) for k, v in {**kind, **(headers or {})}.items()]})
    await send({"type": "http.response.body", "body": data})


async def _body(receive: Receive) -> bytes:
    data = b""
    while True:
        part = await receive()
        data += part.get("body", b"")
        if not part.get("more_body"):
            return data


class OAuthServer:
    def __init__(self) -> None:
        self.inner = remote_app("http")
        self.state: dict[str, Any] = {"challenges": {}, "tokens_issued": 0, "registered": []}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.inner(scope, receive, send)
            return
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        base = f"http://{headers['host']}"
        query = parse_qs(scope.get("query_string", b"").decode())
        path = scope["path"]
        if path.startswith("/mcp"):
            await self.resource(scope, receive, send, headers, base)
        elif path == "/.well-known/oauth-protected-resource":
            await _reply(send, 200, {"resource": f"{base}/mcp", "authorization_servers": [base]})
        elif path == "/.well-known/oauth-authorization-server":
            await _reply(send, 200, {
                "issuer": base, "authorization_endpoint": f"{base}/authorize",
                "token_endpoint": f"{base}/token", "registration_endpoint": f"{base}/register",
                "code_challenge_methods_supported": ["S256"]})
        elif path == "/register":
            self.state["registered"].append(json.loads(await _body(receive)))
            await _reply(send, 201, {"client_id": "client-1"})
        elif path == "/authorize":
            await self.authorize(send, query)
        elif path == "/token":
            await self.token(receive, send)
        else:
            await _reply(send, 404)

    async def resource(self, scope: Scope, receive: Receive, send: Send,
                       headers: dict[str, str], base: str) -> None:
        if headers.get("authorization") != f"Bearer {TOKEN}":
            await _reply(send, 401, b"", {"www-authenticate": 'Bearer resource_metadata="'
                                          f'{base}/.well-known/oauth-protected-resource"'})
            return
        await self.inner(scope, receive, send)

    async def authorize(self, send: Send, query: dict[str, list[str]]) -> None:
        code = f"code-{len(self.state['challenges'])}"
        self.state["challenges"][code] = query["code_challenge"][0]
        target = query["redirect_uri"][0] + "?" + urlencode(
            {"code": code, "state": query["state"][0]})
        await _reply(send, 302, b"", {"location": target})

    async def token(self, receive: Receive, send: Send) -> None:
        form = parse_qs((await _body(receive)).decode())
        verifier = form["code_verifier"][0].encode()
        expected = base64.urlsafe_b64encode(hashlib.sha256(verifier).digest()).rstrip(
            b"=").decode()
        if self.state["challenges"].get(form["code"][0]) != expected:
            await _reply(send, 400, {"error": "invalid_grant"})
            return
        self.state["tokens_issued"] += 1
        await _reply(send, 200, {"access_token": TOKEN, "token_type": "Bearer",
                                 "expires_in": 3600})


def oauth_app() -> tuple[App, dict[str, Any]]:
    server = OAuthServer()
    return server, server.state
