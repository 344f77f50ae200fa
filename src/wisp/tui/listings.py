"""Slash commands that list what the session has configured: /mcp, /agents, /hooks.
`commands` merges `LISTINGS` into its table; rich loads inside the commands (this module
is imported before the first frame)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from wisp.jsontypes import JSON

if TYPE_CHECKING:
    from wisp.tui.app import TuiApp

Handler = Callable[["TuiApp", str], Awaitable[None]]


async def cmd_mcp(app: TuiApp, args: str) -> None:
    """The session's servers, whichever way they came (--mcp-config, settings' or a
    plugin's `mcpServers`), each with its status, whether it needs a sign-in, and its
    tools or why it failed."""
    from wisp.tui.commands import add_row, new_table, show_table

    await app.runtime.connect_mcp()
    status = app.runtime.mcp_status()
    if not status:
        app.view.print_text("No MCP servers are configured (--mcp-config, settings' "
                            "mcpServers or a plugin).")
        return
    table = new_table("server", "status", "auth", "tools")
    for entry in status:
        tools = ", ".join(str(t.get("name", "")) for t in entry.get("tools") or [])
        add_row(table, str(entry.get("name")), str(entry.get("status")),
                auth_of(entry, app.env), tools or str(entry.get("error") or "-"))
    show_table(app, table)


def auth_of(entry: JSON, env: dict[str, str]) -> str:
    """"-" for a local server; for a remote one, whether it wants a sign-in (a 401 with
    no token), has an OAuth token stored by an earlier sign-in, or takes none."""
    config = entry.get("config") or {}
    url = config.get("url") if isinstance(config, dict) else None
    if entry.get("status") == "needs-auth":
        return "needs sign-in"
    if not isinstance(url, str):
        return "-"
    from wisp.mcp.config import stored_authorization

    return "signed in (OAuth)" if stored_authorization(url, env) else "none"


async def cmd_agents(app: TuiApp, args: str) -> None:
    from wisp.tui.commands import add_row, new_table, show_table

    table = new_table("agent", "description")
    for name, description in sorted(app.runtime.agent_listing.items()):
        add_row(table, name, description)
    show_table(app, table)


async def cmd_hooks(app: TuiApp, args: str) -> None:
    from wisp.tui.commands import add_row, new_table, show_table

    table = new_table("event", "matcher", "command", "from")
    for source in app.runtime.settings.sources:
        hooks = source.doc.get("hooks")
        for event, groups in (hooks.items() if isinstance(hooks, dict) else ()):
            for group in groups if isinstance(groups, list) else []:
                for hook in group.get("hooks") or [] if isinstance(group, dict) else []:
                    add_row(table, event, str(group.get("matcher") or "*"),
                            str(hook.get("command") or hook.get("type")), source.name)
    if not table.row_count:
        app.view.print_text("No hooks are configured.")
        return
    show_table(app, table)


LISTINGS: dict[str, tuple[str, Handler]] = {
    "mcp": ("MCP servers: status, sign-in and tools", cmd_mcp),
    "agents": ("the subagents the Task tool can start", cmd_agents),
    "hooks": ("the configured hooks", cmd_hooks),
}
