"""`ClaudeAgentOptions` checked at construction: a wrong-typed option raises `TypeError`
(a value outside a fixed set, `ValueError`) that names it. Hand-written per kind of field
so that building options costs a few microseconds: plain isinstance tests, no typing
introspection at call time.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Final, get_args

from wisp.sdk.types import (
    _SKILLS_ALL,
    AgentDefinition,
    EffortLevel,
    HookMatcher,
    PermissionMode,
    SettingSource,
    _FlushMode,
)

if TYPE_CHECKING:
    from wisp.sdk.types import ClaudeAgentOptions

# ---------------------------------------------------------------------------------------

_PERMISSION_MODES: Final = get_args(PermissionMode)
_SETTING_SOURCES: Final = get_args(SettingSource)
_EFFORT_LEVELS: Final = get_args(EffortLevel)
_FLUSH_MODES: Final = get_args(_FlushMode)
_THINKING_TYPES: Final = ("adaptive", "enabled", "disabled")
# isinstance() with a tuple is faster than with a `X | Y` union built on every call.
_PATH_TYPES: Final = (str, os.PathLike)
_NUMBER_TYPES: Final = (int, float)
_PROMPT_TYPES: Final = (str, dict)

_BOOL_OPTIONS: Final = (
    "strict_mcp_config",
    "continue_conversation",
    "include_partial_messages",
    "include_hook_events",
    "forward_subagent_text",
    "verbatim_prompts",
    "fork_session",
    "enable_file_checkpointing",
)
_OPTIONAL_STR_OPTIONS: Final = (
    "resume",
    "session_id",
    "model",
    "fallback_model",
    "permission_prompt_tool_name",
    "settings",
    "user",
    "resume_session_at",
    "resume_drops_turn",
    "client_app",
)
_OPTIONAL_INT_OPTIONS: Final = ("max_turns", "max_buffer_size", "max_thinking_tokens")
_STR_LIST_OPTIONS: Final = ("allowed_tools", "disallowed_tools", "betas")
_OPTIONAL_DICT_OPTIONS: Final = ("sandbox", "output_format")
_OPTIONAL_CALLABLE_OPTIONS: Final = ("stderr", "can_use_tool")
_OPTIONAL_PATH_OPTIONS: Final = ("cwd", "cli_path")


def _wrong(name: str, expected: str, value: object) -> TypeError:
    shown = repr(value)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return TypeError(
        f"ClaudeAgentOptions.{name} must be {expected}, got {shown} ({type(value).__name__})"
    )


def _not_one_of(name: str, allowed: tuple[str, ...], value: object) -> ValueError:
    names = ", ".join(repr(a) for a in allowed)
    return ValueError(f"ClaudeAgentOptions.{name} must be one of {names}; got {value!r}")


def _is_int(value: object) -> bool:
    return value.__class__ is int or (isinstance(value, int) and not isinstance(value, bool))


def _is_number(value: object) -> bool:
    return isinstance(value, _NUMBER_TYPES) and not isinstance(value, bool)


def _check_str_list(name: str, value: object, expected: str = "a list of str") -> None:
    # A tuple works wherever the official SDK takes a list (it only iterates and joins).
    if not isinstance(value, (list, tuple)):
        raise _wrong(name, expected, value)
    for index, item in enumerate(value):
        if not isinstance(item, str):
            raise _wrong(f"{name}[{index}]", "a str", item)


# The fast path loads each group of same-kind fields into a tuple with plain attribute
# reads (which the interpreter specialises) and tests the values; only when one is wrong
# is the group searched again by name, to say which option it was.


def _bad_bool(value: object) -> bool:
    return value is not True and value is not False


def _bad_optional_str(value: object) -> bool:
    return value is not None and not isinstance(value, str)


def _bad_optional_int(value: object) -> bool:
    return value is not None and not _is_int(value)


def _bad_optional_path(value: object) -> bool:
    return value is not None and not isinstance(value, _PATH_TYPES)


def _bad_optional_callable(value: object) -> bool:
    return value is not None and not callable(value)


def _bad_optional_dict(value: object) -> bool:
    return value is not None and not isinstance(value, dict)


def _name_the_bad_one(
    o: ClaudeAgentOptions, names: tuple[str, ...], bad: Callable[[object], bool], expected: str
) -> TypeError:
    for name in names:
        value = getattr(o, name)
        if bad(value):
            return _wrong(name, expected, value)
    raise AssertionError("no wrong value among " + ", ".join(names))  # pragma: no cover


def _check_flags_and_text(o: ClaudeAgentOptions) -> None:
    for flag in (
        o.strict_mcp_config,
        o.continue_conversation,
        o.include_partial_messages,
        o.include_hook_events,
        o.forward_subagent_text,
        o.verbatim_prompts,
        o.fork_session,
        o.enable_file_checkpointing,
    ):
        if flag is not True and flag is not False:
            raise _name_the_bad_one(o, _BOOL_OPTIONS, _bad_bool, "a bool")
    for text in (
        o.resume,
        o.session_id,
        o.model,
        o.fallback_model,
        o.permission_prompt_tool_name,
        o.settings,
        o.user,
        o.resume_session_at,
        o.resume_drops_turn,
        o.client_app,
    ):
        if text is not None and not isinstance(text, str):
            raise _name_the_bad_one(o, _OPTIONAL_STR_OPTIONS, _bad_optional_str, "a str or None")


def _check_simple(o: ClaudeAgentOptions) -> None:
    _check_flags_and_text(o)
    for number in (o.max_turns, o.max_buffer_size, o.max_thinking_tokens):
        if number is not None and not _is_int(number):
            raise _name_the_bad_one(o, _OPTIONAL_INT_OPTIONS, _bad_optional_int, "an int or None")
    for path in (o.cwd, o.cli_path):
        if path is not None and not isinstance(path, _PATH_TYPES):
            raise _name_the_bad_one(
                o, _OPTIONAL_PATH_OPTIONS, _bad_optional_path, "a str, a path or None"
            )
    for function in (o.stderr, o.can_use_tool):
        if function is not None and not callable(function):
            raise _name_the_bad_one(
                o, _OPTIONAL_CALLABLE_OPTIONS, _bad_optional_callable, "callable or None"
            )
    for mapping in (o.sandbox, o.output_format):
        if mapping is not None and not isinstance(mapping, dict):
            raise _name_the_bad_one(o, _OPTIONAL_DICT_OPTIONS, _bad_optional_dict, "a dict or None")


def _check_lists_and_numbers(o: ClaudeAgentOptions) -> None:
    for name, names in (
        ("allowed_tools", o.allowed_tools),
        ("disallowed_tools", o.disallowed_tools),
        ("betas", o.betas),
    ):
        if names.__class__ is not list or names:
            _check_str_list(name, names)
    budget = o.max_budget_usd
    if budget is not None and not _is_number(budget):
        raise _wrong("max_budget_usd", "a number or None", budget)
    if o.load_timeout_ms.__class__ is not int and not _is_int(o.load_timeout_ms):
        raise _wrong("load_timeout_ms", "an int", o.load_timeout_ms)
    add_dirs = o.add_dirs
    if add_dirs.__class__ is not list or add_dirs:
        _check_add_dirs(add_dirs)
    store = o.session_store
    if store is not None and not (
        callable(getattr(store, "append", None)) and callable(getattr(store, "load", None))
    ):
        raise _wrong("session_store", "a session store with append() and load(), or None", store)


def _check_add_dirs(add_dirs: object) -> None:
    if not isinstance(add_dirs, (list, tuple)):
        raise _wrong("add_dirs", "a list of str or paths", add_dirs)
    for index, directory in enumerate(add_dirs):
        if not isinstance(directory, _PATH_TYPES):
            raise _wrong(f"add_dirs[{index}]", "a str or a path", directory)


def _check_choice(name: str, value: object, allowed: tuple[str, ...]) -> None:
    if not isinstance(value, str):
        raise _wrong(name, "a str" if name == "session_store_flush" else "a str or None", value)
    if value not in allowed:
        raise _not_one_of(name, allowed, value)


def _check_choices(o: ClaudeAgentOptions) -> None:
    if o.permission_mode is not None:
        _check_choice("permission_mode", o.permission_mode, _PERMISSION_MODES)
    if o.effort is not None:
        _check_choice("effort", o.effort, _EFFORT_LEVELS)
    if o.session_store_flush != "batched":
        _check_choice("session_store_flush", o.session_store_flush, _FLUSH_MODES)
    sources = o.setting_sources
    if sources is not None:
        _check_str_list("setting_sources", sources, "a list of str or None")
        for source in sources:
            if source not in _SETTING_SOURCES:
                raise _not_one_of("setting_sources", _SETTING_SOURCES, source)
    skills = o.skills
    if skills is not None and skills != _SKILLS_ALL:
        if isinstance(skills, str):
            raise ValueError(
                f"ClaudeAgentOptions.skills must be 'all', a list of str or None; got {skills!r}"
            )
        _check_str_list("skills", skills, "'all', a list of str or None")


def _check_configs(o: ClaudeAgentOptions) -> None:
    tools = o.tools
    if tools is not None and not isinstance(tools, dict):
        _check_str_list("tools", tools, "a list of str, a tools preset dict or None")
    prompt = o.system_prompt
    if prompt is not None and not isinstance(prompt, _PROMPT_TYPES):
        raise _wrong("system_prompt", "a str, a system prompt dict or None", prompt)
    plugins = o.plugins
    if not isinstance(plugins, list):
        raise _wrong("plugins", "a list of plugin dicts", plugins)
    for index, plugin in enumerate(plugins):
        if not isinstance(plugin, dict):
            raise _wrong(f"plugins[{index}]", "a plugin dict", plugin)
    if o.thinking is not None:
        _check_thinking(o.thinking)
    budget = o.task_budget
    if budget is not None and not (isinstance(budget, dict) and _is_int(budget.get("total"))):
        raise _wrong("task_budget", "a dict with an int 'total', or None", budget)


def _check_thinking(thinking: object) -> None:
    if thinking is None:
        return
    if not isinstance(thinking, dict):
        raise _wrong("thinking", "a thinking config dict or None", thinking)
    kind = thinking.get("type")
    if kind not in _THINKING_TYPES:
        raise ValueError(
            "ClaudeAgentOptions.thinking['type'] must be one of 'adaptive', 'enabled', "
            f"'disabled'; got {kind!r}"
        )
    if kind == "enabled" and not _is_int(thinking.get("budget_tokens")):
        raise _wrong("thinking['budget_tokens']", "an int", thinking.get("budget_tokens"))


def _check_string_maps(o: ClaudeAgentOptions) -> None:
    env = o.env
    if not isinstance(env, dict):
        raise _wrong("env", "a dict of str to str", env)
    for key, value in env.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise _wrong(f"env[{key!r}]", "a str (with a str key)", value)
    extra = o.extra_args
    if not isinstance(extra, dict):
        raise _wrong("extra_args", "a dict of str to str or None", extra)
    for flag in extra:
        # Values are passed on as str(value), as the official SDK does: only the flag's
        # name must be a str.
        if not isinstance(flag, str):
            raise _wrong(f"extra_args[{flag!r}]", "an entry with a str key", flag)


def _check_servers_and_agents(o: ClaudeAgentOptions) -> None:
    servers = o.mcp_servers
    if isinstance(servers, dict):
        for key, config in servers.items():
            if not isinstance(key, str) or not isinstance(config, dict):
                raise _wrong(f"mcp_servers[{key!r}]", "a server config dict (str key)", config)
    elif not isinstance(servers, _PATH_TYPES):
        raise _wrong("mcp_servers", "a dict of server configs, a str or a path", servers)
    agents = o.agents
    if agents is not None:
        if not isinstance(agents, dict):
            raise _wrong("agents", "a dict of str to AgentDefinition or None", agents)
        for key, agent in agents.items():
            if not isinstance(key, str) or not _is_agent(agent):
                raise _wrong(f"agents[{key!r}]", "an AgentDefinition (str key)", agent)


def _is_agent(value: object) -> bool:
    if isinstance(value, AgentDefinition):
        return True
    # Another module's AgentDefinition (e.g. the official SDK's) is sent with asdict() too.
    return (
        dataclasses.is_dataclass(value)
        and not isinstance(value, type)
        and hasattr(value, "description")
        and hasattr(value, "prompt")
    )


def _check_hooks(hooks: object) -> None:
    if hooks is None:
        return
    if not isinstance(hooks, dict):
        raise _wrong("hooks", "a dict of hook event to list of HookMatcher, or None", hooks)
    for event, matchers in hooks.items():
        if not isinstance(event, str):
            raise _wrong("hooks", "keyed by hook event names (str)", event)
        if not isinstance(matchers, list):
            raise _wrong(f"hooks[{event!r}]", "a list of HookMatcher", matchers)
        for index, matcher in enumerate(matchers):
            _check_matcher(f"hooks[{event!r}][{index}]", matcher)


def _check_matcher(where: str, matcher: object) -> None:
    # Anything with the HookMatcher attributes passes (e.g. the official class).
    callbacks = getattr(matcher, "hooks", None)
    if not isinstance(matcher, HookMatcher) and callbacks is None:
        raise _wrong(where, "a HookMatcher", matcher)
    if not isinstance(callbacks, list):
        raise _wrong(f"{where}.hooks", "a list of callables", callbacks)
    for position, callback in enumerate(callbacks):
        if not callable(callback):
            raise _wrong(f"{where}.hooks[{position}]", "callable", callback)
    pattern = getattr(matcher, "matcher", None)
    if pattern is not None and not isinstance(pattern, str):
        raise _wrong(f"{where}.matcher", "a str or None", pattern)
    timeout = getattr(matcher, "timeout", None)
    if timeout is not None and not _is_number(timeout):
        raise _wrong(f"{where}.timeout", "a number or None", timeout)


def check_options(o: ClaudeAgentOptions) -> None:
    """Raises TypeError or ValueError naming the first option of the wrong kind or value."""
    _check_simple(o)
    _check_lists_and_numbers(o)
    _check_choices(o)
    _check_configs(o)
    _check_string_maps(o)
    _check_servers_and_agents(o)
    if o.hooks is not None:
        _check_hooks(o.hooks)
