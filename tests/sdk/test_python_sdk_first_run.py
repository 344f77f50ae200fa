"""A first run through the official Python Agent SDK (`cli_path` = wisp): no key, an
endpoint nobody listens on, and a mistyped provider each reach the SDK user as an error
they can read, in seconds."""

from __future__ import annotations

import asyncio
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from wisp.models.spec import TRY_OFFLINE
from wisp.testing import reply

sdk = pytest.importorskip(
    "claude_agent_sdk", reason="claude-agent-sdk is not installed (bash scripts/install-sdk-deps)"
)
from claude_agent_sdk import (  # noqa: E402
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    ResultError,
    ResultMessage,
    query,
)

NOT_LOGGED_IN = (
    "Not logged in · set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN; ANTHROPIC_BASE_URL for "
    f"a gateway that needs no key). To try wisp without a key: {TRY_OFFLINE}")


async def collect(opts: ClaudeAgentOptions) -> tuple[list[Any], BaseException | None]:
    seen: list[Any] = []
    try:
        async for message in query(prompt="hi", options=opts):
            seen.append(message)
    except Exception as exc:  # what the SDK raises is what a user gets
        return seen, exc
    return seen, None


def test_no_key_is_an_error_result_with_the_reason(cli: str, work: Path,
                                                   env: dict[str, str]) -> None:
    stderr: list[str] = []
    opts = ClaudeAgentOptions(cli_path=cli, cwd=str(work), stderr=stderr.append,
                              env={**env, "ANTHROPIC_BASE_URL": "", "ANTHROPIC_API_KEY": ""})
    started = time.monotonic()
    seen, raised = asyncio.run(asyncio.wait_for(collect(opts), 30))
    assert time.monotonic() - started < 10  # measured ~0.3 s
    assert isinstance(raised, ResultError)
    assert NOT_LOGGED_IN in str(raised)
    [said] = [m for m in seen if isinstance(m, AssistantMessage)]
    assert said.error == "authentication_failed"
    [result] = [m for m in seen if isinstance(m, ResultMessage)]
    assert (result.is_error, result.result) == (True, NOT_LOGGED_IN)
    assert stderr == [NOT_LOGGED_IN]


def test_an_endpoint_nobody_listens_on_fails_in_seconds(cli: str, work: Path,
                                                        env: dict[str, str]) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}"
        # The real retry defaults: the suite's fast backoff is taken away.
        plain = {k: v for k, v in env.items()
                 if k not in ("WISP_RETRY_BASE_DELAY_MS", "CLAUDE_CODE_MAX_RETRIES")}
        opts = ClaudeAgentOptions(cli_path=cli, cwd=str(work),
                                  env={**plain, "ANTHROPIC_BASE_URL": url})
        started = time.monotonic()
        _, raised = asyncio.run(asyncio.wait_for(collect(opts), 60))
        took = time.monotonic() - started
    assert isinstance(raised, ResultError)
    assert f"nothing listens at {url} (connection refused) — is ANTHROPIC_BASE_URL right?" \
        in str(raised)
    assert took < 15


def test_set_model_with_an_unknown_provider_raises(server, cli: str, work: Path,
                                                   env: dict[str, str]) -> None:
    server.script(reply.text("still on the old model"))

    async def scenario() -> tuple[str, list[Any]]:
        async with ClaudeSDKClient(ClaudeAgentOptions(cli_path=cli, cwd=str(work),
                                                      env=env)) as client:
            with pytest.raises(Exception) as caught:  # the SDK raises a bare Exception
                await client.set_model("nosuchprovider:foo")
            await client.query("hi")
            return str(caught.value), [m async for m in client.receive_response()]

    error, messages = asyncio.run(asyncio.wait_for(scenario(), 60))
    assert 'unknown provider "nosuchprovider"' in error
    assert [m.result for m in messages if isinstance(m, ResultMessage)] == [
        "still on the old model"]
    assert server.requests[0].body["model"] == "claude-opus-5-5"
