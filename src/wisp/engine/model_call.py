"""One model call as the client sees it: stream, fold, emit events, retry, fall back.

Above: the turn loop asks for one complete assistant message. Below: `Model.stream`.
Events: `BlockShown` per content block as each block completes (before its
`content_block_stop` delta, as the reference orders them), `StreamDelta`s with
`include_partial_messages`, `ApiRetry` before each retry.

A stream cut after some blocks were already shown is not restarted from scratch, which
would show those blocks twice: completed tool_use blocks are kept and the message ends
there; completed text is sent back as an assistant prefill so the model continues it.
"""

from __future__ import annotations

import asyncio
import time

from wisp.engine.context import RunContext
from wisp.engine.events import (
    ApiRetry,
    BlockShown,
    ModelFallback,
    StatusChanged,
    StreamDelta,
    ThinkingProgress,
)
from wisp.engine.partial import OpenStream
from wisp.engine.retry import first_contact
from wisp.errors import ModelAPIError, RetryableAPIError
from wisp.jsontypes import JSON
from wisp.models.accumulate import accumulate
from wisp.models.base import ModelRequest
from wisp.stamps import new_uuid
from wisp.values import Record, field, replace

FALLBACK_AFTER_OVERLOADS = 3


class Completed(Record):
    message: JSON
    request_id: str | None
    api_ms: float
    # The `uuid` of the assistant frame that showed each content block, so the transcript
    # line of a block carries the uuid a client saw (for --resume-session-at).
    block_uuids: list[str] = field(default_factory=list)
    # tool_use id -> the raw input text, for inputs that were not a JSON object (a
    # structured-output reading of the common "object sent as a string" slip needs it).
    raw_tool_inputs: dict[str, str] = field(default_factory=dict)


class Attempt:
    """State of one streaming attempt, kept outside the coroutine so a cancellation or a
    cut can inspect what was shown."""

    def __init__(self, shown_prefix: list[JSON], uuid_prefix: list[str] | None = None) -> None:
        self.snapshot: JSON | None = None
        self.request_id: str | None = None
        self.shown: list[JSON] = list(shown_prefix)
        self.uuids: list[str] = list(uuid_prefix or [])  # parallel to `shown`
        self.open = OpenStream()
        self.prefix_len = len(shown_prefix)
        self.started = time.monotonic()
        self.first_event_sent = False

    def completed(self, message: JSON, started: float) -> Completed:
        raw = {str(b.get("id")): b["partial_json"]
               for b in (self.snapshot or {}).get("content", [])
               if b.get("input_error") and isinstance(b.get("partial_json"), str)}
        return Completed(message, self.request_id, (time.monotonic() - started) * 1000,
                         list(self.uuids), raw)


# The fold keeps these on a tool_use block whose input JSON was broken; the API must not
# see them again, and clients don't need them.
_FOLD_MARKERS = ("partial_json", "input_error")


def clean_block(block: JSON) -> JSON:
    if not any(key in block for key in _FOLD_MARKERS):
        return block
    return {k: v for k, v in block.items() if k not in _FOLD_MARKERS}


def _merge(prefix: list[JSON], message: JSON) -> JSON:
    merged = dict(message)
    merged["content"] = [*prefix, *(clean_block(b) for b in message.get("content", []))]
    return merged


async def _stream_once(ctx: RunContext, request: ModelRequest, attempt: Attempt) -> JSON:
    emit_partial = ctx.config.include_partial_messages
    thinking = 0  # tokens of thinking estimated so far in this message
    async with ctx.model.stream(request) as stream:
        attempt.request_id = stream.request_id
        async for event in stream:
            attempt.snapshot = accumulate(attempt.snapshot, event)
            attempt.open.observe(event)
            share = _thinking_share(event)
            if share:
                thinking += share
                ctx.emit(ThinkingProgress(thinking, share))
            if event.get("type") == "content_block_stop":
                _emit_block(ctx, attempt, int(event.get("index", 0)))
            if emit_partial:
                ttft = None
                if not attempt.first_event_sent:
                    attempt.first_event_sent = True
                    ttft = round((time.monotonic() - attempt.started) * 1000)
                ctx.emit(StreamDelta(event, attempt.open.message_id, ttft))
    assert attempt.snapshot is not None
    return _merge(attempt.shown[: attempt.prefix_len], attempt.snapshot)


