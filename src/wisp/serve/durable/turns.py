"""Turns as DBOS durable workflows: how `wisp serve` scales out on PostgreSQL.

One workflow per turn, id `turn:<session>:<user.message event id>`:

    loop:
        step "advance": run the turn on until it is over (-> done) or stops on the
                        client (custom tools, self-hosted tools, `always_ask`)
        recv "client":  a durable wait, holding no thread; any message means "the log
                        has client events for this turn", and the next advance reads them

The session log stays the one source of truth: messages carry only event ids, the API
logs (and acknowledges) an event before it sends one, and a step reads what it needs from
the log. Steps are at-least-once (a step a crash cut short runs again); `advance` is safe
to repeat because it re-derives the turn from the log and the stored conversation
(`wisp.serve.recovery`).

Dispatch is DBOS's queue `wisp_turns`, partitioned by session with one running turn per
partition: a session's turns run one after another, on any worker. Enqueueing an existing
workflow id attaches to it, so a retried request (or the reconciler) starts no second turn.

Recovery: each worker is a DBOS executor named like the embedded worker (host:pid:nonce)
and heartbeats a lease `executor:<id>` in the store. Open-source DBOS recovers only its
own executor's workflows; deciding that another executor is dead is ours: any worker that
sees PENDING turns of an executor whose lease expired (or, on this host, whose process is
gone) releases that executor's session leases and hands its turns back to the queue
(`DBOS._recover_pending_workflows`, what DBOS's own admin endpoint calls). The queue's
atomic dequeue gives each to one live worker, which replays the checkpointed steps and
waits and runs the first unfinished step again.

DBOS is imported only here, in processes of a PostgreSQL deployment (~1 s of imports).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from typing import Protocol

from dbos import DBOS, DBOSClient

from wisp.jsontypes import JSON
from wisp.serve.holders import dead_here, worker_name
from wisp.serve.session_log import Fanout, SessionLog
from wisp.serve.shapes import starts_a_turn, stored_client_events
from wisp.serve.store.offload import off_loop
from wisp.serve.store.pg_connections import IDLE_IN_TRANSACTION_S
from wisp.serve.store.postgres import PostgresStore

TURN_WORKFLOW = "wisp_turn"
TURN_QUEUE = "wisp_turns"
CLIENT_TOPIC = "client"
# DBOS recovers a workflow only on executors of the same application version: fixed, and
# changed only when the workflow's steps change shape.
APP_VERSION = "wisp-turns-1"
EXECUTOR_LEASE = "executor:"
WAIT_S = 3600.0  # a wait wakes this often even unanswered (one checkpoint each)
ACTIVE = ["PENDING", "ENQUEUED"]
# A turn that took its worker down this many times is not tried again (DBOS's dead
# letter, MAX_RECOVERY_ATTEMPTS_EXCEEDED): its session is terminated instead.
MAX_RECOVERIES = 5
STRAY_LEASE_S = 5.0


def workflow_id(session_id: str, turn_id: str) -> str:
    return f"turn:{session_id}:{turn_id}"


class TurnSteps(Protocol):
    """What runs a turn's steps in a worker process (`wisp.serve.durable.runner`)."""

    async def advance(self, session_id: str, turn_id: str) -> JSON:
        """Runs the turn on from the log: `{"done": True}` or `{"waiting": [ids]}`."""
        ...

    async def failed(self, session_id: str, turn_id: str, error: str) -> None:
        """The turn could not go on (`advance` kept failing): end the session."""
        ...

    async def dead_letter(self, session_id: str, turn_id: str) -> None:
        """The turn crashed its worker MAX_RECOVERIES times: end the session."""
        ...


# DBOS registers workflows process-wide, by name: one set of steps per process.
_steps: TurnSteps | None = None


async def _advance(session_id: str, turn_id: str) -> JSON:
    assert _steps is not None, "this process runs no turns (no TurnSteps installed)"
    return await _steps.advance(session_id, turn_id)


async def _failed(session_id: str, turn_id: str, error: str) -> None:
    assert _steps is not None
    await _steps.failed(session_id, turn_id, error)


async def turn_workflow(session_id: str, turn_id: str) -> JSON:
    """The `wisp_turn` workflow (see the module docstring)."""
    while True:
        try:
            result: JSON = await DBOS.run_step_async(
                {"name": "advance", "retries_allowed": True, "max_attempts": 3,
                 "interval_seconds": 0.5}, _advance, session_id, turn_id)
        except Exception as exc:  # checkpointed: a replay takes this branch again
            await DBOS.run_step_async({"name": "failed"}, _failed, session_id, turn_id,
                                      str(exc))
            return {"failed": True}
        if result.get("done"):
            return result
        await DBOS.recv_async(CLIENT_TOPIC, timeout_seconds=WAIT_S)


