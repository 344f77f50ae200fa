"""Options: the immutable configuration of one wisp process, built from argv and env.

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
from wisp.permissions.modes import PERMISSION_MODES

OutputFormat = Literal["text", "json", "stream-json"]
InputFormat = Literal["text", "stream-json"]


class Options(NamedTuple):
    """The parsed command line. A NamedTuple, not a dataclass: it is built before the first
    frame, and importing `dataclasses` alone costs 20–40 ms here."""

    print_mode: bool = False
    prompt: str | None = None
    output_format: OutputFormat = "text"
    input_format: InputFormat = "text"
    verbose: bool = False
    include_partial_messages: bool = False
    replay_user_messages: bool = False
    include_hook_events: bool = False
    forward_subagent_text: bool = False  # a foreground subagent's text reaches stream-json
    model: str | None = None
    fallback_model: str | None = None
    max_turns: int | None = None
    max_budget_usd: float | None = None
    system_prompt: str | None = None  # None = wisp's default; "" = empty, as the SDKs send
    append_system_prompt: str | None = None
    tools: tuple[str, ...] | None = None  # None = all built-ins; () = none
    allowed_tools: tuple[str, ...] = ()
    disallowed_tools: tuple[str, ...] = ()
    permission_mode: str = "default"
    permission_mode_set: bool = False  # given on the command line (beats settings)
    # Launched with --dangerously-skip-permissions, --allow-dangerously-skip-permissions or
    # --permission-mode bypassPermissions: only then may the session enter bypassPermissions
    # later (set_permission_mode, a settings defaultMode).
    bypass_allowed: bool = False
    permission_prompt_tool: str | None = None
    resume: str | None = None
    continue_session: bool = False
    fork_session: bool = False
    session_mirror: bool = False  # transcript lines also go out as transcript_mirror frames
    session_id: str | None = None
    resume_session_at: str | None = None
    resume_drops_turn: str | None = None
    no_session_persistence: bool = False
    json_schema: dict[str, Any] | None = None
    add_dirs: tuple[str, ...] = ()
    settings: str | None = None
    setting_sources: tuple[str, ...] | None = None
    mcp_config: tuple[str, ...] = ()
    strict_mcp_config: bool = False  # only --mcp-config's servers, none from settings
    plugin_dirs: tuple[str, ...] = ()
    plugin_dirs_no_mcp: tuple[str, ...] = ()  # plugins whose MCP servers are not started
    betas: tuple[str, ...] = ()
    max_thinking_tokens: int | None = None
    effort: str | None = None
    thinking: str | None = None  # adaptive, enabled or disabled (wisp.models.shape)
    thinking_display: str | None = None
    cwd: Path = Path("/")  # always given by build_options (the process's cwd)
    unsupported_flags: tuple[str, ...] = ()  # accepted and ignored (wisp.launch.unsupported)
    agents_json: str | None = None  # --agents: JSON text or a file path

    @property
    def streaming_input(self) -> bool:
        return self.input_format == "stream-json"


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


def _permission_mode(args: ParsedArgs) -> str:
    if args.flag("dangerously_skip_permissions"):
        return "bypassPermissions"
    mode = args.get_str("permission_mode")
    return _choice(mode, PERMISSION_MODES, "--permission-mode", "default")


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
    tools = args.get_list("tools")
    sources = args.get_list("setting_sources")
    return Options(
        print_mode=args.flag("print"),
        prompt=prompt,
        output_format=output_format,  # type: ignore[arg-type]
        input_format=input_format,  # type: ignore[arg-type]
        verbose=args.flag("verbose"),
        include_partial_messages=args.flag("include_partial_messages"),
        replay_user_messages=args.flag("replay_user_messages"),
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
        session_mirror=args.flag("session_mirror"),
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
        cwd=Path(os.getcwd()),
        unsupported_flags=tuple(args.unsupported),
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
    if opts.include_partial_messages and opts.output_format != "stream-json":
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
        opts.permission_mode == "bypassPermissions"
        and hasattr(os, "geteuid")
        and os.geteuid() == 0
        and environ.get("IS_SANDBOX") != "1"
    ):
        raise UsageError(
            "--dangerously-skip-permissions cannot be used with root/sudo privileges for "
            "security reasons"
        )