def _thinking_share(event: JSON) -> int:
    """A thinking delta's estimated tokens (its characters over four, rounded up)."""
    if event.get("type") != "content_block_delta":
        return 0
    delta = event.get("delta")
    if not isinstance(delta, dict) or delta.get("type") != "thinking_delta":
        return 0
    return -(-len(str(delta.get("thinking") or "")) // 4)


def _emit_block(ctx: RunContext, attempt: Attempt, index: int) -> None:
    assert attempt.snapshot is not None
    block = clean_block(attempt.snapshot["content"][index])
    uuid = new_uuid()
    attempt.shown.append(block)
    attempt.uuids.append(uuid)
    ctx.emit(BlockShown(attempt.snapshot, [block], attempt.request_id, uuid))


def close_abandoned(ctx: RunContext, attempt: Attempt) -> None:
    if not ctx.config.include_partial_messages:
        attempt.open.closing_events()
        return
    message_id = attempt.open.message_id
    for event in attempt.open.closing_events():
        ctx.emit(StreamDelta(event, message_id))


def flush_aborted(ctx: RunContext, attempt: Attempt) -> list[JSON]:
    """On interrupt: show the partial block being streamed, marked `aborted`, and return
    it. The caller closes the stream (`close_abandoned`) after its interruption frame, in
    the reference's order."""
    snap = attempt.snapshot
    if snap is None:
        return []
    pending = [b for i, b in enumerate(snap.get("content", []))
               if i in attempt.open.open_blocks and (b.get("text") or b.get("thinking"))]
    if pending:
        ctx.emit(BlockShown(snap, pending, attempt.request_id, new_uuid(), aborted=True))
    return pending


class ModelCaller:
    """Calls the model for one assistant message, with retries and a one-time fallback."""

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        self.fallback_used = False
        self.current: Attempt | None = None

    async def call(self, request: ModelRequest) -> Completed:
        ctx = self.ctx
        retries = overloads = 0
        shown: list[JSON] = []
        uuids: list[str] = []
        started = time.monotonic()
        while True:
            attempt = self.current = Attempt(shown, uuids)
            if ctx.config.include_partial_messages:
                # before each request (docs/protocol.md, "Partial messages")
                ctx.emit(StatusChanged("requesting"))
            try:
                message = await _stream_once(ctx, self._with_prefill(request, shown), attempt)
                self._record_usage(message)
                return attempt.completed(message, started)
            except ModelAPIError as error:
                close_abandoned(ctx, attempt)
                self.record_partial_usage(attempt)
                shown, uuids = attempt.shown, attempt.uuids
                if _has_tool_use(shown):
                    return self._cut_with_tools(attempt, started)
                overloads = overloads + 1 if error.status == 529 else 0
                if self._should_fall_back(error, overloads):
                    request = self._fall_back(request, error)
                    retries = overloads = 0
                    shown, uuids = [], []
                    continue
                if not self._may_retry(error, retries, started):
                    raise
                retries += 1
                await self._wait_before_retry(retries, error)

    def _may_retry(self, error: ModelAPIError, retries: int, started: float) -> bool:
        policy = self.ctx.config.retry
        if first_contact(error):
            return policy.connect_retries_left(retries, time.monotonic() - started)
        return isinstance(error, RetryableAPIError) and retries < policy.max_retries

    def _with_prefill(self, request: ModelRequest, shown: list[JSON]) -> ModelRequest:
        text = [b for b in shown if b.get("type") in ("text", "thinking", "redacted_thinking")]
        if not text:
            return request
        # The API rejects a final assistant turn ending in whitespace.
        last = dict(text[-1])
        if last.get("type") == "text":
            last["text"] = str(last.get("text", "")).rstrip()
        prefill = {"role": "assistant", "content": [*text[:-1], last]}
        return replace(request, messages=[*request.messages, prefill])

    def _cut_with_tools(self, attempt: Attempt, started: float) -> Completed:
        snap = attempt.snapshot or {}
        message = {**snap, "content": list(attempt.shown), "stop_reason": "tool_use"}
        return attempt.completed(message, started)

    def _should_fall_back(self, error: ModelAPIError, overloads: int) -> bool:
        fallback = self.ctx.config.fallback_model
        if not fallback or self.fallback_used or fallback == self.ctx.session.model:
            return False
        return error.status == 404 or overloads >= FALLBACK_AFTER_OVERLOADS

    def _fall_back(self, request: ModelRequest, error: ModelAPIError) -> ModelRequest:
        ctx = self.ctx
        fallback = ctx.config.fallback_model
        assert fallback is not None
        self.fallback_used = True
        original = ctx.session.model
        ctx.session.model = fallback
        trigger = "not_found" if error.status == 404 else "overloaded"
        ctx.emit(ModelFallback(trigger, original, fallback,
                               f"Switched from {original} to {fallback}: {error.message}"))
        return replace(request, model=fallback)

    async def _wait_before_retry(self, retries: int, error: ModelAPIError) -> None:
        ctx, policy = self.ctx, self.ctx.config.retry
        if first_contact(error):
            delay = policy.connect_delay_s(retries)
            cap = min(policy.connect_retries, policy.max_retries)
        else:
            delay, cap = policy.delay_s(retries, error), policy.max_retries
        ctx.emit(ApiRetry(retries, cap, delay_ms=round(delay * 1000), status=error.status,
                          error=error.error_type or _error_kind(error), message=error.message))
        await asyncio.sleep(delay)

    def _record_usage(self, message: JSON) -> None:
        model = str(message.get("model") or self.ctx.session.model)
        usage = message.get("usage") or {}
        self.ctx.session.usage.add(model, usage)
        self.ctx.run_usage.add(model, usage)

    def record_partial_usage(self, attempt: Attempt) -> None:
        # Input tokens of an abandoned attempt were still billed.
        if attempt.snapshot is not None:
            self._record_usage(attempt.snapshot)


def _has_tool_use(blocks: list[JSON]) -> bool:
    return any(b.get("type") == "tool_use" for b in blocks)


def _error_kind(error: ModelAPIError) -> str:
    if error.status is None:
        return "connection_error"
    if error.status == 429:
        return "rate_limit"
    if error.status == 529:
        return "overloaded"
    return "server_error"
