"""One question, one answer: `query()` in its simplest form.

Shows: `query()` runs the agent in this process (no CLI, no subprocess) and yields
messages as they come; the assistant's text arrives in `AssistantMessage`s, and the run
ends with one `ResultMessage` carrying the cost, the number of turns and the timing.

Run it:

    export ANTHROPIC_API_KEY=sk-ant-...
    .venv/bin/python examples/one_shot.py                      # the default question
    .venv/bin/python examples/one_shot.py "Why is the sky blue?"
    .venv/bin/python examples/offline.py one_shot  # no key: a scripted model answers

Any endpoint speaking the Messages API works: set ANTHROPIC_BASE_URL (a gateway, a
proxy, or `python -m wisp.testing.server` for an offline scripted model).
"""

from __future__ import annotations

import asyncio
import sys

from wisp.sdk import AssistantMessage, ClaudeAgentOptions, ResultMessage, TextBlock, query

DEFAULT_QUESTION = "In one sentence: what is the capital of France, and why is it famous?"


async def ask(question: str) -> int:
    # No tools: this is a plain question, answered in a single model turn.
    options = ClaudeAgentOptions(tools=[])
    exit_code = 1
    async for message in query(prompt=question, options=options):
        if isinstance(message, AssistantMessage):
            # An assistant message is a list of blocks; only text interests us here.
            for block in message.content:
                if isinstance(block, TextBlock):
                    print(block.text)
        elif isinstance(message, ResultMessage):
            # Always the last message: how the run ended, and what it cost.
            cost = message.total_cost_usd or 0.0
            print()
            print(f"result: {message.subtype}")
            print(f"turns: {message.num_turns}")
            print(f"cost: ${cost:.6f}")
            print(f"duration: {message.duration_ms} ms (API {message.duration_api_ms} ms)")
            exit_code = 1 if message.is_error else 0
    return exit_code


def main() -> int:
    question = " ".join(sys.argv[1:]) or DEFAULT_QUESTION
    return asyncio.run(ask(question))


if __name__ == "__main__":
    raise SystemExit(main())
