"""`TurnRunner`: the steps of durable turns (`wisp.serve.durable.turns`), run in a worker
process by the same `SessionDriver` the embedded service uses.

A step (`advance`) takes the session's lease, hands the driver the client events queued
for this turn, and returns once the turn is over or stopped on the client
(`SessionDriver.settle`). Between the steps of one turn the driver stays in memory,
parked on the client's answer, so the next step only hands it the answer. A worker that
never saw the turn (the first one died) builds the driver from the store and continues
from the log (`SessionDriver.resume`): that is what makes a step safe to run twice.

Client events reach a running step through LISTEN/NOTIFY (`wake`), so an interrupt stops
a model call mid-step; the turn's `recv` gets them too, for when no step runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

from wisp.jsontypes import JSON
from wisp.serve import shapes
from wisp.serve.durable.turns import MAX_RECOVERIES
from wisp.serve.session_log import Fanout, SessionLog
from wisp.serve.store.base import LeaseLost
from wisp.serve.store.offload import off_loop
from wisp.serve.worker import load_driver

if TYPE_CHECKING:
    from wisp.models.base import Model
    from wisp.serve.containment import Housing
    from wisp.serve.driver import SessionDriver
    from wisp.serve.store.base import Store

LEASE_TTL_S = 30.0
LEASE_RETRY_S = 0.2


class TurnRunner:
    """Runs durable turns' steps in this process (see the module docstring)."""

    def __init__(self, store: Store, fanout: Fanout, *, name: str, env: Mapping[str, str],
                 housing: Housing, model: Model | None = None) -> None:
        self.store = store
        self.fanout = fanout
        self.name = name  # the session lease holder: this process's executor id
        self.env = dict(env)
        self.housing = housing
        self.model = model
        self.drivers: dict[str, SessionDriver] = {}  # sessions with a turn under way here
        self.steps: dict[str, asyncio.Event] = {}  # sessions with a step running → wake
        self._renewer: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._renewer = asyncio.ensure_future(self._renew())

    def wake(self, session_id: str | None = None) -> None:
        """Client events were queued (for `session_id`; None: maybe any)."""
        for sid, event in self.steps.items():
            if session_id is None or sid == session_id:
                event.set()

    # Steps --------------------------------------------------------------------------------

    async def advance(self, session_id: str, turn_id: str) -> JSON:
        try:
            return await self._advance(session_id, turn_id)
        except LeaseLost:
            # This process was thought dead and another worker has the session: this
            # execution stops; DBOS retries the step, which waits for the lease.
            await self._give_up(session_id, "a write was refused")
            raise

    async def _advance(self, session_id: str, turn_id: str) -> JSON:
        await self._lease(session_id)
        queued = shapes.stored_client_events(
            await off_loop(self.store, self.store.queued, session_id))
        driver = self.drivers.get(session_id)  # after the await: as it is now
        if driver is None:
            driver = await load_driver(self.store, self.fanout, session_id, env=self.env,
                                       housing=self.housing, model=self.model,
                                       holder=self.name)
            if driver is None or driver.status == "terminated":  # nothing to run
                await off_loop(self.store, self.store.release_lease, session_id, self.name)
                return {"done": True}
            self.drivers[session_id] = driver
            if not any(e["id"] == turn_id for e in queued):
                await driver.resume()  # taken up before: continue from the log
        wake = self.steps[session_id] = asyncio.Event()
        try:
            waiting = await self._run_until_settled(driver, turn_id, queued, wake)
        finally:
            del self.steps[session_id]
        if driver.fenced:
            raise LeaseLost(session_id, self.name)
        if waiting:
            return {"waiting": waiting}
        await self._finish(session_id)
        return {"done": True}

    async def _run_until_settled(self, driver: SessionDriver, turn_id: str,
                                 queued: list[shapes.ClientEventRecord],
                                 wake: asyncio.Event) -> list[str]:
        await self._hand(driver, turn_id, queued)
        while True:
            settling = asyncio.ensure_future(driver.settle())
            woken = asyncio.ensure_future(wake.wait())
            done, _ = await asyncio.wait({settling, woken},
                                         return_when=asyncio.FIRST_COMPLETED)
            woken.cancel()
            if settling in done:
                return settling.result() or []
            settling.cancel()
            wake.clear()
            await self._hand(driver, turn_id, shapes.stored_client_events(
                await off_loop(self.store, self.store.queued, driver.session_id)))

    async def _hand(self, driver: SessionDriver, turn_id: str,
                    queued: list[shapes.ClientEventRecord]) -> None:
        """This turn's client events to the driver. Other user messages have turns of
        their own, except those an interrupt after them drops (as the embedded driver
        drops the messages queued behind a turn it interrupts)."""
        kinds = [e["type"] for e in queued]
        last_interrupt = max((i for i, k in enumerate(kinds) if k == "user.interrupt"),
                             default=-1)
        events: list[shapes.ClientEventRecord] = []
        for i, event in enumerate(queued):
            if shapes.starts_a_turn(event) and event["id"] != turn_id:
                if i < last_interrupt and event["id"] not in driver.seen:
                    driver.seen.add(event["id"])
                    driver.queue.append(event)  # consumed with the interrupt
                continue
            events.append(event)
        await driver.handle(events)

    async def failed(self, session_id: str, turn_id: str, error: str) -> None:
        """The turn cannot go on (its steps kept failing): the session ends, with the
        reason, in its final state."""
        await self._drop(session_id)
        await terminate(self.store, self.fanout, session_id, f"the turn failed: {error}")
        await off_loop(self.store, self.store.release_lease, session_id, self.name)

    async def dead_letter(self, session_id: str, turn_id: str) -> None:
        await terminate(self.store, self.fanout, session_id,
                        f"the turn crashed its worker {MAX_RECOVERIES} times; it was given up")

    async def _give_up(self, session_id: str, why: str) -> None:
        """Another worker holds the session now. Said on stderr, because a fenced worker
        is otherwise silent and an operator (or a test) needs to know it stopped."""
        print(f"wisp serve: session {session_id}: {why}; another worker holds it, this "
              "one writes no more to it", file=sys.stderr, flush=True)
        await self._drop(session_id)

    async def _drop(self, session_id: str) -> None:
        driver = self.drivers.pop(session_id, None)
        if driver is not None:
            await driver.close()

    async def _finish(self, session_id: str) -> None:
        """The turn is over: the next one may run on any worker, which rebuilds the
        driver from the store (a kept one could be stale by then)."""
        await self._drop(session_id)
        await off_loop(self.store, self.store.release_lease, session_id, self.name)

    # Leases -------------------------------------------------------------------------------

    async def _lease(self, session_id: str) -> None:
        """Waits for the session's lease: another holder is a worker whose turn on it
        has not let go yet, or a dead one whose leases its executor's recovery frees."""
        while not await off_loop(self.store, self.store.acquire_lease, session_id, self.name,
                                 LEASE_TTL_S):
            await asyncio.sleep(LEASE_RETRY_S)

    async def _renew(self) -> None:
        """Keeps the leases of the sessions this process drives; a session whose lease
        another took (this process was thought dead) is dropped, not written to."""
        while True:
            await asyncio.sleep(LEASE_TTL_S / 3)
            for session_id, driver in list(self.drivers.items()):
                try:
                    kept = await off_loop(self.store, self.store.renew_lease, session_id,
                                          self.name, LEASE_TTL_S)
                except Exception as exc:  # the database is away: try at the next round
                    print(f"wisp serve: lease renewal: {exc!r}", file=sys.stderr)
                    continue
                # Renewed off the loop: meanwhile the turn may have ended and let the
                # lease go itself (its driver dropped first), which is no loss.
                if not kept and self.drivers.get(session_id) is driver:
                    await self._give_up(session_id, "its lease could not be renewed")

    async def drain(self, timeout_s: float) -> None:
        """Lets running steps finish, up to `timeout_s` (SIGTERM)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while self.steps and loop.time() < deadline:
            await asyncio.sleep(0.05)

    async def close(self) -> None:
        if self._renewer is not None:
            self._renewer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._renewer
        for session_id, driver in list(self.drivers.items()):
            await driver.close()
            await off_loop(self.store, self.store.release_lease, session_id, self.name)
        self.drivers.clear()


async def terminate(store: Store, fanout: Fanout, session_id: str, reason: str) -> None:
    """`session.error` and `session.status_terminated`: the session's irreversible end
    (it takes no more events). Once only: a terminated session is left as it is. The
    store calls are made off the event loop (the log's writes by its `OrderedWriter`)."""
    doc = await off_loop(store, _session_document, store, session_id)
    if doc is None or doc.get("status") == "terminated":
        return
    log = SessionLog(store, fanout, session_id, deferred=True)
    log.emit(shapes.session_error("unknown_error", reason))
    log.emit(shapes.status_terminated(), status="terminated")
    await log.flush()


def _session_document(store: Store, session_id: str) -> JSON | None:
    owner = store.owner_of("session", session_id)
    return store.get("session", owner, session_id) if owner else None
