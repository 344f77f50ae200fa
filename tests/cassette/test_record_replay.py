"""Recording and replaying model exchanges in process: `RecordingModel` around a
`ScriptedModel`, `ReplayModel` serving the cassette to a `Runtime` with no model at all."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.cassette.helpers import drain, request, run_prompt, text_of
from wisp.engine.events import ApiRetry
from wisp.engine.outcome import ApiFailed, Success
from wisp.errors import ModelAPIError, RetryableAPIError, StreamCutError, UsageError
from wisp.models.cassette import wrap_for_env
from wisp.testing import (
    RecordingModel,
    ReplayMismatch,
    ReplayModel,
    ScriptedModel,
    load_cassette,
    reply,
)

ENV = {"HOME": "/nonexistent-home"}


def lines(path: Path) -> list[dict]:
    raw = path.read_bytes()
    assert raw.endswith(b"\n")
    return [json.loads(line) for line in raw.splitlines()]


def test_a_tool_loop_is_recorded_and_replays_offline_in_another_folder(tmp_path: Path) -> None:
    cassette = tmp_path / "run.jsonl"
    inner = ScriptedModel(reply.tool_use("Bash", {"command": "echo hi > out.txt"}),
                          reply.text("wrote it"))
    outcome, _, cwd = asyncio.run(run_prompt(tmp_path / "rec", RecordingModel(inner, cassette)))
    assert outcome == Success("wrote it")
    assert (cwd / "out.txt").read_text() == "hi\n"

    first, second = lines(cassette)
    assert first["v"] == 1 and first["ended"] == "complete" and "error" not in first
    assert first["request"] == inner.requests[0].body  # the body as it would be sent
    assert first["request_id"].startswith("req_") and first["ts"].endswith("Z")
    assert first["events"][0]["type"] == "message_start"
    assert first["events"][-1] == {"type": "message_stop"}
    assert second["request"]["messages"][-1]["content"][0]["type"] == "tool_result"

    replay = ReplayModel.from_file(cassette, match="loose")
    outcome, _, cwd = asyncio.run(run_prompt(tmp_path / "rep", replay))
    assert outcome == Success("wrote it")
    assert (cwd / "out.txt").read_text() == "hi\n"  # the tool really ran again
    assert replay.remaining == 0


def test_strict_matching_needs_the_same_folder(tmp_path: Path) -> None:
    cassette = tmp_path / "run.jsonl"
    inner = ScriptedModel(reply.tool_use("Bash", {"command": "echo hi > out.txt"}),
                          reply.text("wrote it"))
    asyncio.run(run_prompt(tmp_path / "rec", RecordingModel(inner, cassette)))
    (tmp_path / "rec" / "work" / "out.txt").unlink()

    same = ReplayModel.from_file(cassette)  # strict
    outcome, _, _ = asyncio.run(run_prompt(tmp_path / "rec", same))
    assert outcome == Success("wrote it") and same.remaining == 0

    elsewhere = ReplayModel.from_file(cassette, match="strict")
    outcome, _, _ = asyncio.run(run_prompt(tmp_path / "other", elsewhere))
    assert isinstance(outcome, ApiFailed)
    message = str(outcome.error)
    assert message.startswith("WISP_REPLAY: no recorded exchange matches this request; "
                              "closest differs at system[0].text: recorded '")
    assert "rec/work" in message and "other/work" in message


def test_a_recorded_429_then_success_replays_as_429_then_success(tmp_path: Path) -> None:
    cassette = tmp_path / "retry.jsonl"
    inner = ScriptedModel(reply.error(429, "slow down", retry_after=0.001), reply.text("fine"))
    outcome, sink, _ = asyncio.run(run_prompt(tmp_path / "rec", RecordingModel(inner, cassette)))
    assert outcome == Success("fine")
    failed, succeeded = lines(cassette)
    assert failed["request"] == succeeded["request"]  # the same request, retried
    assert failed["ended"] == "error" and failed["events"] == []
    assert failed["error"] == {"class": "RetryableAPIError", "status": 429,
                               "type": "rate_limit_error", "message": "slow down",
                               "retry_after": 0.001, "at": "open"}
    assert succeeded["ended"] == "complete"

    replay = ReplayModel.from_file(cassette, match="loose")
    outcome, sink, _ = asyncio.run(run_prompt(tmp_path / "rep", replay))
    assert outcome == Success("fine")
    retries = [e for e in sink.events if isinstance(e, ApiRetry)]
    assert [(r.status, r.message, r.delay_ms) for r in retries] == [(429, "slow down", 1)]
    assert replay.remaining == 0


def test_a_replayed_error_is_an_equivalent_error(tmp_path: Path) -> None:
    cassette = tmp_path / "errors.jsonl"
    inner = ScriptedModel(reply.error(401, "bad key"), reply.error(529, "busy"),
                          reply.cut(4, reply.text("cut short here", chunks=5)))
    recorder = RecordingModel(inner, cassette, env=ENV)

    async def record() -> list[BaseException]:
        out: list[BaseException] = []
        for word in ("a", "b", "c"):
            try:
                await drain(recorder, request(word))
            except ModelAPIError as exc:
                out.append(exc)
        return out

    originals = asyncio.run(record())
    replay = ReplayModel.from_file(cassette, env=ENV)

    async def again() -> list[tuple[BaseException, list[dict]]]:
        out = []
        for word in ("a", "b", "c"):
            seen: list[dict] = []
            try:
                async with replay.stream(request(word)) as stream:
                    async for event in stream:
                        seen.append(event)
            except ModelAPIError as exc:
                out.append((exc, seen))
        return out

    replayed = asyncio.run(again())
    for original, (copy, _) in zip(originals, replayed, strict=True):
        assert type(copy) is type(original)
        assert (copy.status, copy.error_type, copy.message, copy.retry_after) == (
            original.status, original.error_type, original.message, original.retry_after)
    cut, events = replayed[2]
    assert isinstance(cut, StreamCutError)
    recorded = load_cassette(cassette)[2]
    assert recorded["ended"] == "error" and recorded["error"]["at"] == "stream"
    assert events == recorded["events"] and 0 < len(events) < 9  # cut after what arrived


def test_concurrent_requests_are_matched_by_body_not_arrival_order(tmp_path: Path) -> None:
    cassette = tmp_path / "par.jsonl"
    inner = ScriptedModel(reply.text("answer one"), reply.text("answer two"),
                          reply.text("answer one again"))
    recorder = RecordingModel(inner, cassette, env=ENV)

    async def record() -> None:
        for word in ("one", "two", "one"):
            await drain(recorder, request(word))

    asyncio.run(record())
    replay = ReplayModel.from_file(cassette, env=ENV)

    async def parallel() -> list[str]:
        results = await asyncio.gather(*(drain(replay, request(w))
                                         for w in ("two", "one", "one")))
        return [text_of(events) for events in results]

    # "two" arrives first but gets the second recording; the identical "one" requests get
    # the recordings of "one" in file order.
    assert asyncio.run(parallel()) == ["answer two", "answer one", "answer one again"]
    assert replay.remaining == 0


def test_replay_keeps_the_recorded_event_boundaries_and_request_id(tmp_path: Path) -> None:
    cassette = tmp_path / "b.jsonl"
    recorder = RecordingModel(ScriptedModel(reply.text("a b c d e f", chunks=6)), cassette,
                              env=ENV)
    async def both() -> tuple[list[dict], list[dict], str | None, str | None]:
        async with recorder.stream(request("x")) as stream:
            live = [e async for e in stream]
            live_id = stream.request_id
        replay = ReplayModel.from_file(cassette, env=ENV)
        async with replay.stream(request("x")) as stream:
            again = [e async for e in stream]
            return live, again, live_id, stream.request_id

    live, again, live_id, replay_id = asyncio.run(both())
    assert again == live and len([e for e in live if e["type"] == "content_block_delta"]) == 6
    assert replay_id == live_id is not None


def test_a_mismatch_names_the_first_difference_and_is_not_retried(tmp_path: Path) -> None:
    cassette = tmp_path / "m.jsonl"
    recorder = RecordingModel(ScriptedModel(reply.text("hi"), reply.text("other")), cassette,
                              env=ENV)
    long = "the quick brown fox jumps over the lazy dog " * 5

    async def record() -> None:
        await drain(recorder, request(long + "and then sleeps"))
        await drain(recorder, request("something else entirely, far from it"))

    asyncio.run(record())
    replay = ReplayModel.from_file(cassette, env=ENV)
    with pytest.raises(ReplayMismatch) as caught:
        asyncio.run(drain(replay, request(long + "and then runs")))
    error = caught.value
    assert not isinstance(error, RetryableAPIError) and error.status == 400
    message = str(error)
    assert message.startswith("WISP_REPLAY: no recorded exchange matches this request; "
                              "closest differs at messages[0].content: recorded '…")
    assert "then sleeps'" in message and "then runs'" in message
    assert len(message) < 300  # shortened, around the difference
    assert replay.remaining == 2  # nothing consumed

    # Through the engine: one attempt, then the run ends with the error.
    async def engine() -> None:
        outcome, sink, _ = await run_prompt(tmp_path / "e", replay, "not recorded")
        assert isinstance(outcome, ApiFailed)
        assert "closest differs at model: " in str(outcome.error)
        assert not [e for e in sink.events if isinstance(e, ApiRetry)]

    asyncio.run(engine())


def test_a_mismatch_of_shape_and_a_used_up_cassette(tmp_path: Path) -> None:
    cassette = tmp_path / "m.jsonl"
    recorder = RecordingModel(ScriptedModel(reply.text("hi")), cassette, env=ENV)
    asyncio.run(drain(recorder, request("x")))
    replay = ReplayModel.from_file(cassette, env=ENV)
    with pytest.raises(ReplayMismatch, match=r"differs at thinking: recorded \(absent\) vs now"):
        asyncio.run(drain(replay, request("x", thinking={"type": "enabled",
                                                         "budget_tokens": 1024})))
    with pytest.raises(ReplayMismatch, match=r"differs at model: recorded 'claude-test' vs now"):
        asyncio.run(drain(replay, request("x", model="openai:gpt-x")))
    asyncio.run(drain(replay, request("x", metadata={"user_id": "session-123"})))  # ignored
    with pytest.raises(ReplayMismatch, match=r"all 1 recorded exchanges of .* already used"):
        asyncio.run(drain(replay, request("x")))


def test_an_abandoned_stream_is_recorded_and_replays_until_closed(tmp_path: Path) -> None:
    cassette = tmp_path / "a.jsonl"
    recorder = RecordingModel(ScriptedModel(reply.text("one two three four", chunks=4)),
                              cassette, env=ENV)

    async def stop_early(model: object, n: int) -> list[dict]:
        seen = []
        async with model.stream(request("x")) as stream:  # type: ignore[attr-defined]
            async for event in stream:
                seen.append(event)
                if len(seen) == n:
                    break
        return seen

    seen = asyncio.run(stop_early(recorder, 3))
    (line,) = lines(cassette)
    assert line["ended"] == "abandoned" and line["events"] == seen and "error" not in line

    replay = ReplayModel.from_file(cassette, env=ENV)

    async def read_past_the_end() -> list[dict]:
        got: list[dict] = []
        async with replay.stream(request("x")) as stream:
            async def reader() -> None:
                async for event in stream:
                    got.append(event)

            task = asyncio.ensure_future(reader())
            await asyncio.sleep(0.05)
            assert not task.done()  # the recorded consumer stopped here: it waits
            task.cancel()  # as an interrupt does
            with pytest.raises(asyncio.CancelledError):
                await task
        return got

    assert asyncio.run(read_past_the_end()) == seen


def test_an_interrupted_run_records_an_abandoned_exchange(tmp_path: Path) -> None:
    cassette = tmp_path / "i.jsonl"
    inner = ScriptedModel(reply.slow("a long answer that will not finish", 0.05, chunks=30))
    recorder = RecordingModel(inner, cassette, env=ENV)

    async def interrupted() -> None:
        from tests.cassette.helpers import Sink
        from wisp.runtime.config import RuntimeConfig
        from wisp.runtime.runtime import Runtime

        (tmp_path / "w").mkdir()
        sink = Sink()
        runtime = Runtime.open(RuntimeConfig(cwd=tmp_path / "w", env={"HOME": str(tmp_path)},
                                             no_session_persistence=True,
                                             include_partial_messages=True), sink,
                               model=recorder)
        task = asyncio.ensure_future(runtime.run_prompt("go"))
        await inner.wait_for_requests(1)
        # Interrupted mid-stream: once a few events went through the recorder.
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 15
        while sum(e.kind == "stream_delta" for e in sink.events) < 3:
            assert loop.time() < deadline, sink.events
            await asyncio.sleep(0.01)
        runtime.interrupt()
        await task
        await runtime.aclose()

    asyncio.run(interrupted())
    (line,) = lines(cassette)
    assert line["ended"] == "abandoned"
    assert 2 <= len(line["events"]) < 30 and line["events"][-1]["type"] != "message_stop"


def test_loose_matching_ignores_ids_dates_and_paths_but_keeps_pairing(tmp_path: Path) -> None:
    def body(cwd: str, home: str, ids: tuple[str, str], when: str, uuid: str) -> dict:
        a, b = ids
        return {
            "model": "m", "max_tokens": 10, "stream": True,
            "system": [{"type": "text", "text": f"Environment:\n- Working directory: {cwd}\n"
                        f"- Platform: linux 6.{len(cwd)}.0\n- Date: {when[:10]}"}],
            "messages": [
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": [
                    {"type": "tool_use", "id": a, "name": "Read",
                     "input": {"file_path": f"{cwd}/src/app.py"}},
                    {"type": "tool_use", "id": b, "name": "Read",
                     "input": {"file_path": f"{home}/.config/x"}}]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": a,
                     "content": f"saved at {when}; run {uuid}; see /tmp/wisp-1/output/bash-"
                                f"{uuid[:6]}.txt"},
                    {"type": "tool_result", "tool_use_id": b, "content": "ok"}]},
            ],
        }

    recorded = body("/home/ann/proj", "/home/ann", ("toolu_01AbC9", "toolu_01XyZ7"),
                    "2025-01-02T03:04:05Z", "123e4567-e89b-12d3-a456-426614174000")
    exchange = {"request": recorded, "events": [{"type": "message_stop"}],
                "ended": "complete", "paths": {"cwd": "/somewhere", "home": "/home/ann",
                                               "tmp": "/tmp"}}

    def serves(now: dict, match: str) -> bool:
        replay = ReplayModel([exchange], match, env={"HOME": "/Users/bob", "TMPDIR": "/tmp"})
        try:
            replay.take(_request_of(now))
        except ReplayMismatch:
            return False
        return True

    same_run_elsewhere = body("/Users/bob/code/p2", "/Users/bob",
                              ("call_9f8e7d6c", "call_1a2b3c4d"), "2026-12-31T23:59:59Z",
                              "00000000-1111-2222-3333-444444444444")
    assert serves(same_run_elsewhere, "loose")
    assert not serves(same_run_elsewhere, "strict")
    assert serves(recorded, "strict")

    swapped = body("/Users/bob/code/p2", "/Users/bob", ("call_9f8e7d6c", "call_1a2b3c4d"),
                   "2026-12-31T23:59:59Z", "00000000-1111-2222-3333-444444444444")
    results = swapped["messages"][2]["content"]
    results[0]["tool_use_id"], results[1]["tool_use_id"] = (results[1]["tool_use_id"],
                                                            results[0]["tool_use_id"])
    assert not serves(swapped, "loose")  # ids are renumbered, not erased: pairing counts

    other_file = body("/Users/bob/code/p2", "/Users/bob", ("call_9f8e7d6c", "call_1a2b3c4d"),
                      "2026-12-31T23:59:59Z", "00000000-1111-2222-3333-444444444444")
    other_file["messages"][1]["content"][0]["input"]["file_path"] = "/Users/bob/code/p2/x.py"
    replay = ReplayModel([exchange], "loose", env={"HOME": "/Users/bob"})
    with pytest.raises(ReplayMismatch, match=r"messages\[1\]\.content\[0\]\.input\.file_path: "
                                             r"recorded '<cwd>/src/app.py' vs now '<cwd>/x.py'"):
        replay.take(_request_of(other_file))


def _request_of(body: dict):
    from wisp.models.base import ModelRequest

    return ModelRequest(model=body["model"], messages=body["messages"],
                        max_tokens=body["max_tokens"], system=body.get("system", []))


def test_no_secret_from_the_environment_is_written(tmp_path: Path) -> None:
    key = "sk-ant-api03-TOPSECRET-0123456789abcdef"
    cassette = tmp_path / "s.jsonl"
    inner = ScriptedModel(reply.tool_use("Bash", {"command": "echo \"key=$ANTHROPIC_API_KEY\""}),
                          reply.text("done"))
    env = {"ANTHROPIC_API_KEY": key, "HOME": str(tmp_path / "rec" / "home"),
           "MY_SERVICE_TOKEN": "tok-abcdefgh12345"}
    recorder = RecordingModel(inner, cassette, env=env)
    outcome, _, _ = asyncio.run(run_prompt(tmp_path / "rec", recorder, **env))
    assert outcome == Success("done")
    # The key did reach the model's request (the tool printed it)...
    assert key in json.dumps(inner.requests[1].body)
    # ...but not the file.
    raw = cassette.read_text()
    assert key not in raw and "TOPSECRET" not in raw and "tok-abcdefgh12345" not in raw
    assert "key=[REDACTED]" in raw

    # The replay side redacts the same way, so the run still matches strictly.
    replay = ReplayModel.from_file(cassette, env=env)
    outcome, _, _ = asyncio.run(run_prompt(tmp_path / "rec", replay, **env))
    assert outcome == Success("done") and replay.remaining == 0


def test_wrap_for_env(tmp_path: Path) -> None:
    made: list[ScriptedModel] = []

    def make() -> ScriptedModel:
        made.append(ScriptedModel(reply.text("live")))
        return made[-1]

    plain = wrap_for_env(make, {})
    assert plain is made[0]

    cassette = tmp_path / "w.jsonl"
    recording = wrap_for_env(make, {"WISP_RECORD": str(cassette), "HOME": "/h"},
                             spec="anthropic:claude-test")
    assert isinstance(recording, RecordingModel) and recording.inner is made[1]
    assert cassette.exists() and cassette.stat().st_mode & 0o777 == 0o600
    asyncio.run(drain(recording, request("x")))
    (line,) = lines(cassette)
    assert line["spec"] == "anthropic:claude-test"

    replaying = wrap_for_env(make, {"WISP_REPLAY": str(cassette), "WISP_REPLAY_MATCH": "loose"})
    assert isinstance(replaying, ReplayModel) and replaying.match == "loose"
    assert len(made) == 2  # the provider was never made
    assert text_of(asyncio.run(drain(replaying, request("x")))) == "live"

    with pytest.raises(UsageError, match="WISP_REPLAY_MATCH must be strict or loose"):
        wrap_for_env(make, {"WISP_REPLAY": str(cassette), "WISP_REPLAY_MATCH": "fuzzy"})
    with pytest.raises(UsageError, match="WISP_REPLAY: cannot read"):
        wrap_for_env(make, {"WISP_REPLAY": str(tmp_path / "missing.jsonl")})
    with pytest.raises(UsageError, match="WISP_RECORD: cannot write"):
        wrap_for_env(make, {"WISP_RECORD": str(tmp_path / "no" / "such" / "dir.jsonl")})
    assert len(made) == 2  # a file that cannot be written fails before a provider is made

    # Both: the replay is recorded too (a cassette can be re-recorded offline).
    copy = tmp_path / "copy.jsonl"
    both = wrap_for_env(make, {"WISP_REPLAY": str(cassette), "WISP_RECORD": str(copy)})
    assert isinstance(both, RecordingModel) and isinstance(both.inner, ReplayModel)
    asyncio.run(drain(both, request("x")))
    assert lines(copy)[0]["events"] == line["events"]
