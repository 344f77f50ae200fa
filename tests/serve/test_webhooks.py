"""Webhooks: signing and backoff, the outbox in the store (written with its event, claimed
by one deliverer at a time), the deliverer's retries, and `wisp serve` end to end with a
receiver in this process: signed status changes in order, the same `webhook-id` on every
retry, deliveries surviving `kill -9` while the receiver is down, endpoints per key.

Every receiver listens on 127.0.0.1."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from tests.serve.harness import (
    KEYS,
    Served,
    cloud_setup,
    idle_end_turn,
    serving,
    user_message,
    wait_for,
)
from wisp.serve import shapes, webhooks
from wisp.serve.store.sqlite import SqliteStore
from wisp.testing import ScriptedServer, reply

JSON = dict[str, Any]
# The receivers are on 127.0.0.1, which the service refuses to deliver to by default.
FAST = {"WISP_SERVE_WEBHOOK_BACKOFF_S": "0.1", "WISP_SERVE_WEBHOOK_TIMEOUT_S": "2",
        "WISP_SERVE_WEBHOOK_ALLOW_PRIVATE": "1"}


class Received(NamedTuple):
    headers: dict[str, str]
    body: str

    @property
    def event(self) -> JSON:
        doc: JSON = json.loads(self.body)
        return doc


class Receiver:
    """A webhook receiver on 127.0.0.1 recording every request; it answers 503 to the
    first `fail_first`, then 200."""

    def __init__(self, port: int = 0, fail_first: int = 0) -> None:
        self.requests: list[Received] = []
        self.fail_first = fail_first
        self._lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                         daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                with receiver._lock:
                    receiver.requests.append(Received(
                        {k.lower(): v for k, v in self.headers.items()}, body.decode()))
                    failing = len(receiver.requests) <= receiver.fail_first
                answer = b"try later" if failing else b"ok"
                self.send_response(503 if failing else 200)
                self.send_header("content-length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: object) -> None:
                pass

        return Handler

    def wait_for(self, done: Callable[[list[Received]], bool],
                 timeout: float = 20) -> list[Received]:
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                seen = list(self.requests)
            if done(seen):
                return seen
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out; received {[r.event for r in seen]}")
            time.sleep(0.02)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def sw() -> Any:
    """`standardwebhooks`, which `client.beta.webhooks.unwrap` needs (anthropic[webhooks])."""
    return pytest.importorskip("standardwebhooks", reason="anthropic[webhooks] is not installed")


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    opened = Receiver()
    yield opened
    opened.close()


def kinds(received: list[Received]) -> list[str]:
    return [r.event["data"]["type"] for r in received]


def register(served: Served, url: str, key: str = KEYS[0], **fields: Any) -> Any:
    import httpx2

    return httpx2.post(f"{served.url}/v1/webhook_endpoints", headers={"x-api-key": key},
                       json={"url": url, **fields}, timeout=10)


def one_turn(served: Served) -> tuple[Any, str]:
    """A turn to `end_turn` through the SDK; the client and the session id."""
    client = served.client()
    agent, environment = cloud_setup(client)
    session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
    client.beta.sessions.events.send(session.id, events=[user_message("hi")])
    wait_for(client, session.id, idle_end_turn)
    return client, session.id


# Signing and backoff -------------------------------------------------------------------

def test_the_signature_is_hmac_sha256_of_id_timestamp_and_body(sw: Any) -> None:
    key = bytes(range(24))
    secret = "whsec_" + base64.b64encode(key).decode()
    body = '{"type":"event","data":{"id":"sesn_1"}}'
    mac = hmac.new(key, b"dlv_1.1700000000." + body.encode(), hashlib.sha256).digest()
    assert webhooks.sign(secret, "dlv_1", 1700000000, body) == (
        "v1," + base64.b64encode(mac).decode())
    # The Standard Webhooks specification's own example.
    assert webhooks.sign("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
                         "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330,
                         '{"test": 2432232314}') == (
        "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    headers = webhooks.signed_headers(secret, "dlv_1", int(time.time()), body)
    assert sw.Webhook(secret).verify(body, headers) == json.loads(body)


def test_a_secret_is_24_random_bytes() -> None:
    one, two = webhooks.new_secret(), webhooks.new_secret()
    assert one.startswith("whsec_") and one != two
    assert len(base64.b64decode(one.removeprefix("whsec_"))) == 24


def test_backoff_doubles_from_its_base_up_to_the_cap() -> None:
    assert [webhooks.backoff(n) for n in range(1, 6)] == [1, 2, 4, 8, 16]
    assert [webhooks.backoff(n, 0.1, cap_s=0.5) for n in (1, 2, 3, 4)] == [0.1, 0.2, 0.4, 0.5]
    assert webhooks.backoff(500) == webhooks.MAX_BACKOFF_S  # no overflow


def test_payloads_are_the_sdks_webhook_events() -> None:
    import anthropic

    idle = {"id": "sevt_1", "type": "session.status_idle", "processed_at": "2026-01-01T00:00:00Z",
            "stop_reason": {"type": "end_turn"}}
    doc = webhooks.payload("sesn_1", idle)
    parsed = anthropic.Anthropic(api_key="unused").beta.webhooks.parse_unverified(json.dumps(doc))
    assert type(parsed.data).__name__ == "BetaWebhookSessionStatusIdledEventData"
    assert (parsed.id, parsed.data.id, parsed.data.type) == (
        "sevt_1", "sesn_1", "session.status_idled")
    assert doc["data"]["stop_reason"] == {"type": "end_turn"}
    running = webhooks.payload("sesn_1", {**idle, "type": "session.status_running"})
    assert running["data"]["type"] == "session.status_run_started"


# The outbox in the store ---------------------------------------------------------------

@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    opened = SqliteStore(tmp_path / "store.db")
    yield opened
    opened.close()


def status_event(eid: str) -> JSON:
    return {"id": eid, "type": "session.status_idle", "processed_at": "2026-01-01T00:00:00Z"}


def test_deliveries_are_written_in_the_transaction_of_their_events(store: SqliteStore) -> None:
    store.append("sesn_1", [status_event("sevt_1")], deliveries=[("o", "whep_1", {"n": 1})])
    [row] = store.due_deliveries(time.time())
    assert (row["owner"], row["endpoint_id"], row["payload"]) == ("o", "whep_1", {"n": 1})
    with pytest.raises(TypeError):  # a delivery that cannot be written: no event either
        store.append("sesn_1", [status_event("sevt_2")],
                     deliveries=[("o", "whep_1", {"bad": {1, 2}})])
    assert [e["id"] for e in store.log("sesn_1")] == ["sevt_1"]
    with pytest.raises(TypeError):  # an event that cannot be written: no delivery either
        store.append("sesn_1", [{**status_event("sevt_3"), "bad": {1}}],
                     deliveries=[("o", "whep_1", {"n": 3})])
    assert len(store.due_deliveries(time.time())) == 1


def test_a_claim_hides_deliveries_from_other_claims_until_its_lease_ends(
        store: SqliteStore, tmp_path: Path) -> None:
    other = SqliteStore(tmp_path / "store.db")  # another deliverer's connection
    try:
        for n in range(3):
            store.enqueue_delivery("o", "whep_1", {"n": n})
        now = time.time()
        claimed = store.claim_deliveries(now, lease_s=30)
        assert [r["payload"]["n"] for r in claimed] == [0, 1, 2]  # in the order written
        assert other.claim_deliveries(now, lease_s=30) == []
        first, second, third = (r["id"] for r in claimed)
        store.delivery_done(first)
        store.release_deliveries([second], now)
        assert [r["id"] for r in other.claim_deliveries(now, 30)] == [second]
        assert [r["id"] for r in other.claim_deliveries(now + 31, 30)] == [second, third]
        store.delivery_failed(first, now, "late report of an expired claim")
        assert first not in {r["id"] for r in store.due_deliveries(now + 1000)}
    finally:
        other.close()


def test_the_deliverer_retries_with_backoff_then_gives_up(store: SqliteStore,
                                                          receiver: Receiver) -> None:
    endpoint = webhooks.endpoint_document({"url": receiver.url}, allow_private=True)
    store.create(webhooks.KIND, "o", endpoint)
    store.enqueue_delivery("o", endpoint["id"], {"type": "event", "n": 1})
    receiver.fail_first = 100
    now = [time.time()]  # the deliverer's clock: moved to each retry's time
    deliverer = webhooks.Deliverer(store, env={"WISP_SERVE_WEBHOOK_ATTEMPTS": "3",
                                               "WISP_SERVE_WEBHOOK_ALLOW_PRIVATE": "1"},
                                   clock=lambda: now[0])
    waits: list[float] = []

    async def attempts() -> None:
        while await deliverer.step():
            for row in store.due_deliveries(1e12):
                waits.append(row["next_at"] - now[0])
                now[0] = row["next_at"]
        await deliverer.close()

    asyncio.run(attempts())
    assert len(receiver.requests) == 3
    assert len({r.headers["webhook-id"] for r in receiver.requests}) == 1
    assert waits == [pytest.approx(1.0), pytest.approx(2.0)]  # then the 3rd is the last
    assert store.due_deliveries(1e12) == []  # given up
    with store._read() as db:
        assert db.execute("SELECT attempts, last_error FROM outbox").fetchone() == (
            3, "HTTP 503")


# `wisp serve` end to end -----------------------------------------------------------------

def test_status_changes_arrive_signed_and_in_order(tmp_path: Path, server: ScriptedServer,
                                                   receiver: Receiver, sw: Any) -> None:
    server.script(reply.text("hello"))
    with serving(tmp_path, server, env=FAST) as served:
        created = register(served, receiver.url)
        assert created.status_code == 200, created.text
        endpoint = created.json()
        assert endpoint["id"].startswith("whep_") and endpoint["type"] == "webhook_endpoint"
        assert endpoint["secret"].startswith("whsec_")
        assert endpoint["event_types"] == list(webhooks.DEFAULT_EVENT_TYPES)
        client, session_id = one_turn(served)
        received = receiver.wait_for(lambda rs: len(rs) >= 2)
        client.beta.sessions.delete(session_id)
        received = receiver.wait_for(lambda rs: len(rs) >= 3)
    assert kinds(received) == ["session.status_run_started", "session.status_idled",
                               "session.deleted"]
    for request in received:
        event = client.beta.webhooks.unwrap(request.body, headers=request.headers,
                                            key=endpoint["secret"])
        assert event.type == "event" and event.data.id == session_id
        assert request.headers["content-type"] == "application/json"
        assert abs(int(request.headers["webhook-timestamp"]) - time.time()) < 60
        assert request.headers["webhook-id"].startswith("dlv_")
    assert received[1].event["data"]["stop_reason"] == {"type": "end_turn"}
    assert len({r.headers["webhook-id"] for r in received}) == 3
    tampered = received[1].body.replace("end_turn", "requires_action")
    with pytest.raises(sw.WebhookVerificationError):
        client.beta.webhooks.unwrap(tampered, headers=received[1].headers,
                                    key=endpoint["secret"])


def test_an_outcome_evaluation_ending_is_reported(tmp_path: Path, server: ScriptedServer,
                                                  receiver: Receiver, sw: Any) -> None:
    from wisp.serve.grader import TOOL

    server.script(reply.text("a haiku"),
                  reply.tool_use(TOOL, {"result": "satisfied", "explanation": "fine"}))
    with serving(tmp_path, server, env=FAST) as served:
        endpoint = register(served, receiver.url,
                            event_types=["session.outcome_evaluation_ended"]).json()
        client = served.client()
        agent, environment = cloud_setup(client)
        session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id,
                                              initial_events=[{
                                                  "type": "user.define_outcome",
                                                  "description": "a haiku",
                                                  "rubric": {"type": "text",
                                                             "content": "5-7-5"}}])
        wait_for(client, session.id, idle_end_turn)
        [received] = receiver.wait_for(lambda rs: len(rs) >= 1)
    event = client.beta.webhooks.unwrap(received.body, headers=received.headers,
                                        key=endpoint["secret"])
    assert event.data.type == "session.outcome_evaluation_ended"
    assert event.data.id == session.id


def test_a_failing_receiver_gets_the_same_delivery_until_it_answers(
        tmp_path: Path, server: ScriptedServer, sw: Any) -> None:
    server.script(reply.text("hello"))
    receiver = Receiver(fail_first=2)
    try:
        with serving(tmp_path, server, env=FAST) as served:
            endpoint = register(served, receiver.url,
                                event_types=["session.status_run_started"]).json()
            client, session_id = one_turn(served)
            received = receiver.wait_for(lambda rs: len(rs) >= 3)
            time.sleep(0.5)  # nothing more comes once it was answered
            received = receiver.wait_for(lambda rs: True)
    finally:
        receiver.close()
    assert len(received) == 3
    assert len({r.headers["webhook-id"] for r in received}) == 1
    assert kinds(received) == ["session.status_run_started"] * 3
    event = client.beta.webhooks.unwrap(received[-1].body, headers=received[-1].headers,
                                        key=endpoint["secret"])
    assert event.data.id == session_id


def test_deliveries_survive_kill_9_while_the_receiver_is_down(
        tmp_path: Path, server: ScriptedServer, sw: Any) -> None:
    server.script(reply.text("hello"))
    with socket.socket() as probe:  # a port with no one listening, for the receiver later
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {"WISP_SERVE_WEBHOOK_BACKOFF_S": "1", "WISP_SERVE_WEBHOOK_TIMEOUT_S": "2",
           "WISP_SERVE_WEBHOOK_ALLOW_PRIVATE": "1"}
    served = Served(tmp_path, server, env=env).start()
    try:
        endpoint = register(served, f"http://127.0.0.1:{port}/hooks").json()
        one_turn(served)
        _wait_for_failed_attempts(served, count=2)
    finally:
        served.kill()
    receiver = Receiver(port=port)
    served = Served(tmp_path, server, env=env).start()
    try:
        received = receiver.wait_for(lambda rs: len(rs) >= 2)
    finally:
        served.stop()
        receiver.close()
    assert kinds(received) == ["session.status_run_started", "session.status_idled"]
    webhook = sw.Webhook(endpoint["secret"])
    for request in received:
        webhook.verify(request.body, request.headers)


def _wait_for_failed_attempts(served: Served, count: int) -> None:
    """Until `count` deliveries have failed at least once and wait for their retry (not
    claimed: a claim's lease is far longer than the backoff), so a kill now cuts no
    attempt short."""
    store = SqliteStore(served.store)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            rows = store.due_deliveries(1e12)
            now = time.time()
            if len(rows) == count and all(
                    r["attempts"] >= 1 and r["next_at"] - now < 5 for r in rows):
                return
            time.sleep(0.02)
        raise AssertionError(f"deliveries did not fail as expected: {rows}")
    finally:
        store.close()


def test_endpoints_belong_to_their_key_and_are_validated(tmp_path: Path,
                                                         server: ScriptedServer) -> None:
    import httpx2

    with serving(tmp_path, server) as served:
        endpoint = register(served, "https://example.invalid/hooks").json()
        base = f"{served.url}/v1/webhook_endpoints"

        def call(method: str, url: str, key: str = KEYS[0]) -> Any:
            return httpx2.request(method, url, headers={"x-api-key": key}, timeout=10)

        listed = call("GET", base).json()["data"]
        assert [e["id"] for e in listed] == [endpoint["id"]]
        assert "secret" not in listed[0] and "secret" not in call(
            "GET", f"{base}/{endpoint['id']}").json()
        assert call("GET", base, KEYS[1]).json()["data"] == []
        assert call("GET", f"{base}/{endpoint['id']}", KEYS[1]).status_code == 404
        assert call("DELETE", f"{base}/{endpoint['id']}", KEYS[1]).status_code == 404
        for fields, named in ((dict(url="ftp://x/"), "url"), (dict(url="http:///x"), "url"),
                              (dict(url=5), "url"), (dict(url="http://a b/"), "url"),
                              (dict(url="http://x/", event_types=["session.status_idle"]),
                               "event_types[0]"),
                              (dict(url="http://x/", colour="red"), "colour")):
            bad = httpx2.post(base, headers={"x-api-key": KEYS[0]}, json=fields, timeout=10)
            assert bad.status_code == 400, fields
            assert bad.json()["error"]["message"].startswith(named), bad.text
        deleted = call("DELETE", f"{base}/{endpoint['id']}")
        assert deleted.json() == {"id": endpoint["id"], "type": "webhook_endpoint_deleted"}
        assert call("GET", base).json()["data"] == []


# Egress: deliveries go only to public addresses -------------------------------------------

LOOPBACK_SPELLINGS = ["127.0.0.1", "127.1", "127.000.000.001", "2130706433", "0x7f000001",
                      "0177.0.0.1", "[::1]", "[::ffff:127.0.0.1]", "[0:0:0:0:0:0:0:1]",
                      "localhost", "LOCALHOST.", "api.localhost"]
PRIVATE = ["10.0.0.7", "172.16.3.4", "192.168.1.1", "169.254.169.254", "100.64.0.1",
           "0.0.0.0", "[fc00::1]", "[fe80::1]", "224.0.0.1", "[::]"]


def test_endpoints_on_non_public_addresses_are_refused_whatever_the_spelling() -> None:
    import random

    rng = random.Random(16)
    hosts = LOOPBACK_SPELLINGS + PRIVATE + [
        f"127.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(1, 255)}"
        for _ in range(20)] + [
        f"10.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(1, 255)}"
        for _ in range(20)] + [
        str(int.from_bytes(bytes([127, rng.randrange(256), rng.randrange(256), 1]), "big"))
        for _ in range(10)]
    for host in hosts:
        for scheme, port in (("http", ""), ("https", ":8443")):
            with pytest.raises(shapes.ShapeError) as refused:
                webhooks.endpoint_document({"url": f"{scheme}://{host}{port}/hook"})
            assert str(refused.value).startswith("url"), host
    for public in ("https://example.com/hook", "http://93.184.216.34/x", "https://[2606:4700::1]/"):
        assert webhooks.endpoint_document({"url": public})["url"] == public
    assert webhooks.endpoint_document({"url": "http://127.0.0.1:9/x"}, allow_private=True)


def test_a_name_resolving_to_a_private_address_is_not_delivered_to(
        store: SqliteStore, receiver: Receiver) -> None:
    """The name passes registration (it is no address); at delivery it resolves to
    loopback, so nothing is sent, and the outbox says why."""
    host = socket.gethostname()
    endpoint = webhooks.endpoint_document(
        {"url": f"http://{host}:{receiver.url.rsplit(':', 1)[1]}"})
    store.create(webhooks.KIND, "o", endpoint)
    store.enqueue_delivery("o", endpoint["id"], {"type": "event", "n": 1})
    deliverer = webhooks.Deliverer(store, env={"WISP_SERVE_WEBHOOK_ATTEMPTS": "1"})

    async def one_round() -> None:
        await deliverer.step()
        await deliverer.close()

    asyncio.run(one_round())
    assert receiver.requests == []
    with store._read() as db:
        attempts, error = db.execute("SELECT attempts, last_error FROM outbox").fetchone()
    assert attempts == 1 and "not a public address" in error, error
