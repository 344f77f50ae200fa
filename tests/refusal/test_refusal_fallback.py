"""A refusal with a fallback model (`--fallback-model`): the refused preview is retracted
(`system/model_refusal_fallback` names the uuids of the frames that showed it, and the
API's `stop_details`), the fallback model answers the same request without seeing it, and
serves the rest of the session. Through `wisp -p` and through the official Python SDK."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.refrun import Place, have_reference, kind, print_run
from wisp.testing import ScriptedServer, reply
from wisp.testing.reply import MessageReply, Served

JSON = dict[str, Any]
REFUSED = "I won't help with that."
DETAILS = {"category": "cyber", "explanation": "looks like an exploit"}


@dataclass(frozen=True)
class Refusal(MessageReply):
    """A text reply that ends in a refusal whose `message_delta` carries `stop_details`."""

    details: JSON | None = None

    def render(self, body: JSON, body_size: int) -> Served:
        served = super().render(body, body_size)
        events = tuple(
            (name, json.dumps({**(d := json.loads(data)),
                               "delta": {**d["delta"], "stop_details": self.details}}))
            if name == "message_delta" and self.details else (name, data)
            for name, data in served.events)
        return Served(events=events)


def refusal(details: JSON | None = DETAILS) -> Refusal:
    return Refusal(({"type": "text", "text": REFUSED},), "refusal", details=details)


def _texts(body: JSON) -> list[str]:
    return [b.get("text", "") if isinstance(b, dict) else b for m in body["messages"]
            for b in (m["content"] if isinstance(m["content"], list) else [m["content"]])]


def test_print_mode_retracts_the_refusal_and_the_fallback_answers(wisp, server):
    server.script(refusal(), reply.text("the answer"))
    run = wisp("-p", "do it", "--output-format", "stream-json", "--verbose",
               "--model", "claude-opus-5-5", "--fallback-model", "claude-sonnet-5")
    assert run.returncode == 0, run.stderr
    refused = [f for f in run.frames if f.get("type") == "assistant"
               and f["message"]["content"][0].get("text") == REFUSED]
    [switch] = [f for f in run.frames if f.get("subtype") == "model_refusal_fallback"]
    assert switch["retracted_message_uuids"] == [f["uuid"] for f in refused] != []
    assert {k: switch[k] for k in ("trigger", "direction", "scope", "original_model",
                                   "fallback_model", "api_refusal_category",
                                   "api_refusal_explanation", "level")} == {
        "trigger": "refusal", "direction": "retry", "scope": "session",
        "original_model": "claude-opus-5-5", "fallback_model": "claude-sonnet-5",
        "api_refusal_category": "cyber", "api_refusal_explanation": "looks like an exploit",
        "level": "warning"}
    assert "Sonnet 5" in switch["content"] and switch["request_id"]
    result = run.frames[-1]
    assert (result["subtype"], result["is_error"], result["result"]) == (
        "success", False, "the answer")
    first, second = (r.body for r in server.requests if r.body)
    assert (first["model"], second["model"]) == ("claude-opus-5-5", "claude-sonnet-5")
    assert REFUSED not in _texts(second) and second["messages"] == first["messages"]


def test_without_a_category_and_then_a_second_refusal_the_note_then_the_end(wisp, server):
    """The fallback is tried once a turn; its own refusal gets the usual retry, then the
    reference's error (`model_refusal_no_fallback`)."""
    server.script(refusal(None), refusal(None), refusal(None))
    run = wisp("-p", "do it", "--output-format", "stream-json", "--verbose",
               "--model", "claude-opus-5-5", "--fallback-model", "claude-sonnet-5")
    assert run.returncode == 1
    kinds = [f.get("subtype") for f in run.frames if f.get("type") == "system"]
    assert kinds.count("model_refusal_fallback") == 1 and "model_refusal_no_fallback" in kinds
    [switch] = [f for f in run.frames if f.get("subtype") == "model_refusal_fallback"]
    assert switch["api_refusal_category"] is None
    assert [r.body["model"] for r in server.requests if r.body] == ["claude-opus-5-5"] + [
        "claude-sonnet-5"] * 2


def test_the_same_fallback_through_the_official_python_sdk(
        server: ScriptedServer, tmp_path: Path) -> None:
    sdk = pytest.importorskip("claude_agent_sdk", reason="bash scripts/install-sdk-deps")
    from tests.sdk.conftest import sdk_env, wisp_executable

    server.script(refusal(), reply.text("the answer"), reply.text("still the fallback"))
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    opts = sdk.ClaudeAgentOptions(cli_path=wisp_executable(tmp_path), cwd=str(work),
                                  env=sdk_env(server, home), model="claude-opus-5-5",
                                  fallback_model="claude-sonnet-5")

    async def converse() -> list[Any]:
        async with sdk.ClaudeSDKClient(opts) as client:
            seen: list[Any] = []
            for prompt in ("do it", "and again"):
                await client.query(prompt)
                seen.extend([m async for m in client.receive_response()])
            return seen

    messages = asyncio.run(asyncio.wait_for(converse(), 60))
    [switch] = [m for m in messages if isinstance(m, sdk.SystemMessage)
                and m.subtype == "model_refusal_fallback"]
    refused = [m for m in messages if isinstance(m, sdk.AssistantMessage)
               and any(getattr(b, "text", None) == REFUSED for b in m.content)]
    assert switch.data["retracted_message_uuids"] == [m.uuid for m in refused] != []
    assert switch.data["api_refusal_category"] == "cyber"
    results = [m.result for m in messages if isinstance(m, sdk.ResultMessage)]
    assert results == ["the answer", "still the fallback"]
    # the fallback serves the session from then on
    assert [r.body["model"] for r in server.requests if r.body][-1] == "claude-sonnet-5"


@pytest.mark.skipif(not have_reference(), reason="the reference CLI is not installed")
def test_the_reference_offline_does_not_fall_back(tmp_path: Path) -> None:
    """What docs/protocol.md says wisp differs in: the reference, with --fallback-model and
    a category, asks the same model again (its switch is behind server-side flags)."""
    with ScriptedServer() as server:
        server.script(refusal(), reply.text("the answer"))
        code, _, frames = print_run(
            "reference", Place(tmp_path, server), "-p", "do it", "--output-format",
            "stream-json", "--verbose", "--model", "claude-opus-4-8", "--fallback-model",
            "claude-sonnet-4-6")
        models = [r.body["model"] for r in server.requests if r.body]
    assert code == 0 and "system/model_refusal_fallback" not in [kind(f) for f in frames]
    assert models == ["claude-opus-4-8", "claude-opus-4-8"]


def test_in_a_subagent_only_the_subagent_switches(wisp, server):
    server.script(reply.tool_use("Task", {"description": "look", "prompt": "look around",
                                          "subagent_type": "general-purpose"}),
                  refusal(), reply.text("the subagent's answer"), reply.text("all done"))
    run = wisp("-p", "do it", "--output-format", "stream-json", "--verbose",
               "--model", "claude-opus-5-5", "--fallback-model", "claude-sonnet-5")
    assert run.returncode == 0, run.stderr
    assert [r.body["model"] for r in server.requests if r.body] == [
        "claude-opus-5-5", "claude-opus-5-5", "claude-sonnet-5", "claude-opus-5-5"]
    [switch] = [f for f in run.frames if f.get("subtype") == "model_refusal_fallback"]
    assert switch["scope"] == "local" and "unchanged" in switch["content"]
    assert run.frames[-1]["result"] == "all done"
