"""`wisp.sdk.types` and `wisp.sdk.errors` against the official SDK's, name by name, and the
checks `ClaudeAgentOptions` makes on construction."""

from __future__ import annotations

import ast
import dataclasses
import itertools
import os
import pickle
import sys
import types as pytypes
import typing
from pathlib import Path
from typing import Any

import pytest

from wisp.sdk import errors as our_errors
from wisp.sdk import types as ours

official = pytest.importorskip("claude_agent_sdk.types")
official_errors = pytest.importorskip("claude_agent_sdk._errors")

# Names the official module has that are not types of ours to match: its own imports, the
# runtime placeholder for `mcp.server.Server`, and what wisp.sdk.sessions defines.
NOT_MATCHED = {
    "sys", "warnings", "replace", "dataclass", "field", "Path", "TYPE_CHECKING", "Any",
    "Final", "Literal", "Protocol", "TypeAlias", "Awaitable", "Callable", "NotRequired",
    "Required", "TypedDict", "McpServer",
    "SessionKey", "SessionStoreEntry", "SessionStoreListEntry", "SessionSummaryEntry",
    "SessionListSubkeysKey", "SessionStoreFlushMode", "SessionStore", "SDKSessionInfo",
    "SessionMessage",
}
PUBLIC = sorted(n for n in vars(official) if not n.startswith("_") and n not in NOT_MATCHED)

# Every name the brief for this module lists, so a rename in either module is noticed.
REQUIRED_NAMES = [
    "TextBlock", "ThinkingBlock", "ToolUseBlock", "ToolResultBlock", "ServerToolUseBlock",
    "ServerToolResultBlock", "ContentBlock", "UserMessage", "AssistantMessage",
    "SystemMessage", "ResultMessage", "StreamEvent", "RateLimitEvent", "RateLimitInfo",
    "TaskStartedMessage", "TaskProgressMessage", "TaskUpdatedMessage",
    "TaskNotificationMessage", "TaskUsage", "TaskNotificationStatus", "TaskUpdatedStatus",
    "TERMINAL_TASK_STATUSES", "ConversationResetMessage", "MirrorErrorMessage",
    "DeferredToolUse", "ModelUsage", "MessageOrigin", "Message", "SystemInitData",
    "ClaudeAgentOptions", "PermissionMode", "SettingSource", "SystemPromptPreset",
    "SystemPromptCustom", "SystemPromptFile", "ToolsPreset", "ThinkingConfig",
    "ThinkingConfigAdaptive", "ThinkingConfigEnabled", "ThinkingConfigDisabled",
    "EffortLevel", "SdkBeta", "SdkPluginConfig", "SandboxSettings", "SandboxNetworkConfig",
    "SandboxIgnoreViolations", "TaskBudget", "AgentDefinition", "McpStdioServerConfig",
    "McpSSEServerConfig", "McpHttpServerConfig", "McpSdkServerConfig", "McpServerConfig",
    "McpServerStatus", "McpStatusResponse", "McpServerInfo", "McpToolInfo",
    "McpToolAnnotations", "McpServerConnectionStatus", "ToolPermissionContext",
    "PermissionResultAllow", "PermissionResultDeny", "PermissionResult", "PermissionUpdate",
    "PermissionRuleValue", "PermissionUpdateDestination", "PermissionBehavior",
    "CanUseTool", "HookEvent", "HookCallback", "HookContext", "HookMatcher",
    "HookJSONOutput", "AsyncHookJSONOutput", "SyncHookJSONOutput", "HookEventMessage",
    "ContextUsageCategory", "ContextUsageResponse", "HookInput", "HookSpecificOutput",
]


def test_every_official_name_is_defined() -> None:
    assert set(REQUIRED_NAMES) <= set(PUBLIC)
    missing = [name for name in PUBLIC if not hasattr(ours, name)]
    assert missing == []


def test_session_names_are_found_in_the_session_module() -> None:
    sessions = pytest.importorskip("wisp.sdk.sessions")
    for name in ["SDKSessionInfo", "SessionMessage"]:
        assert getattr(ours, name) is getattr(sessions, name)
    with pytest.raises(AttributeError):
        _ = ours.NoSuchName


