"""Transport-independent summaries of what an SDK run produced and what the model saw.

Everything here drops what legitimately changes from run to run or from one transport to
another: ids (tool_use, message, uuid, session), timings, costs, token counts, pids and
the backend's temporary paths (replaced by <cwd>, <home>, <root>).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.sdk_parity.conftest import Backend

JSON = dict[str, Any]

_IDS = (
    (re.compile(r"toolu_[0-9A-Za-z]+"), "<toolu>"),
    (re.compile(r"msg_[0-9A-Za-z]+"), "<msg>"),
    (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "<uuid>"),
    # The environment section of a system prompt: the machine and the day.
    (re.compile(r"(?m)^- Platform: .*$"), "- Platform: <platform>"),
    (re.compile(r"(?m)^- Date: \d{4}-\d{2}-\d{2}$"), "- Date: <date>"),
    # A subagent's hand-back: its id, its tokens (they follow the prompt's size, which
    # holds the folder's path) and how long it ran.
    (re.compile(r"agentId: [0-9a-z]+"), "agentId: <agent>"),
    (re.compile(r"subagent_tokens: \d+"), "subagent_tokens: <n>"),
    (re.compile(r"duration_ms: \d+"), "duration_ms: <ms>"),
)


def _paths(b: Backend) -> list[tuple[str, str]]:
    pairs = []
    for path, label in ((b.cwd, "<cwd>"), (b.home, "<home>"), (b.root, "<root>")):
        for form in {str(path), str(path.resolve())}:
            pairs.append((form, label))
    return sorted(pairs, key=lambda p: -len(p[0]))  # longest first: cwd before root


def scrub(value: Any, b: Backend) -> Any:
    """`value` with ids and this backend's paths replaced by placeholders, recursively;
    `cache_control` markers dropped (where the runtime caches is not the SDK's concern)."""
    if isinstance(value, str):
        for path, label in _paths(b):
            value = value.replace(path, label)
        for pattern, label in _IDS:
            value = pattern.sub(label, value)
        return value
    if isinstance(value, dict):
        return {k: scrub(v, b) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, (list, tuple)):
        return [scrub(v, b) for v in value]
    return value


def kind(message: Any) -> str:
    """A message's class name; system messages (and their subclasses) with their subtype."""
    name = type(message).__name__
    subtype = getattr(message, "subtype", None)
    if name != "ResultMessage" and isinstance(subtype, str):
        return f"{name}:{subtype}"
    return name


def kinds(messages: list[Any], *, stream_events: bool = True) -> list[str]:
    out = [kind(m) for m in messages]
    return out if stream_events else [k for k in out if k != "StreamEvent"]


def block(value: Any, b: Backend) -> Any:
    name = type(value).__name__
    if name == "TextBlock":
        return ["text", value.text]
    if name == "ThinkingBlock":
        return ["thinking", value.thinking]
    if name == "ToolUseBlock":
        return ["tool_use", value.name, scrub(value.input, b)]
    if name == "ToolResultBlock":
        return ["tool_result", scrub(value.content, b), value.is_error]
    return [name]


def conversation(messages: list[Any], b: Backend) -> list[Any]:
    """The assistant and user messages, block by block (text, tool_use, tool_result)."""
    out: list[Any] = []
    for m in messages:
        name = type(m).__name__
        if name == "AssistantMessage":
            out.append(["assistant", [block(x, b) for x in m.content]])
        elif name == "UserMessage":
            content = m.content
            blocks = content if isinstance(content, str) else [block(x, b) for x in content]
            out.append(["user", scrub(blocks, b)])
    return out


def texts(messages: list[Any]) -> list[str]:
    return [x.text for m in messages if type(m).__name__ == "AssistantMessage"
            for x in m.content if type(x).__name__ == "TextBlock"]


def results(messages: list[Any]) -> list[Any]:
    return [m for m in messages if type(m).__name__ == "ResultMessage"]


def result(message: Any, b: Backend) -> JSON:
    return {
        "subtype": message.subtype,
        "is_error": message.is_error,
        "num_turns": message.num_turns,
        "result": scrub(message.result, b),
        "structured_output": message.structured_output,
        "stop_reason": message.stop_reason,
        "permission_denials": [
            {"tool_name": d.get("tool_name"), "tool_input": scrub(d.get("tool_input"), b)}
            for d in message.permission_denials or []],
        "errors": scrub(list(message.errors or []), b),
    }


def the_result(messages: list[Any], b: Backend) -> JSON:
    found = results(messages)
    assert len(found) == 1, f"expected one ResultMessage, got {kinds(messages)}"
    return result(found[0], b)


def init_data(messages: list[Any], b: Backend, *keys: str) -> JSON:
    """Chosen fields of the (first) init system message."""
    inits = [m for m in messages if kind(m) == "SystemMessage:init"]
    assert inits, f"no init message in {kinds(messages)}"
    return {k: scrub(inits[0].data.get(k), b) for k in keys}


def system_text(body: JSON) -> str | None:
    """The request's system prompt as one string (None when absent or empty)."""
    system = body.get("system")
    if isinstance(system, list):
        system = "\n".join(x.get("text", "") for x in system if isinstance(x, dict))
    return system or None


def model_requests(b: Backend) -> list[JSON]:
    """Every Messages API request the scripted server received (POST /v1/messages)."""
    return [r.body or {} for r in b.server.requests
            if r.method == "POST" and r.path.partition("?")[0].rstrip("/").endswith(
                "/v1/messages")]


def request(body: JSON, b: Backend, *, tools: bool = False, system: bool = False,
            model: bool = False) -> JSON:
    """One request's messages (scrubbed), with its tool names, system text and model on
    demand."""
    out: JSON = {"messages": scrub(body.get("messages"), b)}
    if tools:
        out["tools"] = [t.get("name") for t in body.get("tools") or []]
    if system:
        out["system"] = scrub(system_text(body), b)
    if model:
        out["model"] = body.get("model")
    return out


def requests(b: Backend, **what: bool) -> list[JSON]:
    return [request(body, b, **what) for body in model_requests(b)]


def tool_results_sent(b: Backend) -> list[JSON]:
    """Every tool_result block the model was sent, in order, once each (the last
    request repeats all of them)."""
    bodies = model_requests(b)
    if not bodies:
        return []
    out = []
    for message in bodies[-1].get("messages") or []:
        content = message.get("content")
        if message.get("role") != "user" or not isinstance(content, list):
            continue
        for x in content:
            if isinstance(x, dict) and x.get("type") == "tool_result":
                out.append({"content": scrub(x.get("content"), b),
                            "is_error": x.get("is_error", False)})
    return out
