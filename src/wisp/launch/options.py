"""Options: the immutable configuration of one wisp process, built from argv.

Run state (history, usage, the current model and permission mode) lives on `Session`;
anything here is fixed for the life of the process, though control requests may start a
session from different values.
"""

# No `from __future__ import annotations` here: NamedTuple checks each field's annotation,
# and a string annotation costs a compile() (~0.1 ms each, ~5 ms for Options' fields, all
# before the first frame); real annotation objects cost next to nothing.

import json
import os
from pathlib import Path
from typing import Any, Literal, NamedTuple

from wisp.errors import UsageError
from wisp.launch.argv import ParsedArgs
from wisp.permissions.modes import PERMISSION_MODES, PermissionMode, is_permission_mode
from wisp.runtime.config import RuntimeConfig

OutputFormat = Literal["text", "json", "stream-json"]
InputFormat = Literal["text", "stream-json"]


class Options(NamedTuple):
    """The parsed command line: the fields only a front end reads (how to talk), and the
    `RuntimeConfig` the session is opened from (what to run). A NamedTuple, not a
    dataclass: it is built before the first frame, and importing `dataclasses` alone
    costs 20–40 ms here."""

    runtime: RuntimeConfig
    print_mode: bool = False
    prompt: str | None = None
    output_format: OutputFormat = "text"
    input_format: InputFormat = "text"
    verbose: bool = False
    replay_user_messages: bool = False
    session_mirror: bool = False  # transcript lines also go out as transcript_mirror frames
    unsupported_flags: tuple[str, ...] = ()  # accepted and ignored (wisp.launch.unsupported)

    @property
    def streaming_input(self) -> bool:
        return self.input_format == "stream-json"

    def in_folder(self, cwd: Path) -> "Options":
        """The same options for a session run in `cwd` (the SDK's in-process link)."""
        return self._replace(runtime=self.runtime._replace(cwd=cwd))


def _read_file(path: str, what: str) -> str:
    try:
        return Path(path).expanduser().read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"Could not read {what} {path}: {exc.strerror}") from exc


def _int(value: str | None, flag: str) -> int | None:
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        raise UsageError(f"{flag} must be an integer, got {value!r}") from None


def _float(value: str | None, flag: str) -> float | None:
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        raise UsageError(f"{flag} must be a number, got {value!r}") from None


def _choice(value: str | None, allowed: tuple[str, ...], flag: str, default: str) -> str:
    if value is None:
        return default
    if value not in allowed:
        raise UsageError(f"Invalid value {value!r} for {flag}. Use one of: {', '.join(allowed)}")
    return value


def _system_prompt(args: ParsedArgs) -> str | None:
    if "system_prompt_file" in args.values:
        return _read_file(args.get_str("system_prompt_file") or "", "system prompt file")
    return args.get_str("system_prompt")


def _append_prompt(args: ParsedArgs) -> str | None:
    parts = [args.get_str("append_system_prompt")]
    if "append_system_prompt_file" in args.values:
        path = args.get_str("append_system_prompt_file") or ""
        parts.append(_read_file(path, "append system prompt file"))
    text = "\n\n".join(p for p in parts if p)
    return text or None


def _json_schema(raw: str | None) -> dict[str, Any] | None:
    if raw is None:
        return None
    try:
        schema = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"--json-schema is not valid JSON: {exc.msg} (column {exc.colno})") from None
    if not isinstance(schema, dict):
        raise UsageError("--json-schema must be a JSON object")
    from wisp.engine.structured import schema_problem  # loads jsonschema: only when asked

    problem = schema_problem(schema)
    if problem is not None:
        raise UsageError(f"--json-schema is not a valid JSON Schema: {problem}")
    return schema


def _permission_mode(args: ParsedArgs) -> PermissionMode:
    if args.flag("dangerously_skip_permissions"):
        return "bypassPermissions"
    mode = _choice(args.get_str("permission_mode"), PERMISSION_MODES, "--permission-mode",
                   "default")
    assert is_permission_mode(mode)  # _choice allowed only PERMISSION_MODES
    return mode


def _bypass_allowed(args: ParsedArgs) -> bool:
    return (
        args.flag("dangerously_skip_permissions")
        or args.flag("allow_dangerously_skip_permissions")
        or args.get_str("permission_mode") == "bypassPermissions"
    )


