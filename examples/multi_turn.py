"""A conversation over several turns with `ClaudeSDKClient`.

Shows: one client keeps one session open; each `client.query()` adds a user turn and
`client.receive_response()` yields that turn's messages up to its `ResultMessage`. The
model sees the whole conversation each time, so later questions can refer to earlier
answers ("it", "that city").

Run it:

    export ANTHROPIC_API_KEY=sk-ant-...
    .venv/bin/python examples/multi_turn.py
    .venv/bin/python examples/offline.py multi_turn  # no key: a scripted model answers

Set ANTHROPIC_BASE_URL to use another Messages API endpoint.
"""

from __future__ import annotations

import asyncio

from wisp.sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    ResultMessage,
    TextBlock,
)

# Each question leans on the answers before it: the session remembers them.
QUESTIONS = [
    "Name one European capital city. Answer with the city's name only.",
    "What country is it the capital of? One short sentence.",
    "Give one famous landmark there. One short sentence.",
]


async def converse() -> int:
    options = ClaudeAgentOptions(
        tools=[],  # a chat: no tools needed
        system_prompt="You are concise. Answer in at most one sentence.",
    )
    session_cost = 0.0
    session_id = None
    # `async with` connects on entry and disconnects (ending the session) on exit.
    async with ClaudeSDKClient(options=options) as client:
        for number, question in enumerate(QUESTIONS, start=1):
            print(f"[turn {number}] you: {question}")
            await client.query(question)
            async for message in client.receive_response():
                if isinstance(message, AssistantMessage):
                    text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
                    if text:
                        print(f"[turn {number}] claude: {text}")
                elif isinstance(message, ResultMessage):
                    if message.is_error:
                        print(f"[turn {number}] failed: {message.subtype}")
                        return 1
                    # The cost is the session's so far, not this turn's alone.
                    session_cost = message.total_cost_usd or 0.0
                    session_id = message.session_id
    print()
    print(f"turns: {len(QUESTIONS)}")
    print(f"session: {session_id}")
    print(f"cost: ${session_cost:.6f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(converse()))
