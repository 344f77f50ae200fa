"""Answering MCP servers that ask the user mid-call (`elicitation/create`) from Python.

    from wisp.sdk import ClaudeAgentOptions, elicitation_hooks

    async def ask(request):  # an ElicitationRequest
        if request["mode"] == "url":
            return {"action": "decline"}
        return {"action": "accept", "content": {"name": "Ada"}}

    options = ClaudeAgentOptions(hooks=elicitation_hooks(ask), ...)

The official Python SDK has no elicitation callback (the TypeScript one has
`onElicitation`): an SDK program answers through an `Elicitation` hook, which the CLI runs
before asking anyone. `elicitation_hooks` builds that hook around a plain callback, so the
same program works in-process, over `cli_path` with `wisp`, and with the reference CLI.
A callback that returns None leaves the question to whoever is asked next (the SDK host's
`elicitation` request, which `wisp.sdk` declines).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal, NotRequired, TypedDict

from wisp.sdk.types import HookMatcher


class ElicitationRequest(TypedDict):
    """What the server asks: a form (`requested_schema`, JSON Schema of the answer's
    `content`) or a URL to open (`url`, `elicitation_id`)."""

    server_name: str
    message: str
    mode: Literal["form", "url"]
    requested_schema: NotRequired[dict[str, Any]]
    url: NotRequired[str]
    elicitation_id: NotRequired[str]


class ElicitationAnswer(TypedDict):
    action: Literal["accept", "decline", "cancel"]
    content: NotRequired[dict[str, Any]]


OnElicitation = Callable[[ElicitationRequest], Awaitable[ElicitationAnswer | None]]


def elicitation_hooks(callback: OnElicitation, *, server: str | None = None
                      ) -> dict[Any, list[HookMatcher]]:
    """`hooks` for `ClaudeAgentOptions` that let `callback` answer elicitations (from
    every server, or the one named `server`). Merge it with other hooks as a dict."""

    async def hook(hook_input: Any, tool_use_id: Any, context: Any) -> Any:
        answer = await callback(_request(hook_input))
        if answer is None:
            return {}
        specific: dict[str, Any] = {"hookEventName": "Elicitation", "action": answer["action"]}
        if "content" in answer:
            specific["content"] = answer["content"]
        return {"hookSpecificOutput": specific}

    return {"Elicitation": [HookMatcher(matcher=server, hooks=[hook])]}


def _request(hook_input: dict[str, Any]) -> ElicitationRequest:
    request: ElicitationRequest = {
        "server_name": str(hook_input.get("mcp_server_name") or ""),
        "message": str(hook_input.get("message") or ""),
        "mode": "url" if hook_input.get("mode") == "url" else "form"}
    if isinstance(hook_input.get("requested_schema"), dict):
        request["requested_schema"] = hook_input["requested_schema"]
    for key in ("url", "elicitation_id"):
        if isinstance(hook_input.get(key), str):
            request[key] = hook_input[key]
    return request
