"""Route handlers racing another writer: a change that lands between a handler's read of
a document and its write is neither lost nor undone. The request goes through the real
router and handler (`tests.serve.interleave.call_route`) on a real SQLite store, and the
other write is made to land just before the handler's first write of the document's kind
(`tests.serve.interleave.OtherWriteFirst`)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.serve.interleave import OtherWriteFirst, call_route
from wisp.serve import deployment_routes, memory_routes, sealing, shapes, vault_routes, work_routes
from wisp.serve.deployments import SCHEDULE, SERVICE, Scheduler
from wisp.serve.http import HttpError, Router
from wisp.serve.memory import STORE, MemoryStores, api_actor, memories_kind, session_actor
from wisp.serve.shapes import memory as memory_shapes
from wisp.serve.shapes import skills as skill_shapes
from wisp.serve.shapes import vaults as vault_shapes
from wisp.serve.skills import Skills, versions_kind
from wisp.serve.store.base import Store, every
from wisp.serve.store.sqlite import SqliteStore
from wisp.serve.vaults import VAULT, Vaults, credentials_kind, secrets_kind
from wisp.serve.work import WorkQueue

OWNER = "owner-a"
JSON = dict[str, Any]


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A real store: SQLite, and PostgreSQL when its test server can be started (the
    `dsn` fixture of tests/serve/pg_server.py), where route handlers' store calls run on
    the store's thread pool as they do in service."""
    opened: Store
    if request.param == "sqlite":
        opened = SqliteStore(tmp_path / "store.db")
    else:
        from wisp.serve.store.postgres import PostgresStore
        opened = PostgresStore(request.getfixturevalue("dsn"))
    yield opened
    opened.close()


def unwrapped(route: Any) -> Any:
    return route


def renamed(name: str) -> Any:
    """Another writer's change: the document's name, as an update as stored makes it."""
    return lambda doc: {**doc, "name": name, "updated_at": shapes.timestamp()}


# Memory stores ----------------------------------------------------------------------------


def memory_router(store: Any) -> Router:
    router = Router()
    memory_routes.add_routes(router, store, unwrapped)
    return router


def memory_store(store: Store) -> str:
    doc = memory_shapes.store_create({"name": "notes"})
    store.create(STORE, OWNER, doc)
    return doc["id"]


def test_a_memory_store_update_keeps_a_rename_that_landed_after_its_read(
        store: Store) -> None:
    store_id = memory_store(store)
    racing = OtherWriteFirst(store, STORE)
    racing.arm(lambda: store.modify(STORE, OWNER, store_id, renamed("renamed")))
    status, body = call_route(memory_router(racing), OWNER, "POST",
                              f"/v1/memory_stores/{store_id}",
                              {"metadata": {"team": "a"}})
    assert racing.fired and status == 200
    stored = store.get(STORE, OWNER, store_id) or {}
    assert (stored["name"], stored["metadata"]) == ("renamed", {"team": "a"})
    assert body == stored


def test_a_memory_store_update_does_not_undo_an_archive(store: Store) -> None:
    store_id = memory_store(store)
    racing = OtherWriteFirst(store, STORE)
    racing.arm(lambda: store.modify(STORE, OWNER, store_id, shapes.archived))
    status, _ = call_route(memory_router(racing), OWNER, "POST",
                           f"/v1/memory_stores/{store_id}", {"name": "late"})
    assert racing.fired and status == 400  # refused: the store is archived now
    stored = store.get(STORE, OWNER, store_id) or {}
    assert stored["archived_at"] is not None and stored["name"] == "notes"


def test_archiving_a_memory_store_keeps_an_update_made_after_its_read(
        store: Store) -> None:
    store_id = memory_store(store)
    racing = OtherWriteFirst(store, STORE)
    racing.arm(lambda: store.modify(STORE, OWNER, store_id, renamed("renamed")))
    status, body = call_route(memory_router(racing), OWNER, "POST",
                              f"/v1/memory_stores/{store_id}/archive")
    assert racing.fired and status == 200
    stored = store.get(STORE, OWNER, store_id) or {}
    assert stored["name"] == "renamed" and stored["archived_at"] is not None
    assert body == stored


