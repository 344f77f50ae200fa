"""An MCP server asks the user something mid-call (`elicitation/create`), as the reference
handles it: `Elicitation` hooks (matched on the server's name) may answer first, or block
(a decline); else whoever the front end names asks the user (the SDK host through an
`elicitation` control request, the terminal UI through a dialog, `wisp.sdk`'s
`on_elicitation`); with nobody to ask it is declined. `ElicitationResult` hooks then see
the answer and may change its action (keeping its content unless they give one) or block
it (a decline)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from wisp.engine.context import RunContext
from wisp.engine.hook_points import fire

JSON = dict[str, Any]
Asker = Callable[[str, JSON], Awaitable[JSON]]
DECLINE: JSON = {"action": "decline"}


async def elicit(ctx: RunContext, ask: Asker | None, server: str, params: JSON) -> JSON:
    """The answer for the server: `{action, content?}`."""
    mode = "url" if params.get("mode") == "url" else "form"
    described = {k: v for k, v in (("url", params.get("url")),
                                   ("elicitation_id", params.get("elicitationId")))
                 if isinstance(v, str)}
    hooked = await fire(ctx, "Elicitation", target=server, mcp_server_name=server,
                        message=str(params.get("message") or ""), mode=mode, **described,
                        **({"requested_schema": params["requestedSchema"]}
                           if isinstance(params.get("requestedSchema"), dict) else {}))
    if hooked.blocked:
        return dict(DECLINE)
    answer = hooked.elicitation or (await ask(server, params) if ask else dict(DECLINE))
    checked = await fire(ctx, "ElicitationResult", target=server, mcp_server_name=server,
                         mode=mode, action=answer.get("action"),
                         content=answer.get("content"),
                         **{k: v for k, v in described.items() if k == "elicitation_id"})
    if checked.blocked:
        return dict(DECLINE)
    if checked.elicitation is None:
        return answer
    content = checked.elicitation.get("content", answer.get("content"))
    return {"action": checked.elicitation["action"],
            **({"content": content} if isinstance(content, dict) else {})}