def _alias_shape(value: Any) -> Any:
    """A typing alias reduced to class names and literal values, for comparison across
    modules (the classes themselves differ)."""
    origin = typing.get_origin(value)
    if origin is typing.Literal:
        return ("Literal", frozenset(typing.get_args(value)))
    if origin in (typing.Union, pytypes.UnionType):
        members: set[Any] = set()
        for arg in typing.get_args(value):
            shaped = _alias_shape(arg)
            # Literal["a"] | Literal["b"] is Literal["a", "b"].
            if isinstance(shaped, tuple) and shaped[0] == "Literal":
                members |= {("Literal", frozenset({v})) for v in shaped[1]}
            else:
                members.add(shaped)
        return ("Union", frozenset(members))
    if origin is not None:
        return (getattr(origin, "__name__", repr(origin)),
                tuple(_alias_shape(arg) for arg in typing.get_args(value)))
    if isinstance(value, list):
        return tuple(_alias_shape(arg) for arg in value)
    return getattr(value, "__name__", repr(value))


def _default(f: dataclasses.Field[Any]) -> Any:
    if f.default_factory is not dataclasses.MISSING:
        return ("factory", f.default_factory())
    if f.default is dataclasses.MISSING:
        return "required"
    return ("value", f.default)


@pytest.mark.parametrize("name", PUBLIC)
def test_same_shape_as_official(name: str) -> None:
    theirs, mine = getattr(official, name), getattr(ours, name)
    if isinstance(theirs, type) and dataclasses.is_dataclass(theirs):
        assert isinstance(mine, type) and dataclasses.is_dataclass(mine)
        their_fields, my_fields = dataclasses.fields(theirs), dataclasses.fields(mine)
        assert [f.name for f in my_fields] == [f.name for f in their_fields]
        for theirs_f, mine_f in zip(their_fields, my_fields, strict=True):
            assert (mine_f.init, mine_f.kw_only) == (theirs_f.init, theirs_f.kw_only)
            if name == "ClaudeAgentOptions" and mine_f.name == "debug_stderr":
                # sys.stderr when each module was imported; pytest may swap it between.
                assert hasattr(mine_f.default, "write")
                continue
            assert _default(mine_f) == _default(theirs_f), mine_f.name
        assert [c.__name__ for c in mine.__mro__] == [c.__name__ for c in theirs.__mro__]
    elif typing.is_typeddict(theirs):
        assert typing.is_typeddict(mine)
        assert list(mine.__annotations__) == list(theirs.__annotations__)
        assert mine.__required_keys__ == theirs.__required_keys__
        assert mine.__optional_keys__ == theirs.__optional_keys__
        assert mine.__total__ == theirs.__total__
    elif isinstance(theirs, type):
        assert isinstance(mine, type)
        assert [c.__name__ for c in mine.__mro__] == [c.__name__ for c in theirs.__mro__]
    elif isinstance(theirs, frozenset):
        assert mine == theirs
    else:
        assert _alias_shape(mine) == _alias_shape(theirs)


def test_annotations_resolve_at_runtime() -> None:
    # Pydantic and other runtime users call get_type_hints on these classes.
    checked = 0
    for value in vars(ours).values():
        if isinstance(value, type) and (dataclasses.is_dataclass(value)
                                        or typing.is_typeddict(value)):
            typing.get_type_hints(value)
            checked += 1
    assert checked > 100


def imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            names.add(node.module or "")
    return names


def test_types_module_imports_only_light_stdlib_modules() -> None:
    allowed = {"dataclasses", "os", "sys", "collections.abc", "typing", "importlib"}
    for module in ("types", "_options_check", "_parse", "errors"):
        names = imported_modules(Path(ours.__file__).with_name(f"{module}.py"))
        assert names <= allowed | {"__future__", "wisp.sdk.types", "wisp.sdk.errors",
                                   "wisp.sdk._options_check", "wisp.jsontypes"}, (module, names)
    # wisp.jsontypes (the JSON alias) is allowed above because it is as light itself.
    jsontypes = Path(ours.__file__).parents[1] / "jsontypes.py"
    assert imported_modules(jsontypes) <= {"__future__", "typing"}


# ---------------------------------------------------------------------------------------
# PermissionUpdate
# ---------------------------------------------------------------------------------------

UPDATE_TYPES = ["addRules", "replaceRules", "removeRules", "setMode", "addDirectories",
                "removeDirectories", "bogus"]
