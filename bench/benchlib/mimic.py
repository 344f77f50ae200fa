"""A stand-in model for end-to-end tests written against the real API: it reads the
request (the prompt, the tools offered, the system prompt) and does what a capable model
would do with the plain instructions those tests give ("Run: echo hi", "Call the
mcp__test__echo tool", "Use the Agent tool with subagent_type 'greeter'", "Reply with
exactly: one", a structured-output schema). Deterministic, offline, and the same for every
CLI it serves, so what differs between CLIs is the CLIs. It is no model: a test whose
prompt needs judgement gets a plain answer and may fail on both sides alike."""

from __future__ import annotations

import re
from typing import Any

from wisp.testing import reply
from wisp.testing.reply import Reply

JSON = dict[str, Any]
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)
_BASH = re.compile(r"(?:run this bash command|run the command|run)\s*:\s*(.+?)\s*$", re.I | re.S)
_WRITE = re.compile(r"Write tool to create the file (\S+) containing exactly the text (\w+)")
_QUOTED = re.compile(r"'([^']*)'|\"([^\"]*)\"")


def answer(body: JSON) -> Reply:
    """The reply to one `POST /v1/messages`."""
    if "nonexistent" in str(body.get("model", "")):
        return reply.error(404, f"model: {body.get('model')}", error_type="not_found_error")
    prompt, done = _turn(body)
    tools = {str(t.get("name")): t for t in body.get("tools") or [] if isinstance(t, dict)}
    hidden = _deferred(body, tools)
    wanted = [n for n in hidden if n in prompt or f"{n.rsplit('__', 1)[-1]} tool" in prompt]
    if wanted and "ToolSearch" in tools and "ToolSearch" not in done:
        return reply.tool_use("ToolSearch", {"query": "select:" + ",".join(wanted)})
    done = [n for n in done if n != "ToolSearch"]
    planned = _planned(prompt, tools)
    if len(done) < len(planned):
        name, args = planned[len(done)]
        return reply.tool_use(name, args)
    if "StructuredOutput" in tools and "StructuredOutput" not in done:
        schema = tools["StructuredOutput"].get("input_schema") or {}
        return reply.tool_use("StructuredOutput", _example(schema))
    return _final(prompt, body)


