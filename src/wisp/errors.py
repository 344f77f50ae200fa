"""The one exception tree of wisp, named by what a caller can do about it.

    WispError
    ├── UsageError            bad argv / config: print to stderr, exit 1, no API call
    ├── ModelAPIError         the model server failed us
    │   ├── RetryableAPIError   429/5xx/529, connection failures, streams cut short
    │   │   └── Unreachable       no connection at all (DNS, refused, TLS, connect timeout):
    │   │                         a short retry, then a line naming the endpoint and cause
    │   ├── MissingCredentials  no key and no endpoint for the provider: nothing was sent
    │   └── (plain)             400/401/403/404 and malformed streams: fail fast
    ├── ToolError             a tool could not do what was asked: becomes an is_error tool_result
    ├── ProtocolError         a peer sent something we cannot parse
    ├── ControlError          a control handler refuses a request: an error answer, session goes on
    │   └── InvalidRequest      the request's fields are missing or of the wrong type
    ├── RequestFailed         the peer answered our control request with an error, withdrew
    │                         it, or went away: the caller falls back (a denial, a failed hook)
    └── McpError              an MCP server failed: that server (or that call) fails, not the run
        └── McpTimeout          a request went unanswered for its whole timeout
"""

from __future__ import annotations


class WispError(Exception):
    """Root of every error wisp raises on purpose."""


class UsageError(WispError):
    """The invocation is wrong. The message is shown verbatim after 'Error: '."""


class ModelAPIError(WispError):
    """The model API failed. `status` is the HTTP status, None for transport failures."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        error_type: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.error_type = error_type
        self.retry_after = retry_after


class RetryableAPIError(ModelAPIError):
    """A failure worth retrying with backoff (rate limit, overload, 5xx, dropped connection)."""


class StreamCutError(RetryableAPIError):
    """The SSE stream ended before `message_stop`."""


class Unreachable(RetryableAPIError):
    """No connection could be opened. `cause` is one of "refused", "dns", "tls", "timeout",
    "network", "proxy" or "other"; `reason` says it in a few words ("connection refused").
    A provider that knows where its URL came from sets `endpoint` (the URL's origin) and
    `hint` (one line naming the endpoint, the likely cause and the setting to check).
    `reached_before`: this session had connected to the same place, so the failure is
    likelier to pass (the full retry policy applies) than a wrong URL on a first run."""

    def __init__(self, message: str, *, cause: str, reason: str, endpoint: str = "",
                 hint: str = "", reached_before: bool = False) -> None:
        super().__init__(message)
        self.cause = cause
        self.reason = reason
        self.endpoint = endpoint
        self.hint = hint
        self.reached_before = reached_before


class MissingCredentials(ModelAPIError):
    """Neither a key nor an endpoint for the chosen provider (`wisp.models.spec`): the
    request was never sent. The message says which variable to set."""

    def __init__(self, message: str) -> None:
        super().__init__(message, error_type="authentication_error")


class ToolError(WispError):
    """A tool failed in a way the model should hear about."""


class ProtocolError(WispError):
    """A peer sent a frame we cannot interpret."""


class ControlError(WispError):
    """A handler's refusal, sent as `{"subtype":"error","error":…,"error_code":…}`."""

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.code = code


class InvalidRequest(ControlError):
    """A control request that fails its type's checks. The message names the field."""


class RequestFailed(WispError):
    """The peer answered an outbound request with an error, withdrew it, or went away."""


class ChannelClosed(RequestFailed):
    """The request was never sent: the host closed its end (stdin EOF) before it."""


class McpError(WispError):
    """An MCP server could not be started, reached, or answered with an error."""


class McpTimeout(McpError):
    """A request to an MCP server went unanswered for its whole timeout."""


RETRYABLE_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
