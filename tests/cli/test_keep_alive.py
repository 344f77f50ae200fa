"""The real binary reuses one kept-alive connection across its model calls, and exits
without a word on stderr about sockets left open."""

from __future__ import annotations

from wisp.testing import reply

# Unclosed sockets would be reported as ResourceWarnings, which are hidden by default.
WARN = {"PYTHONWARNINGS": "always::ResourceWarning"}


def model_calls(server):
    return [r for r in server.requests if r.path.startswith("/v1/messages")]


def test_print_mode_tool_round_trip_uses_one_connection(wisp, server):
    server.script(reply.tool_use("Bash", {"command": "echo hi"}), reply.text("done"))
    run = wisp("-p", "x", "--allowedTools", "Bash", "--output-format", "stream-json",
               "--verbose", env=WARN)
    assert run.returncode == 0, run.stderr
    assert run.result["result"] == "done"
    calls = model_calls(server)
    assert len(calls) == 2
    assert {r.connection for r in calls} == {1}
    assert all(r.headers["connection"] == "keep-alive" for r in calls)
    assert run.stderr == ""


def test_print_mode_opens_a_new_connection_after_an_unfinished_body(wisp, server):
    # The first message is complete, but the server hangs up before the final chunk.
    first = reply.cut(after_events=100, base=reply.tool_use("Bash", {"command": "true"}))
    server.script(first, reply.text("done"))
    run = wisp("-p", "x", "--allowedTools", "Bash", "--output-format", "stream-json",
               "--verbose", env=WARN)
    assert run.returncode == 0, run.stderr
    assert run.of_type("system", "api_retry") == []
    assert [r.connection for r in model_calls(server)] == [1, 2]
    assert run.stderr == ""
