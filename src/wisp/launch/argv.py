"""A small argv parser that accepts both SDKs' styles.

The TypeScript SDK sends `--flag=value`, the Python SDK mostly `--flag value`, and both pass
arbitrary `extra_args`. argparse would either reject unknown flags or let them swallow the
positional prompt unpredictably, so the tables below state each flag's arity explicitly:
FLAGS for what wisp implements, `wisp.launch.unsupported` for what the reference CLI or an
SDK may send and wisp ignores (with a warning). Any other flag is an error naming the
closest known one, as the reference's is: a typo must not silently change what runs.
"""

from __future__ import annotations

from typing import Literal

from wisp.errors import UsageError
from wisp.launch.unsupported import UNSUPPORTED

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
    "--session-mirror": ("session_mirror", "flag"),
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
    "--thinking-display": ("thinking_display", "value"),
    "--agents": ("agents", "value"),
}


class UnknownOption(UsageError):
    """A flag no table knows. Reported as the reference reports it (commander's words),
    not after wisp's usual "Error: "."""

    def __init__(self, flag: str, suggestion: str | None) -> None:
        super().__init__(f"unknown option '{flag}'")
        self.flag = flag
        self.suggestion = suggestion

    def report(self) -> str:
        hint = f"\n(Did you mean {self.suggestion}?)" if self.suggestion else ""
        return f"error: unknown option '{self.flag}'{hint}"


def usage_report(exc: UsageError) -> str:
    """What a front end prints for a usage error (without the trailing newline)."""
    return exc.report() if isinstance(exc, UnknownOption) else f"Error: {exc}"


def unknown_option(flag: str) -> UnknownOption:
    """As commander does, only a long flag gets a suggestion, and only among long ones: `-x`
    is too short for any guess to mean much."""
    if not flag.startswith("--"):
        return UnknownOption(flag, None)
    from wisp.suggest import closest

    known = [name for name in (*FLAGS, *UNSUPPORTED) if name.startswith("--")]
    return UnknownOption(flag, closest(flag, known, strip="--"))


class ParsedArgs:
    """What argv said, before interpretation. A plain slotted class: see Options.
    `unsupported` holds the flags accepted only to be ignored (see wisp.launch.unsupported)."""

    __slots__ = ("positionals", "unsupported", "values")

    def __init__(self) -> None:
        self.values: dict[str, object] = {}
        self.positionals: list[str] = []
        self.unsupported: list[str] = []

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


def _expand_cluster(token: str) -> list[str]:
    """`-pc` is `-p -c`, and `-rID` is `-r ID`, as commander reads short flags: letters
    that take no value combine, and the first that takes one gets the rest as its value."""
    out: list[str] = []
    for index, letter in enumerate(token[1:], start=2):
        name = f"-{letter}"
        spec = FLAGS.get(name)
        arity = spec[1] if spec is not None else UNSUPPORTED.get(name)
        if arity is None:
            raise unknown_option(name if out else token)
        out.append(name)
        if arity != "flag":
            if token[index:]:
                out.append(token[index:])
            break
    return out


def _skip_unsupported(parsed: ParsedArgs, token: str, argv: list[str], i: int) -> int:
    """Records an accepted-but-ignored flag; returns the index after its value, if any."""
    name, eq, _ = token.partition("=")
    parsed.unsupported.append(name)
    arity = UNSUPPORTED[name]
    if arity == "value" and not eq and i >= len(argv):
        raise UsageError(f"option '{name}' argument missing")
    if eq or arity == "flag" or i >= len(argv):
        return i
    if arity == "value" or not argv[i].startswith("-"):
        return i + 1
    return i


def parse_argv(argv: list[str]) -> ParsedArgs:
    parsed = ParsedArgs()
    argv = list(argv)
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
        if not token.startswith("--") and len(token) > 2 and token not in FLAGS:
            argv[i - 1:i] = _expand_cluster(token)
            token = argv[i - 1]
        name = token.partition("=")[0]
        if name in FLAGS:
            i = _take(parsed, token, argv, i)
        elif name in UNSUPPORTED:
            i = _skip_unsupported(parsed, token, argv, i)
        else:
            raise unknown_option(name)
    return parsed


def _take(parsed: ParsedArgs, token: str, argv: list[str], i: int) -> int:
    """Stores one known flag's value; returns the index of the next token."""
    name, eq, raw = token.partition("=")
    dest, arity = FLAGS[name]
    inline = raw if eq else None
    value = inline
    if arity == "flag":
        # A flag may carry an inline value (`--verbose=true`) but never takes the next
        # token, so `-p --verbose "prompt"` keeps its prompt.
        parsed.values[dest] = inline if inline is not None else True
        return i
    if value is None and arity == "optional":
        nxt = argv[i] if i < len(argv) else None
        if nxt is not None and not nxt.startswith("-"):
            value, i = nxt, i + 1
        parsed.values[dest] = value if value is not None else ""
        return i
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
    return i
