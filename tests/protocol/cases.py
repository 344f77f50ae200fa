"""The table every protocol test reads: for each control request wisp answers, requests
that must pass their checks and requests that must not, with the exact error answered."""

from __future__ import annotations

from typing import Any

JSON = dict[str, Any]
MODES = "acceptEdits, auto, bypassPermissions, default, dontAsk, plan"

# subtype → fields of requests that pass (unknown fields included: they are tolerated)
VALID: dict[str, list[JSON]] = {
    "initialize": [
        {"hooks": None},
        {},
        {"hooks": {"PreToolUse": [{"matcher": "Bash", "hookCallbackIds": ["hook_0"]}]},
         "agents": {"r": {"description": "d", "prompt": "p"}}, "systemPrompt": [""],
         "appendSystemPrompt": "more", "sdkMcpServers": ["calc"], "title": "t",
         "sdkMcpServerManifests": {}, "excludeDynamicSections": True, "skills": []},
        {"systemPrompt": "plain", "settings": 5, "mcpServers": "x", "disallowedTools": {}},
    ],
    "interrupt": [{}, {"cancel_queued": True}, {"cancel_queued": None}],
    "set_permission_mode": [{"mode": "plan"}, {"mode": "default",
                                               "answers_bypass_switch_back": True}],
    "set_model": [{}, {"model": None}, {"model": "sonnet"}],
    "set_max_thinking_tokens": [{}, {"max_thinking_tokens": 2048},
                                {"max_thinking_tokens": None, "thinking_display": "omitted"}],
    "mcp_status": [{}, {"liveReply": True}],
    "mcp_reconnect": [{"serverName": "calc"}, {"server_name": "calc"}],
    "mcp_toggle": [{"serverName": "calc", "enabled": False}, {"serverName": "calc"}],
    "stop_task": [{"task_id": "t1"}],
    "rewind_files": [{"user_message_id": "u1"}, {"user_message_id": "u1", "dry_run": True}],
    "get_context_usage": [{}, {"detail": "summary"}],
    "get_settings": [{}],
    "apply_flag_settings": [{"settings": {}}, {"settings": {"model": "sonnet"}}],
    "rename_session": [{"title": "New"}, {"title": None, "source": "host"}],
    "mcp_set_servers": [{"servers": {}}, {"servers": {"calc": {"command": "calc"},
                                                      "py": {"type": "sdk", "name": "py"}}}],
    "get_usage": [{}, {"skip_behaviors": True}, {"skip_behaviors": None}],
    "list_models": [{}],
    "get_session_cost": [{}],
    "reload_skills": [{}],
    "read_file": [{"path": "a.txt"}, {}, {"path": "a.png", "max_bytes": 10,
                                          "encoding": "base64"}, {"encoding": None}],
    "get_plan": [{}],
}


def _bad(subtype: str, problem: str) -> str:
    return f"Invalid {subtype} request: {problem}"


# (subtype, fields, error, error_code): each is a missing field, a wrong type or a bad value
INVALID: list[tuple[str, JSON, str, str | None]] = [
    ("initialize", {"hooks": 5}, _bad("initialize", "`hooks` must be an object or null"), None),
    ("initialize", {"agents": []}, _bad("initialize", "`agents` must be an object or null"),
     None),
    ("initialize", {"systemPrompt": 5},
     _bad("initialize", "`systemPrompt` must be a string or an array or null"), None),
    ("initialize", {"appendSystemPrompt": ["x"]},
     _bad("initialize", "`appendSystemPrompt` must be a string or null"), None),
    ("initialize", {"sdkMcpServers": "calc"},
     _bad("initialize", "`sdkMcpServers` must be an array or null"), None),
    ("initialize", {"sdkMcpServerManifests": []},
     _bad("initialize", "`sdkMcpServerManifests` must be an object or null"), None),
    ("initialize", {"title": 5}, _bad("initialize", "`title` must be a string or null"), None),
    ("interrupt", {"cancel_queued": "yes"},
     _bad("interrupt", "`cancel_queued` must be a boolean or null"), None),
    ("set_permission_mode", {},
     _bad("set_permission_mode", "`mode` must be a string"), None),
    ("set_permission_mode", {"mode": 5},
     _bad("set_permission_mode", "`mode` must be a string"), None),
    ("set_permission_mode", {"mode": "bogusMode"},
     f"Cannot set permission mode: must be one of {MODES}", "invalid_mode"),
    ("set_model", {"model": 5}, _bad("set_model", "`model` must be a string or null"), None),
    ("set_max_thinking_tokens", {"max_thinking_tokens": "many"},
     _bad("set_max_thinking_tokens", "`max_thinking_tokens` must be an integer or null"), None),
    ("set_max_thinking_tokens", {"max_thinking_tokens": True},
     _bad("set_max_thinking_tokens", "`max_thinking_tokens` must be an integer or null"), None),
    ("mcp_reconnect", {}, _bad("mcp_reconnect", "`serverName` must be a string"), None),
    ("mcp_reconnect", {"serverName": 5}, _bad("mcp_reconnect", "`serverName` must be a string"),
     None),
    ("mcp_reconnect", {"server_name": None},
     _bad("mcp_reconnect", "`server_name` must be a string"), None),
    ("mcp_toggle", {"enabled": True}, _bad("mcp_toggle", "`serverName` must be a string"), None),
    ("mcp_toggle", {"serverName": "calc", "enabled": "no"},
     _bad("mcp_toggle", "`enabled` must be a boolean"), None),
    ("stop_task", {}, _bad("stop_task", "`task_id` must be a string"), None),
    ("stop_task", {"task_id": 7}, _bad("stop_task", "`task_id` must be a string"), None),
    ("rewind_files", {}, _bad("rewind_files", "`user_message_id` must be a string or null"),
     None),
    ("rewind_files", {"user_message_id": "u1", "dry_run": "yes"},
     _bad("rewind_files", "`dry_run` must be a boolean or null"), None),
    ("apply_flag_settings", {}, _bad("apply_flag_settings", "`settings` must be an object"),
     None),
    ("apply_flag_settings", {"settings": []},
     _bad("apply_flag_settings", "`settings` must be an object"), None),
    ("rename_session", {}, _bad("rename_session", "`title` must be a string or null"), None),
    ("rename_session", {"title": 5}, _bad("rename_session", "`title` must be a string or null"),
     None),
    ("mcp_set_servers", {}, "mcp_set_servers: servers must be an object of config objects",
     None),
    ("mcp_set_servers", {"servers": {"x": 5}},
     "mcp_set_servers: servers must be an object of config objects", None),
    ("get_usage", {"skip_behaviors": "yes"},
     _bad("get_usage", "`skip_behaviors` must be a boolean or null"), None),
    ("read_file", {"path": 5}, _bad("read_file", "`path` must be a string"), None),
    ("read_file", {"path": "a", "max_bytes": "10"},
     _bad("read_file", "`max_bytes` must be an integer or null"), None),
    ("read_file", {"path": "a", "encoding": "latin-1"},
     _bad("read_file", "`encoding` must be one of utf-8, base64"), None),
]
