"""`wisp --probe --model <spec>`: what an OpenAI-compatible server can do, checked with
four tiny requests (quirk 42), so a setup problem shows up as a sentence rather than as an
agent that never calls its tools.

1. a plain streamed answer;
2. one tool call: native `tool_calls`, or the call written as text (the server needs its
   tool support turned on), or no call at all;
3. two tool calls in one answer;
4. a tool result sent back, answered in text.

Each line says ok or what went wrong and what to set; fields the server rejected (and
that wisp will therefore leave out) are listed at the end.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wisp.errors import ModelAPIError
from wisp.jsontypes import JSON
from wisp.models.accumulate import fold
from wisp.models.base import ModelRequest
from wisp.models.openai.provider import OpenAICompatModel
from wisp.models.openai.text_calls import LOOKS_LIKE_A_CALL

TOOLS = [{"name": "get_time", "description": "The current time.",
          "input_schema": {"type": "object", "properties": {}}},
         {"name": "get_date", "description": "Today's date.",
          "input_schema": {"type": "object", "properties": {}}}]
TOOL_FLAGS = ("llama.cpp: --jinja; vLLM: --enable-auto-tool-choice --tool-call-parser <name>; "
              "SGLang: --tool-call-parser <name>; Ollama: a model whose template has tools")


async def probe(model: OpenAICompatModel, name: str) -> tuple[bool, list[str]]:
    lines: list[str] = [f"probing {model.entry.name}:{name} at {model.url()} "
                        f"(preset {model.compat.name})"]
    ok = True
    for check in (_plain, _one_call, _two_calls, _round_trip):
        passed, line = await check(model, name)
        ok = ok and passed
        lines.append(("ok    " if passed else "FAIL  ") + line)
    if model.dropped:
        lines.append(f"the server rejected {', '.join(sorted(model.dropped))}: wisp leaves "
                     "them out (set them off in the provider's compat to skip the retry)")
    return ok, lines


async def _ask(model: OpenAICompatModel, name: str, messages: list[JSON],
               tools: list[JSON] | None = None) -> JSON:
    request = ModelRequest(model=name, messages=messages, max_tokens=256, tools=tools or [])
    async with model.stream(request) as stream:
        return fold([event async for event in stream])


def _blocks(message: JSON, kind: str) -> list[JSON]:
    return [b for b in message.get("content", []) if b.get("type") == kind]


async def _plain(model: OpenAICompatModel, name: str) -> tuple[bool, str]:
    try:
        message = await _ask(model, name, [{"role": "user", "content": "Reply with: ok"}])
    except ModelAPIError as exc:
        return False, f"plain answer: {exc.message}"
    text = "".join(b.get("text", "") for b in _blocks(message, "text"))
    return bool(text.strip()), f"plain answer: {text.strip()[:60]!r}"


async def _one_call(model: OpenAICompatModel, name: str) -> tuple[bool, str]:
    try:
        message = await _ask(model, name, [{"role": "user", "content":
                                            "Call the get_time tool now."}], TOOLS)
    except ModelAPIError as exc:
        return False, f"tool call: {exc.message}"
    if _blocks(message, "tool_use"):
        return True, "tool call: native tool_calls"
    text = "".join(b.get("text", "") for b in _blocks(message, "text"))
    if LOOKS_LIKE_A_CALL.search(text):
        return False, (f"tool call: the call came back as text; turn on the server's tool "
                       f"support ({TOOL_FLAGS}), or set compat.text_tool_call_fallback")
    return False, f"tool call: none came (the model answered {text.strip()[:60]!r})"


async def _two_calls(model: OpenAICompatModel, name: str) -> tuple[bool, str]:
    try:
        message = await _ask(model, name, [{"role": "user", "content":
                                            "Call get_time and get_date, both at once."}],
                             TOOLS)
    except ModelAPIError as exc:
        return False, f"two tool calls: {exc.message}"
    calls = len(_blocks(message, "tool_use"))
    return calls >= 1, f"two tool calls: {calls} in one answer"


async def _round_trip(model: OpenAICompatModel, name: str) -> tuple[bool, str]:
    messages: list[JSON] = [
        {"role": "user", "content": "What time is it? Use the tool."},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "call_probe1",
                                           "name": "get_time", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_probe1",
                                      "content": "12:00"}]}]
    try:
        message = await _ask(model, name, messages, TOOLS)
    except ModelAPIError as exc:
        hint = (" (a chat template error: try compat.tool_then_user or system_role)"
                if exc.status == 500 else "")
        return False, f"tool result round trip: {exc.message}{hint}"
    answered = bool(_blocks(message, "text") or _blocks(message, "tool_use"))
    return answered, "tool result round trip: answered"


def run_probe(spec: str, env: Mapping[str, str], providers: Any) -> int:
    """The CLI's entry: prints the report, returns the exit status."""
    import asyncio

    from wisp.models.route import provider_entries
    from wisp.models.spec import split_spec

    entries = provider_entries(providers, env)
    provider, name = split_spec(spec, entries)
    if provider == "anthropic":
        print(f"--probe checks OpenAI-compatible providers; {spec!r} is an Anthropic model")
        return 1

    async def main() -> tuple[bool, list[str]]:
        model = OpenAICompatModel(entries[provider], env)
        try:
            return await probe(model, name)
        finally:
            await model.aclose()

    ok, lines = asyncio.run(main())
    print("\n".join(lines))
    return 0 if ok else 1
