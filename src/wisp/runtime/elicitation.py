"""An MCP server asks the user something mid-call (`elicitation/create`), as the reference
handles it: `Elicitation` hooks (matched on the server's name) may answer first, or block
(a decline); else whoever the front end names asks the user (the SDK host through an
`elicitation` control request, the terminal UI through a dialog, `wisp.sdk`'s
`on_elicitation`); with nobody to ask it is cancelled (measured: the reference's answer
in print mode and to an SDK host that has no handler). `ElicitationResult` hooks then see
the answer and may change its action (keeping its content unless they give one) or block
it (a decline)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from wisp.engine.context import RunContext
from wisp.engine.events import ElicitationComplete
from wisp.engine.hook_points import fire
from wisp.jsontypes import JSON

if TYPE_CHECKING:
    from wisp.runtime.runtime import Runtime

Asker = Callable[[str, JSON], Awaitable[JSON]]
DECLINE: JSON = {"action": "decline"}
UNASKED: JSON = {"action": "cancel"}  # nobody to ask: the reference answers this


class Elicitor:
    """The runtime's answer to its MCP servers' questions (`wisp.mcp.hub.Elicitor`): asked
    through whoever `runtime.mcp_elicit` names when the question comes (a front end sets it
    after the servers start); a server's word that a URL-mode one is done goes out as
    `system/elicitation_complete`, as the reference sends it."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    async def __call__(self, server: str, params: JSON) -> JSON:
        return await elicit(self.runtime.ctx, self.runtime.mcp_elicit, server, params)

    def completed(self, server: str, elicitation_id: str) -> None:
        self.runtime.ctx.emit(ElicitationComplete(server, elicitation_id))


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
    answer = hooked.elicitation or (await ask(server, params) if ask else dict(UNASKED))
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
