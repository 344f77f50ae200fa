"""JSON Schemas of the stdout frames: the contract clients rely on, in one place.

The required fields are what the official SDKs need (docs/protocol.md, "Frames wisp writes": the
Python SDK
raises on a missing one, and the TypeScript SDK needs `errors` on error results and an
explicit `parent_tool_use_id`). The test suite validates every frame wisp emits against
these, so a field can't silently disappear. `python -m wisp.wire.schema` prints them.
"""

from __future__ import annotations

import json

from wisp.jsontypes import JSON

_STR = {"type": "string"}
_NULLABLE_STR = {"type": ["string", "null"]}
_BLOCK_REQUIRED: dict[str, list[str]] = {
    "text": ["text"],
    "thinking": ["thinking", "signature"],
    "tool_use": ["id", "name", "input"],
    "tool_result": ["tool_use_id"],
}


def _block_schema() -> JSON:
    variants = [{"if": {"properties": {"type": {"const": kind}}},
                 "then": {"required": ["type", *required]}}
                for kind, required in _BLOCK_REQUIRED.items()]
    return {"type": "object", "required": ["type"], "allOf": variants}


def _frame(kind: str, required: list[str], properties: JSON | None = None) -> JSON:
    return {"type": "object", "required": ["type", *required],
            "properties": {"type": {"const": kind}, **(properties or {})}}


FRAMES: dict[str, JSON] = {
    "system": _frame("system", ["subtype", "session_id", "uuid"], {"subtype": _STR}),
    "system/init": _frame("system", ["subtype", "session_id", "uuid", "cwd", "tools", "model",
                                     "permissionMode", "mcp_servers", "claude_code_version",
                                     "apiKeySource"]),
    "assistant": _frame("assistant", ["message", "parent_tool_use_id", "session_id", "uuid"], {
        "message": {"type": "object", "required": ["id", "model", "role", "content"],
                    "properties": {"model": _STR, "content": {"type": "array",
                                                              "items": _block_schema()}}},
        "parent_tool_use_id": _NULLABLE_STR}),
    "user": _frame("user", ["message", "parent_tool_use_id", "session_id", "uuid"], {
        "message": {"type": "object", "required": ["role", "content"], "properties": {
            "content": {"anyOf": [_STR, {"type": "array", "items": _block_schema()}]}}},
        "parent_tool_use_id": _NULLABLE_STR}),
    "result": _frame("result", ["subtype", "duration_ms", "duration_api_ms", "is_error",
                                "num_turns", "session_id", "total_cost_usd", "usage",
                                "modelUsage", "permission_denials", "errors", "uuid"], {
        "is_error": {"type": "boolean"}, "errors": {"type": "array", "items": _STR},
        "num_turns": {"type": "integer"}}),
    "stream_event": _frame("stream_event", ["event", "session_id", "uuid",
                                            "parent_tool_use_id"],
                           {"event": {"type": "object", "required": ["type"]}}),
    "control_request": _frame("control_request", ["request_id", "request"], {
        "request": {"type": "object", "required": ["subtype"]}}),
    "control_response": _frame("control_response", ["response"], {
        "response": {"type": "object", "required": ["subtype", "request_id"]}}),
    "control_cancel_request": _frame("control_cancel_request", ["request_id"]),
    "keep_alive": _frame("keep_alive", []),
}


# Task frames: what the Python SDK's parser requires of each (docs/protocol.md, "Tasks").
FRAMES.update({
    "system/task_started": _frame("system", ["subtype", "session_id", "uuid", "task_id",
                                             "description"]),
    "system/task_progress": _frame("system", ["subtype", "session_id", "uuid", "task_id",
                                              "description", "usage"]),
    "system/task_notification": _frame("system", ["subtype", "session_id", "uuid", "task_id",
                                                  "status", "output_file", "summary"], {
        "status": {"enum": ["completed", "failed", "stopped"]}}),
})


def schema_for(frame: JSON) -> JSON | None:
    """The schema a frame must satisfy, or None for a frame type we don't emit."""
    kind = frame.get("type")
    if kind == "system" and frame.get("subtype") in ("init", "task_started", "task_progress",
                                                     "task_notification"):
        return FRAMES[f"system/{frame['subtype']}"]
    return FRAMES.get(str(kind))


def main() -> None:
    print(json.dumps(FRAMES, indent=2))


if __name__ == "__main__":
    main()