def _turn(body: JSON) -> tuple[str, list[str]]:
    """The prompt of the turn (its last user message with text of its own, reminders cut
    out) and the names of the tools called since."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    start, prompt = 0, ""
    for index, message in enumerate(messages):
        # A tool's answer may carry text too ("Tool loaded."): it is no new prompt.
        answers = any(b.get("type") == "tool_result" for b in _blocks(message))
        text = _own_text(message) if message.get("role") == "user" and not answers else ""
        if text:
            start, prompt = index, text
    called = [str(b.get("name")) for m in messages[start:] if m.get("role") == "assistant"
              for b in _blocks(m) if b.get("type") == "tool_use"]
    return prompt, called


def _deferred(body: JSON, tools: dict[str, JSON]) -> list[str]:
    """MCP tools the CLI named but did not send (loaded through ToolSearch)."""
    said = " ".join(str(b.get("text", "")) for m in body.get("messages") or []
                    if isinstance(m, dict) for b in _blocks(m))  # reminders included
    named = re.findall(r"\bmcp__[A-Za-z0-9_-]+__[A-Za-z0-9_-]+", f"{_system(body)} {said}")
    return [n for n in dict.fromkeys(named) if n not in tools]


def _blocks(message: JSON) -> list[JSON]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def _own_text(message: JSON) -> str:
    texts = [_REMINDER.sub("", str(b.get("text", ""))).strip() for b in _blocks(message)
             if b.get("type") == "text"]
    return "\n".join(t for t in texts if t)


def _planned(prompt: str, tools: dict[str, JSON]) -> list[tuple[str, JSON]]:
    """The calls the prompt asks for, in the order it names them."""
    found: list[tuple[int, str, JSON]] = []
    agent = next((n for n in ("Agent", "Task") if n in tools), None)
    if agent and "subagent_type" in prompt:
        kind = _quoted_after(prompt, "subagent_type") or "general-purpose"
        task = _quoted_after(prompt, "prompt") or "say hi"
        found.append((prompt.index("subagent_type"), agent, {
            "subagent_type": kind, "prompt": task, "description": f"ask {kind}",
            "run_in_background": False}))
    write = _WRITE.search(prompt)
    if write and "Write" in tools:
        found.append((write.start(), "Write", {"file_path": write.group(1),
                                               "content": write.group(2)}))
    bash = _BASH.search(prompt)
    if bash and "Bash" in tools:
        found.append((bash.start(), "Bash", {"command": bash.group(1).rstrip(".")}))
    for name, spec in tools.items():
        if not name.startswith("mcp__"):
            continue
        short = name.rsplit("__", 1)[-1]
        where = [i for i in (prompt.find(name), prompt.find(f"the {short} tool"),
                             prompt.find(f"{short} tool")) if i >= 0]
        if where:
            found.append((min(where), name, _mcp_args(prompt, min(where), spec)))
    return [(name, args) for _, name, args in sorted(found, key=lambda f: f[0])]


def _quoted_after(text: str, word: str) -> str | None:
    index = text.find(word)
    match = _QUOTED.search(text, index) if index >= 0 else None
    return (match.group(1) or match.group(2)) if match else None


def _mcp_args(prompt: str, at: int, spec: JSON) -> JSON:
    """String arguments from `name='value'` in the prompt, else the first quoted word after
    the tool's mention, else "hello"."""
    schema = spec.get("input_schema") or {}
    args: JSON = {}
    for prop, about in (schema.get("properties") or {}).items():
        named = re.search(rf"{re.escape(prop)}\s*=\s*['\"]([^'\"]*)['\"]", prompt)
        value = named.group(1) if named else _quoted_after(prompt[at:], "") or "hello"
        args[prop] = _typed(value, about if isinstance(about, dict) else {})
    return args


def _typed(value: str, about: JSON) -> Any:
    kind = about.get("type")
    if kind in ("integer", "number"):
        return 1
    if kind == "boolean":
        return True
    return value


def _example(schema: JSON) -> Any:
    """A value that fits a JSON schema: the first enum value, 1, true, "example", one item
    per array, every property of an object."""
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "object" or "properties" in schema:
        return {k: _example(v) for k, v in (schema.get("properties") or {}).items()
                if isinstance(v, dict)}
    if kind == "array":
        items = schema.get("items")
        return [_example(items)] if isinstance(items, dict) else []
    return {"integer": 1, "number": 1, "boolean": True, "null": None}.get(str(kind), "example")


def _final(prompt: str, body: JSON) -> Reply:
    text = _final_text(prompt, _system(body))
    if "count from 1 to 100" in prompt.lower():
        return reply.slow(text, 0.1, chunks=60)
    thinking = body.get("thinking")
    if isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive"):
        return reply.thinking(f"Let me think this through: {prompt[:200]}", text)
    return reply.text(text)


def _system(body: JSON) -> str:
    system = body.get("system")
    if isinstance(system, list):
        return " ".join(str(b.get("text", "")) for b in system if isinstance(b, dict))
    return str(system or "")


def _final_text(prompt: str, system: str) -> str:  # noqa: PLR0911 (one rule a line)
    exact = re.search(r"reply with(?: exactly)?\s*:\s*(.+?)\s*$", prompt, re.I | re.S)
    if exact:
        return exact.group(1).strip().rstrip(".")
    word = re.search(r"single word (\w+)", prompt)
    if word:
        return word.group(1)
    told = re.search(r"[Aa]lways respond with '([^']+)'", system)
    if told:
        return told.group(1)
    arithmetic = re.search(r"(\d+)\s*\+\s*(\d+)", prompt)
    if arithmetic:
        return str(int(arithmetic.group(1)) + int(arithmetic.group(2)))
    if "count from 1 to 100" in prompt.lower():
        return ", ".join(str(n) for n in range(1, 101))
    if "3 words" in prompt:
        return "Hello there, friend"
    return "Hello! Nice to meet you." if "hi" in prompt.lower() else "Done."
