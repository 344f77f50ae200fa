"""The OpenAI-compatible provider's HTTP side: `POST {base}/chat/completions` with
`stream: true`, read as SSE through the tolerant normaliser.

One `OpenAICompatModel` per provider per session: it owns the keep-alive pool, the tool
ids given out so far (so a server that reuses ids cannot make two calls share one), and
what it has learned about the server (a field it rejected is not sent again).
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncGenerator, Mapping
from typing import TYPE_CHECKING

from wisp import __version__
from wisp.errors import ModelAPIError, Unreachable
from wisp.jsontypes import JSON
from wisp.models import http
from wisp.models.anthropic import with_note
from wisp.models.base import ModelRequest
from wisp.models.openai.errors import status_error, stream_error
from wisp.models.openai.normalise import Normaliser, completion_as_chunk
from wisp.models.openai.presets import Compat, compat_for, guess_preset
from wisp.models.openai.request import chat_body
from wisp.models.pool import ConnectionPool
from wisp.models.reach import explained
from wisp.models.sse import SSEDecoder
from wisp.models.stream_base import ResponseStream

if TYPE_CHECKING:
    from wisp.models.route import ProviderEntry

_ERROR_BODY_LIMIT = 1024 * 1024
# Fields a strict server may reject by name (quirks 24, 27, 36, 37): dropped and resent once.
_DROPPABLE_TOP = ("stream_options", "parallel_tool_calls", "max_completion_tokens",
                  "temperature", "top_p")
_DROPPABLE_MESSAGE = ("reasoning_content", "reasoning_details", "reasoning", "name")
_REJECTION = re.compile(r"unsupported|unknown|unrecognized|extra|not permitted|not allowed|"
                        r"invalid|unexpected", re.IGNORECASE)


class OpenAICompatModel:
    def __init__(self, entry: ProviderEntry, environ: Mapping[str, str]) -> None:
        self.entry = entry
        self.compat: Compat = compat_for(entry.preset or guess_preset(entry.base_url),
                                         entry.compat, f"provider {entry.name}")
        self.pool = ConnectionPool(environ=environ)
        self.timeout = http.default_read_timeout(environ)
        self.used_ids: set[str] = set()
        self.dropped: set[str] = set()  # fields this server rejected once

    def stream(self, request: ModelRequest) -> OpenAIStream:
        return OpenAIStream(self, request)

    def url(self) -> str:
        return f"{self.entry.base_url}/chat/completions"

    def headers(self) -> dict[str, str]:
        headers = {"content-type": "application/json", "accept": "text/event-stream",
                   "user-agent": f"wisp/{__version__}"}
        if self.entry.api_key:
            headers["authorization"] = f"Bearer {self.entry.api_key}"
        headers.update({k.lower(): v for k, v in self.entry.headers.items()})
        return headers

    def body(self, request: ModelRequest) -> JSON:
        body = chat_body(request, self.compat, self.entry.model_entry(request.model))
        for field in self.dropped:
            _drop(body, field)
        return body

    def learn(self, error: ModelAPIError, body: JSON) -> bool:
        """A 400 that names a field we sent: leave it out from now on (True: resend)."""
        if error.status != 400 or not _REJECTION.search(error.message):
            return False
        for field in (*_DROPPABLE_TOP, *_DROPPABLE_MESSAGE):
            if field in self.dropped or not re.search(rf"\b{field}\b", error.message):
                continue
            if _drop(dict(body), field):
                self.dropped.add(field)
                return True
        return False

    async def aclose(self) -> None:
        await self.pool.aclose()


def _drop(body: JSON, field: str) -> bool:
    """Removes `field` (top level, or from every message); True if it was there."""
    if field == "max_completion_tokens" and field in body:
        body.setdefault("max_tokens", body.pop(field))
        return True
    if field in _DROPPABLE_TOP and field in body:
        del body[field]
        return True
    found = False
    for message in body.get("messages") or []:
        if isinstance(message, dict) and field in message:
            del message[field]
            found = True
    return found


class OpenAIStream(ResponseStream):
    """One streaming response, with the same contract as `AnthropicStream`: leaving the
    `async with` early drops the connection (an interrupt); after the end the connection
    goes back to the pool."""

    def __init__(self, model: OpenAICompatModel, request: ModelRequest) -> None:
        super().__init__()
        self._model = model
        self._request = request
        self._chars = 0

    async def _open(self) -> http.HTTPResponse:
        if self._response is not None:
            return self._response
        model = self._model
        body = model.body(self._request)
        try:
            return await self._post(body)
        except ModelAPIError as error:
            if not (model.compat.strip_unknown_fields_retry and model.learn(error, body)):
                raise
        return await self._post(model.body(self._request))  # once, without the field

    async def _post(self, body: JSON) -> http.HTTPResponse:
        data = json.dumps(body, ensure_ascii=False).encode("utf-8", "replace")
        self._chars = len(data)
        model = self._model
        try:
            response = await http.request("POST", model.url(), model.headers(), data,
                                          read_timeout=model.timeout, pool=model.pool)
        except Unreachable as exc:
            raise explained(exc, model.url(), model.entry.url_setting) from None
        self._response = response
        self.request_id = response.headers.get("x-request-id") or response.headers.get(
            "request-id")
        if not 200 <= response.status < 300:
            try:
                raw = await response.read(_ERROR_BODY_LIMIT)
            except ModelAPIError:
                raw = b""
            finally:
                await response.aclose()
            self._response = None
            error = status_error(response.status, raw, response.headers)
            raise with_note(error, model.entry.refused) if error.status == 401 else error
        return response

    async def _events(self) -> AsyncGenerator[JSON, None]:
        if self._closed:
            return
        response = await self._open()
        # The message names the model by its spec, so usage and cost are booked under the
        # name the catalog knows it by ("openai:gpt-4.1", "local:qwen3-coder").
        spec = f"{self._model.entry.name}:{self._request.model}"
        normaliser = Normaliser(self._model.compat, spec, self._model.used_ids, self._chars)
        kind = response.headers.get("content-type", "").lower()
        if "json" in kind and "event-stream" not in kind:
            for event in await self._whole_body(response, normaliser):
                yield event
            return
        if kind and "event-stream" not in kind:
            raw = await response.read(_ERROR_BODY_LIMIT)
            raise ModelAPIError(f"The server did not stream (content-type {kind}): "
                                f"{raw[:300].decode('utf-8', 'replace')!r}")
        done = False
        async for chunk in self._chunks(response):
            if chunk is None:
                done = True
                break
            for event in normaliser.feed(chunk):
                yield event
        if self._closed:
            return
        self._complete = True
        for event in normaliser.finish(done):
            yield event

    async def _whole_body(self, response: http.HTTPResponse, normaliser: Normaliser
                          ) -> list[JSON]:
        """Quirk 19: a complete `chat.completion` JSON where a stream was asked for."""
        raw = await response.read(_ERROR_BODY_LIMIT)
        try:
            body = json.loads(raw)
        except ValueError:
            raise ModelAPIError(f"Malformed JSON from the server: {raw[:300]!r}") from None
        if not isinstance(body, dict):
            raise ModelAPIError(f"Malformed JSON from the server: {raw[:300]!r}")
        if "error" in body and not body.get("choices"):
            raise stream_error(body)
        self._complete = True
        return [*normaliser.feed(completion_as_chunk(body)), *normaliser.finish(True)]

    async def _chunks(self, response: http.HTTPResponse
                      ) -> AsyncGenerator[JSON | None, None]:
        """Each `data:` payload as a dict; None for `[DONE]`. Comments and keep-alives are
        the SSE decoder's (quirk 17); an error object raises (quirk 18)."""
        decoder = SSEDecoder()
        batches = response.line_batches()
        self._readers.append(batches)
        async for batch in batches:
            for line in batch:
                sse = decoder.feed(line)
                if sse is None:
                    continue
                data = sse.data.strip()
                if data == "[DONE]":
                    yield None
                    return
                yield _chunk(data)


def _chunk(data: str) -> JSON:
    try:
        chunk = json.loads(data)
    except (ValueError, RecursionError):
        raise ModelAPIError(f"Malformed chunk from the server: {data[:200]!r}") from None
    if not isinstance(chunk, dict):
        raise ModelAPIError(f"Malformed chunk from the server: {data[:200]!r}")
    if chunk.get("error") and not chunk.get("choices"):
        raise stream_error(chunk)
    return chunk
