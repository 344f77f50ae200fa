from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest

from wisp.errors import ModelAPIError, RetryableAPIError
from wisp.models.sse import SSEDecoder, SSEEvent, decode_event, events, sse_events, stream_error


def feed_all(text: str) -> list[SSEEvent]:
    decoder = SSEDecoder()
    out = [decoder.feed(line.encode()) for line in text.split("\n")]
    return [event for event in out if event is not None]


def test_event_and_data_fields_dispatch_on_a_blank_line() -> None:
    text = 'event: message_start\ndata: {"a":1}\n\nevent: ping\ndata: {}\n\n'
    assert feed_all(text) == [SSEEvent("message_start", '{"a":1}'), SSEEvent("ping", "{}")]


def test_multi_line_data_comments_and_no_space_after_colon() -> None:
    text = ": keep-alive\ndata:first\ndata: second\ndata:  indented\nid: 7\nretry: 10\n\n"
    assert feed_all(text) == [SSEEvent(None, "first\nsecond\n indented")]


def test_events_without_data_are_not_dispatched() -> None:
    assert feed_all("event: lonely\n\n\n\ndata: x\n\n") == [SSEEvent(None, "x")]


def test_an_unterminated_event_at_the_end_is_discarded() -> None:
    async def lines() -> AsyncIterator[bytes]:
        for line in (b"data: complete", b"", b"data: truncated"):
            yield line

    async def collect() -> list[SSEEvent]:
        return [event async for event in sse_events(lines())]

    assert asyncio.run(collect()) == [SSEEvent(None, "complete")]


def test_events_yields_json_dicts() -> None:
    async def lines() -> AsyncIterator[bytes]:
        for line in (b"event: ping", b'data: {"type": "ping"}', b""):
            yield line

    async def collect() -> list[dict[str, object]]:
        return [event async for event in events(lines())]

    assert asyncio.run(collect()) == [{"type": "ping"}]


@pytest.mark.parametrize("data", ["{not json", "[1, 2]", ""])
def test_malformed_data_is_a_plain_model_error(data: str) -> None:
    with pytest.raises(ModelAPIError, match="Malformed SSE event from the API") as caught:
        decode_event(SSEEvent("content_block_delta", data))
    assert not isinstance(caught.value, RetryableAPIError)


@pytest.mark.parametrize(
    ("error_type", "status"),
    [("overloaded_error", 529), ("api_error", 500), ("rate_limit_error", 429)],
)
def test_retryable_stream_errors(error_type: str, status: int) -> None:
    data = json.dumps({"type": "error", "error": {"type": error_type, "message": "boom"}})
    with pytest.raises(RetryableAPIError) as caught:
        decode_event(SSEEvent("error", data))
    assert (caught.value.status, caught.value.error_type, caught.value.message) == (
        status,
        error_type,
        "boom",
    )


def test_an_error_event_is_an_error_whatever_its_payload_says() -> None:
    """The `event: error` name alone makes it an error: a payload without `"type":
    "error"` must not pass as an ordinary event (the stream would seem to go on)."""
    data = json.dumps({"error": {"type": "overloaded_error", "message": "busy"}})
    with pytest.raises(RetryableAPIError) as caught:
        decode_event(SSEEvent("error", data))
    assert (caught.value.status, caught.value.message) == (529, "busy")
    assert decode_event(SSEEvent("message_delta", data)) == json.loads(data)


def test_other_stream_errors_are_not_retryable() -> None:
    error = stream_error(
        {"type": "error", "error": {"type": "invalid_request_error", "message": "no"}}
    )
    assert type(error) is ModelAPIError
    assert (error.message, error.error_type, error.status) == ("no", "invalid_request_error", None)
    shapeless = stream_error({"type": "error"})
    assert type(shapeless) is ModelAPIError
    assert shapeless.message == "The API reported an error"


@pytest.mark.parametrize("seed", range(12))
def test_batched_events_match_line_by_line_events_however_lines_are_grouped(seed: int) -> None:
    import random

    from wisp.models.sse import batched_events

    rng = random.Random(seed)
    payloads = [{"type": "content_block_delta", "index": i, "delta": {"text": "x" * i}}
                for i in range(rng.randint(1, 9))]
    body = b"".join(b": ping\n" * rng.randint(0, 1) + b"event: e\ndata: "
                    + json.dumps(p).encode() + b"\n\n" for p in payloads)
    lines = body.split(b"\n")[:-1]
    batches: list[list[bytes]] = []
    while lines:
        cut = rng.randint(1, len(lines))
        batches.append(lines[:cut])
        lines = lines[cut:]

    async def by_line() -> list[dict[str, object]]:
        async def source() -> AsyncIterator[bytes]:
            for batch in batches:
                for line in batch:
                    yield line
        return [e async for e in events(source())]

    async def by_batch() -> list[dict[str, object]]:
        async def source() -> AsyncIterator[list[bytes]]:
            for batch in batches:
                yield batch
        return [e async for e in batched_events(source())]

    assert asyncio.run(by_batch()) == asyncio.run(by_line()) == payloads
