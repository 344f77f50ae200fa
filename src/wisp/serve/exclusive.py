"""One request at a time on something that spans several documents, across every process
of a deployment: a store lease (`Store.acquire_lease`) named for it, held for the
request's few store calls. `Store.modify` makes one document's read-modify-write atomic;
what has to read or change two documents together (a credential and its secret, a
skill's versions) takes this instead.

A request that finds the lease held is answered 409 with `x-should-retry: true` (the
SDKs retry it): the holder's work is a few store calls, and waiting here would hold a
thread of the store's pool. A holder that dies lets go when the lease expires, or at once
for a worker of its host, which releases the leases of its host's dead processes by
their host:pid:nonce name (`holders.dead_here`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from wisp.serve.holders import worker_name
from wisp.serve.http import HttpError
from wisp.serve.store.base import Store

TTL_S = 30.0


@contextmanager
def exclusive(store: Store, key: str, busy: str) -> Iterator[None]:
    """Holds the lease `key` (never a session id: session leases are `sesn_…`) while the
    block runs; 409 saying `busy` when another holds it."""
    holder = worker_name()
    if not store.acquire_lease(key, holder, TTL_S):
        raise HttpError(409, "invalid_request_error", f"{busy}: try again",
                        headers={"x-should-retry": "true"})
    try:
        yield
    finally:
        store.release_lease(key, holder)
