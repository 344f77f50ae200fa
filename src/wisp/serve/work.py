"""The work queue of self-hosted environments (`environments.work.*`): what the SDK's
`EnvironmentWorker` polls, acknowledges, heartbeats and stops.

A work item (`work_…`) asks a worker to serve one session. One is queued when a session
is created in a `self_hosted` environment, and again when a client event arrives for a
session whose last item has stopped. Its life:

    queued --poll--> queued, claimed --ack--> starting --heartbeat--> active
    active --stop(force)--> stopped;  active --stop--> stopping --(worker) stop--> stopped

Each item is a document of kind `work:<environment id>` in the store, owned like the
environment. Who holds an item is a store lease named `work:<item id>` (the same atomic
leases sessions use), so two pollers, in any processes, never both get it:
- a poll claims an item whose lease is free, for `reclaim_older_than_ms` (default 5 s):
  an item polled and never acknowledged is handed out again after that;
- an ack and each heartbeat extend the lease by the item's TTL (`WISP_SERVE_WORK_TTL_S`,
  default 300 s, as the API's; `desired_ttl_seconds` within 1 s to 1 h);
- a lease that expires (the worker died) leaves the item to the next poll, which starts
  it over: its heartbeat record is cleared, so the old holder's next heartbeat no longer
  matches (`412 heartbeat_precondition_failed`) and the new one's `NO_HEARTBEAT` does.
A heartbeat on a stopping or stopped item does not extend it (`lease_extended: false`):
that is how a stop reaches the worker.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime

from wisp.jsontypes import JSON
from wisp.serve import shapes
from wisp.serve.http import HttpError
from wisp.serve.store.base import Store, every
from wisp.serve.store.offload import off_loop

TTL_ENV = "WISP_SERVE_WORK_TTL_S"
DEFAULT_TTL_S = 300
RECLAIM_MS = 5000
NO_HEARTBEAT = "NO_HEARTBEAT"
POLLING_WINDOW_S = 30.0  # `workers_polling`: workers seen polling this recently
LIVE = ("queued", "starting", "active")
_INTERNAL = ("claim", "polled_by", "ttl")
# What a worker's step is worked out from: when another changed them, the step is void.
_STEP_KEYS = ("state", "claim", "latest_heartbeat_at", "stop_requested_at")


def kind(environment_id: str) -> str:
    return f"work:{environment_id}"


def lease_key(work_id: str) -> str:
    return f"work:{work_id}"


def default_ttl_s() -> int:
    raw = os.environ.get(TTL_ENV, "")
    return max(1, int(raw)) if raw.isdigit() else DEFAULT_TTL_S


def public(doc: JSON) -> JSON:
    """An item as clients see it (the claim is the service's own business)."""
    return {k: v for k, v in doc.items() if k not in _INTERNAL}


def _precise_now() -> str:
    # Microseconds: a heartbeat's stamp is its identity, two in one millisecond must differ.
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def new_item(environment_id: str, session_id: str) -> JSON:
    return {"id": shapes.new_id("work"), "type": "work", "environment_id": environment_id,
            "data": {"type": "session", "id": session_id}, "metadata": {},
            "state": "queued", "secret": None, "created_at": shapes.timestamp(),
            "acknowledged_at": None, "started_at": None, "latest_heartbeat_at": None,
            "stop_requested_at": None, "stopped_at": None, "claim": None,
            "polled_by": None, "ttl": default_ttl_s()}


class WorkQueue:
    """The queue's operations on the store; HttpError for what a client got wrong."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.pollers: dict[str, dict[str, float]] = {}  # environment → worker → last poll

    # Items ------------------------------------------------------------------------------

    def items(self, owner: str, environment_id: str) -> Iterator[JSON]:
        """Every item of the environment, oldest first."""
        return every(self.store, kind(environment_id), owner, order="asc",
                     include_archived=True)

    def get(self, owner: str, environment_id: str, work_id: str) -> JSON:
        doc = self.store.get(kind(environment_id), owner, work_id)
        if doc is None:
            raise HttpError(404, "not_found_error", f"work {work_id} not found")
        return doc

    def _save(self, owner: str, read: JSON, changes: JSON) -> JSON:
        """A worker's step (claim, ack, heartbeat): `changes` made to the item as stored,
        if it is still where they were worked out from (`read`'s state, claim and
        heartbeat), in one locked read-modify-write. Otherwise the item as it is now,
        unchanged: what came between (a stop, another claim) is not overwritten."""
        def change(current: JSON) -> JSON | None:
            if any(current[key] != read[key] for key in _STEP_KEYS):
                return None
            return {**current, **changes}

        stored = self.store.modify(kind(read["environment_id"]), owner, read["id"], change)
        if stored is None:
            raise HttpError(404, "not_found_error", f"work {read['id']} not found")
        return stored

    def offer(self, owner: str, environment_id: str, session_id: str) -> JSON | None:
        """Queues an item for the session unless one is live already."""
        if any(i["data"]["id"] == session_id and i["state"] in LIVE
               for i in self.items(owner, environment_id)):
            return None
        doc = new_item(environment_id, session_id)
        self.store.create(kind(environment_id), owner, doc)
        return doc

    def request_stop(self, owner: str, environment_id: str, session_id: str) -> None:
        """The session is gone or archived: its live items are asked to stop."""
        for item in self.items(owner, environment_id):
            if item["data"]["id"] == session_id and item["state"] in LIVE:
                self._stop(owner, item, force=item["claim"] is None)

    # Polling ----------------------------------------------------------------------------

    async def poll(self, owner: str, environment_id: str, *, block_ms: int | None,
                   reclaim_ms: int | None, worker_id: str | None) -> JSON | None:
        """The oldest item no one holds, claimed; waits up to `block_ms` for one."""
        if worker_id:
            self.pollers.setdefault(environment_id, {})[worker_id] = time.time()
        deadline = time.monotonic() + (block_ms or 0) / 1000
        while True:
            # Off the event loop: a blocking poll looks every 50 ms (`off_loop`).
            claimed = await off_loop(self.store, self._claim_one, owner, environment_id,
                                     reclaim_ms or RECLAIM_MS, worker_id)
            if claimed is not None or time.monotonic() >= deadline:
                return claimed
            await asyncio.sleep(min(0.05, max(0.0, deadline - time.monotonic())))

    def _claim_one(self, owner: str, environment_id: str, reclaim_ms: int,
                   worker_id: str | None) -> JSON | None:
        for item in self.items(owner, environment_id):
            if item["state"] not in LIVE:
                continue
            claim = shapes.new_id("claim")
            if self.store.acquire_lease(lease_key(item["id"]), claim, reclaim_ms / 1000):
                # Free: never polled, or its last holder let the lease lapse. It starts over.
                saved = self._save(owner, item, {
                    "state": "queued", "claim": claim, "polled_by": worker_id,
                    "acknowledged_at": None, "latest_heartbeat_at": None})
                if saved["claim"] == claim:
                    return saved
                self.store.release_lease(lease_key(item["id"]), claim)  # stopped meanwhile
        return None

    def ack(self, owner: str, doc: JSON) -> JSON:
        if doc["state"] not in LIVE or doc["claim"] is None:
            raise HttpError(409, "invalid_request_error",
                            f"work {doc['id']} is {doc['state']}, not claimed by a poll",
                            headers={"x-should-retry": "false"})
        self.store.renew_lease(lease_key(doc["id"]), doc["claim"], doc["ttl"])
        return self._save(owner, doc, {"state": "starting",
                                       "acknowledged_at": shapes.timestamp()})

    # Heartbeats and stops -----------------------------------------------------------------

    def heartbeat(self, owner: str, doc: JSON, expected: str | None,
                  desired_ttl: int | None) -> JSON:
        if doc["state"] in ("stopping", "stopped"):
            return _heartbeat_answer(doc, extended=False)
        stored = doc["latest_heartbeat_at"] or NO_HEARTBEAT
        ttl = min(max(desired_ttl or doc["ttl"], 1), 3600)
        if (expected not in (None, stored) or doc["claim"] is None
                or not self.store.renew_lease(lease_key(doc["id"]), doc["claim"], ttl)):
            raise _precondition_failed(doc)
        now = _precise_now()
        doc = self._save(owner, doc, {"state": "active", "latest_heartbeat_at": now,
                                      "started_at": doc["started_at"] or now, "ttl": ttl})
        # Not extended when a stop (or another holder) came first: that reaches the worker.
        return _heartbeat_answer(doc, extended=doc["latest_heartbeat_at"] == now)

    def stop(self, owner: str, doc: JSON, *, force: bool) -> JSON:
        if doc["state"] == "stopped":
            raise HttpError(409, "invalid_request_error", f"work {doc['id']} has stopped",
                            headers={"x-should-retry": "false"})
        return self._stop(owner, doc, force=force)

    def _stop(self, owner: str, doc: JSON, *, force: bool) -> JSON:
        """A stop is made to the item as stored (one locked read-modify-write), whatever
        step a worker took since it was read."""
        now = shapes.timestamp()

        def stopped(current: JSON) -> JSON | None:
            if current["state"] == "stopped":
                return None
            if force or current["claim"] is None:  # nobody to tell: it just ends
                return {**current, "state": "stopped", "stopped_at": now,
                        "stop_requested_at": current["stop_requested_at"] or now}
            return {**current, "state": "stopping", "stop_requested_at": now}

        stored = self.store.modify(kind(doc["environment_id"]), owner, doc["id"], stopped)
        if stored is None:
            raise HttpError(404, "not_found_error", f"work {doc['id']} not found")
        if stored["state"] == "stopped" and stored["claim"] is not None:
            self.store.release_lease(lease_key(stored["id"]), stored["claim"])
        return stored

    def update_metadata(self, owner: str, doc: JSON, patch: JSON) -> JSON:
        """`patch` merged into the item's metadata as stored (a key set to null or "" is
        dropped), in one locked read-modify-write: a worker's step or a stop made since
        `doc` was read is kept, as is another metadata update."""
        def patched(current: JSON) -> JSON:
            merged = {k: v for k, v in {**current["metadata"], **patch}.items()
                      if v not in (None, "")}
            return {**current, "metadata": merged}

        stored = self.store.modify(kind(doc["environment_id"]), owner, doc["id"], patched)
        if stored is None:
            raise HttpError(404, "not_found_error", f"work {doc['id']} not found")
        return stored

    # Stats ------------------------------------------------------------------------------

    def stats(self, owner: str, environment_id: str) -> JSON:
        # A copy first, made in one step: this runs off the loop while polls record theirs.
        seen = list(self.pollers.get(environment_id, {}).values())
        waiting = [i for i in self.items(owner, environment_id) if i["state"] == "queued"]
        held = [i for i in waiting if i["claim"] is not None
                and self.store.lease_holder(lease_key(i["id"])) == i["claim"]]
        recent = time.time() - POLLING_WINDOW_S
        polling = sum(1 for when in seen if when >= recent)
        return {"type": "work_queue_stats", "depth": len(waiting) - len(held),
                "pending": len(held),
                "oldest_queued_at": min((i["created_at"] for i in waiting), default=None),
                "workers_polling": polling}


def _heartbeat_answer(doc: JSON, *, extended: bool) -> JSON:
    return {"type": "work_heartbeat", "lease_extended": extended, "state": doc["state"],
            "last_heartbeat": doc["latest_heartbeat_at"] or "",
            "ttl_seconds": doc["ttl"]}


def _precondition_failed(doc: JSON) -> HttpError:
    state = {"last_heartbeat": doc["latest_heartbeat_at"], "lease_extended": False,
             "state": doc["state"], "ttl_seconds": doc["ttl"]}
    return HttpError(412, "invalid_request_error",
                     "expected_last_heartbeat does not match: another worker may hold the "
                     "lease", details={"error_code": "heartbeat_precondition_failed",
                                       "current_state": state})
