"""Hook callbacks: what each event's input holds, what its output changes, and a hook
that raises."""

from __future__ import annotations

from typing import Any

from tests.sdk_parity import summary as s
from tests.sdk_parity.harness import SANDBOX, Backend, scenario
from wisp.testing import reply

# Per event, the input fields whose values are compared (the rest by name only).
SHOWN = ("hook_event_name", "tool_name", "tool_input", "tool_response", "prompt", "source",
         "stop_hook_active", "permission_mode", "cwd")


class Recorder:
    def __init__(self, b: Backend) -> None:
        self.b = b
        self.calls: list[dict[str, Any]] = []

    def record(self, hook_input: dict[str, Any], tool_use_id: str | None) -> None:
        self.calls.append({
            "keys": sorted(hook_input),
            **{k: s.scrub(hook_input[k], self.b) for k in SHOWN if k in hook_input},
            "tool_use_id": s.scrub(tool_use_id, self.b),
        })

    def hook(self, output: dict[str, Any] | None = None) -> Any:
        async def callback(hook_input: dict[str, Any], tool_use_id: str | None,
                           context: Any) -> dict[str, Any]:
            self.record(hook_input, tool_use_id)
            return output or {}
        return callback


@scenario()
async def hook_lifecycle(b: Backend) -> dict[str, Any]:
    rec = Recorder(b)
    matcher = b.sdk.HookMatcher
    rewrite = {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "allow",
        "permissionDecisionReason": "rewritten by the host",
        "updatedInput": {"command": "echo rewritten"}}}
    context = {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                                      "additionalContext": "CONTEXT FROM THE HOOK"}}
    hooks = {
        "SessionStart": [matcher(hooks=[rec.hook()])],
        "UserPromptSubmit": [matcher(hooks=[rec.hook(context)])],
        "PreToolUse": [matcher(matcher="Bash", hooks=[rec.hook(rewrite)])],
        "PostToolUse": [matcher(matcher="Bash", hooks=[rec.hook()])],
        "Stop": [matcher(hooks=[rec.hook()])],
    }
    b.server.script(reply.tool_use("Bash", {"command": "echo original"}), reply.text("done"))
    messages, raised = await b.query("run it", hooks=hooks)
    return {
        "raised": raised,
        "kinds": s.kinds(messages),
        "calls": rec.calls,
        "conversation": s.conversation(messages, b),
        "result": s.the_result(messages, b),
        "first_request": s.requests(b)[0]["messages"],
    }


@scenario()
async def pre_tool_use_deny(b: Backend) -> dict[str, Any]:
    rec = Recorder(b)
    marker = b.cwd / "must-never-exist"
    deny = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                   "permissionDecisionReason": "touch is forbidden"}}
    hooks = {"PreToolUse": [b.sdk.HookMatcher(matcher="Bash", hooks=[rec.hook(deny)])]}
    b.server.script(reply.tool_use("Bash", {"command": f"touch {marker}"}), reply.text("ok"))
    messages, raised = await b.query("run it", hooks=hooks, permission_mode="bypassPermissions",
                                     extra_env=SANDBOX)
    return {
        "raised": raised,
        "calls": rec.calls,
        "marker_exists": marker.exists(),
        "result": s.the_result(messages, b),
        "tool_results_sent": s.tool_results_sent(b),
    }


@scenario()
async def hook_raises(b: Backend) -> dict[str, Any]:
    """A PreToolUse callback that raises: the failure is reported as a hook event and on
    the agent's stderr (so to the `stderr` callback), and the run goes on."""
    calls = []

    async def explode(hook_input: dict[str, Any], tool_use_id: str | None,
                      context: Any) -> dict[str, Any]:
        calls.append(hook_input["tool_name"])
        raise RuntimeError("the hook exploded")

    hooks = {"PreToolUse": [b.sdk.HookMatcher(matcher="Bash", hooks=[explode])]}
    b.server.script(reply.tool_use("Bash", {"command": "echo ran"}), reply.text("after"))
    messages, raised = await b.query("run it", hooks=hooks, allowed_tools=["Bash"],
                                     include_hook_events=True)
    return {
        "raised": raised,
        "calls": calls,
        "kinds": s.kinds(messages),
        "result": s.the_result(messages, b),
        "tool_results_sent": s.tool_results_sent(b),
        "hook_events": [(m.subtype, m.data.get("hook_event"), m.data.get("hook_name"),
                         m.data.get("outcome"), m.data.get("error"))
                        for m in messages if type(m).__name__ == "HookEventMessage"],
        "stderr": [line for line in b.stderr_lines if "exploded" in line],
    }


