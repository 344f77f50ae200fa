"""The store contract. Every method is one transaction: it either happens whole or not
at all, and once it returns, what it wrote survives a `kill -9` of the process.

Resources (`kind` is "agent", "environment", "session" or "webhook_endpoint") are JSON
documents owned by the API key that created them (`owner`, a hash of the key, never the
key): every read and write names the owner, and another owner's resource is not found.

Each session has an append-only event log. An entry is one event as a client sees it on
the stream: `seq` (1, 2, 3, … per session, gap-free, the SSE `id:`), the event's `id`
(server-assigned, `sevt_…`), `type`, `processed_at` (ISO time or None) and the rest of
its fields. One event may appear twice in the log under one `id`: a client event when it
is queued (`processed_at: null`) and again when the agent consumed it. Listing events
(`events(...)`) returns each event id once, in its latest form, ordered by the seq of its
first appearance. A client event processed on receipt that still needs a worker (a
`user.define_outcome` starts a turn) is queued by the private field `UNTAKEN` instead,
which clients never see (`wisp.serve.session_log.public`).

A session is worked on by one worker at a time: `acquire_lease` succeeds only when no
other worker holds an unexpired lease on it. The lease is also a fence: a worker's appends
name it (`append(..., holder=…)`) and fail with `LeaseLost`, writing nothing, once the
lease is another's (or released), so a worker thought dead that still runs cannot write.

The webhook outbox holds deliveries (one event for one endpoint), each with a stable id
(`dlv_…`, the `webhook-id` of every attempt). A delivery is written in the same transaction
as the event it reports (`append(..., deliveries=...)`), so none is lost to a crash and
none reports an event that was not written. Deliverers `claim_deliveries` before sending:
a claim pushes the rows' `next_at` past a lease, so another deliverer (another process)
does not send them meanwhile, and one that died mid-send is retried once it expires.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Protocol, TypeVar

from wisp.jsontypes import JSON

# (owner, endpoint id, payload): one webhook delivery to write with the events it reports.
Delivery = tuple[str, str, JSON]
Doc = TypeVar("Doc", bound=Mapping[str, Any])  # a resource document, typed or JSON
# What `Store.modify` does to a document: the new one, or None to leave it as it is.
Change = Callable[[JSON], Mapping[str, Any] | None]
# What `Store.delete(..., only_if=...)` asks of the document as stored: delete it or not.
Condition = Callable[[JSON], bool]
UNTAKEN = "_untaken"  # on a processed client event a worker has still to take up


class LeaseLost(Exception):
    """An append fenced by a lease its writer no longer holds."""

    def __init__(self, session_id: str, holder: str) -> None:
        super().__init__(f"{holder} no longer holds the lease on {session_id}")
        self.session_id = session_id
        self.holder = holder


class Page:
    """One page of a listing and the cursor of the next (None at the end)."""

    __slots__ = ("items", "next_page")

    def __init__(self, items: list[JSON], next_page: str | None) -> None:
        self.items = items
        self.next_page = next_page


class Store(Protocol):
    # Resources --------------------------------------------------------------------------
    # A document goes in as its builder typed it (`shapes.AgentDocument`, ...) and comes
    # back out as JSON: `shapes.as_agent` and its kin say what a stored one is.
    def create(self, kind: str, owner: str, doc: Doc) -> Doc:
        """Stores `doc` (which carries its own `id`, `created_at`, `updated_at`)."""
    def get(self, kind: str, owner: str, resource_id: str) -> JSON | None: ...
    def list(self, kind: str, owner: str, *, limit: int, page: str | None,
             order: str = "desc", include_archived: bool = False) -> Page: ...
    def update(self, kind: str, owner: str, resource_id: str, doc: Doc) -> Doc | None:
        """Replaces the document; None when there is no such resource for this owner.
        A blind write: to change a document by what it holds now, `modify` it."""
    def modify(self, kind: str, owner: str, resource_id: str, change: Change
               ) -> JSON | None:
        """A read-modify-write of one document as one transaction: `change` gets the
        document as stored and returns the new one, or None to write nothing. The row is
        locked from the read to the commit (PostgreSQL `SELECT … FOR UPDATE`, SQLite's
        write lock), so concurrent modifies of a document, and `append`'s status change,
        take turns instead of losing each other's writes.

        Returns the document as stored afterwards (the unchanged one when `change`
        returned None); None, without calling `change`, when there is no such resource
        for this owner. Like `update`, the new document is stored as `change` returned it:
        setting `updated_at` is `change`'s business. An exception from `change` rolls back
        and propagates. `change` runs inside the transaction, holding the lock: it must
        be quick and must not call the store (on SQLite that would deadlock)."""
    def delete(self, kind: str, owner: str, resource_id: str, *,
               only_if: Condition | None = None) -> bool:
        """Deletes the document; False when there is no such resource for this owner.
        With `only_if`, a check-then-delete as one transaction (locked as `modify` is):
        `only_if` gets the document as stored and the delete happens only when it answers
        True (False otherwise, nothing deleted). Like `change`, it must be quick and must
        not call the store; an exception from it rolls back and propagates."""
    def owner_of(self, kind: str, resource_id: str) -> str | None:
        """The owner of a resource (workers act for whoever created the session)."""

    # Event log --------------------------------------------------------------------------
    def append(self, session_id: str, events: builtins.list[JSON],
               conversation: tuple[int, builtins.list[JSON]] | None = None,
               status: str | None = None, sync: bool = True, *,
               deliveries: builtins.list[Delivery] | None = None,
               holder: str | None = None) -> builtins.list[JSON]:
        """Appends entries, assigning each the next `seq`; returns them as stored (with
        `seq`). Entries keep the `id` they carry (a second appearance of an event).
        `conversation` (start index, messages) updates the session's model conversation in
        the same transaction, so the log and what the model saw never disagree; `status`
        sets the session document's `status` in it too, with its status event.

        `sync` False (the service's own events) commits without waiting for the disk: a
        killed process loses nothing, and an OS crash may lose a suffix of the log, which
        the log being prefix-consistent makes the same as a crash a moment earlier. A
        client's events are always written with `sync` (their acknowledgement promises
        durability).

        `deliveries` are webhook deliveries reporting these events, queued (due now) in
        the same transaction. With `holder`, the session's lease must be that worker's
        (expired or not, as long as no other took it), else `LeaseLost` and nothing is
        written."""
    def queued(self, session_id: str) -> builtins.list[JSON]:
        """Client events not yet consumed (latest form has processed_at null), in order."""
    def conversation(self, session_id: str) -> builtins.list[JSON]:
        """The session's model conversation (messages in the Messages API's shape)."""
    def log(self, session_id: str, after_seq: int = 0, limit: int = 1000) -> builtins.list[JSON]:
        """Log entries with seq > after_seq, in order: what a stream replays."""
    def last_seq(self, session_id: str) -> int: ...
    def events(self, session_id: str, *, limit: int, page: str | None, order: str = "asc",
               types: builtins.list[str] | None = None, created_gt: str | None = None,
               created_gte: str | None = None, created_lt: str | None = None,
               created_lte: str | None = None) -> Page:
        """Each event once, latest form, for the list endpoint (created_* compare
        against `processed_at`)."""
    def event(self, session_id: str, event_id: str) -> JSON | None:
        """An event's latest form."""

    # Work -------------------------------------------------------------------------------
    def acquire_lease(self, session_id: str, worker: str, ttl_s: float) -> bool: ...
    def renew_lease(self, session_id: str, worker: str, ttl_s: float) -> bool: ...
    def lease_holders(self) -> builtins.list[tuple[str, str]]:
        """(session, worker) of every unexpired lease."""
    def lease_holder(self, session_id: str) -> str | None:
        """The worker holding an unexpired lease on the session, if any."""
    def release_lease(self, session_id: str, worker: str) -> None: ...
    def sessions_needing_work(self, limit: int = 100) -> builtins.list[str]:
        """Sessions with a queued client event (processed_at null) or marked running, and
        no live lease: what a worker should pick up (also after a crash)."""

    # Webhook outbox ---------------------------------------------------------------------
    def enqueue_delivery(self, owner: str, endpoint_id: str, payload: JSON) -> None: ...
    def due_deliveries(self, now: float, limit: int = 50) -> builtins.list[JSON]:
        """Undone deliveries with `next_at <= now`, oldest due first (then in the order
        they were written): each `{id, owner, endpoint_id, payload, attempts, next_at,
        last_error}`."""
    def claim_deliveries(self, now: float, lease_s: float, limit: int = 50
                         ) -> builtins.list[JSON]:
        """`due_deliveries`, atomically made due again only at `now + lease_s`: no other
        claim returns them before then. Rows show `next_at` as it was before the claim."""
    def release_deliveries(self, delivery_ids: builtins.list[str], at: float) -> None:
        """Claimed deliveries given back unsent, due at `at` (no attempt counted)."""
    def delivery_done(self, delivery_id: str) -> None: ...
    def delivery_failed(self, delivery_id: str, retry_at: float | None, error: str) -> None:
        """An attempt failed: due again at `retry_at`, or given up (done, `error` kept)
        when it is None. A delivery already done stays done."""

    def close(self) -> None: ...


def every(store: Store, kind: str, owner: str, *, order: str = "desc",
          include_archived: bool = False) -> Iterator[JSON]:
    """Every document of a kind of this owner's, page after page (for the service's own
    walks; clients page through `Store.list` themselves)."""
    page: str | None = None
    while True:
        got = store.list(kind, owner, limit=500, page=page, order=order,
                         include_archived=include_archived)
        yield from got.items
        if got.next_page is None:
            return
        page = got.next_page