RULES: list[list[tuple[str, str | None]] | None] = [
    None, [], [("Bash", "npm test")], [("Read", None)], [("Bash", ""), ("Write", "/x/**")]]
BEHAVIORS = [None, "allow", "deny", "ask"]
MODES = [None, "acceptEdits", "plan"]
DIRECTORIES = [None, [], ["/a", "/b"]]
DESTINATIONS = [None, "", "session", "userSettings", "projectSettings", "localSettings"]


def _update(module: Any, combo: tuple[Any, ...]) -> Any:
    kind, rules, behavior, mode, directories, destination = combo
    return module.PermissionUpdate(
        type=kind,
        rules=None if rules is None else [module.PermissionRuleValue(t, c) for t, c in rules],
        behavior=behavior,
        mode=mode,
        directories=None if directories is None else list(directories),
        destination=destination,
    )


def _wire(update: Any) -> Any:
    try:
        return ("ok", list(update.to_dict().items()))  # the key order is the wire order
    except ValueError:
        return ("ValueError",)


def test_permission_update_to_dict_matches_official() -> None:
    checked = 0
    for combo in itertools.product(UPDATE_TYPES, RULES, BEHAVIORS, MODES, DIRECTORIES,
                                   DESTINATIONS):
        mine, theirs = _update(ours, combo), _update(official, combo)
        wire = _wire(mine)
        assert wire == _wire(theirs), combo
        if wire[0] == "ok":
            back, their_back = (ours.PermissionUpdate.from_dict(dict(wire[1])),
                                official.PermissionUpdate.from_dict(dict(wire[1])))
            assert _shape(back) == _shape(their_back)
        checked += 1
    assert checked == 7 * 5 * 4 * 3 * 3 * 6


