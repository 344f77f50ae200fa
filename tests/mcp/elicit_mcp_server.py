"""A stdio MCP server written with the `mcp` package (MCPServer): `who` asks the client for
a name through a form (`ctx.elicit`) and `login` sends it to a URL (`ctx.elicit_url`); each
returns what the client answered, as JSON text (and `login`, when accepted, tells the
client the sign-in is complete)."""

from __future__ import annotations

import json

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel

server = MCPServer("elicit")


class Person(BaseModel):
    name: str


@server.tool()
async def who(ctx: Context) -> str:
    """Asks the user who they are."""
    answer = await ctx.elicit("Who are you?", schema=Person)
    data = answer.data.model_dump() if answer.action == "accept" else None
    return json.dumps({"action": answer.action, "data": data})


@server.tool()
async def login(ctx: Context) -> str:
    """Sends the user to a sign-in page; once they accepted, says the sign-in is done
    (`notifications/elicitation/complete`), as a server does when its page saw them."""
    answer = await ctx.elicit_url("Sign in, please", "https://example.test/login", "e-7")
    if answer.action == "accept":
        await ctx.session.send_elicit_complete("e-7")
    return json.dumps({"action": answer.action})


if __name__ == "__main__":
    server.run("stdio")
