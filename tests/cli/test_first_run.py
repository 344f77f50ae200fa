"""A first run that explains itself: with no key and no endpoint the real `wisp` says which
variable to set and exits 1 at once, sending nothing; a model spec whose provider nobody
defined is an error naming the known ones. (Unreachable endpoints: test_unreachable.py.)"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator

import pytest

from tests.conftest import Runner, WispRun
from wisp.models.spec import TRY_OFFLINE
from wisp.testing import ScriptedServer, reply

NOT_LOGGED_IN = (
    "Not logged in · set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN; ANTHROPIC_BASE_URL for "
    f"a gateway that needs no key). To try wisp without a key: {TRY_OFFLINE}")
STREAM = ("--output-format", "stream-json", "--verbose")


class Trap:
    """A listening socket on 127.0.0.1 given as the HTTP(S) proxy: any connection wisp
    tried to open to a model API would wait in its queue (and go nowhere else)."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def untouched(self) -> bool:
        self.sock.setblocking(False)
        try:
            conn, _ = self.sock.accept()
        except BlockingIOError:
            return True
        conn.close()
        return False


@pytest.fixture
def trap() -> Iterator[Trap]:
    t = Trap()
    yield t
    t.sock.close()


@pytest.fixture
def fresh(wisp: Runner, trap: Trap) -> Runner:
    """A new user's environment: no key, no base URL, no model settings of any kind."""
    for name in list(wisp.env):
        if name.startswith(("ANTHROPIC_", "OPENAI_")) or name.lower().endswith("_proxy"):
            del wisp.env[name]
    wisp.env.update({"HTTPS_PROXY": trap.url, "HTTP_PROXY": trap.url})
    return wisp


def timed(run: Runner, *args: str, env: dict[str, str] | None = None) -> tuple[WispRun, float]:
    started = time.monotonic()
    result = run(*args, env=env)
    return result, time.monotonic() - started


def test_no_key_text_is_one_line_naming_the_variable_and_exit_1_at_once(fresh, trap):
    run, took = timed(fresh, "-p", "hi")
    assert run.returncode == 1
    assert run.stdout == ""
    assert run.stderr == NOT_LOGGED_IN + "\n"
    assert took < 3.0  # the python start-up included; measured ~0.1 s
    assert trap.untouched()


def test_no_key_json_answers_an_error_result(fresh, trap):
    run, took = timed(fresh, "-p", "hi", "--output-format", "json")
    assert run.returncode == 1
    result = json.loads(run.stdout)
    assert (result["type"], result["subtype"], result["is_error"]) == ("result", "success", True)
    assert result["result"] == NOT_LOGGED_IN
    assert result["terminal_reason"] == "api_error" and result["api_error_status"] is None
    assert run.stderr == NOT_LOGGED_IN + "\n"
    assert took < 3.0
    assert trap.untouched()


def test_no_key_stream_json_answers_as_a_failed_model_call(fresh, trap):
    run = fresh("-p", "hi", *STREAM)
    assert run.returncode == 1
    assert run.kinds() == ["system/init", "assistant", "result"]
    init, said, result = run.frames
    assert init["apiKeySource"] == "none"
    assert said["message"]["content"] == [{"type": "text", "text": NOT_LOGGED_IN}]
    assert said["error"] == "authentication_failed" and said["is_api_error_message"] is True
    assert result["is_error"] is True and result["result"] == NOT_LOGGED_IN
    assert {said["session_id"], result["session_id"]} == {init["session_id"]}
    assert run.stderr == NOT_LOGGED_IN + "\n"
    assert trap.untouched()


def test_the_frames_match_a_model_call_refused_inside_the_engine(fresh):
    """Print mode writes the frames itself, before the engine loads; a duplex turn gets
    them from the projection. Both must look alike to a client."""
    early = fresh("-p", "hi", *STREAM)
    engine = fresh(*STREAM, "--input-format", "stream-json", input=json.dumps({
        "type": "user", "message": {"role": "user", "content": "hi"},
        "parent_tool_use_id": None, "session_id": ""}) + "\n")
    assert engine.returncode == 1
    assert engine.kinds() == early.kinds() == ["system/init", "assistant", "result"]
    for mine, theirs in zip(early.frames[1:], engine.frames[1:], strict=True):
        assert set(mine) == set(theirs)
        assert {k: v for k, v in mine.items() if k not in ("uuid", "session_id", "timestamp",
                                                            "message", "duration_ms",
                                                            "duration_api_ms")} == {
            k: v for k, v in theirs.items() if k not in ("uuid", "session_id", "timestamp",
                                                         "message", "duration_ms",
                                                         "duration_api_ms")}
    assert early.frames[1]["message"]["content"] == engine.frames[1]["message"]["content"]


