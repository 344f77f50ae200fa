"""Guard and watch tool calls with hooks: PreToolUse blocks, PostToolUse logs.

Shows: hooks are async Python functions, registered per event with a `HookMatcher`
(`matcher` is the tool name, or a pattern such as "Write|Edit"; None matches all).
  - A PreToolUse hook on Bash looks at each command before it runs and blocks the
    dangerous ones (`rm -rf`, `sudo`, piping a download into a shell, ...) by answering
    `permissionDecision: "deny"`. A hook's deny wins even over `allowed_tools`.
  - A PostToolUse hook sees every finished call with its result, and logs it.

Run it:

    export ANTHROPIC_API_KEY=sk-ant-...
    .venv/bin/python examples/hook.py            # works in a fresh temporary folder
    .venv/bin/python examples/hook.py ./scratch  # or in a folder of your own
    .venv/bin/python examples/offline.py hook  # no key: a scripted model answers

The agent is asked to create a file, then to wipe the folder: the hook stops the wipe.
Set ANTHROPIC_BASE_URL to use another Messages API endpoint.
"""

from __future__ import annotations

import asyncio
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from wisp.sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookContext,
    HookMatcher,
    ResultMessage,
    TextBlock,
)

# What this guard refuses, with the reason the model is told.
DANGEROUS = [
    (re.compile(r"\brm\s+(-\w*\s+)*-\w*[rRf]"), "recursive or forced rm"),
    (re.compile(r"\bsudo\b"), "sudo"),
    (re.compile(r"\b(mkfs|fdisk|shutdown|reboot)\b"), "system administration"),
    (re.compile(r"\bdd\b.*\bof=/dev/"), "writing to a device"),
    (re.compile(r"(curl|wget)\b[^|]*\|\s*(ba|z)?sh\b"), "running a downloaded script"),
    (re.compile(r":\(\)\s*\{"), "fork bomb"),
]


def why_dangerous(command: str) -> str | None:
    for pattern, reason in DANGEROUS:
        if pattern.search(command):
            return reason
    return None


async def block_dangerous_bash(input_data: Any, tool_use_id: str | None,
                               context: HookContext) -> dict[str, Any]:
    """PreToolUse: deny a Bash command that matches DANGEROUS; say nothing otherwise."""
    command = str(input_data["tool_input"].get("command", ""))
    reason = why_dangerous(command)
    if reason is None:
        print(f"[PreToolUse] ok: {command}")
        return {}  # no opinion: the usual permission rules decide
    print(f"[PreToolUse] BLOCKED ({reason}): {command}")
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": f"Blocked by policy: {reason}. Do not retry it.",
        }
    }


async def log_result(input_data: Any, tool_use_id: str | None,
                     context: HookContext) -> dict[str, Any]:
    """PostToolUse: one line per finished tool call, with the start of its output."""
    response = input_data.get("tool_response")
    if isinstance(response, dict):  # Bash answers {"stdout": ..., "stderr": ..., ...}
        output = str(response.get("stdout") or response.get("stderr") or "")
    else:
        output = str(response)
    first_line = output.strip().splitlines()[0] if output.strip() else "(no output)"
    print(f"[PostToolUse] {input_data['tool_name']} "
          f"{input_data['tool_input'].get('command', '')!r} -> {first_line[:80]}")
    return {}


async def run(folder: Path) -> int:
    (folder / "keep-me.txt").write_text("precious data\n")
    options = ClaudeAgentOptions(
        cwd=str(folder),
        allowed_tools=["Bash"],  # Bash runs without asking; the hook is the guard
        hooks={
            "PreToolUse": [HookMatcher(matcher="Bash", hooks=[block_dangerous_bash])],
            "PostToolUse": [HookMatcher(matcher=None, hooks=[log_result])],
        },
        system_prompt="You run shell commands exactly as asked, one Bash call per step.",
    )
    prompt = (
        "With the Bash tool, one command per step: "
        "1. run `echo hello > hello.txt`; "
        "2. run `rm -rf ./*` to clean the folder; "
        "3. run `ls`. Then report what happened."
    )
    exit_code = 1
    async with ClaudeSDKClient(options=options) as client:
        await client.query(prompt)
        async for message in client.receive_response():
            if isinstance(message, AssistantMessage):
                for block in message.content:
                    if isinstance(block, TextBlock):
                        print(f"claude: {block.text}")
            elif isinstance(message, ResultMessage):
                exit_code = 1 if message.is_error else 0

    print()
    print(f"files left in {folder}: {sorted(p.name for p in folder.iterdir())}")
    return exit_code


def main() -> int:
    if len(sys.argv) > 1:
        folder = Path(sys.argv[1]).absolute()
        folder.mkdir(parents=True, exist_ok=True)
    else:
        folder = Path(tempfile.mkdtemp(prefix="wisp-hooks-"))
    print(f"working folder: {folder}")
    return asyncio.run(run(folder))


if __name__ == "__main__":
    raise SystemExit(main())