def _shape(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (type(value).__name__,
                {f.name: _shape(getattr(value, f.name)) for f in dataclasses.fields(value)})
    if isinstance(value, list):
        return [_shape(item) for item in value]
    return value


def test_permission_update_from_dict_matches_official() -> None:
    for data in [
        {"type": "addRules", "rules": [{"toolName": "Bash"}], "behavior": "allow"},
        {"type": "setMode", "mode": "plan", "destination": "session"},
        {"type": "addDirectories", "directories": ["/a"], "rules": None},
        {"type": "removeRules", "rules": [{"toolName": "Read", "ruleContent": "x"}]},
    ]:
        assert _shape(ours.PermissionUpdate.from_dict(data)) == _shape(
            official.PermissionUpdate.from_dict(data))


# ---------------------------------------------------------------------------------------
# ClaudeAgentOptions checks
# ---------------------------------------------------------------------------------------


async def _callback(*args: Any) -> Any:
    return {}


class _Store:
    async def append(self, key: Any, entries: Any) -> None:
        return None

    async def load(self, key: Any) -> Any:
        return None


def _every_field_set() -> dict[str, Any]:
    """A valid non-default value for every option."""
    return {
        "tools": ["Bash", "Read"],
        "allowed_tools": ["Read"],
        "system_prompt": {"type": "preset", "preset": "claude_code", "append": "x"},
        "mcp_servers": {"calc": {"type": "sdk", "name": "calc", "instance": object()},
                        "ext": {"command": "srv"}},
        "strict_mcp_config": True,
        "permission_mode": "acceptEdits",
        "continue_conversation": True,
        "resume": "abc",
        "session_id": "1b0e7e1c-0000-4000-8000-000000000001",
        "max_turns": 3,
        "max_budget_usd": 1.5,
        "disallowed_tools": ["Write"],
        "model": "claude-x",
        "fallback_model": "claude-y",
        "betas": ["context-1m-2025-08-07"],
        "permission_prompt_tool_name": "mcp__x__ask",
        "cwd": Path("/tmp"),
        "cli_path": "/usr/bin/wisp",
        "settings": '{"a": 1}',
        "add_dirs": ["/a", Path("/b")],
        "env": {"A": "b"},
        "extra_args": {"debug": None, "max-retries": "2"},
        "max_buffer_size": 1 << 20,
        "debug_stderr": sys.stdout,
        "stderr": print,
        "can_use_tool": _callback,
        "hooks": {"PreToolUse": [ours.HookMatcher("Bash", [_callback], timeout=5)],
                  "SessionStart": [ours.HookMatcher(hooks=[_callback], on_failure="block")]},
        "user": "someone",
        "include_partial_messages": True,
        "include_hook_events": True,
        "forward_subagent_text": True,
        "verbatim_prompts": True,
        "fork_session": True,
        "resume_session_at": "u-1",
        "resume_drops_turn": "u-2",
        "agents": {"reviewer": ours.AgentDefinition("reviews", "You review.", tools=["Read"])},
        "setting_sources": ["user", "project", "local"],
        "skills": ["pdf"],
        "sandbox": {"enabled": True, "network": {"allowLocalBinding": True}},
        "plugins": [{"type": "local", "path": "/p"}],
        "max_thinking_tokens": 1000,
        "thinking": {"type": "enabled", "budget_tokens": 2000, "display": "summarized"},
        "effort": "high",
        "output_format": {"type": "json_schema", "schema": {"type": "object"}},
        "enable_file_checkpointing": True,
        "session_store": _Store(),
        "session_store_flush": "eager",
        "load_timeout_ms": 1000,
        "task_budget": {"total": 50000},
        "client_app": "my-app/1.0",
    }


def test_defaults_pass() -> None:
    options = ours.ClaudeAgentOptions()
    assert options.allowed_tools == [] and options.load_timeout_ms == 60_000
    assert options.debug_stderr is sys.stderr or hasattr(options.debug_stderr, "write")


def test_every_field_set_passes_and_replace_keeps_working() -> None:
    values = _every_field_set()
    assert set(values) == {f.name for f in dataclasses.fields(ours.ClaudeAgentOptions)}
    options = ours.ClaudeAgentOptions(**values)
    copied = dataclasses.replace(options, permission_prompt_tool_name="stdio")
    assert copied.permission_prompt_tool_name == "stdio"
    assert copied.hooks is options.hooks
    with pytest.raises(TypeError, match=r"ClaudeAgentOptions\.max_turns"):
        dataclasses.replace(options, max_turns="3")


@pytest.mark.parametrize("values", [
    {"skills": "all"},
    {"skills": []},
    {"tools": []},
    {"tools": {"type": "preset", "preset": "claude_code"}},
    {"system_prompt": "be brief"},
    {"system_prompt": {"type": "file", "path": "/p"}},
    {"mcp_servers": "/path/to/mcp.json"},
    {"mcp_servers": Path("/path/to/mcp.json")},
    {"max_budget_usd": 2},
    {"thinking": {"type": "adaptive"}},
    {"thinking": {"type": "disabled"}},
    {"setting_sources": []},
    {"permission_mode": "bypassPermissions"},
    {"permission_mode": "dontAsk"},
    {"effort": "max"},
    {"hooks": {}},
    {"agents": {}},
    {"max_turns": 0},
], ids=lambda values: "-".join(f"{k}={v!r}" for k, v in values.items()))
def test_other_valid_values_pass(values: dict[str, Any]) -> None:
    ours.ClaudeAgentOptions(**values)


def test_official_hook_matchers_and_agents_are_accepted() -> None:
    # A program that still builds some objects from the official package keeps working.
    ours.ClaudeAgentOptions(
        hooks={"Stop": [official.HookMatcher(hooks=[_callback])]},
        agents={"a": official.AgentDefinition("d", "p")},
    )


class _Text(str):
    pass


def test_subclasses_of_the_right_kind_pass() -> None:
    ours.ClaudeAgentOptions(model=_Text("m"), allowed_tools=[_Text("Read")], cwd=_Text("/"))


BOOL_FIELDS = [f.name for f in dataclasses.fields(ours.ClaudeAgentOptions) if f.default is False]
INT_FIELDS = ["max_turns", "max_buffer_size", "max_thinking_tokens", "load_timeout_ms"]
OPTIONAL_STR_FIELDS = ["resume", "session_id", "model", "fallback_model",
                       "permission_prompt_tool_name", "settings", "user", "resume_session_at",
                       "resume_drops_turn", "client_app"]


def _bad_cases() -> list[tuple[str, Any, type[Exception]]]:
    cases: list[tuple[str, Any, type[Exception]]] = []
    for name in BOOL_FIELDS:
        cases += [(name, 1, TypeError), (name, "true", TypeError), (name, None, TypeError)]
    for name in INT_FIELDS:
        cases += [(name, True, TypeError), (name, 1.5, TypeError), (name, "3", TypeError)]
    for name in OPTIONAL_STR_FIELDS:
        cases += [(name, 3, TypeError), (name, Path("/x"), TypeError), (name, b"x", TypeError)]
    for name in ["allowed_tools", "disallowed_tools", "betas"]:
        cases += [(name, "Read", TypeError), (name, ("Read", 3), TypeError),
                  (name, ["Read", 3], TypeError), (name, None, TypeError)]
    cases += [
        ("tools", "Bash", TypeError),
        ("tools", ["Bash", None], TypeError),
        ("system_prompt", ["x"], TypeError),
        ("mcp_servers", None, TypeError),
        ("mcp_servers", ["x"], TypeError),
        ("mcp_servers", {"x": "not a dict"}, TypeError),
        ("mcp_servers", {1: {"command": "x"}}, TypeError),
        ("permission_mode", "yolo", ValueError),
        ("permission_mode", 1, TypeError),
        ("max_budget_usd", "1", TypeError),
        ("max_budget_usd", True, TypeError),
        ("cwd", 5, TypeError),
        ("cli_path", ["wisp"], TypeError),
        ("add_dirs", "/a", TypeError),
        ("add_dirs", ["/a", 5], TypeError),
        ("env", [("A", "b")], TypeError),
        ("env", {"A": 1}, TypeError),
        ("env", {1: "a"}, TypeError),
        ("extra_args", ["--x"], TypeError),
        ("extra_args", {3: "a"}, TypeError),
        ("stderr", "log.txt", TypeError),
        ("can_use_tool", True, TypeError),
        ("hooks", [], TypeError),
        ("hooks", {"PreToolUse": _callback}, TypeError),
        ("hooks", {"PreToolUse": [_callback]}, TypeError),
        ("hooks", {"PreToolUse": [ours.HookMatcher(hooks=_callback)]}, TypeError),
        ("hooks", {"PreToolUse": [ours.HookMatcher(hooks=["not callable"])]}, TypeError),
        ("hooks", {"PreToolUse": [ours.HookMatcher(matcher=3)]}, TypeError),
        ("hooks", {"PreToolUse": [ours.HookMatcher(timeout="5")]}, TypeError),
        ("hooks", {1: [ours.HookMatcher()]}, TypeError),
        ("agents", [], TypeError),
        ("agents", {"a": {"description": "d", "prompt": "p"}}, TypeError),
        ("setting_sources", "user", TypeError),
        ("setting_sources", ["user", "global"], ValueError),
        ("skills", "pdf", ValueError),
        ("skills", ["pdf", 1], TypeError),
        ("sandbox", True, TypeError),
        ("plugins", {"type": "local"}, TypeError),
        ("plugins", ["/p"], TypeError),
        ("thinking", "adaptive", TypeError),
        ("thinking", {"type": "sometimes"}, ValueError),
        ("thinking", {"type": "enabled"}, TypeError),
        ("effort", "extreme", ValueError),
        ("effort", 3, TypeError),
        ("output_format", "json", TypeError),
        ("session_store", object(), TypeError),
        ("session_store_flush", "lazy", ValueError),
        ("session_store_flush", None, TypeError),
        ("task_budget", 5000, TypeError),
        ("task_budget", {"total": "5000"}, TypeError),
    ]
    return cases


BAD = _bad_cases()


def test_every_option_but_debug_stderr_has_a_bad_value_case() -> None:
    covered = {name for name, _, _ in BAD}
    assert covered == {f.name for f in dataclasses.fields(ours.ClaudeAgentOptions)} - {
        "debug_stderr"}


@pytest.mark.parametrize(("name", "value", "error"), BAD,
                         ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(BAD)])
