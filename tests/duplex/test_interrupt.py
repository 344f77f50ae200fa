"""`interrupt` during streaming and during a tool (docs/protocol.md, "Interrupts"): the turn ends
with an
`error_during_execution` result and the session stays usable."""

from __future__ import annotations

from tests.cli.test_interrupts import pid_alive, wait_for
from tests.duplex.harness import texts_of
from wisp.testing import reply

SANDBOX = {"IS_SANDBOX": "1"}


def test_interrupt_during_streaming(duplex, server):
    server.script(
        reply.slow("slow hello from a very slow model", delay_per_event=0.2),
        reply.text("after interrupt"),
    )
    wisp = duplex("--include-partial-messages")
    wisp.initialize()
    wisp.user("go slowly")
    wisp.wait_frame("stream_event", count=4)  # message_start, block start, two deltas
    assert wisp.call("interrupt")["response"] == {"still_queued": []}
    result = wisp.wait_frame("result")
    assert result["subtype"] == "error_during_execution"
    assert result["is_error"] is True
    assert result["terminal_reason"] == "aborted_streaming"
    assert isinstance(result["errors"], list) and result["errors"]

    partial = wisp.of("assistant")[-1]
    assert partial["aborted"] is True
    assert partial["message"]["content"][0]["text"]
    assert "slow hello from a very slow model".startswith(partial["message"]["content"][0]["text"])
    interrupted = wisp.of("user")[-1]
    assert texts_of(interrupted) == ["[Request interrupted by user]"]
    kinds = [f["type"] for f in wisp.frames]
    assert kinds.index("assistant") < kinds.index("user") < kinds.index("result")
    events = [f["event"]["type"] for f in wisp.of("stream_event")]
    assert events.count("message_start") == events.count("message_stop")

    wisp.user("after")
    assert wisp.wait_frame("result", count=2)["result"] == "after interrupt"
    assert wisp.finish() == 0
    # The next request holds the partial answer and the interruption note.
    history = server.requests[1].body["messages"]
    assert history[1]["role"] == "assistant"
    assert "[Request interrupted by user]" in str(history[2])


def test_interrupt_during_a_tool(duplex, server, tmp_path):
    pidfile = tmp_path / "sleeper.pid"
    command = f"sleep 300 & echo $! > {pidfile}; wait"
    server.script(reply.tool_use("Bash", {"command": command}), reply.text("after"))
    wisp = duplex("--permission-mode", "bypassPermissions", env=SANDBOX)
    wisp.user("sleep")
    assert wait_for(lambda: pidfile.exists() and pidfile.read_text().strip() != "")
    sleeper = int(pidfile.read_text())
    assert wisp.call("interrupt")["response"] == {"still_queued": []}
    result = wisp.wait_frame("result")
    assert result["subtype"] == "error_during_execution"
    assert result["terminal_reason"] == "aborted_tools"
    assert wait_for(lambda: not pid_alive(sleeper), timeout=5)

    users = wisp.of("user")
    tool_result = users[-2]["message"]["content"][0]
    assert tool_result["type"] == "tool_result" and tool_result["is_error"] is True
    assert texts_of(users[-1]) == ["[Request interrupted by user for tool use]"]

    wisp.user("next")
    assert wisp.wait_frame("result", count=2)["result"] == "after"
    assert wisp.finish() == 0
    # The history stays valid: the tool_use got its tool_result.
    history = server.requests[1].body["messages"]
    assert history[2]["content"][0]["type"] == "tool_result"


def test_interrupt_reports_prompts_still_queued(duplex, server):
    server.script(reply.slow("slow " * 20, delay_per_event=0.2), reply.text("second"))
    wisp = duplex("--include-partial-messages")
    wisp.user("first")
    wisp.wait_frame("stream_event", count=3)
    wisp.user("second")
    response = wisp.call("interrupt")
    assert response["subtype"] == "success"
    results = wisp.wait_frame("result", count=2)
    assert results["result"] == "second"  # an interrupt ends the running turn only
    assert wisp.finish() == 0
    assert response["response"]["still_queued"] == []


def test_sigint_interrupts_the_turn_and_the_session_survives(duplex, server):
    import signal

    server.script(reply.slow("slow " * 20, delay_per_event=0.2), reply.text("ok"))
    wisp = duplex("--include-partial-messages")
    wisp.user("first")
    wisp.wait_frame("stream_event", count=3)
    wisp.proc.send_signal(signal.SIGINT)
    assert wisp.wait_frame("result")["subtype"] == "error_during_execution"
    wisp.user("again")
    assert wisp.wait_frame("result", count=2)["result"] == "ok"
    assert wisp.finish() == 0


def test_after_an_interrupt_eof_exits_1(duplex, server):
    server.script(reply.slow("slow " * 20, delay_per_event=0.2))
    wisp = duplex("--include-partial-messages")
    wisp.user("first")
    wisp.wait_frame("stream_event", count=3)
    wisp.call("interrupt")
    wisp.wait_frame("result")
    assert wisp.finish() == 1


def test_interrupt_before_the_turn_starts_still_ends_it(duplex, server):
    """An interrupt while the turn waits on the MCP handshake: that turn must not run."""
    from tests.duplex.test_mcp_message import PY_CONFIG, serve_handshake

    server.script(reply.text("never asked"), reply.text("next"))
    wisp = duplex("--mcp-config", PY_CONFIG)
    wisp.user("first")
    wisp.wait_request("mcp_message")
    assert wisp.call("interrupt")["response"] == {"still_queued": []}
    serve_handshake(wisp)
    result = wisp.wait_frame("result")
    assert result["subtype"] == "error_during_execution" and result["is_error"] is True
    assert server.requests == []
    wisp.user("second")
    assert wisp.wait_frame("result", count=2)["result"] == "never asked"
    assert wisp.finish() == 0