def test_a_checked_memory_delete_refuses_content_changed_after_its_check(
        store: Store) -> None:
    store_id = memory_store(store)
    memories = MemoryStores(store, OWNER)
    note = memories.create(store_id, "/a.md", "one", api_actor(OWNER))
    racing = OtherWriteFirst(store, "memory:")
    racing.arm(lambda: memories.update(store_id, note["id"], {"content": "two"},
                                       api_actor(OWNER)))
    status, _ = call_route(
        memory_router(racing), OWNER, "DELETE",
        f"/v1/memory_stores/{store_id}/memories/{note['id']}"
        f"?expected_content_sha256={memory_shapes.digest('one')}")
    assert racing.fired and status == 409
    stored = store.get(memories_kind(store_id), OWNER, note["id"]) or {}
    assert stored["content"] == "two"  # the change the delete did not expect is kept
    # No "deleted" version for a deletion that did not happen.
    assert [v["operation"] for v in memories.versions(store_id)] == ["modified", "created"]


def test_an_unchecked_memory_delete_records_what_it_deleted(store: Store) -> None:
    store_id = memory_store(store)
    memories = MemoryStores(store, OWNER)
    note = memories.create(store_id, "/a.md", "one", api_actor(OWNER))
    racing = OtherWriteFirst(store, "memory:")
    racing.arm(lambda: memories.update(store_id, note["id"], {"path": "/b.md"},
                                       api_actor(OWNER)))
    status, _ = call_route(memory_router(racing), OWNER, "DELETE",
                           f"/v1/memory_stores/{store_id}/memories/{note['id']}")
    assert racing.fired and status == 200
    assert store.get(memories_kind(store_id), OWNER, note["id"]) is None
    versions = memories.versions(store_id)  # the path that was really deleted is recorded
    assert [(v["operation"], v["path"]) for v in versions] == [
        ("deleted", "/b.md"), ("modified", "/b.md"), ("created", "/a.md")]


def test_a_redaction_keeps_the_one_that_landed_after_its_read(store: Store) -> None:
    store_id = memory_store(store)
    memories = MemoryStores(store, OWNER)
    note = memories.create(store_id, "/a.md", "one", api_actor(OWNER))
    memories.update(store_id, note["id"], {"content": "two"}, api_actor(OWNER))
    old_version = memories.versions(store_id)[-1]["id"]  # "one", no longer current
    racing = OtherWriteFirst(store, "memver:")
    racing.arm(lambda: memories.redact(store_id, old_version, session_actor("sesn_1")))
    status, body = call_route(
        memory_router(racing), OWNER, "POST",
        f"/v1/memory_stores/{store_id}/memory_versions/{old_version}/redact", {})
    assert racing.fired and status == 200
    stored = memories.version(store_id, old_version)
    # Redacted once: by whoever did it first, at that time.
    assert stored["redacted_by"] == session_actor("sesn_1") and stored["content"] is None
    assert body == stored


# Vaults ---------------------------------------------------------------------------------


def vault_router(store: Any) -> Router:
    router = Router()
    vault_routes.add_routes(router, store, unwrapped)
    return router


def vault(store: Store) -> str:
    doc = vault_shapes.vault_create({"display_name": "keys"})
    store.create(VAULT, OWNER, doc)
    return doc["id"]


def test_a_vault_update_does_not_undo_an_archive(store: Store) -> None:
    vault_id = vault(store)
    racing = OtherWriteFirst(store, VAULT)
    racing.arm(lambda: store.modify(VAULT, OWNER, vault_id, shapes.archived))
    status, _ = call_route(vault_router(racing), OWNER, "POST", f"/v1/vaults/{vault_id}",
                           {"metadata": {"team": "a"}})
    assert racing.fired and status == 400
    stored = store.get(VAULT, OWNER, vault_id) or {}
    assert stored["archived_at"] is not None and stored["metadata"] == {}


