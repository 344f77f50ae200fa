"""A duplex session keeps its model connection alive across turns, replaces one the server
dropped without an API retry, and exits without complaints about open sockets."""

from __future__ import annotations

from wisp.testing import reply

WARN = {"PYTHONWARNINGS": "always::ResourceWarning"}


def test_turns_share_one_connection_and_a_dropped_one_is_replaced(duplex, server):
    server.script(reply.text("one"), reply.tool_use("Bash", {"command": "true"}),
                  reply.text("two"), reply.text("three"), reply.text("four"))
    wisp = duplex("--allowedTools", "Bash", env=WARN)
    wisp.initialize()
    wisp.user("first")
    wisp.wait_frame("result")
    wisp.user("second")  # a tool round trip: two model calls
    wisp.wait_frame("result", count=2)
    server.drop_connections()  # as a server closing an idle keep-alive connection
    wisp.user("third")
    wisp.wait_frame("result", count=3)
    wisp.user("fourth")
    wisp.wait_frame("result", count=4)
    assert wisp.finish() == 0
    assert [r["result"] for r in wisp.results()] == ["one", "two", "three", "four"]
    assert wisp.of("system", "api_retry") == []
    calls = [r for r in server.requests if r.path.startswith("/v1/messages")]
    assert [r.connection for r in calls] == [1, 1, 1, 2, 2]
    assert server.connections_accepted == 2
    assert wisp.stderr == ""