def test_bad_value_raises_naming_the_option(name: str, value: Any,
                                             error: type[Exception]) -> None:
    with pytest.raises(error) as caught:
        ours.ClaudeAgentOptions(**{name: value})
    assert type(caught.value) is error
    assert str(caught.value).startswith(f"ClaudeAgentOptions.{name}")


def test_message_format() -> None:
    with pytest.raises(TypeError) as caught:
        ours.ClaudeAgentOptions(max_turns="three")
    assert str(caught.value) == (
        "ClaudeAgentOptions.max_turns must be an int or None, got 'three' (str)")


def test_value_errors_name_the_allowed_values() -> None:
    with pytest.raises(ValueError, match=r"'default'.*'auto'; got 'yolo'"):
        ours.ClaudeAgentOptions(permission_mode="yolo")
    with pytest.raises(ValueError, match=r"'user', 'project', 'local'; got 'global'"):
        ours.ClaudeAgentOptions(setting_sources=["global"])


def test_long_values_are_shortened_in_messages() -> None:
    with pytest.raises(TypeError) as caught:
        ours.ClaudeAgentOptions(allowed_tools="x" * 500)
    assert str(caught.value).endswith("xxx... (str)")
    assert len(str(caught.value)) < 150


# ---------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------

ERROR_NAMES = ["ClaudeSDKError", "CLIConnectionError", "CLINotFoundError", "ProcessError",
               "ResultError", "CLIJSONDecodeError", "MessageParseError"]