def test_a_vault_update_keeps_a_change_that_landed_after_its_read(
        store: Store) -> None:
    vault_id = vault(store)
    racing = OtherWriteFirst(store, VAULT)
    racing.arm(lambda: store.modify(VAULT, OWNER, vault_id, lambda doc: {
        **doc, "metadata": {"team": "b"}, "updated_at": shapes.timestamp()}))
    status, body = call_route(vault_router(racing), OWNER, "POST", f"/v1/vaults/{vault_id}",
                              {"display_name": "renamed"})
    assert racing.fired and status == 200
    stored = store.get(VAULT, OWNER, vault_id) or {}
    assert (stored["display_name"], stored["metadata"]) == ("renamed", {"team": "b"})
    assert body == stored


# Work items -----------------------------------------------------------------------------


def test_a_work_metadata_update_does_not_undo_a_stop(store: Store) -> None:
    environment = shapes.environment_document(shapes.environment_create({"name": "box"}))
    store.create("environment", OWNER, environment)
    queue = WorkQueue(store)
    item = queue.offer(OWNER, environment["id"], "sesn_1")
    assert item is not None
    racing = OtherWriteFirst(store, "work:")
    router = Router()
    work_routes.add_routes(router, racing, WorkQueue(racing), unwrapped)  # type: ignore[arg-type]
    racing.arm(lambda: queue.stop(OWNER, queue.get(OWNER, environment["id"], item["id"]),
                                  force=True))
    status, body = call_route(router, OWNER, "POST",
                              f"/v1/environments/{environment['id']}/work/{item['id']}",
                              {"metadata": {"run": "7"}})
    assert racing.fired and status == 200
    stored = queue.get(OWNER, environment["id"], item["id"])
    assert (stored["state"], stored["metadata"]) == ("stopped", {"run": "7"})
    assert body["state"] == "stopped"


# Deployments ----------------------------------------------------------------------------


def no_session(owner: str, body: JSON, deployment_id: str) -> Any:
    raise AssertionError("these tests start no run")


def deployment(store: Store) -> str:
    """A scheduled deployment of a stored agent (and its version) and environment."""
    agent = shapes.agent_document(shapes.agent_create({"name": "a", "model": "claude-x"}))
    store.create("agent", OWNER, agent)
    store.create("agent_version", OWNER, {**agent, "id": f"{agent['id']}@{agent['version']}"})
    environment = shapes.environment_document(shapes.environment_create({"name": "box"}))
    store.create("environment", OWNER, environment)
    router = Router()
    deployment_routes.add_routes(router, store, no_session, unwrapped)
    status, made = call_route(router, OWNER, "POST", "/v1/deployments", {
        "name": "nightly", "agent": agent["id"], "environment_id": environment["id"],
        "initial_events": [{"type": "user.message",
                            "content": [{"type": "text", "text": "report"}]}],
        "schedule": {"type": "cron", "expression": "0 9 * * 1-5", "timezone": "UTC"}})
    assert status == 200, made
    return str(made["id"])


RAN_AT = "2026-12-07T09:00:00.000Z"


def scheduler_ran_and_paused(store: Store, deployment_id: str) -> None:
    """What the scheduler writes after a run that failed for good: the run's time and a
    pause naming the error (`deployments.Scheduler`, made to the document as stored)."""
    error = {"type": "session_creation_rejected_error", "message": "agent archived"}
    store.modify(deployment_routes.KIND, OWNER, deployment_id, lambda doc: {
        **doc, "schedule": {**doc["schedule"], "last_run_at": RAN_AT}, "status": "paused",
        "paused_reason": {"type": "error", "error": error}})


