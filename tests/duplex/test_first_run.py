"""The SDK protocol on a first run: no key ends each turn with the reason as an error result
(never a hang), a bad model spec is an error answer, and an endpoint that worked earlier
in the session keeps the full retry policy when it goes away."""

from __future__ import annotations

from wisp.models.spec import TRY_OFFLINE
from wisp.testing import reply

NO_KEY = {"ANTHROPIC_BASE_URL": "", "ANTHROPIC_API_KEY": ""}
NOT_LOGGED_IN = (
    "Not logged in · set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN; ANTHROPIC_BASE_URL for "
    f"a gateway that needs no key). To try wisp without a key: {TRY_OFFLINE}")


def test_without_a_key_each_turn_ends_with_the_reason(duplex, server):
    wisp = duplex(env={**NO_KEY, "OPENAI_BASE_URL": server.openai_url})
    assert wisp.initialize()["response"]["account"]["apiKeySource"] == "none"
    wisp.user("hi")
    said = wisp.wait_frame("assistant", timeout=5)
    result = wisp.wait_frame("result", timeout=5)
    assert said["error"] == "authentication_failed"
    assert said["message"]["content"] == [{"type": "text", "text": NOT_LOGGED_IN}]
    assert (result["is_error"], result["result"]) == (True, NOT_LOGGED_IN)
    # The session lives on: a model whose provider can be reached works.
    server.script(reply.text("from a local server"))
    assert wisp.call("set_model", model="openai:gpt-test")["subtype"] == "success"
    wisp.user("again")
    assert wisp.wait_frame("result", count=2)["result"] == "from a local server"
    assert wisp.finish() == 0
    assert wisp.stderr == NOT_LOGGED_IN + "\n"  # once, at start: the host's log
    assert len(server.requests) == 1


def test_the_exit_status_is_1_when_the_last_turn_failed(duplex):
    wisp = duplex(env=NO_KEY)
    wisp.user("hi")
    wisp.wait_frame("result", timeout=5)
    assert wisp.finish() == 1


def test_set_model_with_an_unknown_provider_is_an_error_answer(duplex, server):
    server.script(reply.text("ok"))
    wisp = duplex()
    assert wisp.call("set_model", model="sonnet")["subtype"] == "success"
    answer = wisp.call("set_model", model="nosuchprovider:foo")
    assert answer["subtype"] == "error"
    assert answer["error"].startswith(
        'unknown provider "nosuchprovider" in model "nosuchprovider:foo"; known providers: '
        "anthropic, openai")
    wisp.user("hi")
    wisp.wait_frame("result")
    assert wisp.finish() == 0
    assert server.requests[0].body["model"] == "claude-sonnet-5-5"  # unchanged by the error


def test_an_endpoint_that_answered_before_keeps_the_full_retry_policy(duplex, server):
    server.script(reply.text("first"))
    wisp = duplex()  # the suite's CLAUDE_CODE_MAX_RETRIES=3, fast backoff
    wisp.user("hi")
    assert wisp.wait_frame("result")["result"] == "first"
    server.close()  # the same address now refuses: a restart, a blip
    wisp.user("again")
    result = wisp.wait_frame("result", count=2)
    retries = wisp.of("system", "api_retry")
    assert [(r["attempt"], r["max_retries"]) for r in retries] == [(1, 3), (2, 3), (3, 3)]
    assert result["result"].startswith(f"API Error: nothing listens at {server.url} ")
    assert wisp.finish() == 1
