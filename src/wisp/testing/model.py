"""In-process models: the engine streams scripted replies with no server and no socket.

    from wisp.testing import FunctionModel, ScriptedModel, reply

    model = ScriptedModel(reply.tool_use("Bash", {"command": "ls"}), reply.text("done"))
    ...  # RunContext(model=model, ...); run the loop
    assert model.requests[1].body["messages"][-1]["role"] == "user"

    model = FunctionModel(lambda request: reply.text(f"{len(request.messages)} messages"))

Both implement `wisp.models.base.Model` and answer with the `reply.*` scripts of
`ScriptedServer`, rendered by the same function (`wisp.testing.reply.serve`). What the
engine sees is what `AnthropicModel` would make of the server's answer, through the same
code: events are decoded by `wisp.models.sse` (a malformed event or an in-stream `error`
raises there), an error status is classified by `wisp.models.anthropic.status_error` (and
raises on `__aenter__`), `ping`s are dropped, iteration ends at `message_stop`, and a reply
cut short (`reply.cut`) yields the events that arrived whole, then raises `StreamCutError`.
Requests are recorded as `RecordedRequest`s holding the JSON body the HTTP client would
have sent. Delays (`reply.slow`) are `asyncio.sleep`s, so cancelling the task that reads a
stream stops it as an interrupt does; leaving the `async with` ends an iteration quietly.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import secrets
import time
from collections import deque
from collections.abc import AsyncGenerator, Awaitable, Callable

from wisp.errors import StreamCutError
from wisp.jsontypes import JSON
from wisp.models.anthropic import AnthropicConfig, request_headers, status_error
from wisp.models.base import ModelRequest
from wisp.models.body import encode_body
from wisp.models.sse import SSEDecoder, decode_event
from wisp.models.stream_base import StreamBase
from wisp.testing import reply as _reply
from wisp.testing.reply import EXHAUSTED, Reply, Served, serve, sse_chunk, sse_payload
from wisp.testing.server import RecordedRequest

__all__ = ["FunctionModel", "ReplyFunction", "ScriptedModel"]

ReplyFunction = Callable[[ModelRequest], "Reply | str | Awaitable[Reply | str]"]
_HEADERS_CONFIG = AnthropicConfig(api_key="sk-test")


class _InProcessModel:
    """What both models share: recording requests and turning a reply into a stream."""

    def __init__(self) -> None:
        self._requests: list[RecordedRequest] = []
        self.model_requests: list[ModelRequest] = []  # the requests as the engine built them

    def stream(self, request: ModelRequest) -> InProcessStream:
        return InProcessStream(self, request)

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request so far, in order, as `ScriptedServer.requests` records it (a copy)."""
        return list(self._requests)

    async def wait_for_requests(self, n: int, timeout: float = 5.0) -> list[RecordedRequest]:
        """Wait (in the event loop) until at least `n` requests have arrived."""
        deadline = time.monotonic() + timeout
        while len(self._requests) < n:
            if time.monotonic() >= deadline:
                raise TimeoutError(f"expected {n} requests, got {len(self._requests)}")
            await asyncio.sleep(0.002)
        return list(self._requests)

    async def _reply_for(self, request: ModelRequest) -> Reply:
        raise NotImplementedError

    def _record(self, request: ModelRequest, body: JSON, size: int) -> None:
        headers = request_headers(_HEADERS_CONFIG, request)
        headers["content-length"] = str(size)
        self._requests.append(RecordedRequest("POST", "/v1/messages", headers, body))
        self.model_requests.append(request)


class ScriptedModel(_InProcessModel):
    """Answers each request with the next scripted reply, then `default` (or a 400
    "no scripted reply left", as `ScriptedServer` does)."""

    def __init__(self, *replies: Reply, default: Reply | None = None) -> None:
        super().__init__()
        self.default = default
        self._replies: deque[Reply] = deque(replies)

    def script(self, *replies: Reply) -> ScriptedModel:
        """Queue more replies after those already scripted."""
        self._replies.extend(replies)
        return self

    @property
    def remaining(self) -> int:
        """Scripted replies not yet used (a test can assert the script was consumed)."""
        return len(self._replies)

    async def _reply_for(self, request: ModelRequest) -> Reply:
        if self._replies:
            return self._replies.popleft()
        return self.default or EXHAUSTED


class FunctionModel(_InProcessModel):
    """A Python function plays the model: `fn(request)` returns the reply (a `Reply`, or a
    string meaning `reply.text(string)`), directly or as an awaitable."""

    def __init__(self, fn: ReplyFunction) -> None:
        super().__init__()
        self.fn = fn

    async def _reply_for(self, request: ModelRequest) -> Reply:
        answer = self.fn(request)
        if inspect.isawaitable(answer):
            answer = await answer
        if isinstance(answer, str):
            return _reply.text(answer)
        if not isinstance(answer, Reply):
            raise TypeError(f"FunctionModel: the function returned {answer!r}, not a Reply")
        return answer


class InProcessStream(StreamBase):
    """One response of an in-process model (a `wisp.models.base.ModelStream`)."""

    def __init__(self, model: _InProcessModel, request: ModelRequest) -> None:
        super().__init__()
        self._model = model
        self._request = request
        self._served: Served | None = None
        self._closed = False

    async def aclose(self) -> None:
        self._closed = True
        await self._close_readers()

    async def _open(self) -> Served:
        if self._served is not None:
            return self._served
        raw = encode_body(self._request.body())
        body = json.loads(raw)  # what the server would have parsed: a copy, never aliased
        self.request_id = "req_" + secrets.token_hex(12)
        self._model._record(self._request, body, len(raw))
        try:
            chosen = await self._model._reply_for(self._request)
        except Exception as exc:  # as `serve` treats a dynamic reply that raises
            chosen = _reply.dynamic(_raiser(exc))
        served = self._served = serve(chosen, body, len(raw))
        if not self._closed and served.json_body is not None and not 200 <= served.status < 300:
            raw_error = json.dumps(served.json_body).encode()
            raise status_error(served.status, raw_error, dict(served.headers))
        return served

    async def _events(self) -> AsyncGenerator[JSON, None]:
        if self._closed:
            return  # closed before iteration began
        served = await self._open()
        decoder = SSEDecoder()
        sent = () if served.json_body is not None else served.sent_events  # 2xx JSON: no SSE
        for index, (name, data) in enumerate(sent):
            if index and served.delay > 0:
                await asyncio.sleep(served.delay)
            if self._closed:
                return
            # The bytes the server writes, through the client's SSE decoder.
            for line in sse_payload(name, data).split(b"\n")[:-1]:
                sse = decoder.feed(line)
                if sse is None:
                    continue
                event = decode_event(sse)
                kind = event.get("type")
                if kind == "ping":
                    continue
                yield event
                if kind == "message_stop":
                    return
        if not self._closed:
            raise StreamCutError(_cut_message(served))


def _raiser(exc: Exception) -> Callable[[JSON], Reply]:
    def fail(_body: JSON) -> Reply:
        raise exc

    return fail


def _cut_message(served: Served) -> str:
    """The message `AnthropicModel` gives when the server's answer ends this way."""
    if served.cut_after is None:
        return "Stream ended before message_stop"
    if served.cut_after >= len(served.events):  # every event sent, no final chunk
        return "Response body ended early: connection closed inside chunked framing"
    frame = sse_chunk(*served.events[served.cut_after])
    size_line = frame.index(b"\r\n") + 2
    missing = len(frame) - 2 - size_line - (len(frame) // 2 - size_line)  # of the payload
    return f"Response body ended early: {missing} bytes of the body missing"