@pytest.mark.parametrize(("method", "path", "body"), [
    ("POST", "", {"description": "daily", "metadata": {"team": "a"}}),
    ("POST", "/unpause", None),
])
def test_a_deployment_request_keeps_what_the_scheduler_wrote_after_its_read(
        store: Store, method: str, path: str, body: JSON | None) -> None:
    deployment_id = deployment(store)
    racing = OtherWriteFirst(store, deployment_routes.KIND)
    router = Router()
    deployment_routes.add_routes(router, racing, no_session, unwrapped)  # type: ignore[arg-type]
    racing.arm(lambda: scheduler_ran_and_paused(store, deployment_id))
    status, answer = call_route(router, OWNER, method, f"/v1/deployments/{deployment_id}{path}",
                                body)
    assert racing.fired and status == 200, answer
    stored = store.get(deployment_routes.KIND, OWNER, deployment_id) or {}
    assert stored["schedule"]["last_run_at"] == RAN_AT  # the run is not forgotten
    if path == "":  # an update leaves the scheduler's pause as it is
        assert (stored["status"], stored["paused_reason"]["type"]) == ("paused", "error")
        assert (stored["description"], stored["metadata"]) == ("daily", {"team": "a"})
    else:  # an unpause lifts it
        assert (stored["status"], stored["paused_reason"]) == ("active", None)
    assert answer["schedule"]["last_run_at"] == RAN_AT


def test_a_deployment_pause_does_not_undo_an_archive(store: Store) -> None:
    deployment_id = deployment(store)
    racing = OtherWriteFirst(store, deployment_routes.KIND)
    router = Router()
    deployment_routes.add_routes(router, racing, no_session, unwrapped)  # type: ignore[arg-type]
    racing.arm(lambda: in_another_thread(lambda: call_route(
        deployment_router(store), OWNER, "POST", f"/v1/deployments/{deployment_id}/archive")))
    status, _ = call_route(router, OWNER, "POST", f"/v1/deployments/{deployment_id}/pause")
    assert racing.fired and status == 400
    stored = store.get(deployment_routes.KIND, OWNER, deployment_id) or {}
    assert stored["archived_at"] is not None and stored["status"] == "active"
    assert store.get(SCHEDULE, SERVICE, deployment_id) is None  # nothing left to run


def in_another_thread(call: Callable[[], object]) -> None:
    """`call()` on a thread of its own (a route run there has an event loop of its own)."""
    worker = threading.Thread(target=call)
    worker.start()
    worker.join(timeout=30)
    assert not worker.is_alive()


def deployment_router(store: Any) -> Router:
    router = Router()
    deployment_routes.add_routes(router, store, no_session, unwrapped)
    return router


# Vault credentials ----------------------------------------------------------------------


