"""How the bench server answers: a stateless choice from the request body.

Both CLIs talk to one server across many runs, so replies are chosen from markers in the
prompt rather than from a script queue: a queue would drift as soon as one CLI makes an
extra request (the reference adds `role: "system"` messages and may compact).
"""

from __future__ import annotations

import re
from typing import Any

from wisp.testing import reply
from wisp.testing.reply import Reply

JSON = dict[str, Any]

TOOLS50 = "[[bench:tools50:{path}]]"
BIGOUT = "[[bench:bigout]]"
# 10,000,000 bytes of "a" on stdout, built by the shell so the request stays small.
BIG_COMMAND = "head -c 10000000 /dev/zero | tr '\\0' a"
TOOL_CALLS = 50

_TOOLS50_RE = re.compile(r"\[\[bench:tools50:([^\]]+)\]\]")


def route(body: JSON) -> Reply:
    """Tool results end the turn with text; otherwise the prompt's marker picks the reply."""
    if _ends_with_tool_results(body):
        return reply.text("done")
    prompt = reply.last_user_text(body)
    if match := _TOOLS50_RE.search(prompt):
        return reply.tool_uses(_fifty_calls(match.group(1)))
    if BIGOUT in prompt:
        return reply.tool_use("Bash", {"command": BIG_COMMAND, "description": "10 MB of output"})
    return reply.text("ok")


def _fifty_calls(path: str) -> list[tuple[str, JSON]]:
    """Alternate Read and Bash, so both the read-only and the process path are exercised."""
    calls: list[tuple[str, JSON]] = []
    for i in range(TOOL_CALLS):
        if i % 2 == 0:
            calls.append(("Read", {"file_path": path}))
        else:
            calls.append(("Bash", {"command": f"echo bench-{i}", "description": f"echo {i}"}))
    return calls


def _ends_with_tool_results(body: JSON) -> bool:
    # The reference appends `role: "system"` messages after the user turn; skip them.
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    for message in reversed(messages):
        if message.get("role") == "system":
            continue
        content = message.get("content")
        return (
            message.get("role") == "user"
            and isinstance(content, list)
            and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
        )
    return False
