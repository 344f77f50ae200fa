"""Writes a transcript in Claude Code's on-disk layout, with our own content.

It reproduces the structure seen in Claude Code 2.1.332's files (docs/protocol.md, "Transcripts
where the SDKs look"):
bookkeeping lines without uuids (queue-operation, atis-latch, api-request*, tools-used,
last-prompt, cost-state, mode), attachment lines threaded into the parentUuid chain
between a prompt and its answer, one line per assistant content block, and tool results
carrying `toolUseResult` and `sourceToolAssistantUUID`. The reference's own files carry
its prompts, so they stay outside the repository; this lets CI test the same shapes.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

JSON = dict[str, Any]


class ClaudeCodeTranscript:
    def __init__(self, session_id: str, cwd: str) -> None:
        self.sid, self.cwd = session_id, cwd
        self.lines: list[JSON] = []
        self.parent: str | None = None
        self.stamp = 0

    def _base(self, kind: str) -> JSON:
        self.stamp += 1
        return {"parentUuid": self.parent, "isSidechain": False, "type": kind,
                "uuid": str(uuid.uuid4()), "timestamp": f"2026-11-29T19:10:{self.stamp:02d}.000Z",
                "userType": "external", "entrypoint": "sdk-cli", "cwd": self.cwd,
                "sessionId": self.sid, "version": "2.1.332", "gitBranch": ""}

    def _chain(self, line: JSON) -> JSON:
        self.lines.append(line)
        self.parent = line["uuid"]
        return line

    def attachment(self, kind: str) -> None:
        self._chain({**self._base("attachment"), "attachment": {"type": kind},
                     "rendered": f"(our placeholder {kind} text)", "renderedRole": "system"})

    def bookkeeping(self, kind: str, **fields: Any) -> None:
        self.lines.append({"type": kind, "sessionId": self.sid, **fields})

    def prompt(self, text: str) -> None:
        self.bookkeeping("queue-operation", operation="enqueue", content=text,
                         timestamp="2026-11-29T19:10:00.000Z")
        self.bookkeeping("queue-operation", operation="dequeue",
                         timestamp="2026-11-29T19:10:00.000Z")
        self._chain({**self._base("user"), "promptId": str(uuid.uuid4()),
                     "message": {"role": "user", "content": text}, "permissionMode": "default",
                     "promptSource": "sdk"})
        for kind in ("environment", "date"):
            self.attachment(kind)
        self.bookkeeping("api-request-shape", shapeHash="h1", shape={"placeholder": True})
        self.bookkeeping("api-request", id="r1", params={}, thread=[])

    def answer(self, *blocks: JSON, stop_reason: str = "end_turn") -> str:
        message_id = f"msg_{uuid.uuid4().hex[:12]}"
        for index, block in enumerate(blocks):
            message = {"id": message_id, "type": "message", "role": "assistant",
                       "model": "claude-opus-5-5", "content": [block],
                       "stop_reason": stop_reason, "stop_sequence": None,
                       "usage": {"input_tokens": 10, "output_tokens": 5}}
            self._chain({**self._base("assistant"), "message": message, "apiBlockIndex": index,
                         "requestId": "req_1"})
        self.bookkeeping("last-prompt", lastPrompt="…", leafUuid=self.parent)
        return str(self.parent)

    def tool_result(self, tool_use_id: str, content: str, source: str) -> None:
        self._chain({**self._base("user"), "message": {"role": "user", "content": [
            {"tool_use_id": tool_use_id, "type": "tool_result", "content": content,
             "is_error": False}]},
            "toolUseResult": {"stdout": content, "stderr": "", "interrupted": False},
            "sourceToolAssistantUUID": source})

    def finish(self, path: Path) -> None:
        self.bookkeeping("cost-state", totalCostUSD=0.01, modelUsage={})
        self.bookkeeping("mode", mode="default")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(line) + "\n" for line in self.lines))


def tool_session(session_id: str, cwd: str, path: Path) -> None:
    """prompt → Bash tool_use → result → text; then a second prompt → text."""
    t = ClaudeCodeTranscript(session_id, cwd)
    t.prompt("run echo")
    t.bookkeeping("atis-latch", atis=True)
    source = t.answer({"type": "tool_use", "id": "toolu_cc_1", "name": "Bash",
                       "input": {"command": "echo hi"}}, stop_reason="tool_use")
    t.bookkeeping("tools-used", tools=["Bash"])
    t.tool_result("toolu_cc_1", "hi", source)
    t.attachment("prompt_snapshot")
    t.answer({"type": "text", "text": "it printed hi"})
    t.prompt("second prompt")
    t.answer({"type": "text", "text": "second answer"})
    t.finish(path)