def credential(store: Store, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """A vault with one static bearer credential (token "t0"): their ids."""
    monkeypatch.setenv(sealing.KEY_ENV, "ab" * 32)
    vault_id = vault(store)
    status, made = call_route(vault_router(store), OWNER, "POST",
                              f"/v1/vaults/{vault_id}/credentials", {
                                  "display_name": "ci", "auth": {
                                      "type": "static_bearer", "token": "t0",
                                      "mcp_server_url": "https://mcp.example.test/mcp"}})
    assert status == 200, made
    return vault_id, str(made["id"])


def credential_update(vault_id: str, credential_id: str, body: JSON,
                      store: Any) -> tuple[int, Any]:
    return call_route(vault_router(store), OWNER, "POST",
                      f"/v1/vaults/{vault_id}/credentials/{credential_id}", body)


def token(store: Store, vault_id: str) -> str:
    return Vaults(store, OWNER).bearer_for([vault_id], "https://mcp.example.test/mcp")


def test_concurrent_credential_updates_lose_no_change(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    vault_id, credential_id = credential(store, monkeypatch)
    racing = OtherWriteFirst(store, "vault_")  # the secret's kind or the credential's
    answers: list[tuple[int, Any]] = []
    racing.arm(lambda: in_another_thread(lambda: answers.append(credential_update(
        vault_id, credential_id,
        {"metadata": {"team": "b"}, "auth": {"type": "static_bearer", "token": "tb"}},
        store))))
    status, _ = credential_update(vault_id, credential_id, {"display_name": "renamed"}, racing)
    assert racing.fired and status == 200
    stored = store.get(credentials_kind(vault_id), OWNER, credential_id) or {}
    # The other update either landed whole, or was refused to be retried: never half.
    [(other_status, _)] = answers
    if other_status == 200:
        assert (stored["metadata"], token(store, vault_id)) == ({"team": "b"}, "tb")
    else:
        assert other_status == 409
        assert (stored["metadata"], token(store, vault_id)) == ({}, "t0")
    assert stored["display_name"] == "renamed"
    status, _ = credential_update(vault_id, credential_id, {
        "metadata": {"team": "b"}, "auth": {"type": "static_bearer", "token": "tb"}}, store)
    assert status == 200  # a retry goes through: the update's lease was let go
    stored = store.get(credentials_kind(vault_id), OWNER, credential_id) or {}
    assert (stored["display_name"], stored["metadata"]) == ("renamed", {"team": "b"})
    assert token(store, vault_id) == "tb"


def test_a_credential_update_does_not_undo_an_archive(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    vault_id, credential_id = credential(store, monkeypatch)
    racing = OtherWriteFirst(store, credentials_kind(vault_id))
    racing.arm(lambda: Vaults(store, OWNER).archive_credential(vault_id, credential_id))
    status, _ = credential_update(vault_id, credential_id, {
        "display_name": "renamed", "auth": {"type": "static_bearer", "token": "t1"}}, racing)
    assert racing.fired and status == 400
    stored = store.get(credentials_kind(vault_id), OWNER, credential_id) or {}
    assert stored["archived_at"] is not None and stored["display_name"] == "ci"
    assert store.get(secrets_kind(vault_id), OWNER, credential_id) is None  # none came back
    with pytest.raises(LookupError):
        token(store, vault_id)


# Skill versions -------------------------------------------------------------------------


def outcome(call: Callable[[], object]) -> int:
    """200, or the status of the HttpError `call` raised."""
    try:
        call()
    except HttpError as exc:
        return exc.status
    return 200


def test_concurrent_version_deletions_leave_a_skill_a_version(store: Store) -> None:
    skills = Skills(store, OWNER)
    skill = skills.create(None, skill_shapes.Upload("s", "does s", {"SKILL.md": b"one"}))
    first = skill["latest_version_id"]
    second = skills.add_version(skill["id"], skill_shapes.Upload("s", "does s",
                                                                 {"SKILL.md": b"two"}))["id"]
    racing = OtherWriteFirst(store, versions_kind(skill["id"]))
    others: list[int] = []
    racing.arm(lambda: others.append(outcome(lambda: skills.delete_version(skill["id"],
                                                                           second))))
    assert outcome(lambda: Skills(racing, OWNER).delete_version(  # type: ignore[arg-type]
        skill["id"], first)) == 200
    assert racing.fired and others in ([409], [400])  # refused, never both done
    remaining = [v["id"] for v in every(store, versions_kind(skill["id"]), OWNER)]
    assert remaining == [second]
    assert skills.found(skill["id"])["latest_version_id"] == second  # not a deleted one


# Check-then-create ----------------------------------------------------------------------


def test_concurrent_creates_put_one_memory_at_a_path(store: Store) -> None:
    store_id = memory_store(store)
    memories = MemoryStores(store, OWNER)
    racing = OtherWriteFirst(store, "memory:", on_create=True)
    others: list[int] = []
    racing.arm(lambda: others.append(outcome(lambda: memories.create(
        store_id, "/a.md", "theirs", api_actor(OWNER)))))
    assert outcome(lambda: MemoryStores(racing, OWNER).create(  # type: ignore[arg-type]
        store_id, "/a.md", "ours", api_actor(OWNER))) == 200
    assert racing.fired and others == [409]
    assert [m["content"] for m in memories.memories(store_id)] == ["ours"]


def test_a_move_and_a_create_put_one_memory_at_a_path(store: Store) -> None:
    store_id = memory_store(store)
    memories = MemoryStores(store, OWNER)
    note = memories.create(store_id, "/a.md", "one", api_actor(OWNER))
    racing = OtherWriteFirst(store, "memory:", on_create=True)
    others: list[int] = []
    racing.arm(lambda: others.append(outcome(lambda: memories.create(
        store_id, "/b.md", "theirs", api_actor(OWNER)))))
    assert outcome(lambda: MemoryStores(racing, OWNER).update(  # type: ignore[arg-type]
        store_id, note["id"], {"path": "/b.md"}, api_actor(OWNER))) == 200
    assert racing.fired and others == [409]
    assert [(m["path"], m["content"]) for m in memories.memories(store_id)] == [
        ("/b.md", "one")]


def test_concurrent_creates_give_a_server_url_one_active_credential(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    vault_id, _ = credential(store, monkeypatch)
    body = {"auth": {"type": "static_bearer", "token": "t1",
                     "mcp_server_url": "https://other.example.test/mcp"}}
    racing = OtherWriteFirst(store, "vault_", on_create=True)
    others: list[int] = []
    racing.arm(lambda: others.append(outcome(lambda: Vaults(store, OWNER).create_credential(
        vault_id, body))))
    assert outcome(lambda: Vaults(racing, OWNER).create_credential(  # type: ignore[arg-type]
        vault_id, body)) == 200
    assert racing.fired and others == [409]
    urls = [c["auth"]["mcp_server_url"] for c in every(store, credentials_kind(vault_id), OWNER)
            if not c.get("archived_at")]
    assert sorted(urls) == ["https://mcp.example.test/mcp", "https://other.example.test/mcp"]


# The deployment scheduler -----------------------------------------------------------------


def test_a_schedule_entry_written_for_an_older_deployment_is_brought_in_line(
        store: Store) -> None:
    """Two updates' schedule writes landed out of order: the entry keeps the cron the
    first update set while the deployment has the second's. When the stale entry comes
    due, the scheduler runs nothing and gives it the deployment's cron."""
    deployment_id = deployment(store)  # weekdays at 09:00 UTC
    store.modify(deployment_routes.KIND, OWNER, deployment_id, lambda doc: {
        **doc, "schedule": {**doc["schedule"], "expression": "30 18 * * *"}})
    entry = store.get(SCHEDULE, SERVICE, deployment_id) or {}
    assert entry["cron"] == ["0 9 * * 1-5", "UTC"]
    starts: list[str] = []

    def start(owner: str, body: JSON, from_deployment: str) -> Any:
        starts.append(from_deployment)
        return {"id": "sesn_1"}

    due = datetime.fromisoformat(entry["due_at"].replace("Z", "+00:00"))
    runs = Scheduler(store, start, clock=lambda: due).step()
    assert (runs, starts) == ([], [])
    entry = store.get(SCHEDULE, SERVICE, deployment_id) or {}
    assert entry["cron"] == ["30 18 * * *", "UTC"]


def test_two_requests_that_schedule_a_deployment_both_succeed(store: Store) -> None:
    deployment_id = deployment(store)
    router = deployment_router(store)
    assert call_route(router, OWNER, "POST", f"/v1/deployments/{deployment_id}",
                      {"schedule": None})[0] == 200
    assert store.get(SCHEDULE, SERVICE, deployment_id) is None
    racing = OtherWriteFirst(store, SCHEDULE, on_create=True)
    racing.arm(lambda: in_another_thread(lambda: call_route(
        router, OWNER, "POST", f"/v1/deployments/{deployment_id}",
        {"schedule": {"type": "cron", "expression": "0 7 * * *", "timezone": "UTC"}})))
    status, answer = call_route(
        deployment_router(racing), OWNER, "POST", f"/v1/deployments/{deployment_id}",
        {"schedule": {"type": "cron", "expression": "0 8 * * *", "timezone": "UTC"}})
    assert racing.fired and status == 200, answer
    # The other request's update was made after this one's (it ran inside this one's
    # schedule write), so its schedule is the deployment's, and the entry's too.
    stored = store.get(deployment_routes.KIND, OWNER, deployment_id) or {}
    assert stored["schedule"]["expression"] == "0 7 * * *"
    entry = store.get(SCHEDULE, SERVICE, deployment_id) or {}
    assert entry["cron"] == ["0 7 * * *", "UTC"]
