"""The complete assistant message as a fold over streaming events.

Above: the engine folds each event from `Model.stream` into a snapshot and, at the end,
holds the same message a non-streaming call would have returned.
Below: raw Anthropic event dicts, as produced by any provider.

Ownership: `message_start` makes a fresh working copy (the event and its nested dicts are
never touched); every later event *mutates that working copy in place* and returns it.
Copying per event would make a long reply quadratic. So a snapshot is only valid until
the next call: `copy.deepcopy` it if you need to keep an intermediate state.

While a tool input streams, the block carries the raw text so far under `partial_json`.
`content_block_stop` parses it into `input` and drops `partial_json`. If the JSON is
invalid, the block keeps `partial_json`, gets `input: {}` and an `input_error` string. The
engine turns that into an error tool result. Strip both keys before sending the block back.
"""

from __future__ import annotations

from collections.abc import Iterable

from wisp.errors import ModelAPIError
from wisp.jsonsafe import loads_bounded
from wisp.jsontypes import JSON

__all__ = ["accumulate", "fold"]


def accumulate(snapshot: JSON | None, event: JSON) -> JSON:
    """Fold one event into `snapshot` (None before `message_start`) and return it."""
    kind = event.get("type")
    if kind == "message_start":
        return _start(event)
    if snapshot is None:
        raise ModelAPIError(f"Malformed stream from the API: {kind!r} before message_start")
    if kind == "content_block_delta":
        _delta(_block(snapshot, event), event.get("delta") or {})
    elif kind == "content_block_start":
        block = event.get("content_block")
        if not isinstance(block, dict):
            raise ModelAPIError("Malformed stream from the API: content_block_start has no block")
        snapshot["content"].append(dict(block))
    elif kind == "content_block_stop":
        _stop(_block(snapshot, event))
    elif kind == "message_delta":
        _message_delta(snapshot, event)
    # message_stop, ping and event types added to the API later change nothing.
    return snapshot


def fold(events: Iterable[JSON]) -> JSON:
    """The complete message of a finished stream."""
    snapshot: JSON | None = None
    for event in events:
        snapshot = accumulate(snapshot, event)
    if snapshot is None:
        raise ModelAPIError("Malformed stream from the API: no message_start")
    return snapshot


def _start(event: JSON) -> JSON:
    message = event.get("message")
    if not isinstance(message, dict):
        raise ModelAPIError("Malformed stream from the API: message_start has no message")
    snapshot = dict(message)
    snapshot["content"] = [dict(block) for block in message.get("content") or ()]
    snapshot["usage"] = dict(message.get("usage") or {})
    return snapshot


def _block(snapshot: JSON, event: JSON) -> JSON:
    index = event.get("index")
    content: list[JSON] = snapshot["content"]
    if not isinstance(index, int) or not 0 <= index < len(content):
        raise ModelAPIError(f"Malformed stream from the API: no content block {index!r}")
    return content[index]


def _delta(block: JSON, delta: JSON) -> None:
    kind = delta.get("type")
    if kind == "text_delta":
        block["text"] = block.get("text", "") + delta.get("text", "")
    elif kind == "input_json_delta":
        block["partial_json"] = block.get("partial_json", "") + delta.get("partial_json", "")
    elif kind == "thinking_delta":
        block["thinking"] = block.get("thinking", "") + delta.get("thinking", "")
    elif kind == "signature_delta":
        block["signature"] = delta.get("signature", "")  # sent whole, once: replace
    elif kind == "citations_delta":
        # A fresh list, so a `citations` list shared with the start event is not appended to.
        block["citations"] = [*(block.get("citations") or ()), delta.get("citation")]


def _stop(block: JSON) -> None:
    if "partial_json" not in block:
        return
    raw: str = block["partial_json"]
    if not raw.strip():
        block["input"] = {}
        del block["partial_json"]
        return
    try:
        # Bounded: a model asked for deep JSON may nest a tool input thousands of levels,
        # which plain json.loads meets with RecursionError, ending the run.
        parsed = loads_bounded(raw)
    except ValueError as exc:
        block["input"] = {}
        block["input_error"] = f"Invalid JSON in tool input: {exc}"
        return
    if not isinstance(parsed, dict):
        block["input"] = {}
        block["input_error"] = "Tool input is not a JSON object"
        return
    block["input"] = parsed
    del block["partial_json"]


def _message_delta(snapshot: JSON, event: JSON) -> None:
    delta = event.get("delta")
    if isinstance(delta, dict):
        # stop_reason and stop_sequence always; newer keys (container, ...) pass through.
        snapshot.update(delta)
    usage = event.get("usage")
    if isinstance(usage, dict):
        merged: JSON = snapshot["usage"]
        for key, value in usage.items():
            # `output_tokens` is the running total; other counts only arrive when known.
            if value is not None or key == "output_tokens":
                merged[key] = value
