"""The control dispatcher in process: request/response matching by id in both directions,
early responses, cancellation, EOF, and exceptions turned into error responses."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.control.conftest import run_async, wait_until
from wisp.control.dispatcher import MAX_UNMATCHED, ControlError, RequestFailed
from wisp.testing import ControlChannel

JSON = dict[str, Any]


def response(request_id: str, body: JSON | None = None, *, error: str | None = None) -> JSON:
    inner: JSON = {"subtype": "error" if error else "success", "request_id": request_id}
    if error:
        inner["error"] = error
    if body is not None:
        inner["response"] = body
    return {"type": "control_response", "response": inner}


def sent_responses(frames: list[JSON]) -> list[JSON]:
    return [f["response"] for f in frames if f["type"] == "control_response"]


# Matching --------------------------------------------------------------------------------


def test_a_request_gets_the_handlers_answer() -> None:
    async def scenario() -> None:
        async with ControlChannel() as ch:
            async def echo(request: JSON) -> JSON:
                return {"got": request["value"]}

            ch.b.register("echo", echo)
            assert await ch.a.request({"subtype": "echo", "value": 7}) == {"got": 7}
            request = ch.a_sent[0]
            assert request["type"] == "control_request"
            assert request["request"] == {"subtype": "echo", "value": 7}
            assert sent_responses(ch.b_sent) == [{"subtype": "success", "response": {"got": 7},
                                                  "request_id": request["request_id"]}]

    run_async(scenario())


def test_both_sides_can_ask_at_once() -> None:
    async def scenario() -> None:
        async with ControlChannel() as ch:
            async def name_a(_: JSON) -> JSON:
                return {"me": "a"}

            async def name_b(_: JSON) -> JSON:
                return {"me": "b"}

            ch.a.register("who", name_a)
            ch.b.register("who", name_b)
            from_b, from_a = await asyncio.gather(ch.a.request({"subtype": "who"}),
                                                  ch.b.request({"subtype": "who"}))
            assert (from_b, from_a) == ({"me": "b"}, {"me": "a"})

    run_async(scenario())


def test_answers_out_of_order_reach_their_own_requests() -> None:
    async def scenario() -> None:
        async with ControlChannel() as ch:
            gates = {n: asyncio.Event() for n in range(5)}

            async def slow(request: JSON) -> JSON:
                await gates[request["n"]].wait()
                return {"n": request["n"]}

            ch.b.register("slow", slow)
            tasks = [asyncio.ensure_future(ch.a.request({"subtype": "slow", "n": n}))
                     for n in range(5)]
            for n in (3, 0, 4, 1, 2):
                gates[n].set()
                await ch.flush()
            assert [await t for t in tasks] == [{"n": n} for n in range(5)]
            assert len({f["request_id"] for f in ch.a_sent}) == 5

    run_async(scenario())


def test_a_success_without_a_body_is_an_empty_answer() -> None:
    async def scenario() -> None:
        async with ControlChannel() as ch:
            async def nothing(_: JSON) -> None:
                return None

            ch.b.register("nothing", nothing)
            assert await ch.a.request({"subtype": "nothing"}) == {}
            assert "response" not in sent_responses(ch.b_sent)[0]

    run_async(scenario())


def test_a_response_for_an_unknown_id_is_kept_for_a_later_request(fixed_ids: list[str]
                                                                   ) -> None:
    async def scenario() -> None:
        async with ControlChannel() as ch:
            ch.a.receive(response("id-0", {"early": True}))
            ch.a.receive(response("nobody-asked", {"stray": True}))  # harmless
            assert await ch.a.request({"subtype": "x"}, timeout=1) == {"early": True}
            assert fixed_ids == ["id-0"]
            # The request was still written: the peer's answer just came first.
            assert ch.a_sent[0]["request_id"] == "id-0"

    run_async(scenario())


def test_an_early_error_response_fails_the_later_request(fixed_ids: list[str]) -> None:
    async def scenario() -> None:
        async with ControlChannel() as ch:
            ch.a.receive(response("id-0", error="refused early"))
            with pytest.raises(RequestFailed, match="refused early"):
                await ch.a.request({"subtype": "x"}, timeout=1)

    run_async(scenario())


def test_early_responses_are_capped_oldest_first(fixed_ids: list[str]) -> None:
    async def scenario() -> None:
        async with ControlChannel() as ch:
            ch.b.register("hang", _hang)  # b never answers: only the early responses count
            for n in range(MAX_UNMATCHED + 1):  # one too many: id-0 is evicted
                ch.a.receive(response(f"id-{n}", {"n": n}))
            with pytest.raises(TimeoutError):
                await ch.a.request({"subtype": "hang"}, timeout=0.05)  # id-0: gone
            assert await ch.a.request({"subtype": "hang"}, timeout=1) == {"n": 1}

    assert MAX_UNMATCHED == 1024
    run_async(scenario())


def test_the_newest_early_response_survives_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    import uuid

    async def scenario() -> None:
        async with ControlChannel() as ch:
            ch.b.register("hang", _hang)
            for n in range(MAX_UNMATCHED + 10):
                ch.a.receive(response(f"r{n}", {"n": n}))
            ids = iter([f"r{MAX_UNMATCHED + 9}", "r10", "r9"])
            monkeypatch.setattr(uuid, "uuid4", lambda: next(ids))
            newest = await ch.a.request({"subtype": "hang"}, timeout=1)
            assert newest == {"n": MAX_UNMATCHED + 9}
            assert await ch.a.request({"subtype": "hang"}, timeout=1) == {"n": 10}
            with pytest.raises(TimeoutError):
                await ch.a.request({"subtype": "hang"}, timeout=0.05)  # r9 was evicted

    run_async(scenario())


def test_a_second_response_for_the_same_id_is_ignored() -> None:
    async def scenario() -> None:
        async with ControlChannel() as ch:
            ch.b.register("hang", _hang)
            task = asyncio.ensure_future(ch.a.request({"subtype": "hang"}))
            await wait_until(lambda: bool(ch.a_sent))
            request_id = ch.a_sent[0]["request_id"]
            ch.a.receive(response(request_id, {"first": 1}))
            ch.a.receive(response(request_id, error="second"))
            assert await task == {"first": 1}

    run_async(scenario())


# Errors ----------------------------------------------------------------------------------


def test_handler_exceptions_become_error_responses() -> None:
    async def scenario() -> None:
        async with ControlChannel() as ch:
            async def broken(_: JSON) -> JSON:
                raise ValueError("the handler broke")

            async def refusing(_: JSON) -> JSON:
                raise ControlError("not now", "busy")

            ch.b.register("broken", broken)
            ch.b.register("refusing", refusing)
            with pytest.raises(RequestFailed, match="the handler broke"):
                await ch.a.request({"subtype": "broken"})
            with pytest.raises(RequestFailed, match="not now"):
                await ch.a.request({"subtype": "refusing"})
            with pytest.raises(RequestFailed, match="Unsupported control request subtype: nope"):
                await ch.a.request({"subtype": "nope"})
            errors = sent_responses(ch.b_sent)
            assert [e["subtype"] for e in errors] == ["error"] * 3
            assert "error_code" not in errors[0]
            assert errors[1]["error_code"] == "busy"
            assert errors[2]["error_code"] == "unsupported_request"
            # The side that answered is still serving.
            ch.b.register("ok", _ok)
            assert await ch.a.request({"subtype": "ok"}) == {"ok": True}

    run_async(scenario())


async def _ok(_: JSON) -> JSON:
    return {"ok": True}


async def _hang(_: JSON) -> JSON:
    await asyncio.Event().wait()
    raise AssertionError


def test_a_request_without_a_request_object_is_answered_with_an_error() -> None:
    async def scenario() -> None:
        async with ControlChannel() as ch:
            ch.b.receive({"type": "control_request", "request_id": "r1", "request": "text"})
            ch.b.receive({"type": "control_request", "request_id": "r2"})
            await ch.flush()
            errors = sent_responses(ch.b_sent)
            assert [(e["request_id"], e["subtype"]) for e in errors] == [("r1", "error"),
                                                                       ("r2", "error")]
            assert "no request object" in errors[0]["error"]

    run_async(scenario())


def test_frames_that_are_not_control_frames_are_ignored() -> None:
    async def scenario() -> None:
        async with ControlChannel() as ch:
            ch.a.receive({"type": "assistant", "message": {}})
            ch.a.receive({"type": "control_response"})  # no response object
            ch.a.receive({"type": "control_response", "response": "x"})
            await ch.flush()
            assert ch.a_sent == []
            ch.b.register("ok", _ok)
            assert await ch.a.request({"subtype": "ok"}) == {"ok": True}

    run_async(scenario())


# Cancellation ----------------------------------------------------------------------------


def test_a_timed_out_request_is_withdrawn_and_its_handler_cancelled() -> None:
    async def scenario() -> None:
        async with ControlChannel() as ch:
            cancelled = asyncio.Event()

            async def hang(_: JSON) -> JSON:
                try:
                    await asyncio.Event().wait()
                finally:
                    cancelled.set()
                raise AssertionError

            ch.b.register("hang", hang)
            with pytest.raises(TimeoutError):
                await ch.a.request({"subtype": "hang"}, timeout=0.05)
            await asyncio.wait_for(cancelled.wait(), 5)
            kinds = [f["type"] for f in ch.a_sent]
            assert kinds == ["control_request", "control_cancel_request"]
            assert ch.a_sent[1]["request_id"] == ch.a_sent[0]["request_id"]
            await ch.flush()
            assert sent_responses(ch.b_sent) == []  # no response is owed for a withdrawal

    run_async(scenario())


def test_cancelling_the_requesting_task_withdraws_the_request() -> None:
    async def scenario() -> None:
        async with ControlChannel() as ch:
            started = asyncio.Event()
            cancelled = asyncio.Event()

            async def hang(_: JSON) -> JSON:
                started.set()
                try:
                    await asyncio.Event().wait()
                finally:
                    cancelled.set()
                raise AssertionError

            ch.b.register("hang", hang)
            task = asyncio.ensure_future(ch.a.request({"subtype": "hang"}))
            await asyncio.wait_for(started.wait(), 5)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await asyncio.wait_for(cancelled.wait(), 5)
            assert ch.a_sent[-1]["type"] == "control_cancel_request"

    run_async(scenario())


def test_the_peer_can_withdraw_a_request_it_is_waiting_on() -> None:
    async def scenario() -> None:
        async with ControlChannel() as ch:
            ch.b.register("hang", _hang)
            task = asyncio.ensure_future(ch.a.request({"subtype": "hang"}))
            await wait_until(lambda: bool(ch.a_sent))
            request_id = ch.a_sent[0]["request_id"]
            # b says: forget it (as the SDK does when its own caller gives up).
            ch.b_pipe.write({"type": "control_cancel_request", "request_id": request_id})
            with pytest.raises(RequestFailed, match="cancelled"):
                await task
            # Withdrawn by the peer: a does not send a cancel of its own.
            assert [f["type"] for f in ch.a_sent] == ["control_request"]

    run_async(scenario())


def test_a_cancel_for_an_unknown_id_is_ignored() -> None:
    async def scenario() -> None:
        async with ControlChannel() as ch:
            ch.a.receive({"type": "control_cancel_request", "request_id": "nobody"})
            ch.b.register("ok", _ok)
            assert await ch.a.request({"subtype": "ok"}) == {"ok": True}

    run_async(scenario())


# EOF -------------------------------------------------------------------------------------


def test_eof_fails_every_pending_request_and_later_ones() -> None:
    async def scenario() -> None:
        async with ControlChannel() as ch:
            ch.b.register("hang", _hang)
            tasks = [asyncio.ensure_future(ch.a.request({"subtype": "hang", "n": n}))
                     for n in range(3)]
            await wait_until(lambda: len(ch.a_sent) == 3)
            ch.close_b()  # a's stdin ends
            for task in tasks:
                with pytest.raises(RequestFailed, match="closed"):
                    await task
            assert ch.a.closed
            with pytest.raises(RequestFailed, match="closed"):
                await ch.a.request({"subtype": "hang"})

    run_async(scenario())


def test_answers_in_flight_at_eof_are_still_delivered() -> None:
    async def scenario() -> None:
        async with ControlChannel() as ch:
            ch.b.register("ok", _ok)
            task = asyncio.ensure_future(ch.a.request({"subtype": "ok"}))
            await wait_until(lambda: bool(ch.b_sent))
            ch.close_b()  # the answer was written before b's output closed
            assert await task == {"ok": True}

    run_async(scenario())


def test_handlers_running_at_eof_finish_and_answer() -> None:
    async def scenario() -> None:
        async with ControlChannel() as ch:
            release = asyncio.Event()

            async def slow(_: JSON) -> JSON:
                await release.wait()
                return {"finished": True}

            ch.b.register("slow", slow)
            task = asyncio.ensure_future(ch.a.request({"subtype": "slow"}))
            await wait_until(lambda: bool(ch.a_sent))
            await ch.flush()
            ch.close_a()  # b's stdin ends while its handler still runs: b drains
            await ch.flush()
            assert ch.b.closed
            release.set()
            assert await task == {"finished": True}

    run_async(scenario())


def test_a_request_id_already_in_flight_is_answered_once() -> None:
    """A repeat of a request still being handled is ignored (the reference would run it
    twice); once answered, the id may be used again."""
    async def scenario() -> None:
        async with ControlChannel() as ch:
            release = asyncio.Event()
            runs: list[int] = []

            async def slow(request: JSON) -> JSON:
                runs.append(request["n"])
                await release.wait()
                return {"n": request["n"]}

            ch.b.register("slow", slow)
            frame = {"type": "control_request", "request_id": "same",
                     "request": {"subtype": "slow", "n": 1}}
            ch.b.receive(frame)
            ch.b.receive({**frame, "request": {"subtype": "slow", "n": 2}})
            await wait_until(lambda: runs == [1])
            release.set()
            await wait_until(lambda: len(sent_responses(ch.b_sent)) == 1)
            await asyncio.sleep(0.01)
            assert sent_responses(ch.b_sent) == [
                {"subtype": "success", "request_id": "same", "response": {"n": 1}}]
            ch.b.receive({**frame, "request": {"subtype": "slow", "n": 3}})
            await wait_until(lambda: len(sent_responses(ch.b_sent)) == 2)
            assert runs == [1, 3]

    run_async(scenario())
