"""Many agents at once in one process, each in its own folder with its own environment.

Shows: in-process sessions are independent. Each `query()` here gets its own working
folder (`cwd`) and its own environment variables (`env`), and all of them run together
on one event loop with `asyncio.gather`. wisp never calls `os.chdir` or writes
`os.environ` for a session, so the sessions cannot see each other's folder or variables.
Every agent runs the same shell command; each must report its own folder and name.

Run it:

    export ANTHROPIC_API_KEY=sk-ant-...
    .venv/bin/python examples/many_sessions.py           # 5 sessions, temporary folders
    .venv/bin/python examples/many_sessions.py 20 ./runs  # 20 sessions under ./runs
    .venv/bin/python examples/offline.py many_sessions  # no key: a scripted model answers

Exits 0 when every session saw only its own folder and variables.
Set ANTHROPIC_BASE_URL to use another Messages API endpoint.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from wisp.sdk import (
    ClaudeAgentOptions,
    ResultMessage,
    ToolResultBlock,
    UserMessage,
    query,
)

# The same command for everyone: where am I, and who am I?
COMMAND = 'pwd; echo "name=$SESSION_NAME"; cat whoami.txt'


@dataclass
class Outcome:
    name: str
    folder: Path
    tool_output: list[str] = field(default_factory=list)  # what the command printed
    result: str = "no result"

    def lines(self) -> list[str]:
        return [line.strip() for text in self.tool_output for line in text.splitlines()]

    def names_seen(self) -> set[str]:
        """Every session name the command printed (as `name=...` or `I am ...`)."""
        return {line.removeprefix(prefix) for line in self.lines()
                for prefix in ("name=", "I am ") if line.startswith(prefix)}

    def isolated(self) -> bool:
        """It ran in its own folder and saw its own name, and no other."""
        in_own_folder = {str(self.folder), str(self.folder.resolve())} & set(self.lines())
        return (self.result == "success" and bool(in_own_folder)
                and self.names_seen() == {self.name})


async def one_session(name: str, folder: Path) -> Outcome:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "whoami.txt").write_text(f"I am {name}\n")
    options = ClaudeAgentOptions(
        cwd=str(folder),  # this session's working folder
        env={"SESSION_NAME": name},  # added to this session's environment only
        allowed_tools=["Bash"],
        system_prompt="Run the command you are given with the Bash tool, then repeat its "
                      "output verbatim.",
    )
    outcome = Outcome(name, folder)
    prompt = f"Run this command with the Bash tool: {COMMAND}"
    async for message in query(prompt=prompt, options=options):
        if isinstance(message, UserMessage) and isinstance(message.content, list):
            for block in message.content:
                if isinstance(block, ToolResultBlock):
                    outcome.tool_output.append(_text_of(block))
        elif isinstance(message, ResultMessage):
            outcome.result = message.subtype
    return outcome


def _text_of(block: ToolResultBlock) -> str:
    if isinstance(block.content, list):
        return "\n".join(str(item.get("text", "")) for item in block.content)
    return str(block.content or "")


async def run(count: int, root: Path) -> int:
    names = [f"agent-{i:02d}" for i in range(1, count + 1)]
    cwd_before = os.getcwd()
    started = time.perf_counter()
    # All sessions at once, on this one event loop.
    outcomes = await asyncio.gather(*(one_session(n, root / n) for n in names))
    elapsed = time.perf_counter() - started

    for outcome in outcomes:
        mark = "ok " if outcome.isolated() else "BAD" if outcome.tool_output else "-- "
        shown = " ".join(outcome.lines()) or "(no tool output)"
        print(f"{mark} {outcome.name} [{outcome.result}] cwd={outcome.folder}: {shown}")
    # Nor did the sessions change this process: its folder and environment are as before.
    untouched = os.getcwd() == cwd_before and "SESSION_NAME" not in os.environ
    print(f"this process: cwd unchanged and SESSION_NAME unset: {untouched}")
    isolated = untouched and all(outcome.isolated() for outcome in outcomes)
    print()
    if not any(outcome.tool_output for outcome in outcomes):
        # Not an isolation failure: there was nothing to compare. A model that only
        # talks (such as the echo server of `python -m wisp.testing.server`) ends here.
        print(f"{count} sessions in {elapsed:.2f} s, but the model never ran the command, "
              "so isolation was not checked. Without a key, "
              "`python examples/offline.py many_sessions` scripts a model that does.")
        return 1
    print(f"{count} sessions in {elapsed:.2f} s; "
          + ("each saw only its own folder and environment"
             if isolated else "ISOLATION FAILED (see BAD lines)"))
    return 0 if isolated else 1


def main() -> int:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    if len(sys.argv) > 2:
        root = Path(sys.argv[2]).absolute()
        root.mkdir(parents=True, exist_ok=True)
    else:
        root = Path(tempfile.mkdtemp(prefix="wisp-sessions-"))
    print(f"{count} sessions under {root}")
    return asyncio.run(run(count, root))


if __name__ == "__main__":
    raise SystemExit(main())
