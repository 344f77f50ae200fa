"""Model specs checked before anything is sent: which prefixes are providers, which are
parts of model ids, and when a provider has neither key nor endpoint."""

from __future__ import annotations

import pytest

from wisp.models.spec import (
    TRY_OFFLINE,
    key_origin,
    missing_credentials,
    refused_note,
    split_spec,
    unknown_provider,
)

LOCAL = ["local"]


@pytest.mark.parametrize("spec", [
    "claude-opus-5-5",
    "us.anthropic.claude-sonnet-4-5-20250929-v1:0",  # Bedrock: a dot, and a version tag
    "arn:aws:bedrock:us-east-1:123456789012:inference-profile/x",
    "qwen3:8b", "llama3.1:70b", "mistral:7b", "phi:latest", "gpt-oss:20b",
    "anthropic:nosuch:foo",  # the explicit way to send a colon id to the Anthropic API
    "openai:gpt-4.1", "local:qwen3-coder",
])
def test_model_ids_and_known_providers_pass(spec: str) -> None:
    assert unknown_provider(spec, LOCAL) is None


@pytest.mark.parametrize("spec", ["nosuchprovider:foo", "opnai:gpt-4.1", "my-llm:model",
                                  "Local_Box:qwen"])
def test_a_prefix_that_reads_as_a_provider_is_unknown(spec: str) -> None:
    head = spec.partition(":")[0]
    assert unknown_provider(spec, LOCAL) == (
        f"unknown provider \"{head}\" in model \"{spec}\"; known providers: anthropic, "
        "openai, local (others are defined in settings \"providers\"; a model id with a "
        f"colon of its own goes to the Anthropic API as anthropic:{spec})")


def test_split_spec_sends_unknown_prefixes_and_tags_to_anthropic_whole() -> None:
    assert split_spec("openai:gpt-4.1", ()) == ("openai", "gpt-4.1")
    assert split_spec("local:qwen3:8b", LOCAL) == ("local", "qwen3:8b")
    assert split_spec("anthropic:qwen3:8b", ()) == ("anthropic", "qwen3:8b")
    assert split_spec("qwen3:8b", ()) == ("anthropic", "qwen3:8b")


def test_no_key_and_no_base_url_names_the_variables() -> None:
    message = missing_credentials("claude-opus-5-5", {}, [])
    assert message == (
        "Not logged in · set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN; ANTHROPIC_BASE_URL "
        f"for a gateway that needs no key). To try wisp without a key: {TRY_OFFLINE}")
    assert TRY_OFFLINE == "python -m wisp.testing.server -- wisp -p hello"


@pytest.mark.parametrize("env", [
    {"ANTHROPIC_API_KEY": "k"}, {"ANTHROPIC_AUTH_TOKEN": "t"},
    {"ANTHROPIC_BASE_URL": "http://127.0.0.1:8080"},  # a gateway: it may need no key
    {"ANTHROPIC_CUSTOM_HEADERS": "X-Api-Key: k"},
])
def test_any_credential_or_endpoint_is_enough_for_anthropic(env: dict[str, str]) -> None:
    assert missing_credentials("claude-opus-5-5", env, []) is None


def test_empty_variables_count_as_unset() -> None:
    assert missing_credentials("sonnet", {"ANTHROPIC_API_KEY": ""}, []) is not None


def test_openai_needs_its_own_variables() -> None:
    anthropic_only = {"ANTHROPIC_API_KEY": "k"}
    message = missing_credentials("openai:gpt-4.1", anthropic_only, [])
    assert message is not None and message.startswith(
        "Not logged in · set OPENAI_API_KEY for openai:gpt-4.1 (or OPENAI_BASE_URL")
    assert missing_credentials("openai:gpt-4.1", {"OPENAI_API_KEY": "k"}, []) is None
    assert missing_credentials("openai:x", {"OPENAI_BASE_URL": "http://127.0.0.1:1/v1"},
                               []) is None
    # Settings providers (an `openai` among them) always have a base URL of their own.
    assert missing_credentials("openai:gpt-4.1", {}, ["openai"]) is None
    assert missing_credentials("local:qwen", {}, LOCAL) is None


def test_an_api_key_helper_is_said_to_be_unsupported() -> None:
    message = missing_credentials("sonnet", {}, [], key_helper="/h/.claude/settings.json")
    assert message is not None
    assert "; wisp does not run the apiKeyHelper in /h/.claude/settings.json. " in message


def test_key_origin_names_each_variable_sent_and_the_settings_file_that_set_it() -> None:
    names = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
    assert key_origin(names, {}, {}) is None
    assert key_origin(names, {"ANTHROPIC_AUTH_TOKEN": "t"}, {}) == "ANTHROPIC_AUTH_TOKEN"
    both = {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_AUTH_TOKEN": "t"}
    assert key_origin(names, both, {"ANTHROPIC_API_KEY": "/p/settings.json"}) == (
        "ANTHROPIC_API_KEY (from env in /p/settings.json) and ANTHROPIC_AUTH_TOKEN")
    assert refused_note("ANTHROPIC_API_KEY", "X") == (
        "the API key from ANTHROPIC_API_KEY was refused")
    assert refused_note(None, "ANTHROPIC_API_KEY") == (
        "no API key was sent: set ANTHROPIC_API_KEY")
