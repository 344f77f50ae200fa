"""--include-partial-messages: the reference's frame order (docs/protocol.md, "Partial messages"),
and streams that are
abandoned (cut, error event, interrupt) always closed before anything new starts."""

from __future__ import annotations

import json
import signal

from wisp.testing import reply

PARTIAL = ("--output-format", "stream-json", "--verbose", "--include-partial-messages")


def kinds(frames):
    out = []
    for f in frames:
        if f["type"] == "stream_event":
            out.append(f"stream_event/{f['event']['type']}")
        elif f["type"] == "system":
            out.append(f"system/{f['subtype']}")
        else:
            out.append(f["type"])
    return out


def assert_well_formed(frames, allowed_while_open=("assistant",)):
    """No consumer is ever left mid-block: a message starts only when the previous one has
    stopped, deltas and stops only touch open blocks, and nothing else (a retry notice, a
    new request, the result) happens while a message is open. A block's assistant frame
    comes before its content_block_stop, so it is allowed while open."""
    open_message, open_blocks = False, set()
    for f in frames:
        if f["type"] != "stream_event":
            if f["type"] not in allowed_while_open:
                assert not open_message, f"{kinds([f])} while a message is open"
            continue
        event = f["event"]
        kind, index = event["type"], event.get("index")
        if kind == "message_start":
            assert not open_message
            open_message = True
        elif kind == "content_block_start":
            assert open_message and index not in open_blocks
            open_blocks.add(index)
        elif kind in ("content_block_delta", "content_block_stop"):
            assert index in open_blocks, f"{kind} for a block that is not open"
            if kind == "content_block_stop":
                open_blocks.discard(index)
        elif kind in ("message_delta", "message_stop"):
            assert open_message and not open_blocks, f"{kind} with blocks open"
            open_message = kind != "message_stop"
    assert not open_message


def test_the_frame_order_of_the_reference(wisp, server):
    server.script(reply.text("hello from fake", chunks=3))
    run = wisp("-p", "say hi", *PARTIAL)
    assert run.returncode == 0
    assert kinds(run.frames) == [
        "system/init",
        "system/status",
        "stream_event/message_start",
        "stream_event/content_block_start",
        "stream_event/content_block_delta",
        "stream_event/content_block_delta",
        "stream_event/content_block_delta",
        "assistant",  # before its block's content_block_stop, as the reference orders it
        "stream_event/content_block_stop",
        "stream_event/message_delta",
        "stream_event/message_stop",
        "result",
    ]
    status = run.frames[1]
    assert status["status"] == "requesting"
    assert status["session_id"] == run.result["session_id"] and status["uuid"]
    events = [f for f in run.frames if f["type"] == "stream_event"]
    message_id = events[0]["event"]["message"]["id"]
    for frame in events:
        assert frame["session_id"] == run.result["session_id"]
        assert frame["parent_tool_use_id"] is None
        assert frame["uuid"] and frame["api_message_id"] == message_id
    assert isinstance(events[0]["ttft_ms"], int) and events[0]["ttft_ms"] >= 0
    assert all("ttft_ms" not in f for f in events[1:])
    # The complete assistant frame stays authoritative.
    assert run.of_type("assistant")[0]["message"]["content"] == [
        {"type": "text", "text": "hello from fake"}
    ]


def test_a_status_frame_precedes_every_request(wisp, server):
    server.script(reply.tool_use("Bash", {"command": "echo hi"}), reply.text("done"))
    run = wisp("-p", "x", *PARTIAL, "--allowedTools", "Bash")
    names = kinds(run.frames)
    starts = [i for i, k in enumerate(names) if k == "stream_event/message_start"]
    assert len(starts) == 2
    assert all(names[i - 1] == "system/status" for i in starts)
    assert_well_formed(run.frames)


def test_without_the_flag_there_are_no_partial_frames(wisp, server):
    server.script(reply.text("hi"))
    run = wisp("-p", "x", "--output-format", "stream-json", "--verbose")
    assert kinds(run.frames) == ["system/init", "assistant", "result"]


def test_a_cut_stream_is_closed_before_the_retry_starts(wisp, server):
    server.script(
        reply.cut(after_events=4, base=reply.text("hello there friend", chunks=5)),
        reply.text("hello there friend"),
    )
    run = wisp("-p", "x", *PARTIAL)
    assert run.returncode == 0
    assert_well_formed(run.frames)
    names = kinds(run.frames)
    retry = names.index("system/api_retry")
    assert names[retry - 3 : retry] == [
        "stream_event/content_block_stop",
        "stream_event/message_delta",
        "stream_event/message_stop",
    ]
    closing = run.frames[retry - 2]["event"]
    assert closing["delta"]["stop_reason"] is None
    assert names.count("stream_event/message_start") == 2


def test_an_error_event_mid_stream_is_closed_before_the_retry(wisp, server):
    server.script(reply.sse_error(), reply.text("recovered"))
    run = wisp("-p", "x", *PARTIAL)
    assert run.returncode == 0
    assert_well_formed(run.frames)
    assert run.result["result"] == "recovered"


def test_a_cut_after_a_complete_tool_use_closes_the_stream(wisp, server):
    tool = reply.message(
        [
            {"type": "tool_use", "name": "Bash", "input": {"command": "echo a"}},
            {"type": "text", "text": "more text that is cut"},
        ],
        stop_reason="tool_use",
    )
    server.script(reply.cut(after_events=8, base=tool), reply.text("done"))
    run = wisp("-p", "x", *PARTIAL, "--allowedTools", "Bash")
    assert run.returncode == 0
    assert_well_formed(run.frames)
    assert run.result["result"] == "done"


def test_an_interrupted_stream_is_closed_before_the_result(wisp, server):
    server.script(reply.slow("slow hello from a very slow model", delay_per_event=0.3))
    proc = wisp.spawn("-p", "x", *PARTIAL)
    assert proc.stdout is not None
    seen = []
    for line in proc.stdout:  # interrupt once a delta has been shown: mid-block for sure
        seen.append(json.loads(line))
        if seen[-1].get("event", {}).get("type") == "content_block_delta":
            proc.send_signal(signal.SIGINT)
            break
    out, _ = proc.communicate(timeout=15)
    frames = seen + [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert frames[-1]["subtype"] == "error_during_execution"
    # The reference shows the interruption note, then closes the stream.
    assert_well_formed(frames, allowed_while_open=("assistant", "user"))
    assert kinds(frames)[-4:] == [
        "stream_event/content_block_stop",
        "stream_event/message_delta",
        "stream_event/message_stop",
        "result",
    ]
