"""The worker: finds sessions with work, takes each one's lease, and drives it.

Work is a queued client event, or a session left `running` (its worker died: the lease
expired). The API process wakes the worker when it queues an event (`notify`); the worker
also looks every `poll_s`, which is how it notices work queued by another process and
sessions whose worker died. A session is driven by one worker at a time: the lease is
renewed while the driver lives, and a worker that cannot renew it stops driving.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

from wisp.jsontypes import JSON
from wisp.serve import shapes
from wisp.serve.driver import SessionDriver
from wisp.serve.holders import dead_here, worker_name
from wisp.serve.session_log import Fanout
from wisp.serve.store.offload import off_loop

if TYPE_CHECKING:
    from wisp.models.base import Model
    from wisp.serve.containment import Housing
    from wisp.serve.store.base import Store

LEASE_TTL_S = 30.0
DEAD_HOLDER_CHECK_S = 2.0


class Worker:
    def __init__(self, store: Store, fanout: Fanout, *, env: Mapping[str, str],
                 housing: Housing, poll_s: float = 1.0, model: Model | None = None) -> None:
        self.store = store
        self.fanout = fanout
        self.env = dict(env)
        self.housing = housing
        self.poll_s = poll_s
        self.model = model
        self.name = worker_name()
        self.drivers: dict[str, SessionDriver] = {}
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._renewed = 0.0
        self._notified: set[str] = set()
        self._full_look = True
        self._last_full = 0.0
        self._checked_holders = -DEAD_HOLDER_CHECK_S
        self._closing: set[asyncio.Future[None]] = set()

    def start(self) -> None:
        self._task = asyncio.ensure_future(self._loop())

    def notify(self, session_id: str | None = None) -> None:
        """Work was queued (for `session_id`): look now rather than at the next poll."""
        if session_id is not None:
            self._notified.add(session_id)
        self._wake.set()

    async def _loop(self) -> None:
        while True:
            try:
                await self.step()
            except Exception as exc:  # one bad session must not stop the others
                print(f"wisp serve: worker error: {exc!r}", file=sys.stderr)
            self._full_look = True
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.poll_s)
                # Woken for given sessions: look at those, unless a full look is due
                # (constant wake-ups must not hide other processes' work).
                self._full_look = asyncio.get_running_loop().time() - self._last_full > (
                    self.poll_s)
            self._wake.clear()

    async def step(self) -> None:
        """Takes sessions that need a worker, then hands each driven session its queued
        events: all of them at a poll, only the notified ones when woken (the hot path
        of a client's message must not cost a query per session in memory)."""
        self._renew_leases()
        self._release_dead_holders()
        notified, self._notified = self._notified, set()
        if self._full_look or any(s not in self.drivers for s in notified):
            for session_id in self.store.sessions_needing_work():
                if session_id not in self.drivers:
                    await self._take(session_id)
        if self._full_look:
            self._last_full = asyncio.get_running_loop().time()
        looking = list(self.drivers) if self._full_look else [
            s for s in notified if s in self.drivers]
        for session_id in looking:
            driver = self.drivers.get(session_id)
            queued = self.store.queued(session_id) if driver is not None else []
            if queued and driver is not None:
                await driver.handle(shapes.stored_client_events(queued))

    async def _take(self, session_id: str) -> None:
        if not self._acquire(session_id):
            return
        driver = self._driver(session_id)
        if driver is None:
            self.store.release_lease(session_id, self.name)
            return
        self.drivers[session_id] = driver
        await driver.resume()

    def _acquire(self, session_id: str) -> bool:
        return self.store.acquire_lease(session_id, self.name, LEASE_TTL_S)

    def _release_dead_holders(self) -> None:
        """Leases held by a dead process of this host are let go at once rather than when
        they expire: a restart after `kill -9` resumes its sessions without waiting."""
        loop = asyncio.get_running_loop()
        if loop.time() - self._checked_holders < DEAD_HOLDER_CHECK_S:
            return
        self._checked_holders = loop.time()
        for session_id, holder in self.store.lease_holders():
            if holder != self.name and dead_here(holder):
                self.store.release_lease(session_id, holder)

    def _driver(self, session_id: str) -> SessionDriver | None:
        return open_driver(self.store, self.fanout, session_id, env=self.env,
                           housing=self.housing, model=self.model, holder=self.name)

    def _renew_leases(self) -> None:
        loop = asyncio.get_running_loop()
        if loop.time() - self._renewed < LEASE_TTL_S / 3:
            return
        self._renewed = loop.time()
        for session_id in list(self.drivers):
            if not self.store.renew_lease(session_id, self.name, LEASE_TTL_S):
                self.forget(session_id)  # another worker has it now

    def forget(self, session_id: str) -> None:
        """A deleted or terminated session: stop driving it."""
        driver = self.drivers.pop(session_id, None)
        if driver is not None:
            closing = asyncio.ensure_future(driver.close())
            self._closing.add(closing)  # held: the loop keeps only weak references
            closing.add_done_callback(self._closing.discard)

    async def close(self) -> None:
        """Stops taking work; running turns are given `drain_s` by the caller, then their
        sessions' leases are released so another worker (or a restart) resumes them."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        for session_id, driver in list(self.drivers.items()):
            await driver.close()
            self.store.release_lease(session_id, self.name)
        self.drivers.clear()

    async def drain(self, timeout_s: float) -> None:
        """Lets running turns finish, up to `timeout_s` (SIGTERM). A turn waiting on the
        client is not waited for: it is handed back as it is (`close`)."""
        settling = [asyncio.ensure_future(d.settle()) for d in self.drivers.values()
                    if d.busy]
        if settling:
            await asyncio.wait(settling, timeout=timeout_s)
            for waiting in settling:
                waiting.cancel()


def open_driver(store: Store, fanout: Fanout, session_id: str, *, env: Mapping[str, str],
                housing: Housing, model: Model | None = None, holder: str | None = None
                ) -> SessionDriver | None:
    """A driver for the session as the store has it (None: it is gone), its workspace
    `<data dir>/workspaces/<session id>` made if new, its commands held by the sandbox
    `housing` makes; its writes fenced by `holder`'s lease."""
    found = session_records(store, session_id)
    return None if found is None else _driver_of(store, fanout, found, env=env,
                                                 housing=housing, model=model, holder=holder)


async def load_driver(store: Store, fanout: Fanout, session_id: str, *,
                      env: Mapping[str, str], housing: Housing, model: Model | None = None,
                      holder: str | None = None) -> SessionDriver | None:
    """`open_driver` from async code: its store reads on the store's thread pool."""
    found = await off_loop(store, session_records, store, session_id)
    return None if found is None else _driver_of(store, fanout, found, env=env,
                                                 housing=housing, model=model, holder=holder)


def _driver_of(store: Store, fanout: Fanout, found: tuple[JSON, JSON | None], *,
               env: Mapping[str, str], housing: Housing, model: Model | None,
               holder: str | None) -> SessionDriver:
    session, environment = found
    agent = shapes.as_session_agent(session.get("agent") or {})
    return SessionDriver(store, fanout, session, agent, environment, env=env,
                         workspace=housing.workspace(str(session["id"])), housing=housing,
                         model=model, holder=holder)


def session_records(store: Store, session_id: str) -> tuple[JSON, JSON | None] | None:
    """The session's document and its environment's (None: the session is gone)."""
    owner = store.owner_of("session", session_id)
    session = store.get("session", owner, session_id) if owner else None
    if session is None or owner is None:
        return None
    return session, store.get("environment", owner, str(session.get("environment_id") or ""))