_registered = False


def _register() -> None:
    global _registered
    if not _registered:
        DBOS.workflow(name=TURN_WORKFLOW, max_recovery_attempts=MAX_RECOVERIES)(
            turn_workflow)
        _registered = True


class TurnClient:
    """Starts turns and passes client events on to them; needs no workflows of its own
    (the API processes' side, a `DBOSClient` on the same database)."""

    def __init__(self, dsn: str) -> None:
        self.client = DBOSClient(system_database_url=dsn,
                                 sys_db_idle_transaction_timeout_sec=IDLE_IN_TRANSACTION_S)

    async def start(self, session_id: str, turn_id: str) -> None:
        """Enqueues the turn of the `user.message` `turn_id` (again: the same turn)."""
        await self.client.enqueue_async(
            {"queue_name": TURN_QUEUE, "workflow_name": TURN_WORKFLOW,
             "workflow_id": workflow_id(session_id, turn_id),
             "queue_partition_key": session_id, "app_version": APP_VERSION},
            session_id, turn_id)

    async def active(self, session_id: str) -> dict[str, str]:
        """The session's turns not yet over: workflow id → status (PENDING: started)."""
        found = await self.client.list_workflows_async(
            workflow_id_prefix=workflow_id(session_id, ""), status=ACTIVE,
            load_input=False, load_output=False)
        return {w.workflow_id: str(w.status) for w in found}

    async def tell(self, workflow: str, event_id: str) -> None:
        """The log has the client event `event_id` for the turn `workflow`."""
        await self.client.send_async(workflow, {"event_id": event_id}, CLIENT_TOPIC,
                                     f"{workflow}:{event_id}")

    async def cancel(self, session_id: str) -> None:
        """Ends the session's turns (it was deleted or archived)."""
        for workflow in await self.active(session_id):
            await self.client.cancel_workflow_async(workflow)

    def close(self) -> None:
        self.client.destroy()


