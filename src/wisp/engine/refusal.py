"""When the model refuses (`stop_reason: "refusal"`), as the reference handles it
(measured against the scripted server): the refused message stays shown, the user is told
the model's safeguards stopped it, and the model is asked once more with a note that it
was stopped; a second refusal in the same turn ends the run with the reference's API
error (no other model is tried: the reference names none, `model_refusal_no_fallback`).
"""

from __future__ import annotations

import re

from wisp.engine.context import RunContext
from wisp.engine.events import ApiErrorShown, Informational, RefusalFinal, RefusalRetry
from wisp.engine.outcome import ApiFailed, Outcome
from wisp.errors import ModelAPIError

NOTE = ("Your response above was stopped by a safety classifier \u2014 this is not a tool or "
        "API error. The rest of it was withheld, and tool calls in it that had not "
        "finished did not run. Do not produce that content again, even reworded.")
_FAMILY = re.compile(r"^claude-([a-z]+)-(\d+)(?:-(\d{1,2}))?(?:-|$)")


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
    ctx.emit(RefusalRetry(NOTE, message_id))
    ctx.session.add_user(f"<system-reminder>\n{NOTE}\n</system-reminder>")


def refused_again(ctx: RunContext, request_id: str | None, message_id: str | None,
                  prompt_uuid: str | None) -> Outcome:
    """The second: the run ends with the reference's error text."""
    name = display_name(ctx.session.model)
    ctx.emit(RefusalFinal(ctx.session.model, request_id, prompt_uuid))
    error = ModelAPIError(
        f"{name}'s safeguards flagged this message (https://www.anthropic.com/legal/aup). "
        "This sometimes happens with safe, normal conversations. Claude Code can't "
        f"respond to this message with {name}.\n\nTry rephrasing the request in a new "
        "session or change your model.\n\nLearn more: "
        "https://support.claude.com/en/articles/8106465\n\n"
        f"Request ID: {request_id}\n\nMessage ID: {message_id}")
    ctx.emit(ApiErrorShown(f"API Error: {error.message}", None))
    return ApiFailed(error)
