"""The Anthropic Messages API provider: `POST /v1/messages` with `stream: true`.

Above: the engine calls `AnthropicModel.stream(request)`, then iterates raw event dicts and
folds them with `wisp.models.accumulate`. Retries and backoff live above this module: here
a failure is only classified (`RetryableAPIError` or plain `ModelAPIError`).
Below: `wisp.models.http` (over kept-alive connections, pooled per model) and `wisp.models.sse`.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import AsyncGenerator, Mapping

from wisp import __version__
from wisp.errors import (
    RETRYABLE_STATUSES,
    ModelAPIError,
    RetryableAPIError,
    StreamCutError,
    Unreachable,
)
from wisp.jsonsafe import loads_bounded
from wisp.jsontypes import JSON
from wisp.models import http
from wisp.models.base import ModelRequest
from wisp.models.body import BodyEncoder, encode_body
from wisp.models.pool import ConnectionPool
from wisp.models.reach import explained
from wisp.models.spec import key_origin, refused_note
from wisp.models.sse import batched_events, error_fields
from wisp.models.stream_base import ResponseStream

__all__ = [
    "AnthropicConfig",
    "AnthropicModel",
    "AnthropicStream",
    "encode_body",  # its home is wisp.models.body
    "parse_custom_headers",
    "request_headers",
    "retry_after",
    "status_error",
    "with_note",
]

DEFAULT_BASE_URL = "https://api.anthropic.com"
ANTHROPIC_VERSION = "2023-06-01"
# The variables whose value is sent as credentials, in the order a 401 names them.
CREDENTIAL_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
_ERROR_BODY_LIMIT = 1024 * 1024
_MESSAGE_LIMIT = 2000


class AnthropicConfig:
    """Where and how to reach the API. Immutable by convention; to vary one field, build
    a new one from `__dict__` (the fields, by name). A plain class rather than a dataclass,
    which would cost ~1 ms to define on every run."""

    def __init__(
        self,
        *,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str | None = None,
        auth_token: str | None = None,
        betas: tuple[str, ...] = (),
        user_agent: str = f"wisp/{__version__}",
        timeout: float = http.DEFAULT_READ_TIMEOUT,  # per read, not for the whole response
        headers: tuple[tuple[str, str], ...] = (),  # ANTHROPIC_CUSTOM_HEADERS
        key_origin: str | None = None,  # where the credentials came from, for a 401
    ) -> None:
        self.base_url = base_url
        self.api_key = api_key
        self.auth_token = auth_token
        self.betas = betas
        self.user_agent = user_agent
        self.timeout = timeout
        self.headers = headers
        self.key_origin = key_origin

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AnthropicConfig) and self.__dict__ == other.__dict__

    def __hash__(self) -> int:
        return hash(tuple(self.__dict__.values()))

    def __repr__(self) -> str:  # without the key and token: a repr may end up in a log
        fields = ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items()
                           if k not in ("api_key", "auth_token"))
        return f"AnthropicConfig({fields})"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, *,
                 set_by: Mapping[str, str] | None = None) -> AnthropicConfig:
        """`set_by`: the settings file whose `env` set a variable, to name it on a 401."""
        env = os.environ if environ is None else environ
        betas = tuple(b.strip() for b in env.get("ANTHROPIC_BETAS", "").split(",") if b.strip())
        headers = parse_custom_headers(env.get("ANTHROPIC_CUSTOM_HEADERS", ""))
        origin = key_origin(CREDENTIAL_VARIABLES, env, set_by or {})
        if origin is None and any(n.lower() in ("x-api-key", "authorization") for n, _ in headers):
            origin = "ANTHROPIC_CUSTOM_HEADERS"
        return cls(
            base_url=env.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL,
            api_key=env.get("ANTHROPIC_API_KEY") or None,
            auth_token=env.get("ANTHROPIC_AUTH_TOKEN") or None,
            betas=betas,
            timeout=http.default_read_timeout(env),
            headers=headers,
            key_origin=origin,
        )

    @property
    def base_url_setting(self) -> str | None:
        """What to check when the endpoint cannot be reached: the variable, unless the
        URL is the built-in default."""
        return None if self.base_url.rstrip("/") == DEFAULT_BASE_URL else "ANTHROPIC_BASE_URL"

    @property
    def messages_url(self) -> str:
        # A path prefix in the base URL (a gateway's /anthropic/...) is kept.
        return self.base_url.rstrip("/") + "/v1/messages"


def parse_custom_headers(raw: str) -> tuple[tuple[str, str], ...]:
    """`Name: value` lines. Lines without a colon, or with an empty name, are skipped."""
    pairs = []
    for line in raw.splitlines():
        name, sep, value = line.partition(":")
        if sep and name.strip():
            pairs.append((name.strip(), value.strip()))
    return tuple(pairs)


def request_headers(config: AnthropicConfig, request: ModelRequest) -> dict[str, str]:
    headers = {
        "content-type": "application/json",
        "anthropic-version": ANTHROPIC_VERSION,
        "user-agent": config.user_agent,
    }
    if config.api_key:
        headers["x-api-key"] = config.api_key
    if config.auth_token:
        headers["authorization"] = f"Bearer {config.auth_token}"
    betas = (*request.betas, *(b for b in config.betas if b not in request.betas))
    if betas:
        headers["anthropic-beta"] = ",".join(betas)
    if request.session_id:
        headers["x-claude-code-session-id"] = request.session_id
    for name, value in config.headers:
        headers[name.lower()] = value  # custom headers win, as in Claude Code
    return headers


class AnthropicModel:
    def __init__(self, config: AnthropicConfig | None = None,
                 environ: Mapping[str, str] | None = None) -> None:
        """`environ` is the session's environment overlay (proxy settings); None means the
        process environment."""
        self.config = AnthropicConfig.from_env(environ) if config is None else config
        # Idle connections for the next request: a turn need not pay a TLS handshake.
        # The pool closes them itself when the event loop shuts down.
        self.pool = ConnectionPool(environ=environ)
        # Each history message is encoded once, not on every request that resends it.
        self.encoder = BodyEncoder()

    def stream(self, request: ModelRequest) -> AnthropicStream:
        return AnthropicStream(self.config, request, self.pool, self.encoder)

    def warm(self, request: ModelRequest) -> None:
        """Encode `request` without sending it: its system blocks, tool definitions and
        history are then kept encoded for the request that follows (`BodyEncoder`)."""
        self.encoder.encode(request.body())

    async def aclose(self) -> None:
        """Close idle connections now (optional: loop shutdown does it too)."""
        await self.pool.aclose()


class AnthropicStream(ResponseStream):
    """One streaming response. Leaving the `async with` (or `aclose()`) before message_stop
    drops the socket, which is how an interrupt stops a turn; an iteration in progress then
    just ends. After message_stop the connection goes back to the pool instead."""

    def __init__(
        self,
        config: AnthropicConfig,
        request: ModelRequest,
        pool: ConnectionPool | None = None,
        encoder: BodyEncoder | None = None,
    ) -> None:
        super().__init__()
        self._config = config
        self._request = request
        self._pool = pool
        self._encoder = encoder

    async def _open(self) -> http.HTTPResponse:
        if self._response is not None:
            return self._response
        config = self._config
        try:
            # The beta endpoint spelling, as the reference uses with its betas.
            url = config.messages_url + ("?beta=true" if self._request.betas else "")
            response = await http.request("POST", url,
                                          request_headers(config, self._request),
                                          self._body(), read_timeout=config.timeout,
                                          pool=self._pool)
        except Unreachable as exc:
            raise explained(exc, config.messages_url, config.base_url_setting) from None
        self._response = response
        self.request_id = response.headers.get("request-id")
        if self._closed:  # aclose() ran while we were connecting: iteration ends at once
            await response.aclose()
            return response
        if not 200 <= response.status < 300:
            try:
                raw = await response.read(_ERROR_BODY_LIMIT)
            except ModelAPIError:
                raw = b""  # the status alone still classifies the failure
            finally:
                await response.aclose()
            error = status_error(response.status, raw, response.headers)
            if error.status == 401:
                error = with_note(error, refused_note(config.key_origin, CREDENTIAL_VARIABLES[0]))
            raise error
        return response

    def _body(self) -> bytes:
        body = self._request.body()
        return encode_body(body) if self._encoder is None else self._encoder.encode(body)

    async def _events(self) -> AsyncGenerator[JSON, None]:
        if self._closed:
            return  # closed before iteration began: never (re)connect
        response = await self._open()
        batches = response.line_batches()
        stream = batched_events(batches)
        self._readers += [stream, batches]
        async for event in stream:
            kind = event.get("type")
            if kind == "ping":
                continue
            if kind == "message_stop":
                self._complete = True  # before the yield: the consumer may stop right there
            yield event
            if kind == "message_stop":
                return  # the message is complete; aclose() reads the final chunk
        if not self._closed:
            raise StreamCutError("Stream ended before message_stop")


def status_error(status: int, raw: bytes, headers: Mapping[str, str]) -> ModelAPIError:
    """Classify a non-2xx response. `x-should-retry` (sent by the API) overrides the status."""
    text = raw.decode("utf-8", "replace").strip()
    error_type, message = None, None
    with contextlib.suppress(ValueError):
        error_type, message = error_fields(loads_bounded(text))
    if not message:
        message = text[:_MESSAGE_LIMIT] or f"HTTP {status} from the API"
    # The official SDKs let the API's `x-should-retry` override the status-based rule.
    should_retry = headers.get("x-should-retry", "").lower()
    if should_retry in ("true", "false"):
        retryable = should_retry == "true"
    else:
        retryable = status in RETRYABLE_STATUSES
    cls = RetryableAPIError if retryable else ModelAPIError
    return cls(message, status=status, error_type=error_type, retry_after=retry_after(headers))


def with_note(error: ModelAPIError, note: str) -> ModelAPIError:
    """`error` with `note` after the server's words, of the same class and fields."""
    return type(error)(f"{error.message} · {note}", status=error.status,
                       error_type=error.error_type, retry_after=error.retry_after)


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait, from `retry-after-ms` or `retry-after` (seconds or an HTTP date)."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = headers.get(name, "").strip()
        if not raw:
            continue
        try:
            return max(0.0, float(raw) * scale)
        except ValueError:
            pass
        if name == "retry-after":
            return _retry_after_date(raw)
    return None


def _retry_after_date(raw: str) -> float | None:
    from email.utils import parsedate_to_datetime  # rare: keep it off the import path

    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
