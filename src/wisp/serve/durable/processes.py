"""`Scaled`: one process of a PostgreSQL deployment of `wisp serve`, by role.

- `api`: the HTTP API; client events are logged, then passed to DBOS turns
  (`TurnDispatch`); webhook deliveries are sent from the shared outbox.
- `worker`: a DBOS executor running turns (`DurableTurns` + `TurnRunner`).
- `all`: both in one process.

Every process holds one LISTEN connection (`PostgresStore.listen`): a write by any process
wakes this one's SSE streams at once, and a client event queued for a session whose turn
runs here reaches that turn mid-step (an interrupt during a model call). The streams'
own polling (`wisp.serve.follow.POLL_S`) is the fallback when notifications are lost.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING

from wisp.jsontypes import JSON
from wisp.serve.durable.previews import SharedFanout
from wisp.serve.durable.runner import TurnRunner
from wisp.serve.durable.turns import DurableTurns, TurnClient
from wisp.serve.holders import worker_name
from wisp.serve.store.postgres import PostgresStore

if TYPE_CHECKING:
    from wisp.serve.containment import Housing
    from wisp.serve.deployments import Scheduler
    from wisp.serve.durable.dispatch import TurnDispatch
    from wisp.serve.http import Server
    from wisp.serve.store.pg_listener import Listener
    from wisp.serve.webhooks import Deliverer


class Scaled:
    def __init__(self, role: str, dsn: str, *, env: Mapping[str, str], housing: Housing,
                 poll_s: float = 1.0) -> None:
        self.role = role
        self.dsn = dsn
        self.env = dict(env)
        self.housing = housing
        self.poll_s = poll_s
        self.name = worker_name()
        self.store = PostgresStore(dsn)
        self.fanout = SharedFanout(self.store, self.name)
        self.client = TurnClient(dsn)
        self.url = ""
        self.runner: TurnRunner | None = None
        self.turns: DurableTurns | None = None
        self.server: Server | None = None
        self.dispatch: TurnDispatch | None = None
        self.deliverer: Deliverer | None = None
        self.scheduler: Scheduler | None = None
        self.listener: Listener | None = None

    async def start(self, host: str, port: int) -> None:
        self._listen()
        self.fanout.start()
        if self.role in ("all", "worker"):
            await self._start_worker()
        if self.role in ("all", "api"):
            await self._start_api(host, port)

    def _listen(self) -> None:
        loop = asyncio.get_running_loop()

        def heard(session_id: str, queued: bool) -> None:
            self.fanout.wake(session_id)
            if queued and self.runner is not None:
                self.runner.wake(session_id)

        def lost() -> None:
            self.fanout.wake_all()
            if self.runner is not None:
                self.runner.wake(None)

        def on_append(session_id: str, _seq: int, queued: bool) -> None:
            loop.call_soon_threadsafe(heard, session_id, queued)  # from the listener thread

        def on_lost() -> None:
            loop.call_soon_threadsafe(lost)

        def on_preview(session_id: str, sender: str, event: JSON) -> None:
            loop.call_soon_threadsafe(self.fanout.heard, session_id, sender, event)

        self.listener = self.store.listen(on_append, on_lost=on_lost, on_preview=on_preview)

    async def _start_worker(self) -> None:
        self.runner = TurnRunner(self.store, self.fanout, name=self.name, env=self.env,
                                 housing=self.housing)
        self.turns = DurableTurns(self.dsn, self.runner, self.store, self.client,
                                  executor_id=self.name)
        await self.turns.launch()
        self.runner.start()

    async def _start_api(self, host: str, port: int) -> None:
        from wisp.serve.app import Api
        from wisp.serve.auth import ApiKeys
        from wisp.serve.deployments import Scheduler
        from wisp.serve.durable.dispatch import TurnDispatch
        from wisp.serve.http import Server
        from wisp.serve.webhooks import Deliverer

        self.dispatch = TurnDispatch(self.store, self.client)
        api = Api(self.store, self.fanout, self.dispatch, files_dir=self.housing.data_dir / "files")
        self.server = Server(api.router, host, port, ApiKeys.from_env(self.env))
        await self.server.start()
        self.url = self.server.url
        self.deliverer = Deliverer(self.store, env=self.env, poll_s=self.poll_s)
        self.deliverer.start()
        # Every API replica looks; a claim per occurrence lets one of them fire it.
        self.scheduler = Scheduler(self.store, api.start_session, env=self.env)
        self.scheduler.start()

    async def close(self, drain_s: float) -> None:
        """SIGTERM: running steps get `drain_s` to finish; the turns still under way
        (waiting on a client, or cut short) are recovered by another worker at once,
        since this executor's lease is released."""
        if self.scheduler is not None:
            await self.scheduler.close()
        if self.runner is not None:
            await self.runner.drain(drain_s)
        if self.server is not None:
            await self.server.close(drain_s=2.0)
        if self.dispatch is not None:
            await self.dispatch.close()
        if self.turns is not None:
            await self.turns.close()
        if self.runner is not None:
            await self.runner.close()
        if self.deliverer is not None:
            await self.deliverer.close()
        await self.fanout.close()
        if self.listener is not None:
            self.listener.close()
        self.client.close()
        self.store.close()