class DurableTurns:
    """This process as a DBOS executor running turns: launch, heartbeat, recovery of
    dead executors' turns, and the reconciler that starts turns an API process logged
    but could not enqueue (it died in between)."""

    def __init__(self, dsn: str, steps: TurnSteps, store: PostgresStore, client: TurnClient,
                 *, executor_id: str, heartbeat_s: float = 1.0, ttl_s: float = 5.0,
                 poll_s: float = 0.05, concurrency: int = 500,
                 reconcile_s: float = 2.0) -> None:
        self.dsn = dsn
        self.steps = steps
        self.store = store
        self.client = client
        self.executor_id = executor_id
        self.heartbeat_s = heartbeat_s
        self.ttl_s = ttl_s
        self.poll_s = poll_s
        self.concurrency = concurrency
        self.reconcile_s = reconcile_s
        self.recovered: list[str] = []
        self._task: asyncio.Task[None] | None = None

    async def launch(self) -> None:
        """Called on the event loop that runs the turns: DBOS adopts the running loop,
        so the (async) workflows run on it, beside the drivers they advance."""
        global _steps
        _steps = self.steps
        _register()
        await off_loop(self.store, self._beat)  # before launching: never look dead
        DBOS(config={"name": "wisp", "system_database_url": self.dsn,
                     "executor_id": self.executor_id, "application_version": APP_VERSION,
                     "notification_listener_polling_interval_sec": 0.1,
                     "sys_db_pool_size": 10,
                     # A paused executor must not hold DBOS's row locks for long either.
                     "sys_db_idle_transaction_timeout_sec": IDLE_IN_TRANSACTION_S,
                     "log_level": "WARNING"})
        DBOS.launch()
        await DBOS.register_queue_async(TURN_QUEUE, partition_concurrency=1,
                                        worker_concurrency=self.concurrency,
                                        polling_interval_sec=self.poll_s)
        self._task = asyncio.ensure_future(self._heartbeat())

    def _beat(self) -> None:
        self.store.acquire_lease(EXECUTOR_LEASE + self.executor_id, self.executor_id,
                                 self.ttl_s)

    async def _heartbeat(self) -> None:
        loop = asyncio.get_running_loop()
        reconciled = loop.time()
        while True:
            await asyncio.sleep(self.heartbeat_s)
            try:
                await off_loop(self.store, self._beat)
                await self.recover_dead()
                if loop.time() - reconciled >= self.reconcile_s:
                    reconciled = loop.time()
                    await self.reconcile()
                    await self.bury_dead_letters()
            except Exception as exc:  # a database hiccup: again at the next beat
                print(f"wisp serve: turns heartbeat: {exc!r}", file=sys.stderr)

    async def recover_dead(self) -> list[str]:
        """Hands the PENDING turns of dead executors back to the queue."""
        pending = await DBOS.list_workflows_async(status="PENDING", name=TURN_WORKFLOW,
                                                  load_input=False, load_output=False)
        owners = {str(w.executor_id) for w in pending if w.executor_id}
        dead = await off_loop(self.store, self._free_the_dead, owners - {self.executor_id})
        if not dead:
            return []
        await asyncio.to_thread(DBOS._recover_pending_workflows, dead)
        self.recovered += dead
        print(f"wisp serve: recovered the turns of {', '.join(dead)}", file=sys.stderr)
        return dead

    def _free_the_dead(self, executors: set[str]) -> list[str]:
        """Which of `executors` are dead, their session leases let go (store calls: on
        the store's thread pool)."""
        dead = sorted(e for e in executors if dead_here(e)
                      or self.store.lease_holder(EXECUTOR_LEASE + e) is None)
        if dead:
            for session_id, holder in self.store.lease_holders():
                if holder in dead:  # its sessions may be taken at once
                    self.store.release_lease(session_id, holder)
        return dead

    async def bury_dead_letters(self) -> None:
        """Sessions of turns DBOS gave up recovering end (idempotent: terminated once)."""
        given_up = await DBOS.list_workflows_async(
            status="MAX_RECOVERY_ATTEMPTS_EXCEEDED", name=TURN_WORKFLOW, load_input=False,
            load_output=False)
        for workflow in given_up:
            _, session_id, turn_id = str(workflow.workflow_id).split(":", 2)
            await self.steps.dead_letter(session_id, turn_id)

    async def reconcile(self) -> None:
        """Turns for user messages logged but never enqueued, and client events logged
        but never told to their turn (both idempotent: ids and idempotency keys)."""
        for session_id in await off_loop(self.store, self.store.sessions_needing_work):
            await dispatch_queued(self.store, self.client, session_id, consume_strays=False)

    async def close(self) -> None:
        """Stops taking turns and lets the others recover this executor's at once."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await asyncio.to_thread(DBOS.destroy)
        await off_loop(self.store, self.store.release_lease, EXECUTOR_LEASE + self.executor_id,
                       self.executor_id)


async def dispatch_queued(store: PostgresStore, client: TurnClient, session_id: str, *,
                          consume_strays: bool) -> None:
    """Passes a session's queued client events on: a `user.message` starts its turn;
    anything else (answers, confirmations, interrupts) is told to the running turn. With
    no turn to tell, `consume_strays` takes them up as the embedded driver would (an
    interrupt with nothing to interrupt, an answer nobody waits for)."""
    queued = stored_client_events(await off_loop(store, store.queued, session_id))
    for event in queued:
        if starts_a_turn(event):
            await client.start(session_id, event["id"])
    others = [e for e in queued if not starts_a_turn(e)]
    if not others:
        return
    active = await client.active(session_id)
    running = [w for w, status in active.items() if status == "PENDING"]
    for workflow in running:
        for event in others:
            await client.tell(workflow, event["id"])
    if not active and consume_strays:
        await _consume_strays(store, session_id)


async def _consume_strays(store: PostgresStore, session_id: str) -> None:
    """Takes up client events no turn waits for, under the session's lease (held for the
    moment it takes): two API processes dispatching one session cannot both log them
    consumed, and none is taken up while a worker drives the session (its turn reads
    them). Without the lease within a second, a turn has it, and the events are its."""
    holder = f"dispatch:{worker_name()}"
    for _ in range(20):
        if await off_loop(store, store.acquire_lease, session_id, holder, STRAY_LEASE_S):
            break
        await asyncio.sleep(0.05)
    else:
        return
    try:
        strays = [e for e in stored_client_events(await off_loop(store, store.queued,
                                                                 session_id))
                  if not starts_a_turn(e)]
        if strays:
            log = SessionLog(store, Fanout(), session_id, holder=holder, deferred=True)
            log.consumed(strays)
            await log.flush()  # written off the loop, and before the lease is let go
    finally:
        await off_loop(store, store.release_lease, session_id, holder)
