"""A 401 says where the refused key came from: the variable, the settings file whose `env`
set it, or the settings provider's `api_key_env`; or that no key was sent at all."""

from __future__ import annotations

import json

import pytest

from tests.conftest import Runner
from wisp.testing import ScriptedServer, reply

STREAM = ("--output-format", "stream-json", "--verbose")


def refused(wisp: Runner, server: ScriptedServer, *args: str,
            env: dict[str, str] | None = None) -> str:
    before = len(server.requests)
    server.script(reply.error(401, "invalid x-api-key"))
    run = wisp("-p", "hi", *STREAM, *args, env=env)
    assert run.returncode == 1
    assert len(server.requests) == before + 1  # a 401 is not retried
    assert run.result["api_error_status"] == 401
    result: str = run.result["result"]
    return result


@pytest.mark.parametrize(("env", "origin"), [
    ({}, "ANTHROPIC_API_KEY"),
    ({"ANTHROPIC_API_KEY": "", "ANTHROPIC_AUTH_TOKEN": "tok"}, "ANTHROPIC_AUTH_TOKEN"),
    ({"ANTHROPIC_AUTH_TOKEN": "tok"}, "ANTHROPIC_API_KEY and ANTHROPIC_AUTH_TOKEN"),
])
def test_the_variable_that_supplied_the_key(wisp, server, env, origin):
    assert refused(wisp, server, env=env) == (
        f"API Error: 401 invalid x-api-key · the API key from {origin} was refused")


def test_a_key_set_by_settings_env_names_the_file(wisp, server):
    settings = wisp.cwd / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"env": {"ANTHROPIC_API_KEY": "sk-from-settings"}}))
    wisp.trust()  # an untrusted folder's env is held back
    assert refused(wisp, server) == (
        "API Error: 401 invalid x-api-key · the API key from ANTHROPIC_API_KEY (from env in "
        f"{settings}) was refused")
    assert server.requests[0].headers["x-api-key"] == "sk-from-settings"


def test_a_gateway_that_wanted_a_key_gets_told_none_was_sent(wisp, server):
    assert refused(wisp, server, env={"ANTHROPIC_API_KEY": ""}) == (
        "API Error: 401 invalid x-api-key · no API key was sent: set ANTHROPIC_API_KEY")


def test_the_openai_key(wisp, server):
    env = {"OPENAI_BASE_URL": server.openai_url, "OPENAI_API_KEY": "sk-oa"}
    assert refused(wisp, server, "--model", "openai:gpt-4.1", env=env) == (
        "API Error: 401 invalid x-api-key (HTTP 401) · the API key from OPENAI_API_KEY was "
        "refused")


def test_a_settings_provider_names_its_api_key_env(wisp, server):
    settings = wisp.cwd / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"providers": {"local": {
        "base_url": server.openai_url, "api_key_env": "LOCAL_KEY"}}}))
    wisp.trust()
    named = f"named by providers.local.api_key_env in {settings}"
    assert refused(wisp, server, "--model", "local:qwen3", env={"LOCAL_KEY": "k"}) == (
        f"API Error: 401 invalid x-api-key (HTTP 401) · the API key from LOCAL_KEY ({named}) "
        "was refused")
    assert refused(wisp, server, "--model", "local:qwen3") == (
        f"API Error: 401 invalid x-api-key (HTTP 401) · no API key was sent: LOCAL_KEY "
        f"({named}) is not set")
