"""The outcome grader: one Messages API request beside the session's conversation, to
the session's model, that scores the agent's work against an outcome's rubric.

The grader sees the outcome's description and rubric and a plain-text transcript of the
conversation (never the agent's system prompt or tools), and must answer by calling its
one tool, `submit_verdict`, with `result` (`satisfied`, `needs_revision` or `failed`) and
an `explanation`. An answer it cannot read is a `failed` verdict saying so. Transient
failures are retried with the session's retry policy.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from wisp.engine.retry import RetryPolicy
from wisp.errors import RetryableAPIError
from wisp.jsontypes import JSON
from wisp.models.accumulate import accumulate
from wisp.models.base import Model, ModelRequest
from wisp.serve.shapes.outcomes import VERDICTS

TOOL = "submit_verdict"
MAX_TOKENS = 4096
PIECE_CHARS = 4000  # one tool input or result in the transcript, at most
TRANSCRIPT_CHARS = 200_000  # the transcript's tail, at most
SYSTEM = (
    "You grade the work of an AI agent. You are given what the agent was asked to "
    "produce, the rubric its work is judged by, and a transcript of its session. Judge "
    "only against the rubric, from what the transcript shows was actually done. Answer "
    f"by calling {TOOL}: 'satisfied' when every criterion is met; 'needs_revision' when "
    "some are not, and say exactly which and what is missing, so that the agent can "
    "fix it; 'failed' only when the rubric cannot apply to this work at all.")
VERDICT_TOOL: JSON = {
    "name": TOOL,
    "description": "Submit the verdict on the agent's work.",
    "input_schema": {
        "type": "object",
        "properties": {
            "result": {"type": "string", "enum": list(VERDICTS)},
            "explanation": {"type": "string",
                            "description": "Why; for needs_revision, what to fix."},
        },
        "required": ["result", "explanation"],
    },
}


@dataclass(frozen=True)
class Verdict:
    result: str  # one of VERDICTS
    explanation: str
    usage: JSON = field(default_factory=dict[str, Any])


def request(model_id: str, description: str, rubric: str, history: list[JSON]
            ) -> ModelRequest:
    prompt = (f"<task>\n{description}\n</task>\n\n<rubric>\n{rubric}\n</rubric>\n\n"
              f"<transcript>\n{transcript(history)}\n</transcript>\n\n"
              f"Grade the work against the rubric with {TOOL}.")
    return ModelRequest(model=model_id, messages=[{"role": "user", "content": prompt}],
                        max_tokens=MAX_TOKENS, system=[{"type": "text", "text": SYSTEM}],
                        tools=[VERDICT_TOOL],
                        extra={"tool_choice": {"type": "tool", "name": TOOL}})


async def grade(model: Model, asked: ModelRequest) -> Verdict:
    """The grader's verdict on `asked` (`request`). Raises ModelAPIError when the
    request fails."""
    snapshot: JSON | None = None
    async with model.stream(asked) as stream:
        async for event in stream:
            snapshot = accumulate(snapshot, event)
    return verdict_of(snapshot or {})


async def grade_retrying(model: Model, policy: RetryPolicy, asked: ModelRequest) -> Verdict:
    """`grade`, its transient failures (overloaded, 5xx, rate limits) retried with the
    session's retry policy as the agent's own requests are."""
    retries = 0
    while True:
        try:
            return await grade(model, asked)
        except RetryableAPIError as error:
            if retries >= policy.max_retries:
                raise
            retries += 1
            await asyncio.sleep(policy.delay_s(retries, error))


def verdict_of(message: JSON) -> Verdict:
    usage = dict(message.get("usage") or {})
    answer = next((b.get("input") for b in message.get("content") or []
                   if b.get("type") == "tool_use" and b.get("name") == TOOL), None)
    if answer is None:  # a grader that answered in text: its JSON, if that is what it is
        text = "".join(b.get("text", "") for b in message.get("content") or []
                       if b.get("type") == "text")
        try:
            answer = json.loads(text)
        except ValueError:
            answer = None
    if not isinstance(answer, dict) or answer.get("result") not in VERDICTS:
        return Verdict("failed", "The grader's answer could not be read as a verdict.", usage)
    return Verdict(str(answer["result"]), str(answer.get("explanation") or ""), usage)


def transcript(history: list[JSON]) -> str:
    """The conversation as text: each message's role, its text, its tool calls and
    their results (each cut to PIECE_CHARS); the last TRANSCRIPT_CHARS of it."""
    lines: list[str] = []
    for message in history:
        role = str(message.get("role"))
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else (
            content or [])
        for block in blocks:
            line = _line(block)
            if line:
                lines.append(f"[{role}] {line}")
    text = "\n".join(lines)
    return text[-TRANSCRIPT_CHARS:]


def _line(block: Any) -> str:
    if not isinstance(block, dict):
        return ""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text") or "")
    if kind == "tool_use":
        tool_input = json.dumps(block.get("input") or {}, ensure_ascii=False)
        return f"called {block.get('name')}: {_cut(tool_input)}"
    if kind == "tool_result":
        content = block.get("content")
        if isinstance(content, list):
            content = "\n".join(str(b.get("text", "")) for b in content
                                if isinstance(b, dict) and b.get("type") == "text")
        error = " (error)" if block.get("is_error") else ""
        return f"tool result{error}: {_cut(str(content or ''))}"
    return ""


def _cut(text: str) -> str:
    return text if len(text) <= PIECE_CHARS else text[:PIECE_CHARS] + " […]"
