"""Decide each tool call in Python: a `can_use_tool` permission callback.

Shows: whenever the agent wants a tool that needs permission, wisp awaits your callback
with the tool's name and input. This one
  - allows read-only tools (Read, Glob, Grep) anywhere,
  - allows writes inside one folder, and rewrites the input of `Write` on the way: the
    file gets a first line saying an agent wrote it (`PermissionResultAllow(updated_input=)`),
  - denies writes outside that folder, and any other tool, with a reason the model sees
    (`PermissionResultDeny(message=)`).
Read-only tools inside the working folder are allowed without asking, so the callback
hears mostly about writes, and about reads elsewhere.

Run it:

    export ANTHROPIC_API_KEY=sk-ant-...
    .venv/bin/python examples/permission_callback.py            # a fresh temporary folder
    .venv/bin/python examples/permission_callback.py ./sandbox  # or a folder of your own
    .venv/bin/python examples/offline.py permission_callback  # no key: a scripted model answers

The agent works in that folder; it is asked to save a copy of its summary next to the
folder too, which the callback refuses. Set ANTHROPIC_BASE_URL to use another endpoint.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

from wisp.sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    TextBlock,
    ToolPermissionContext,
)

READ_ONLY = {"Read", "Glob", "Grep", "LS", "NotebookRead"}
# Tools that write files, and the input field naming the file.
WRITERS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path",
           "NotebookEdit": "notebook_path"}
HEADER = "(written by an agent, approved by permission_callback.py)\n"

NOTES = """\
Meeting notes, Tuesday
- The release moves to Friday.
- Ana owns the changelog; Bo checks the installers.
"""


def inside(path: Path, folder: Path) -> bool:
    """Whether `path` is in `folder` once `..` and symlinks are resolved."""
    return path.resolve().is_relative_to(folder.resolve())


def make_policy(folder: Path) -> Any:
    async def can_use_tool(tool_name: str, tool_input: dict[str, Any],
                           context: ToolPermissionContext
                           ) -> PermissionResultAllow | PermissionResultDeny:
        if tool_name in READ_ONLY:
            print(f"[permission] allow {tool_name}: read-only")
            return PermissionResultAllow()

        if tool_name in WRITERS:
            path = Path(str(tool_input.get(WRITERS[tool_name], "")))
            if not path.is_absolute():
                path = folder / path
            if not inside(path, folder):
                print(f"[permission] deny {tool_name} {path}: outside {folder}")
                return PermissionResultDeny(
                    message=f"Writing outside {folder} is not allowed. Write inside it only.")
            if tool_name == "Write":
                # Allow, but change what is written: the file says who wrote it.
                stamped = {**tool_input, "content": HEADER + str(tool_input.get("content", ""))}
                print(f"[permission] allow Write {path.name}, with a header added")
                return PermissionResultAllow(updated_input=stamped)
            print(f"[permission] allow {tool_name} {path.name}")
            return PermissionResultAllow()

        print(f"[permission] deny {tool_name}: not allowed in this example")
        return PermissionResultDeny(message=f"{tool_name} is not allowed here.")

    return can_use_tool


async def run(folder: Path) -> int:
    (folder / "notes.txt").write_text(NOTES)
    outside = folder.parent / "outside-summary.txt"
    prompt = (
        f"Read notes.txt in {folder}. Write a one-line summary of it to "
        f"{folder / 'summary.txt'}. Then save the same line to {outside} as well."
    )
    options = ClaudeAgentOptions(
        cwd=str(folder),
        can_use_tool=make_policy(folder),
        system_prompt="You are a careful assistant. Use the file tools to do what is asked.",
    )
    exit_code = 1
    # A permission callback needs a two-way session: ClaudeSDKClient keeps one open.
    async with ClaudeSDKClient(options=options) as client:
        await client.query(prompt)
        async for message in client.receive_response():
            if isinstance(message, AssistantMessage):
                for block in message.content:
                    if isinstance(block, TextBlock):
                        print(f"claude: {block.text}")
            elif isinstance(message, ResultMessage):
                for denial in message.permission_denials or []:
                    print(f"denied: {denial.get('tool_name')} {denial.get('tool_input')}")
                exit_code = 1 if message.is_error else 0

    print()
    print(f"files in {folder}: {sorted(p.name for p in folder.iterdir())}")
    print(f"{outside.name} exists outside the folder: {outside.exists()}")
    return exit_code


def main() -> int:
    if len(sys.argv) > 1:
        folder = Path(sys.argv[1]).absolute()
        folder.mkdir(parents=True, exist_ok=True)
    else:
        folder = Path(tempfile.mkdtemp(prefix="wisp-permissions-"))
    print(f"working folder: {folder}")
    return asyncio.run(run(folder))


if __name__ == "__main__":
    raise SystemExit(main())
