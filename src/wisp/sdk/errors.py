"""Exceptions of `wisp.sdk`, in the official SDK's hierarchy so existing `except` clauses
catch the same things:

    ClaudeSDKError
    ├── CLIConnectionError
    │   └── CLINotFoundError
    ├── ProcessError
    │   └── ResultError
    ├── CLIJSONDecodeError
    └── MessageParseError

Messages are worded as the official ones, since programs sometimes match on them.
"""

from typing import Any

from wisp.jsontypes import JSON


class ClaudeSDKError(Exception):
    """Base of every error this SDK raises."""


class CLIConnectionError(ClaudeSDKError):
    """The agent process could not be reached, or the connection broke."""


class CLINotFoundError(CLIConnectionError):
    """The agent executable was not found."""

    def __init__(self, message: str = "Claude Code not found", cli_path: str | None = None):
        super().__init__(f"{message}: {cli_path}" if cli_path else message)


class ProcessError(ClaudeSDKError):
    """The agent process failed; `exit_code` and `stderr` when known."""

    def __init__(
        self, message: str, exit_code: int | None = None, stderr: str | None = None
    ) -> None:
        self.exit_code = exit_code
        self.stderr = stderr
        if exit_code is not None:
            message += f" (exit code: {exit_code})"
        if stderr:
            message += f"\nError output: {stderr}"
        super().__init__(message)


def _error_strings(raw: object) -> list[str]:
    # The CLI sends a list of strings; accept a lone string too and drop blanks and
    # non-strings, so `errors` and the message text agree.
    items = [raw] if isinstance(raw, str) else raw if isinstance(raw, list) else []
    return [item.strip() for item in items if isinstance(item, str) and item.strip()]


class ResultError(ProcessError):
    """The agent reported a failed result (`is_error`) and then exited non-zero.

    Carries the result frame's fields so callers can branch on why the run failed:
    `subtype`, `errors`, `result`, `api_error_status`, `terminal_reason`, `session_id`,
    and the whole frame as `data`. A `ProcessError`, so existing handlers still catch it.
    """

    def __init__(
        self, message: str, data: dict[str, Any] | None = None, exit_code: int | None = None
    ) -> None:
        # `data` may be missing: pickle and copy rebuild exceptions from `args` alone and
        # restore the attributes from `__dict__` afterwards.
        frame: dict[str, Any] = data if isinstance(data, dict) else {}
        self.data = frame
        self.subtype: str | None = _str_or_none(frame.get("subtype"))
        self.errors: list[str] = _error_strings(frame.get("errors"))
        self.result: str | None = _str_or_none(frame.get("result"))
        status = frame.get("api_error_status")
        self.api_error_status: int | None = status if isinstance(status, int) else None
        self.terminal_reason: str | None = _str_or_none(frame.get("terminal_reason"))
        self.session_id: str | None = _str_or_none(frame.get("session_id"))
        super().__init__(message, exit_code=exit_code)


def _str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def result_error_text(result: JSON) -> str:
    """The most telling text of an error result: its errors, its result text, a subtype
    other than "success", its HTTP status."""
    errors = [str(e) for e in result.get("errors") or [] if str(e).strip()] if isinstance(
        result.get("errors"), list) else []
    if errors:
        return "; ".join(errors)
    text = result.get("result")
    if isinstance(text, str) and text.strip():
        return text.strip()
    subtype = result.get("subtype")
    if isinstance(subtype, str) and subtype and subtype != "success":
        return subtype
    status = result.get("api_error_status")
    return f"API error status {status}" if status is not None else "unknown error"


class CLIJSONDecodeError(ClaudeSDKError):
    """A line of the agent's output was not JSON."""

    def __init__(self, line: str, original_error: Exception) -> None:
        self.line = line
        self.original_error = original_error
        super().__init__(f"Failed to decode JSON: {line[:100]}...")


class MessageParseError(ClaudeSDKError):
    """A frame of the agent's output could not be turned into a message; `data` is it."""

    def __init__(self, message: str, data: dict[str, Any] | None = None) -> None:
        self.data = data
        super().__init__(message)