def test_an_openai_spec_names_the_openai_variables(fresh, trap):
    run = fresh("-p", "hi", "--model", "openai:gpt-4.1", env={"ANTHROPIC_API_KEY": "sk-a"})
    assert run.returncode == 1
    assert run.stderr == (
        "Not logged in · set OPENAI_API_KEY for openai:gpt-4.1 (or OPENAI_BASE_URL for a "
        f"server that needs no key). To try wisp without a key: {TRY_OFFLINE}\n")
    assert trap.untouched()


def test_an_api_key_helper_in_settings_is_named_not_silently_ignored(fresh):
    settings = fresh.cwd / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"apiKeyHelper": "echo sk-from-helper"}))
    fresh.trust()  # an untrusted folder's helper is held back before it is looked at
    run = fresh("-p", "hi")
    assert run.returncode == 1
    assert f"wisp does not run the apiKeyHelper in {settings}." in run.stderr
    assert "set ANTHROPIC_API_KEY" in run.stderr


def test_a_base_url_without_a_key_is_a_gateway_and_is_asked(fresh, server):
    server.script(reply.text("from the gateway"))
    run = fresh("-p", "hi", env={"ANTHROPIC_BASE_URL": server.url})
    assert (run.returncode, run.stdout) == (0, "from the gateway\n")
    assert "x-api-key" not in server.requests[0].headers


def test_a_key_or_url_from_settings_env_counts(fresh, server):
    (fresh.home / ".wisp").mkdir()
    (fresh.home / ".wisp" / "settings.json").write_text(json.dumps(
        {"env": {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "sk-settings"}}))
    server.script(reply.text("ok"))
    run = fresh("-p", "hi")
    assert (run.returncode, run.stdout) == (0, "ok\n")
    assert server.requests[0].headers["x-api-key"] == "sk-settings"


# Unknown provider prefixes ---------------------------------------------------------------

UNKNOWN = ('Error: unknown provider "nosuchprovider" in model "nosuchprovider:foo"; known '
           "providers: anthropic, openai{more} (others are defined in settings \"providers\"; "
           "a model id with a colon of its own goes to the Anthropic API as "
           "anthropic:nosuchprovider:foo)\n")


@pytest.mark.parametrize("output", [(), STREAM])
def test_an_unknown_provider_is_an_error_listing_the_known_ones(wisp, server, output):
    run = wisp("-p", "hi", "--model", "nosuchprovider:foo", *output)
    assert run.returncode == 1
    assert run.stderr == UNKNOWN.format(more="")
    assert run.stdout == ""
    assert server.requests == []


def test_an_unknown_provider_from_the_environment_or_settings(wisp, server):
    run = wisp("-p", "hi", env={"ANTHROPIC_MODEL": "nosuchprovider:foo"})
    assert (run.returncode, run.stderr) == (1, UNKNOWN.format(more=""))
    settings = wisp.cwd / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"model": "nosuchprovider:foo", "providers": {
        "local": {"base_url": "http://127.0.0.1:9/v1"}}}))
    wisp.trust()  # providers are a grant: an untrusted folder's are held back
    run = wisp("-p", "hi")
    assert (run.returncode, run.stderr) == (1, UNKNOWN.format(more=", local"))
    run = wisp("-p", "hi", "--fallback-model", "nosuchprovider:foo")
    assert (run.returncode, run.stderr) == (1, UNKNOWN.format(more=", local"))
    assert server.requests == []


@pytest.mark.parametrize(("spec", "sent"), [
    ("us.anthropic.claude-sonnet-4-5-20250929-v1:0",
     "us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
    ("qwen3:8b", "qwen3:8b"),
    ("anthropic:nosuchprovider:foo", "nosuchprovider:foo"),
])
def test_model_ids_with_a_colon_still_reach_the_api(wisp, server: ScriptedServer, spec, sent):
    server.script(reply.text("ok"))
    run = wisp("-p", "hi", "--model", spec)
    assert (run.returncode, run.stdout) == (0, "ok\n"), run.stderr
    assert server.requests[0].body["model"] == sent