COMMON = ["cwd", "hook_event_name", "permission_mode", "session_id", "transcript_path"]
TOOL = sorted([*COMMON, "tool_input", "tool_name", "tool_use_id"])


def done(result: str, **extra: Any) -> dict[str, Any]:
    return {"subtype": "success", "is_error": False, "num_turns": 2, "result": result,
            "structured_output": None, "stop_reason": "end_turn", "permission_denials": [],
            "errors": [], **extra}


def test_hook_lifecycle(backend: Backend) -> None:
    # Events that are not about a tool still get an id in the tool_use_id slot (a uuid).
    base = {"permission_mode": "default", "cwd": "<cwd>"}
    assert backend.run(hook_lifecycle) == {
        "raised": None,
        "kinds": ["SystemMessage:init", "AssistantMessage", "UserMessage", "AssistantMessage",
                  "ResultMessage"],
        "calls": [
            {"keys": sorted([*COMMON, "source"]), "hook_event_name": "SessionStart",
             "source": "startup", **base, "tool_use_id": "<uuid>"},
            {"keys": sorted([*COMMON, "prompt"]), "hook_event_name": "UserPromptSubmit",
             "prompt": "run it", **base, "tool_use_id": "<uuid>"},
            {"keys": TOOL, "hook_event_name": "PreToolUse", "tool_name": "Bash",
             "tool_input": {"command": "echo original"}, **base, "tool_use_id": "<toolu>"},
            # PostToolUse sees the input the PreToolUse hook substituted.
            {"keys": sorted([*TOOL, "tool_response"]), "hook_event_name": "PostToolUse",
             "tool_name": "Bash", "tool_input": {"command": "echo rewritten"},
             "tool_response": {"stdout": "rewritten", "stderr": "", "interrupted": False,
                               "isImage": False, "noOutputExpected": False},
             **base, "tool_use_id": "<toolu>"},
            {"keys": sorted([*COMMON, "last_assistant_message", "stop_hook_active"]),
             "hook_event_name": "Stop",
             "stop_hook_active": False, **base, "tool_use_id": "<uuid>"},
        ],
        "conversation": [["assistant", [["tool_use", "Bash", {"command": "echo original"}]]],
                         ["user", [["tool_result", "rewritten", False]]],
                         ["assistant", [["text", "done"]]]],
        "result": done("done"),
        "first_request": [{"role": "user", "content": [
            {"type": "text", "text": "run it"},
            {"type": "text", "text": "CONTEXT FROM THE HOOK"}]}],
    }


def test_pre_tool_use_deny(backend: Backend) -> None:
    command = {"command": "touch <cwd>/must-never-exist"}
    assert backend.run(pre_tool_use_deny) == {
        "raised": None,
        "calls": [{"keys": TOOL, "hook_event_name": "PreToolUse", "tool_name": "Bash",
                   "tool_input": command, "permission_mode": "bypassPermissions",
                   "cwd": "<cwd>", "tool_use_id": "<toolu>"}],
        "marker_exists": False,  # denied even under bypassPermissions
        "result": done("ok", permission_denials=[{"tool_name": "Bash", "tool_input": command}]),
        "tool_results_sent": [{"content": "PreToolUse:Bash hook error: touch is forbidden",
                               "is_error": True}],
    }


def test_hook_raises(backend: Backend) -> None:
    # A callback that raises answers the hook request with an error: a non-blocking hook
    # failure, so the (allowed) tool still runs and the run succeeds.
    assert backend.run(hook_raises) == {
        "raised": None,
        "calls": ["Bash"],
        "kinds": ["SystemMessage:init", "AssistantMessage", "HookEventMessage:hook_started",
                  "HookEventMessage:hook_response", "UserMessage", "AssistantMessage",
                  "ResultMessage"],
        "result": done("after"),
        "tool_results_sent": [{"content": "ran", "is_error": False}],
        "hook_events": [
            ("hook_started", "PreToolUse", "PreToolUse:hook_0", None, None),
            ("hook_response", "PreToolUse", "PreToolUse:hook_0", "error", "the hook exploded"),
        ],
        # What wisp writes to its stderr reaches the SDK's `stderr` callback; in-process
        # too (there is no process stderr of the agent's own, and the host's must not be
        # written to).
        "stderr": ["wisp: PreToolUse hook hook_0 failed: the hook exploded"],
    }
