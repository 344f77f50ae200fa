"""Flags the reference CLI (Claude Code 2.1.332) or an official Agent SDK knows and wisp
does not implement: accepted with one warning rather than refused, so a command line or
an SDK written for the reference still runs. Only a flag nobody knows is an error.

Each one's arity is the reference's, so a flag that takes no value never swallows the
prompt that follows it. A variadic reference option (`--file <specs...>`) takes one
value per occurrence here, as wisp's own list flags do.
"""

from __future__ import annotations

from typing import Literal

UnsupportedArity = Literal["flag", "value", "optional"]

# The reference's --help, beyond what wisp implements.
FROM_HELP: dict[str, UnsupportedArity] = {
    "--agent": "value",
    "--autocompact": "value",
    "--ax-screen-reader": "flag",
    "--bg": "flag",
    "--background": "flag",
    "--bare": "flag",
    "--brief": "flag",
    "--chrome": "flag",
    "--no-chrome": "flag",
    "--cloud": "optional",
    # The reference's `--debug [filter]` takes an optional value; here it takes one only
    # inline (`--debug=api`), so `-p --debug "prompt"` keeps its prompt, as it always did.
    "-d": "flag",
    "--debug": "flag",
    "--debug-file": "value",
    "--desktop": "flag",
    "--disable-slash-commands": "flag",
    "--environment": "value",
    "--exclude-dynamic-system-prompt-sections": "flag",
    "--file": "value",
    "--from-pr": "optional",
    "--ide": "flag",
    "-n": "value",
    "--name": "value",
    "--permission-prompts": "value",
    "--plugin-url": "value",
    "--prompt-suggestions": "optional",
    "--remote-control": "optional",
    "--rc": "optional",  # --remote-control's alias, named in the reference's settings docs
    "--remote-control-session-name-prefix": "value",
    "--restricted": "flag",
    "--safe-mode": "flag",
    "--system-prompt-snapshot": "value",
    "--teleport": "optional",
    "--tmux": "flag",
    "-w": "optional",
    "--worktree": "optional",
}

# What the SDKs' command builders emit (claude_agent_sdk's subprocess transport, the TS
# SDK's process transport, and wisp.sdk, which mirrors them), beyond the help's options.
FROM_SDKS: dict[str, UnsupportedArity] = {
    "--task-budget": "value",
    "--channels": "value",
    "--project-config-root": "value",
    "--await-initialize": "flag",
    "--initialize-fields": "value",
    "--managed-settings-in-initialize": "flag",
    "--managed-settings": "value",
}

UNSUPPORTED: dict[str, UnsupportedArity] = {**FROM_HELP, **FROM_SDKS}


def warning(flags: list[str]) -> str:
    """One line naming every accepted-but-ignored flag of this invocation."""
    names = ", ".join(dict.fromkeys(flags))
    return f"wisp: warning: ignoring options wisp does not support: {names}"