@pytest.mark.parametrize("name", ERROR_NAMES)
def test_error_hierarchy_matches_official(name: str) -> None:
    mine, theirs = getattr(our_errors, name), getattr(official_errors, name)
    assert [c.__name__ for c in mine.__mro__] == [c.__name__ for c in theirs.__mro__]


def test_error_messages_and_attributes_match_official() -> None:
    for args in itertools.product(["failed"], [None, 0, 1, -9], [None, "", "boom\nmore"]):
        mine, theirs = our_errors.ProcessError(*args), official_errors.ProcessError(*args)
        assert (str(mine), mine.exit_code, mine.stderr) == (
            str(theirs), theirs.exit_code, theirs.stderr)
    for kwargs in [{}, {"cli_path": "/x/wisp"}, {"message": "gone"},
                   {"message": "gone", "cli_path": ""}]:
        assert str(our_errors.CLINotFoundError(**kwargs)) == str(
            official_errors.CLINotFoundError(**kwargs))
    cause = ValueError("bad")
    for line in ["{", "x" * 300]:
        mine_json = our_errors.CLIJSONDecodeError(line, cause)
        theirs_json = official_errors.CLIJSONDecodeError(line, cause)
        assert (str(mine_json), mine_json.line, mine_json.original_error) == (
            str(theirs_json), theirs_json.line, theirs_json.original_error)
    parse_error = our_errors.MessageParseError("m", {"a": 1})
    assert (str(parse_error), parse_error.data) == ("m", {"a": 1})


RESULT_DATA: list[Any] = [
    None,
    {},
    "not a dict",
    {"subtype": "error_max_turns", "errors": ["  a  ", "", 3, "b"], "result": "r",
     "api_error_status": 529, "terminal_reason": "max_turns", "session_id": "s"},
    {"subtype": 5, "errors": "lonely", "result": None, "api_error_status": "529",
     "terminal_reason": 1, "session_id": None},
    {"errors": {"a": 1}, "api_error_status": True},
]


@pytest.mark.parametrize("data", RESULT_DATA, ids=[str(i) for i in range(len(RESULT_DATA))])
def test_result_error_matches_official(data: Any) -> None:
    mine = our_errors.ResultError("run failed", data, exit_code=1)
    theirs = official_errors.ResultError("run failed", data, exit_code=1)
    assert str(mine) == str(theirs)
    assert vars(mine) == vars(theirs)
    copied = pickle.loads(pickle.dumps(mine))
    assert type(copied) is our_errors.ResultError
    assert vars(copied) == vars(mine)


def test_os_pathlike_is_what_paths_are_checked_against() -> None:
    class Custom(os.PathLike[str]):
        def __fspath__(self) -> str:
            return "/custom"

    ours.ClaudeAgentOptions(cwd=Custom(), add_dirs=[Custom()], mcp_servers=Custom())


def test_values_the_official_sdk_takes_without_complaint_pass() -> None:
    """A drop-in must not refuse what programs written for the official SDK pass: tuples
    where lists are expected, and non-str extra_args values (sent as str(value))."""
    options = ours.ClaudeAgentOptions(allowed_tools=("Read", "Grep"), disallowed_tools=("Bash",),
                                      add_dirs=("/tmp",), extra_args={"max-retries": 3})
    assert options.allowed_tools == ("Read", "Grep")
    assert options.extra_args == {"max-retries": 3}
