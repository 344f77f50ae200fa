from __future__ import annotations

import time
from email.utils import formatdate

import pytest

from wisp.errors import ModelAPIError, RetryableAPIError
from wisp.models.anthropic import (
    AnthropicConfig,
    encode_body,
    parse_custom_headers,
    request_headers,
    retry_after,
    status_error,
)
from wisp.models.base import ModelRequest


def test_from_env_defaults() -> None:
    config = AnthropicConfig.from_env({})
    assert config.base_url == "https://api.anthropic.com"
    assert config.messages_url == "https://api.anthropic.com/v1/messages"
    assert (config.api_key, config.auth_token, config.betas, config.headers) == (None, None, (), ())
    assert config.timeout == 600.0
    assert config.user_agent.startswith("wisp/")


def test_from_env_reads_every_variable() -> None:
    config = AnthropicConfig.from_env(
        {
            "ANTHROPIC_BASE_URL": "http://127.0.0.1:8765/prefix/",
            "ANTHROPIC_API_KEY": "sk-1",
            "ANTHROPIC_AUTH_TOKEN": "tok",
            "ANTHROPIC_BETAS": "a, b,,",
            "ANTHROPIC_CUSTOM_HEADERS": "X-One: 1\nbroken line\n: no name\nX-Two:  two words ",
            "API_TIMEOUT_MS": "2500",
        }
    )
    assert config.messages_url == "http://127.0.0.1:8765/prefix/v1/messages"
    assert (config.api_key, config.auth_token, config.betas) == ("sk-1", "tok", ("a", "b"))
    assert config.headers == (("X-One", "1"), ("X-Two", "two words"))
    assert config.timeout == 2.5


def test_custom_headers_override_defaults() -> None:
    config = AnthropicConfig(headers=parse_custom_headers("User-Agent: mine\nX-Extra: e"))
    headers = request_headers(config, ModelRequest("m", [], 1))
    assert headers["user-agent"] == "mine"
    assert headers["x-extra"] == "e"
    assert "x-api-key" not in headers and "x-claude-code-session-id" not in headers


def test_a_non_json_error_body_becomes_the_message() -> None:
    error = status_error(502, b"<html>Bad Gateway</html>", {})
    assert isinstance(error, RetryableAPIError)
    assert (error.status, error.message, error.error_type) == (
        502,
        "<html>Bad Gateway</html>",
        None,
    )
    assert status_error(503, b"", {}).message == "HTTP 503 from the API"


def test_unknown_statuses_are_not_retryable_but_x_should_retry_overrides() -> None:
    body = b'{"type":"error","error":{"type":"authentication_error","message":"bad key"}}'
    error = status_error(401, body, {})
    assert type(error) is ModelAPIError
    assert (error.message, error.error_type) == ("bad key", "authentication_error")
    assert isinstance(status_error(401, body, {"x-should-retry": "true"}), RetryableAPIError)
    assert type(status_error(529, body, {"x-should-retry": "false"})) is ModelAPIError


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "3"}, 3.0),
        ({"retry-after": "0.5"}, 0.5),
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
        ({"retry-after": "soon"}, None),
        ({}, None),
    ],
)
def test_retry_after(headers: dict[str, str], expected: float | None) -> None:
    assert retry_after(headers) == expected


def test_retry_after_as_an_http_date() -> None:
    value = retry_after({"retry-after": formatdate(time.time() + 30, usegmt=True)})
    assert value is not None and 25 < value <= 30


def test_bodies_are_compact_utf8_and_survive_lone_surrogates() -> None:
    assert encode_body({"a": "é", "b": [1, 2]}) == '{"a":"é","b":[1,2]}'.encode()
    assert encode_body({"a": "x\udcff"}) == b'{"a":"x\\udcff"}'
