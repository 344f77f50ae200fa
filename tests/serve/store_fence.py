"""The lease fence, one body for both stores (`test_sqlite_store`, `test_postgres_store`):
a worker's appends name its lease and are refused, whole, once the lease is not its."""

from __future__ import annotations

import time
from typing import Any

import pytest

from wisp.serve.store.base import LeaseLost, Store


def _event(eid: str) -> dict[str, Any]:
    return {"id": eid, "type": "agent.message", "processed_at": "2026-01-01T00:00:00Z",
            "content": []}


def check_the_lease_fences_appends(store: Store) -> None:
    with pytest.raises(LeaseLost):  # no lease at all
        store.append("sesn_f", [_event("e0")], holder="w1")
    assert store.acquire_lease("sesn_f", "w1", 0.2)
    [first] = store.append("sesn_f", [_event("e1")], holder="w1")
    time.sleep(0.3)  # expired, but nobody took it: still w1's to write under
    store.append("sesn_f", [_event("e2")], conversation=(0, [{"role": "user",
                                                              "content": "hi"}]),
                 holder="w1")
    assert store.acquire_lease("sesn_f", "w2", 30)  # taken over
    for events, conversation, status in (([_event("e3")], None, None),
                                         ([], (1, [{"role": "assistant", "content": []}]),
                                          None),
                                         ([_event("e4")], None, "idle")):
        with pytest.raises(LeaseLost):
            store.append("sesn_f", events, conversation, status, holder="w1")
    assert [e["id"] for e in store.log("sesn_f")] == ["e1", "e2"]
    assert len(store.conversation("sesn_f")) == 1
    [after] = store.append("sesn_f", [_event("e5")], holder="w2")
    assert after["seq"] == first["seq"] + 2  # the refused appends left no gap
    store.append("sesn_f", [_event("e6")])  # the API's own writes are not fenced
    store.release_lease("sesn_f", "w2")
    with pytest.raises(LeaseLost):
        store.append("sesn_f", [_event("e7")], holder="w2")