def build_options(args: ParsedArgs, prompt: str | None) -> Options:
    output_format = _choice(
        args.get_str("output_format"), ("text", "json", "stream-json"), "--output-format", "text"
    )
    input_format = _choice(
        args.get_str("input_format"), ("text", "stream-json"), "--input-format", "text"
    )
    return Options(
        runtime=_runtime(args),
        print_mode=args.flag("print"),
        prompt=prompt,
        output_format=output_format,  # type: ignore[arg-type]
        input_format=input_format,  # type: ignore[arg-type]
        verbose=args.flag("verbose"),
        replay_user_messages=args.flag("replay_user_messages"),
        session_mirror=args.flag("session_mirror"),
        unsupported_flags=tuple(args.unsupported),
    )


def _runtime(args: ParsedArgs) -> RuntimeConfig:
    """The session's configuration from argv; its `env` is added by `launch.setup`."""
    tools = args.get_list("tools")
    sources = args.get_list("setting_sources")
    return RuntimeConfig(
        cwd=Path(os.getcwd()),
        include_partial_messages=args.flag("include_partial_messages"),
        include_hook_events=args.flag("include_hook_events"),
        forward_subagent_text=args.flag("forward_subagent_text"),
        model=args.get_str("model"),
        fallback_model=args.get_str("fallback_model"),
        max_turns=_int(args.get_str("max_turns"), "--max-turns"),
        max_budget_usd=_float(args.get_str("max_budget_usd"), "--max-budget-usd"),
        system_prompt=_system_prompt(args),
        append_system_prompt=_append_prompt(args),
        tools=None if tools is None or tools == ["default"] else tuple(tools),
        allowed_tools=tuple(args.get_list("allowed_tools") or ()),
        disallowed_tools=tuple(args.get_list("disallowed_tools") or ()),
        permission_mode=_permission_mode(args),
        permission_mode_set="permission_mode" in args.values
        or args.flag("dangerously_skip_permissions"),
        bypass_allowed=_bypass_allowed(args),
        permission_prompt_tool=args.get_str("permission_prompt_tool"),
        resume=args.get_str("resume"),
        continue_session=args.flag("continue_session"),
        fork_session=args.flag("fork_session"),
        session_id=args.get_str("session_id"),
        resume_session_at=args.get_str("resume_session_at"),
        resume_drops_turn=args.get_str("resume_drops_turn"),
        no_session_persistence=args.flag("no_session_persistence"),
        json_schema=_json_schema(args.get_str("json_schema")),
        add_dirs=tuple(args.get_list("add_dirs") or ()),
        settings=args.get_str("settings"),
        setting_sources=None if sources is None else tuple(sources),
        mcp_config=tuple(args.get_list("mcp_config") or ()),
        strict_mcp_config=args.flag("strict_mcp_config"),
        plugin_dirs=tuple(args.get_list("plugin_dirs") or ()),
        plugin_dirs_no_mcp=tuple(args.get_list("plugin_dirs_no_mcp") or ()),
        betas=tuple(args.get_list("betas") or ()),
        max_thinking_tokens=_int(args.get_str("max_thinking_tokens"), "--max-thinking-tokens"),
        effort=args.get_str("effort"),
        thinking=args.get_str("thinking"),
        thinking_display=args.get_str("thinking_display"),
        agents_json=args.get_str("agents"),
    )


def validate(opts: Options, environ: dict[str, str] | os._Environ[str]) -> None:
    """The reference CLI's mode matrix, with its error phrases (exit 1, no API call)."""
    if opts.streaming_input and opts.output_format != "stream-json":
        raise UsageError("--input-format=stream-json requires output-format=stream-json.")
    if opts.output_format == "stream-json" and not opts.verbose:
        raise UsageError(
            "When using --print, --output-format=stream-json requires --verbose"
        )
    if opts.runtime.include_partial_messages and opts.output_format != "stream-json":
        raise UsageError(
            "--include-partial-messages requires --print and --output-format=stream-json."
        )
    if opts.replay_user_messages and not (
        opts.streaming_input and opts.output_format == "stream-json"
    ):
        raise UsageError(
            "--replay-user-messages requires --input-format=stream-json and "
            "--output-format=stream-json."
        )
    if (
        opts.runtime.permission_mode == "bypassPermissions"
        and hasattr(os, "geteuid")
        and os.geteuid() == 0
        and environ.get("IS_SANDBOX") != "1"
    ):
        raise UsageError(
            "--dangerously-skip-permissions cannot be used with root/sudo privileges for "
            "security reasons"
        )
