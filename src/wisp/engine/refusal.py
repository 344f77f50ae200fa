"""When the model refuses (`stop_reason: "refusal"`), as the reference handles it
(measured against the scripted server): the refused message stays shown, the user is told
the model's safeguards stopped it, and the model is asked once more with a note that it
was stopped; a second refusal in the same turn ends the run with the reference's API
error (`model_refusal_no_fallback`).

With a fallback model (`--fallback-model`, not the refusing one, not used yet this turn)
the refused message is retracted instead: it never enters the conversation or the
transcript, `system/model_refusal_fallback` names the wire uuids of what was streamed of it
(`retracted_message_uuids`) and the API's `stop_details` (category, explanation), and the
fallback model answers the same request and serves the session from then on. The
reference decides that switch from its own model line-up behind server-side flags (off
offline, so measured it falls back to nothing); wisp takes the model the user named.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from wisp.engine.context import RunContext
from wisp.engine.events import ApiErrorShown, Informational, Refused
from wisp.jsontypes import JSON

if TYPE_CHECKING:
    from wisp.engine.model_call import Completed
from wisp.engine.outcome import ApiFailed, Outcome
from wisp.errors import ModelAPIError

NOTE = ("Your response above was stopped by a safety classifier \u2014 this is not a tool or "
        "API error. The rest of it was withheld, and tool calls in it that had not "
        "finished did not run. Do not produce that content again, even reworded.")
_FAMILY = re.compile(r"^claude-([a-z]+)-(\d+)(?:-(\d{1,2}))?(?:-|$)")


class Refusals:
    """The refusals of one turn (one run of the loop): the fallback model is tried once,
    then the same model once more with a note, then the run ends."""

    def __init__(self, prompt_uuid: str | None = None) -> None:
        self.prompt_uuid = prompt_uuid
        self.retried = False
        self.used_fallback = False

    def fell_back(self, ctx: RunContext, completed: Completed) -> bool:
        """With a fallback model: the refused message retracted, the fallback asked."""
        fallback = fallback_for(ctx, self.used_fallback)
        if fallback is None:
            return False
        self.used_fallback = True
        fall_back(ctx, fallback, completed, self.prompt_uuid)
        return True

    def refused(self, ctx: RunContext, completed: Completed) -> Outcome | None:
        """No fallback: one retry with a note, then the reference's error."""
        message_id = completed.message.get("id")
        if not self.retried:
            self.retried = True
            refused_once(ctx, message_id if isinstance(message_id, str) else None)
            return None
        return refused_again(ctx, completed.request_id, completed.message, self.prompt_uuid)


def display_name(model: str) -> str:
    """`claude-opus-5-5` → `Opus 5.5`; an id of another shape as it is."""
    found = _FAMILY.match(model.removeprefix("anthropic:"))
    if found is None:
        return model
    family, major, minor = found.groups()
    return f"{family.capitalize()} {major}" + (f".{minor}" if minor else "")


def refused_once(ctx: RunContext, message_id: str | None) -> None:
    """The first refusal of a turn: say so, and let the model try once more."""
    name = display_name(ctx.session.model)
    ctx.emit(Informational(f"{name}'s safeguards stopped the response above \u00b7 "
                           "continuing once with that noted", "notice"))
    ctx.emit(Refused("retry", {"text": NOTE, "refused_message_id": message_id}))
    ctx.session.add_user(f"<system-reminder>\n{NOTE}\n</system-reminder>")


def refused_again(ctx: RunContext, request_id: str | None, message: JSON,
                  prompt_uuid: str | None) -> Outcome:
    """The second: the run ends with the reference's error text."""
    name = display_name(ctx.session.model)
    message_id = message.get("id")
    ctx.emit(Refused("final", {"model": ctx.session.model, "request_id": request_id,
                               "prompt_uuid": prompt_uuid, **stop_details(message)}))
    error = ModelAPIError(
        f"{name}'s safeguards flagged this message (https://www.anthropic.com/legal/aup). "
        "This sometimes happens with safe, normal conversations. Claude Code can't "
        f"respond to this message with {name}.\n\nTry rephrasing the request in a new "
        "session or change your model.\n\nLearn more: "
        "https://support.claude.com/en/articles/8106465\n\n"
        f"Request ID: {request_id}\n\nMessage ID: {message_id}")
    ctx.emit(ApiErrorShown(f"API Error: {error.message}", None))
    return ApiFailed(error)


def stop_details(message: JSON) -> JSON:
    """What the API said of its refusal (`stop_details`), when it said anything."""
    details = message.get("stop_details")
    if not isinstance(details, dict):
        return {}
    return {k: v for k in ("category", "explanation")
            if isinstance(v := details.get(k), str)}


def fallback_for(ctx: RunContext, already: bool) -> str | None:
    """The model a refusal falls back to, if any: the configured one, once a turn."""
    fallback = ctx.config.fallback_model
    if already or not fallback or fallback == ctx.session.model:
        return None
    return fallback


def fall_back(ctx: RunContext, fallback: str, completed: Completed,
              prompt_uuid: str | None) -> None:
    """Retracts the refused message (the caller keeps it out of the conversation; what was
    streamed of it is named by its frames' uuids) and hands the session to `fallback`. In
    a subagent only the subagent switches (`scope: "local"`, as the reference's)."""
    original = ctx.session.model
    local = ctx.agent_id is not None
    content = (f"{display_name(original)}'s safeguards stopped the response above \u00b7 "
               f"{display_name(fallback)} answers instead "
               + ("(your session model is unchanged)" if local else
                  "for the rest of this session"))
    ctx.session.model = fallback
    ctx.emit(Refused("fallback", {"model": original, "fallback": fallback,
                                  "request_id": completed.request_id,
                                  "retracted": list(completed.block_uuids),
                                  "prompt_uuid": prompt_uuid, "content": content,
                                  "scope": "local" if local else "session",
                                  **stop_details(completed.message)}))
