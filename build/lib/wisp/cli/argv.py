"""A small argv parser that accepts both SDKs' styles.

The TypeScript SDK sends `--flag=value`, the Python SDK mostly `--flag value`, and both pass
arbitrary `extra_args`. argparse would either reject unknown flags or let them swallow the
positional prompt unpredictably, so the table below states each flag's arity explicitly.
Unknown flags are collected (the caller warns) and take a following non-flag token as their
value, which is how the SDKs' `extra_args={k: v}` render them.
"""

from __future__ import annotations

from typing import Literal

from wisp.errors import UsageError

Arity = Literal["flag", "value", "optional", "list", "repeat"]

# name → (destination, arity). "list" flags may repeat and split on commas and spaces;
# "repeat" flags may repeat but each value stays whole (JSON with spaces, as the SDKs pass).
FLAGS: dict[str, tuple[str, Arity]] = {
    "-p": ("print", "flag"),
    "--print": ("print", "flag"),
    "-v": ("version", "flag"),
    "--version": ("version", "flag"),
    "-h": ("help", "flag"),
    "--help": ("help", "flag"),
    "--verbose": ("verbose", "flag"),
    "--probe": ("probe", "flag"),
    "--output-format": ("output_format", "value"),
    "--input-format": ("input_format", "value"),
    "--include-partial-messages": ("include_partial_messages", "flag"),
    "--replay-user-messages": ("replay_user_messages", "flag"),
    "--include-hook-events": ("include_hook_events", "flag"),
    "--forward-subagent-text": ("forward_subagent_text", "flag"),
    "--model": ("model", "value"),
    "--fallback-model": ("fallback_model", "value"),
    "--max-turns": ("max_turns", "value"),
    "--max-budget-usd": ("max_budget_usd", "value"),
    "--system-prompt": ("system_prompt", "value"),
    "--system-prompt-file": ("system_prompt_file", "value"),
    "--append-system-prompt": ("append_system_prompt", "value"),
    "--append-system-prompt-file": ("append_system_prompt_file", "value"),
    "--tools": ("tools", "list"),
    "--allowedTools": ("allowed_tools", "list"),
    "--allowed-tools": ("allowed_tools", "list"),
    "--disallowedTools": ("disallowed_tools", "list"),
    "--disallowed-tools": ("disallowed_tools", "list"),
    "--permission-mode": ("permission_mode", "value"),
    "--dangerously-skip-permissions": ("dangerously_skip_permissions", "flag"),
    "--allow-dangerously-skip-permissions": ("allow_dangerously_skip_permissions", "flag"),
    "--permission-prompt-tool": ("permission_prompt_tool", "value"),
    "-c": ("continue_session", "flag"),
    "--continue": ("continue_session", "flag"),
    "-r": ("resume", "optional"),
    "--resume": ("resume", "optional"),
    "--fork-session": ("fork_session", "flag"),
    "--session-id": ("session_id", "value"),
    "--resume-session-at": ("resume_session_at", "value"),
    "--resume-drops-turn": ("resume_drops_turn", "value"),
    "--no-session-persistence": ("no_session_persistence", "flag"),
    "--json-schema": ("json_schema", "value"),
    "--add-dir": ("add_dirs", "list"),
    "--settings": ("settings", "value"),
    "--setting-sources": ("setting_sources", "list"),
    "--mcp-config": ("mcp_config", "repeat"),
    "--plugin-dir": ("plugin_dirs", "repeat"),
    "--plugin-dir-no-mcp": ("plugin_dirs_no_mcp", "repeat"),
    "--strict-mcp-config": ("strict_mcp_config", "flag"),
    "--betas": ("betas", "list"),
    "--max-thinking-tokens": ("max_thinking_tokens", "value"),
    "--thinking": ("thinking", "value"),
    "--effort": ("effort", "value"),
    "-d": ("debug", "flag"),
    "--debug": ("debug", "flag"),
    "--debug-file": ("debug_file", "value"),
    "--bare": ("bare", "flag"),
    "--agents": ("agents", "value"),
}


class ParsedArgs:
    """What argv said, before interpretation. A plain slotted class: see Options."""

    __slots__ = ("positionals", "unknown", "values")

    def __init__(self) -> None:
        self.values: dict[str, object] = {}
        self.positionals: list[str] = []
        self.unknown: list[str] = []

    def get_str(self, key: str) -> str | None:
        value = self.values.get(key)
        return value if isinstance(value, str) else None

    def get_list(self, key: str) -> list[str] | None:
        value = self.values.get(key)
        return list(value) if isinstance(value, list) else None

    def flag(self, key: str) -> bool:
        return self.values.get(key) is True


def _split_list(raw: str) -> list[str]:
    # Commas separate entries, but not inside parentheses: `Bash(git add, commit)` stays one rule.
    items: list[str] = []
    depth, current = 0, list[str]()
    for ch in raw:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        if depth == 0 and (ch == "," or ch.isspace()):
            items.append("".join(current))
            current = []
        else:
            current.append(ch)
    items.append("".join(current))
    return [item for item in items if item]


def parse_argv(argv: list[str]) -> ParsedArgs:
    parsed = ParsedArgs()
    i = 0
    while i < len(argv):
        token = argv[i]
        i += 1
        if token == "--":
            parsed.positionals.extend(argv[i:])
            break
        if not token.startswith("-") or token == "-":
            parsed.positionals.append(token)
            continue
        name, eq, inline = token.partition("=")
        spec = FLAGS.get(name)
        if spec is None:
            parsed.unknown.append(name)
            if not eq and i < len(argv) and not argv[i].startswith("-"):
                i += 1  # an unknown flag's value, as the SDKs render extra_args
            continue
        dest, arity = spec
        value: str | None = inline if eq else None
        if arity == "flag":
            # `--debug=api` style: a flag may carry an inline value but never takes the next
            # token, so `-p --debug "prompt"` keeps its prompt.
            parsed.values[dest] = inline if eq else True
            continue
        if value is None and arity == "optional":
            nxt = argv[i] if i < len(argv) else None
            if nxt is not None and not nxt.startswith("-"):
                value, i = nxt, i + 1
            parsed.values[dest] = value if value is not None else ""
            continue
        if value is None:
            if i >= len(argv):
                raise UsageError(f"option '{name}' argument missing")
            value, i = argv[i], i + 1
        if arity in ("list", "repeat"):
            existing = parsed.values.setdefault(dest, [])
            assert isinstance(existing, list)
            existing.extend(_split_list(value) if arity == "list" else [value])
        else:
            parsed.values[dest] = value
    return parsed
