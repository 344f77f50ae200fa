"""The next model request of a run, shaped as the reference shapes it: the tools, the
system blocks (plan mode's note added), the thinking and metadata fields, and the
context blocks (CLAUDE.md memory) put in front of the first user message.
"""

from __future__ import annotations

from wisp.engine.context import RunContext
from wisp.engine.plan_mode import PLAN_TOOL, in_plan_mode, plan_note
from wisp.jsontypes import JSON
from wisp.models import catalog
from wisp.models.base import ModelRequest
from wisp.models.shape import request_fields, user_id


def build_request(ctx: RunContext) -> ModelRequest:
    """The next request, shaped as the reference shapes it (`wisp.models.shape`)."""
    config, session = ctx.config, ctx.session
    tools = [t.api_definition() for t in config.tools.values()] + config.extra_tool_definitions
    system = config.system_blocks
    if PLAN_TOOL in config.tools and in_plan_mode(ctx):
        system = [*system, plan_note(ctx)]
    max_tokens = config.max_tokens or catalog.max_output_tokens(session.model)
    fields, betas = request_fields(session.model, max_tokens, config.thinking, config.betas)
    shaped = bool(fields)  # a Claude model: the reference's shape, metadata included
    if shaped and not config.device_id:
        from wisp.models.identity import device_id

        config.device_id = device_id(config.env)
    thinking = fields.pop("thinking", None)
    return ModelRequest(
        model=session.model,
        messages=with_context(session.history, config.context_blocks),
        max_tokens=max_tokens,
        system=system,
        tools=tools,
        thinking=thinking,
        metadata={"user_id": user_id(config.device_id, session.session_id)} if shaped else None,
        session_id=session.session_id,
        extra=fields,
        betas=betas if shaped else (),
    )


def with_context(history: list[JSON], blocks: list[JSON]) -> list[JSON]:
    """The history with `blocks` put at the start of its first user message (a copy)."""
    messages = list(history)
    if not blocks:
        return messages
    for index, message in enumerate(messages):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            messages[index] = {**message, "content": [*blocks, *(content or [])]}
            break
    return messages
