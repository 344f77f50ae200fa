"""Hook configuration and the merged outcome of running the hooks of one event."""

from __future__ import annotations

import re
from typing import Any, Literal, TypedDict, TypeGuard, get_args

from wisp.jsontypes import JSON
from wisp.values import Record, Value, field

# The events wisp fires. Fire points take a `HookEvent`, so a misspelt name is a type error
# rather than a hook that silently never runs.
HookEvent = Literal[
    "PreToolUse", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit", "Stop",
    "SubagentStart", "SubagentStop", "PreCompact", "SessionStart", "SessionEnd",
    "Notification", "PermissionRequest", "Elicitation", "ElicitationResult",
]
EVENTS: tuple[HookEvent, ...] = get_args(HookEvent)
# `hookSpecificOutput.permissionDecision`, strongest first when several hooks answer.
PermissionDecision = Literal["deny", "ask", "allow"]
# The top-level `decision` of a hook's answer: "block" stops what the event is about.
BlockDecision = Literal["approve", "block"]
DEFAULT_TIMEOUT_S = 60.0
_RANK: dict[str, int] = {"deny": 3, "ask": 2, "allow": 1}


def is_hook_event(name: object) -> TypeGuard[HookEvent]:
    return name in EVENTS


class HookSpecificOutput(TypedDict, total=False):
    hookEventName: str
    permissionDecision: PermissionDecision
    permissionDecisionReason: str
    updatedInput: JSON
    additionalContext: str
    updatedToolOutput: Any
    decision: JSON  # PermissionRequest: {"behavior", "message", "updatedInput"}


# What a hook answers: a command hook's JSON stdout, or a `hook_callback` answer. Every key
# is optional and `{}` means no opinion; read it with `.get`, it comes from a peer. (The
# functional form because `continue` and `async` are Python keywords.)
HookOutput = TypedDict("HookOutput", {
    "continue": bool,
    "suppressOutput": bool,
    "stopReason": str,
    "decision": BlockDecision,
    "reason": str,
    "systemMessage": str,
    "async": bool,
    "hookSpecificOutput": HookSpecificOutput,
}, total=False)


class CommandHook(Value):
    command: str
    timeout_s: float = DEFAULT_TIMEOUT_S
    source: str = "settings"
    # `"async": true` in its settings: it runs in the background from the start, and what
    # it says when it ends reaches the model on its next request (`wisp.hooks.background`).
    background: bool = False


class CallbackHook(Value):
    callback_id: str
    timeout_s: float | None = None
    # The matcher's `onFailure`: "block" makes a callback that fails or times out stop
    # what the event is about (a guard must fail closed); anything else lets it go on.
    blocks_on_failure: bool = False


HookAction = CommandHook | CallbackHook


class HookMatcher(Value):
    event: HookEvent
    matcher: str | None
    actions: tuple[HookAction, ...]

    def matches(self, target: str | None) -> bool:
        """Matchers are regexes on the tool name; empty, None and "*" match everything."""
        if not self.matcher or self.matcher == "*" or target is None:
            return True
        try:
            return re.fullmatch(self.matcher, target) is not None
        except re.error:
            return self.matcher == target


class HookOutcome(Record):
    """The merge of every hook that ran for one event. Denials win over allows; a block
    by any hook blocks; contexts and messages accumulate."""

    blocked: bool = False
    reason: str | None = None
    permission_decision: PermissionDecision | None = None
    updated_input: JSON | None = None
    additional_context: list[str] = field(default_factory=list)
    stop: bool = False  # `continue: false`: end the run after the current step
    stop_reason: str | None = None
    system_messages: list[str] = field(default_factory=list)
    updated_output: Any = None
    # `suppressOutput`: keep the hook's stdout out of the conversation record (docs/protocol.md,
    # "Hooks": the frames and what the model reads are the same either way).
    suppress_output: bool = False
    # Each hook that ran ({command, duration_ms}) and each failure: a Stop hook summary.
    ran: list[JSON] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    # Elicitation / ElicitationResult: the answer a hook gave the MCP server ({action,
    # content}); a "cancel" from any hook wins, else the last hook that answered.
    elicitation: JSON | None = None

    def merge(self, output: JSON, event: str) -> None:
        if output.get("continue") is False:
            self.stop = True
            self.stop_reason = output.get("stopReason") or self.stop_reason
        if output.get("suppressOutput") is True:
            self.suppress_output = True
        if output.get("decision") == "block":
            self._block(output.get("reason"))
        elif output.get("decision") == "approve":
            # The older spelling of `permissionDecision: "allow"` (PreToolUse).
            self._decide("allow", output.get("reason"))
        if isinstance(output.get("systemMessage"), str):
            self.system_messages.append(output["systemMessage"])
        specific = output.get("hookSpecificOutput")
        if isinstance(specific, dict):
            self._merge_specific(specific, event)

    def _block(self, reason: Any) -> None:
        self.blocked = True
        if isinstance(reason, str) and reason:
            self.reason = f"{self.reason}\n{reason}" if self.reason else reason

    def _merge_specific(self, specific: JSON, event: str) -> None:
        request_decision = specific.get("decision")
        if isinstance(request_decision, dict):  # PermissionRequest's answer shape
            specific = {**specific, "permissionDecision": request_decision.get("behavior"),
                        "permissionDecisionReason": request_decision.get("message"),
                        "updatedInput": request_decision.get("updatedInput")}
        self._decide(specific.get("permissionDecision"),
                     specific.get("permissionDecisionReason"))
        if isinstance(specific.get("updatedInput"), dict):
            self.updated_input = specific["updatedInput"]
        context = specific.get("additionalContext")
        if isinstance(context, str) and context:
            self.additional_context.append(context)
        if "updatedToolOutput" in specific:
            self.updated_output = specific["updatedToolOutput"]
        if (specific.get("hookEventName") == event and event.startswith("Elicitation")
                and specific.get("action") in ("accept", "decline", "cancel")
                and (self.elicitation or {}).get("action") != "cancel"):
            self.elicitation = {"action": specific["action"], **(
                {"content": specific["content"]} if isinstance(specific.get("content"), dict)
                else {})}

    def _decide(self, decision: Any, reason: Any) -> None:
        """A permission decision counts when it is stronger than the one held."""
        if _is_decision(decision) and _RANK[decision] > _RANK.get(
                self.permission_decision or "", 0):
            self.permission_decision = decision
            if isinstance(reason, str):
                self.reason = reason


def _is_decision(value: object) -> TypeGuard[PermissionDecision]:
    return value in _RANK
