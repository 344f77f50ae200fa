"""`session_state_changed` (docs/protocol.md, "Session state"), keep_alive, and the interrupt
receipt."""

from __future__ import annotations

from tests.duplex.harness import state_changes
from wisp.testing import reply

STATE = {"CLAUDE_CODE_SDK_READS_SESSION_STATE": "1"}


def positions(frames, predicate):
    return [i for i, f in enumerate(frames) if predicate(f)]


def is_state(state):
    return lambda f: f.get("subtype") == "session_state_changed" and f.get("state") == state


def test_states_only_when_the_sdk_asks(duplex, server):
    server.script(reply.text("ok"))
    proc = duplex()
    proc.user("hi")
    proc.wait_frame("result")
    assert proc.finish() == 0
    assert state_changes(proc.frames) == []


def test_running_then_idle_after_the_result(duplex, server):
    server.script(reply.text("ok"))
    proc = duplex(env=STATE)
    proc.initialize()
    proc.user("hi")
    idle = proc.wait_frame("system", "session_state_changed", state="idle")
    assert idle["sdk_host_only"] is True and idle["session_id"]
    assert proc.finish() == 0
    frames = proc.frames
    assert state_changes(frames) == ["running", "idle"]
    [result] = positions(frames, lambda f: f["type"] == "result")
    [running] = positions(frames, is_state("running"))
    [init] = positions(frames, lambda f: f.get("subtype") == "init")
    assert running < init < result < positions(frames, is_state("idle"))[0]


def test_never_idle_while_prompts_are_queued(duplex, server):
    server.script(reply.text("one", delay=0.05), reply.text("two", delay=0.05), reply.text("three"))
    proc = duplex(env=STATE)
    for word in ("a", "b", "c"):
        proc.user(word)
    proc.wait_frame("result", count=3)
    proc.wait_frame("system", "session_state_changed", state="idle")
    assert proc.finish() == 0
    frames = proc.frames
    idles = positions(frames, is_state("idle"))
    last_result = positions(frames, lambda f: f["type"] == "result")[-1]
    assert len(idles) == 1 and idles[0] > last_result


def test_requires_action_while_the_host_decides(duplex, server, wisp):
    target = wisp.cwd / "x.txt"
    server.script(
        reply.tool_use("Write", {"file_path": str(target), "content": "x"}), reply.text("ok")
    )
    proc = duplex("--permission-prompt-tool", "stdio", env=STATE)
    proc.user("write")
    ask = proc.wait_request("can_use_tool")
    assert state_changes(proc.frames) == ["running", "requires_action"]
    proc.answer(ask, {"behavior": "allow", "updatedInput": ask["request"]["input"]})
    proc.wait_frame("system", "session_state_changed", state="idle")
    assert proc.finish() == 0
    assert state_changes(proc.frames) == ["running", "requires_action", "running", "idle"]


def test_idle_again_after_an_interrupt(duplex, server):
    server.script(reply.slow("slow " * 20, delay_per_event=0.2), reply.text("next"))
    proc = duplex("--include-partial-messages", env=STATE)
    proc.user("first")
    proc.wait_frame("stream_event", count=3)
    proc.call("interrupt")
    proc.wait_frame("system", "session_state_changed", state="idle")
    proc.user("second")
    proc.wait_frame("system", "session_state_changed", state="idle", count=2)
    assert proc.finish() == 0
    assert state_changes(proc.frames) == ["running", "idle", "running", "idle"]


def test_keep_alive_during_a_long_turn(duplex, server):
    server.script(reply.slow("slow " * 10, delay_per_event=0.2))
    proc = duplex(env={"WISP_KEEPALIVE_INTERVAL_S": "0.05"})
    proc.user("hi")
    proc.wait_frame("keep_alive")
    proc.call("interrupt")  # seen one: no need to sit through the rest
    proc.wait_frame("result")
    assert proc.finish() == 1


def test_interrupt_names_queued_prompts_and_can_cancel_them(duplex, server):
    server.script(reply.slow("slow " * 20, delay_per_event=0.2), reply.text("never"))
    proc = duplex("--include-partial-messages", env=STATE)
    proc.user("first")
    proc.wait_frame("stream_event", count=3)
    proc.send(
        {
            "type": "user",
            "uuid": "u-2",
            "session_id": "",
            "parent_tool_use_id": None,
            "message": {"role": "user", "content": "second"},
        }
    )
    proc.send(
        {
            "type": "user",
            "session_id": "",
            "parent_tool_use_id": None,
            "message": {"role": "user", "content": "third, without a uuid"},
        }
    )
    receipt = proc.call("interrupt", cancel_queued=True)["response"]
    assert receipt == {"still_queued": [], "cancelled": ["u-2"]}
    proc.wait_frame("system", "session_state_changed", state="idle")
    assert proc.finish() == 1  # the last result was the interrupted one
    assert len(proc.results()) == 1
    assert len(server.requests) == 1


def test_interrupt_without_cancel_lists_what_still_runs(duplex, server):
    server.script(reply.slow("slow " * 20, delay_per_event=0.2), reply.text("second"))
    proc = duplex("--include-partial-messages")
    proc.user("first")
    proc.wait_frame("stream_event", count=3)
    proc.send(
        {
            "type": "user",
            "uuid": "u-2",
            "session_id": "",
            "parent_tool_use_id": None,
            "message": {"role": "user", "content": "second"},
        }
    )
    receipt = proc.call("interrupt")["response"]
    assert receipt == {"still_queued": ["u-2"]}
    assert proc.wait_frame("result", count=2)["result"] == "second"
    assert proc.finish() == 0
