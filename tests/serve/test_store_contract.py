"""The `base.Store` contract, one body run against every store: SQLite always, PostgreSQL
when its test server can be started (the `dsn` fixture of tests/serve/pg_server.py; a
skip says why not). Resources and owner isolation, paging, the event log and its
listing, leases, the outbox, and the lease fence.

What only one store has (SQLite's WAL and fsync settings, PostgreSQL's LISTEN/NOTIFY and
schemas) and the checks that need other processes stay in tests/serve/test_sqlite_store.py
and tests/serve/pg/test_postgres_store.py."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.serve.store_fence import check_the_lease_fences_appends
from wisp.serve.store.base import Store
from wisp.serve.store.sqlite import SqliteStore

JSON = dict[str, Any]
A, B = "owner-a", "owner-b"


@pytest.fixture(params=["sqlite", "postgres"])
def reopen(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], Store]]:
    """Opens a store on this test's database, each call a new connection (as another
    process would); every store opened is closed at the end."""
    opened: list[Store] = []
    if request.param == "sqlite":
        path = tmp_path / "store.db"

        def new() -> Store:
            return SqliteStore(path)
    else:
        dsn: str = request.getfixturevalue("dsn")
        from wisp.serve.store.postgres import PostgresStore

        def new() -> Store:
            return PostgresStore(dsn)

    def tracked() -> Store:
        opened.append(new())
        return opened[-1]

    yield tracked
    for store in opened:
        store.close()


@pytest.fixture
def store(reopen: Callable[[], Store]) -> Store:
    return reopen()


def resource(rid: str, **fields: Any) -> JSON:
    return {"id": rid, "created_at": "2026-01-01T00:00:00Z", "archived_at": None, **fields}


def event(eid: str, etype: str = "agent.message", processed_at: str | None = None,
          **fields: Any) -> JSON:
    return {"id": eid, "type": etype, "processed_at": processed_at, **fields}


def all_pages(fetch: Any, limit: int) -> tuple[list[str], int]:
    """Follows cursors to the end; the ids seen and the number of pages."""
    ids: list[str] = []
    page, pages = None, 0
    while True:
        got = fetch(limit=limit, page=page)
        pages += 1
        ids += [item["id"] for item in got.items]
        assert len(got.items) <= limit
        if got.next_page is None:
            return ids, pages
        page = got.next_page


# Resources ----------------------------------------------------------------------------


def test_crud_and_owner_isolation(store: Store) -> None:
    doc = resource("agent_1", name="one")
    assert store.create("agent", A, doc) == doc
    assert store.get("agent", A, "agent_1") == doc
    assert store.get("agent", B, "agent_1") is None
    assert store.get("environment", A, "agent_1") is None
    assert store.owner_of("agent", "agent_1") == A
    assert store.owner_of("agent", "agent_2") is None

    changed = {**doc, "name": "renamed"}
    assert store.update("agent", B, "agent_1", changed) is None
    assert store.get("agent", A, "agent_1") == doc
    assert store.update("agent", A, "agent_1", changed) == changed
    assert store.get("agent", A, "agent_1") == changed
    assert store.update("agent", A, "agent_missing", changed) is None

    assert store.delete("agent", B, "agent_1") is False
    assert store.delete("agent", A, "agent_1") is True
    assert store.get("agent", A, "agent_1") is None
    assert store.owner_of("agent", "agent_1") is None
    assert store.delete("agent", A, "agent_1") is False


def test_modify_rewrites_a_document_from_what_it_holds(store: Store) -> None:
    store.create("session", A, resource("sesn_1", status="idle", count=1))
    seen: list[JSON] = []

    def bump(doc: JSON) -> JSON:
        seen.append(doc)
        return {**doc, "count": doc["count"] + 1, "archived_at": "2026-01-02T00:00:00Z"}

    assert store.modify("session", B, "sesn_1", bump) is None  # another owner's: unseen
    assert store.modify("session", A, "sesn_missing", bump) is None
    assert seen == []
    stored = store.modify("session", A, "sesn_1", bump)
    assert seen == [resource("sesn_1", status="idle", count=1)]
    assert stored == store.get("session", A, "sesn_1")
    assert stored is not None and stored["count"] == 2
    # The columns queries filter on follow the document, as with `update`.
    assert store.list("session", A, limit=10, page=None).items == []

    assert store.modify("session", A, "sesn_1", lambda doc: None) == stored  # no write

    def failing(doc: JSON) -> JSON:
        raise LookupError("refused")

    with pytest.raises(LookupError):
        store.modify("session", A, "sesn_1", failing)
    assert store.get("session", A, "sesn_1") == stored


def test_delete_only_if_checks_the_document_as_stored(store: Store) -> None:
    store.create("session", A, resource("sesn_1", status="idle", count=1))
    store.append("sesn_1", [{"id": "sevt_1", "type": "user.message", "processed_at": None}])
    seen: list[JSON] = []

    def counted_two(doc: JSON) -> bool:
        seen.append(doc)
        return bool(doc["count"] == 2)

    assert store.delete("session", B, "sesn_1", only_if=counted_two) is False  # unseen
    assert store.delete("session", A, "sesn_missing", only_if=counted_two) is False
    assert seen == []
    assert store.delete("session", A, "sesn_1", only_if=counted_two) is False  # refused
    assert seen == [resource("sesn_1", status="idle", count=1)]
    assert store.get("session", A, "sesn_1") is not None and store.last_seq("sesn_1") == 1

    def failing(doc: JSON) -> bool:
        raise LookupError("refused")

    with pytest.raises(LookupError):
        store.delete("session", A, "sesn_1", only_if=failing)
    assert store.get("session", A, "sesn_1") is not None

    store.modify("session", A, "sesn_1", lambda doc: {**doc, "count": 2})
    assert store.delete("session", A, "sesn_1", only_if=counted_two) is True
    assert store.get("session", A, "sesn_1") is None
    assert store.log("sesn_1") == []  # the session's log went with it, as without a check


def test_documents_keep_their_key_order(store: Store) -> None:
    doc = {"type": "session", "id": "sesn_1", "zeta": 1, "alpha": {"b": 1, "a": 2},
           "status": "idle", "archived_at": None}
    store.create("session", A, doc)
    assert list(store.get("session", A, "sesn_1") or {}) == list(doc)
    store.append("sesn_1", [event("e1", "session.status_running")], status="running")
    got = store.get("session", A, "sesn_1") or {}
    assert list(got) == list(doc) and got["status"] == "running"
    assert list(got["alpha"]) == ["b", "a"]


def test_list_pages_both_orders_by_creation(store: Store) -> None:
    mine = [f"agent_{i:02d}" for i in range(23)]
    for i, rid in enumerate(mine):
        store.create("agent", A, resource(rid))
        if i % 5 == 0:
            store.create("agent", B, resource(f"other_{i}"))
            store.create("environment", A, resource(f"env_{i}"))

    def fetch(order: str) -> Any:
        return lambda **kw: store.list("agent", A, order=order, **kw)

    assert all_pages(fetch("desc"), 5) == (mine[::-1], 5)
    assert all_pages(fetch("asc"), 5) == (mine, 5)
    assert all_pages(fetch("asc"), 23) == (mine, 1)
    assert store.list("agent", A, limit=100, page=None).items[0]["id"] == mine[-1]
    assert [d["id"] for d in store.list("agent", B, limit=100, page=None).items] == [
        f"other_{i}" for i in (20, 15, 10, 5, 0)]
    assert store.list("agent", "nobody", limit=10, page=None).items == []
    with pytest.raises(ValueError, match="cursor"):
        store.list("agent", A, limit=5, page="not a cursor")
    store.append("sesn_1", [event("e1"), event("e2")])
    event_cursor = store.events("sesn_1", limit=1, page=None).next_page
    with pytest.raises(ValueError, match="cursor"):
        store.list("agent", A, limit=5, page=event_cursor)
    with pytest.raises(ValueError, match="order"):
        store.list("agent", A, limit=5, page=None, order="sideways")


def test_list_hides_archived_unless_asked(store: Store) -> None:
    for i in range(6):
        store.create("agent", A, resource(f"agent_{i}"))
    for i in (1, 4):
        store.update("agent", A, f"agent_{i}",
                     resource(f"agent_{i}", archived_at="2026-01-02T00:00:00Z"))
    shown = [d["id"] for d in store.list("agent", A, limit=10, page=None, order="asc").items]
    assert shown == ["agent_0", "agent_2", "agent_3", "agent_5"]
    every = store.list("agent", A, limit=10, page=None, order="asc", include_archived=True)
    assert [d["id"] for d in every.items] == [f"agent_{i}" for i in range(6)]
    assert all_pages(lambda **kw: store.list("agent", A, **kw), 3) == (
        ["agent_5", "agent_3", "agent_2", "agent_0"], 2)


# Event log ----------------------------------------------------------------------------


def test_append_assigns_seq_and_events_keep_first_position(store: Store) -> None:
    queued = event("sevt_u1", "user.message", content="hi")
    stored = store.append("sesn_1", [queued, event("sevt_s1", "session.status_running")])
    assert [(e["id"], e["seq"]) for e in stored] == [("sevt_u1", 1), ("sevt_s1", 2)]
    assert "seq" not in queued
    store.append("sesn_1", [event("sevt_a1", processed_at="2026-01-01T00:00:02Z")])
    consumed = {**queued, "processed_at": "2026-01-01T00:00:01Z"}
    assert store.append("sesn_1", [consumed])[0]["seq"] == 4
    assert store.append("sesn_1", []) == []
    assert store.append("sesn_2", [event("sevt_x")])[0]["seq"] == 1

    log = store.log("sesn_1")
    assert [(e["seq"], e["id"], e["processed_at"]) for e in log] == [
        (1, "sevt_u1", None), (2, "sevt_s1", None),
        (3, "sevt_a1", "2026-01-01T00:00:02Z"), (4, "sevt_u1", "2026-01-01T00:00:01Z")]
    assert log[0]["content"] == "hi"
    assert [e["seq"] for e in store.log("sesn_1", after_seq=2)] == [3, 4]
    assert [e["seq"] for e in store.log("sesn_1", after_seq=1, limit=2)] == [2, 3]
    assert store.last_seq("sesn_1") == 4
    assert store.last_seq("sesn_none") == 0
    assert store.log("sesn_none") == []

    listed = store.events("sesn_1", limit=10, page=None).items
    assert [(e["id"], e["processed_at"]) for e in listed] == [
        ("sevt_u1", "2026-01-01T00:00:01Z"), ("sevt_s1", None),
        ("sevt_a1", "2026-01-01T00:00:02Z")]
    assert listed[0]["seq"] == 4
    assert store.event("sesn_1", "sevt_u1") == {**consumed, "seq": 4}
    assert store.event("sesn_1", "sevt_missing") is None
    assert store.event("sesn_2", "sevt_u1") is None
    assert store.queued("sesn_1") == []
    assert [e["id"] for e in store.queued("sesn_2")] == []


def test_queued_and_conversation(store: Store) -> None:
    store.append("sesn_1", [event("u1", "user.message"), event("a1"),
                            event("u2", "user.custom_tool_result")])
    assert [(e["id"], e["seq"]) for e in store.queued("sesn_1")] == [("u1", 1), ("u2", 3)]
    store.append("sesn_1", [event("u1", "user.message", "2026-01-01T00:00:00Z")],
                 conversation=(0, [{"role": "user", "content": "hi"}]))
    assert [e["id"] for e in store.queued("sesn_1")] == ["u2"]
    assert store.conversation("sesn_1") == [{"role": "user", "content": "hi"}]
    store.append("sesn_1", [], conversation=(1, [{"role": "assistant", "content": []},
                                                 {"role": "user", "content": "x"}]))
    store.append("sesn_1", [], conversation=(2, []))  # a suffix dropped
    assert [m["role"] for m in store.conversation("sesn_1")] == ["user", "assistant"]
    store.append("sesn_1", [], conversation=(0, [{"role": "user", "content": "summary"}]))
    assert store.conversation("sesn_1") == [{"role": "user", "content": "summary"}]
    assert store.last_seq("sesn_1") == 4  # conversation-only appends take no seq


def test_events_page_both_orders(store: Store) -> None:
    ids = [f"sevt_{i:03d}" for i in range(30)]
    store.append("sesn_1", [event(eid, "user.message") for eid in ids])
    store.append("sesn_1", [event(eid, "user.message", "2026-01-01T00:00:00Z")
                            for eid in ids[::3]])

    def fetch(order: str) -> Any:
        return lambda **kw: store.events("sesn_1", order=order, **kw)

    assert all_pages(fetch("asc"), 7) == (ids, 5)
    assert all_pages(fetch("desc"), 7) == (ids[::-1], 5)
    assert all_pages(fetch("asc"), 30) == (ids, 1)
    last = store.events("sesn_1", limit=7, page=None, order="desc")
    assert last.next_page is not None
    assert store.events("sesn_1", limit=7, page=last.next_page, order="desc").items[0][
        "id"] == ids[22]
    assert store.events("sesn_empty", limit=5, page=None).items == []
    with pytest.raises(ValueError):
        store.events("sesn_1", limit=0, page=None)


def test_events_filters(store: Store) -> None:
    store.append("sesn_1", [
        event("e1", "user.message", "2026-01-01T00:00:01Z"),
        event("e2", "agent.message", "2026-01-01T00:00:02.500Z"),
        event("e3", "agent.tool_use", "2026-01-01T02:00:03+02:00"),  # = 00:00:03Z
        event("e4", "user.message"),
        event("e5", "agent.message", "2026-01-01T00:00:04.000001Z"),
    ])

    def ids(**filters: Any) -> list[str]:
        return [e["id"] for e in store.events("sesn_1", limit=50, page=None, **filters).items]

    assert ids() == ["e1", "e2", "e3", "e4", "e5"]
    assert ids(types=["user.message"]) == ["e1", "e4"]
    assert ids(types=["agent.message", "agent.tool_use"]) == ["e2", "e3", "e5"]
    assert ids(types=["nothing"]) == []
    assert ids(types=[]) == ids()
    assert ids(created_gt="2026-01-01T00:00:02.5Z") == ["e3", "e5"]
    assert ids(created_gte="2026-01-01T00:00:02.5Z") == ["e2", "e3", "e5"]
    assert ids(created_lt="2026-01-01T00:00:03Z") == ["e1", "e2"]
    assert ids(created_lte="2026-01-01T00:00:03Z") == ["e1", "e2", "e3"]
    assert ids(created_gte="2025-12-31") == ["e1", "e2", "e3", "e5"]
    assert ids(created_gt="2026-01-01T01:00:01+01:00", created_lt="2026-01-01T00:00:04Z",
               types=["agent.message", "agent.tool_use", "user.message"]) == ["e2", "e3"]
    assert ids(created_gt="2026-01-01T00:00:04Z", order="desc") == ["e5"]
    with pytest.raises(ValueError):
        ids(created_gt="yesterday")


def test_status_is_set_with_its_event(store: Store) -> None:
    store.create("session", A, resource("sesn_1", status="idle"))
    store.append("sesn_1", [event("s1", "session.status_running")], status="running")
    assert (store.get("session", A, "sesn_1") or {})["status"] == "running"
    assert store.sessions_needing_work() == ["sesn_1"]
    store.append("sesn_1", [], status="idle")  # status alone is allowed too
    assert (store.get("session", A, "sesn_1") or {})["status"] == "idle"
    assert store.sessions_needing_work() == []


def test_delete_session_drops_its_log_and_lease(store: Store) -> None:
    store.create("session", A, resource("sesn_1", status="idle"))
    store.append("sesn_1", [event("e1", "user.message")])
    store.acquire_lease("sesn_1", "w1", 30)
    assert store.delete("session", A, "sesn_1")
    assert store.log("sesn_1") == []
    assert store.last_seq("sesn_1") == 0
    assert store.events("sesn_1", limit=5, page=None).items == []
    assert store.sessions_needing_work() == []
    assert store.acquire_lease("sesn_1", "w2", 30)


# Work ---------------------------------------------------------------------------------


def test_lease_expiry_renew_and_release(store: Store) -> None:
    assert store.acquire_lease("sesn_1", "w1", 0.2)
    assert store.acquire_lease("sesn_1", "w1", 0.2)
    assert not store.acquire_lease("sesn_1", "w2", 30)
    assert not store.renew_lease("sesn_1", "w2", 30)
    store.release_lease("sesn_1", "w2")
    assert not store.acquire_lease("sesn_1", "w2", 30)
    assert store.lease_holder("sesn_1") == "w1"
    assert store.lease_holders() == [("sesn_1", "w1")]
    assert store.renew_lease("sesn_1", "w1", 0.05)
    time.sleep(0.1)
    assert store.lease_holder("sesn_1") is None
    assert store.acquire_lease("sesn_1", "w2", 30)
    assert not store.renew_lease("sesn_1", "w1", 30)
    store.release_lease("sesn_1", "w2")
    assert store.acquire_lease("sesn_1", "w3", 30)
    assert not store.renew_lease("sesn_none", "w3", 30)


def test_sessions_needing_work(store: Store) -> None:
    store.create("session", A, resource("sesn_run", status="running"))
    store.create("session", A, resource("sesn_idle", status="idle"))
    store.create("session", B, resource("sesn_q", status="idle"))
    store.append("sesn_q", [event("u1", "user.message"), event("u2", "user.interrupt")])
    store.append("sesn_idle", [event("a1", "agent.message"),
                               event("u3", "user.message", "2026-01-01T00:00:00Z")])
    store.append("sesn_done", [event("u4", "user.message")])
    store.append("sesn_done", [event("u4", "user.message", "2026-01-01T00:00:00Z")])
    assert sorted(store.sessions_needing_work()) == ["sesn_q", "sesn_run"]
    assert len(store.sessions_needing_work(limit=1)) == 1

    assert store.acquire_lease("sesn_q", "w1", 30)
    assert store.sessions_needing_work() == ["sesn_run"]
    store.append("sesn_q", [event("u1", "user.message", "2026-01-01T00:00:00Z")])
    store.release_lease("sesn_q", "w1")
    assert sorted(store.sessions_needing_work()) == ["sesn_q", "sesn_run"]
    store.append("sesn_q", [event("u2", "user.interrupt", "2026-01-01T00:00:00Z")])
    store.update("session", A, "sesn_run", resource("sesn_run", status="idle"))
    assert store.sessions_needing_work() == []
    store.acquire_lease("sesn_idle", "w1", 0.01)
    store.update("session", A, "sesn_idle", resource("sesn_idle", status="running"))
    time.sleep(0.02)
    assert store.sessions_needing_work() == ["sesn_idle"]


# Outbox -------------------------------------------------------------------------------


def test_outbox_retry_flow(store: Store) -> None:
    before = time.time()
    store.enqueue_delivery(A, "wh_1", {"type": "session.status_idle", "n": 1})
    store.enqueue_delivery(B, "wh_2", {"n": 2})
    assert store.due_deliveries(before - 1) == []
    due = store.due_deliveries(time.time())
    assert [(d["owner"], d["endpoint_id"], d["payload"]) for d in due] == [
        (A, "wh_1", {"type": "session.status_idle", "n": 1}), (B, "wh_2", {"n": 2})]
    first, second = due
    assert first["id"] != second["id"] and first["id"].startswith("dlv_")
    assert first["attempts"] == 0 and first["last_error"] is None
    assert len(store.due_deliveries(time.time(), limit=1)) == 1

    now = time.time()
    store.delivery_failed(first["id"], now + 60, "HTTP 503")
    store.delivery_done(second["id"])
    assert store.due_deliveries(now + 59) == []
    (retry,) = store.due_deliveries(now + 60)
    assert (retry["id"], retry["attempts"], retry["last_error"]) == (first["id"], 1, "HTTP 503")
    store.delivery_failed(first["id"], None, "HTTP 410: giving up")
    assert store.due_deliveries(now + 10_000) == []


def test_deliveries_are_written_in_the_transaction_of_their_events(
        store: Store) -> None:
    status = {"id": "sevt_1", "type": "session.status_idle",
              "processed_at": "2026-01-01T00:00:00Z"}
    store.append("sesn_1", [status], deliveries=[("o", "whep_1", {"n": 1})])
    [row] = store.due_deliveries(time.time())
    assert (row["owner"], row["endpoint_id"], row["payload"]) == ("o", "whep_1", {"n": 1})
    with pytest.raises(TypeError):
        store.append("sesn_1", [{**status, "id": "sevt_2"}],
                     deliveries=[("o", "whep_1", {"bad": {1, 2}})])
    assert [e["id"] for e in store.log("sesn_1")] == ["sevt_1"]
    with pytest.raises(TypeError):
        store.append("sesn_1", [{**status, "id": "sevt_3", "bad": {1}}],
                     deliveries=[("o", "whep_1", {"n": 3})])
    assert len(store.due_deliveries(time.time())) == 1


def test_a_claim_hides_deliveries_from_other_claims_until_its_lease_ends(
        store: Store, reopen: Callable[[], Store]) -> None:
    other = reopen()  # as if another process
    for n in range(3):
        store.enqueue_delivery("o", "whep_1", {"n": n})
    now = time.time()
    claimed = store.claim_deliveries(now, lease_s=30)
    assert [r["payload"]["n"] for r in claimed] == [0, 1, 2]
    assert all(r["next_at"] <= now for r in claimed)  # as they were before the claim
    assert other.claim_deliveries(now, lease_s=30) == []
    first, second, third = (r["id"] for r in claimed)
    store.delivery_done(first)
    store.release_deliveries([second], now)
    assert [r["id"] for r in other.claim_deliveries(now, 30)] == [second]
    assert [r["id"] for r in other.claim_deliveries(now + 31, 30)] == [second, third]
    store.delivery_failed(first, now, "late report of an expired claim")
    assert first not in {r["id"] for r in store.due_deliveries(now + 1000)}


# Processes ----------------------------------------------------------------------------


def test_concurrent_modifies_lose_no_update(store: Store,
                                            reopen: Callable[[], Store]) -> None:
    """Writers on their own connections (as other processes would be) increment one
    document at once: each increment lands on the one before it, none is lost."""
    writers, increments = 4, 25
    store.create("session", A, resource("sesn_1", count=0))
    stores = [reopen() for _ in range(writers)]
    start = threading.Barrier(writers)
    results: list[list[int]] = [[] for _ in range(writers)]

    def increment(doc: JSON) -> JSON:
        return {**doc, "count": doc["count"] + 1}

    def write(n: int) -> None:
        start.wait(timeout=30)
        for _ in range(increments):
            stored = stores[n].modify("session", A, "sesn_1", increment)
            assert stored is not None
            results[n].append(stored["count"])

    threads = [threading.Thread(target=write, args=(n,)) for n in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads)
    total = writers * increments
    assert (store.get("session", A, "sesn_1") or {})["count"] == total
    # Every modify saw the one before it: each count was returned exactly once.
    assert sorted(c for counts in results for c in counts) == list(range(1, total + 1))


def test_a_checked_delete_holds_off_a_concurrent_modify(store: Store,
                                                        reopen: Callable[[], Store]) -> None:
    """A modify on another connection, begun while `only_if` is deciding, cannot slip
    between the check and the delete: it waits for the delete, then finds nothing."""
    store.create("session", A, resource("sesn_1", count=0))
    other = reopen()
    started = threading.Event()
    modified: list[JSON | None] = []

    def increment() -> None:
        started.set()
        modified.append(other.modify("session", A, "sesn_1",
                                     lambda doc: {**doc, "count": doc["count"] + 1}))

    writer = threading.Thread(target=increment)

    def still_zero(doc: JSON) -> bool:
        writer.start()
        assert started.wait(timeout=30)
        writer.join(timeout=0.5)  # the modify, given time to land, must still be waiting
        return bool(doc["count"] == 0)

    assert store.delete("session", A, "sesn_1", only_if=still_zero) is True
    writer.join(timeout=30)
    assert not writer.is_alive()
    assert modified == [None]  # it ran after the delete, not between check and delete
    assert store.get("session", A, "sesn_1") is None


def test_store_refuses_use_in_a_forked_child(store: Store) -> None:
    store._pid = -1  # type: ignore[attr-defined]  # what a forked child would see
    with pytest.raises(RuntimeError, match="fork"):
        store.last_seq("sesn_1")


def test_the_lease_fences_a_workers_appends(store: Store) -> None:
    check_the_lease_fences_appends(store)
