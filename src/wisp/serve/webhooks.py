"""Webhooks: signed deliveries of session status changes, sent at least once.

Registration is a wisp extension (the official SDK has no endpoint-management API; the
routes are `wisp.serve.webhook_routes`):

    POST   /v1/webhook_endpoints          {"url", "event_types"?} → the endpoint, with its
                                          `secret` (`whsec_…`; returned only here)
    GET    /v1/webhook_endpoints          list (no secrets)
    GET    /v1/webhook_endpoints/{id}
    DELETE /v1/webhook_endpoints/{id}

Endpoints are resources of kind "webhook_endpoint" owned by the API key, like the rest.

What is delivered is the SDK's `BetaWebhookEvent` (`client.beta.webhooks.unwrap` parses
it): `{"type": "event", "id": <the session event's id>, "created_at", "data": {"type",
"id": <session id>, "organization_id", "workspace_id", …}}`. Webhook types are named as
the SDK names them, not as the stream does (`STREAM_TO_WEBHOOK`); `data` also carries
the idle event's `stop_reason` and the error event's `error`. `session.error` has no type
in the SDK (it would parse as another event's data class), so it goes only to endpoints
that list it in `event_types`.

How: `SessionLog` asks `Hub.deliveries` which deliveries its status events make and writes
them to the store's outbox in the same transaction as the events. A `Deliverer` (one per
`wisp serve` process) claims due rows, POSTs each one with Standard Webhooks headers
(`webhook-id` is the delivery's id, the same on every attempt), and on anything but a 2xx
retries with exponential backoff until `max_attempts`, then gives up, keeping the error.
Per endpoint, deliveries go out one at a time in the order they were written. A failure
puts the endpoint's other claimed deliveries off until its retry, so a receiver that is
down costs one attempt (one timeout at most) per round, not one per delivery. Order holds
while the receiver answers; across retries a later delivery may overtake (receivers can
order by `created_at`).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import hmac
import json
import os
import secrets
import sys
import time
import weakref
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from wisp.errors import ModelAPIError
from wisp.jsontypes import JSON
from wisp.models.http import request as http_request
from wisp.models.pool import ConnectionPool, parse_url
from wisp.serve import egress, shapes
from wisp.serve.store.base import Delivery, Store, every
from wisp.serve.store.offload import off_loop

KIND = "webhook_endpoint"
# Stream event → webhook event, as the SDK's `BetaWebhookEventData` names them.
STREAM_TO_WEBHOOK: Mapping[str, str] = {
    "session.status_running": "session.status_run_started",
    "session.status_idle": "session.status_idled",
    "session.status_rescheduled": "session.status_rescheduled",
    "session.status_terminated": "session.status_terminated",
    "session.deleted": "session.deleted", "session.error": "session.error",
    "span.outcome_evaluation_end": "session.outcome_evaluation_ended",
}
OPT_IN = frozenset({"session.error"})
WEBHOOK_TYPES = frozenset(STREAM_TO_WEBHOOK.values())
DEFAULT_EVENT_TYPES = tuple(t for t in STREAM_TO_WEBHOOK.values() if t not in OPT_IN)
_CARRIED = ("stop_reason", "error")  # event fields `data` repeats
# One deployment is one organization and workspace; the SDK's data types require both.
ORGANIZATION_ID = "org_wisp"
WORKSPACE_ID = "wrkspc_default"
MAX_ENDPOINTS = 20  # per API key
ENDPOINT_TTL_S = 2.0  # how stale another process's view of an owner's endpoints may be

MAX_ATTEMPTS = 8
BACKOFF_S = 1.0  # 1 s, 2 s, 4 s … after the 1st, 2nd, 3rd failed attempt
MAX_BACKOFF_S = 600.0
TIMEOUT_S = 10.0  # one attempt, connection to answer
BATCH = 10  # deliveries claimed per round
USER_AGENT = "wisp-webhooks/1"


# What is reported ----------------------------------------------------------------------

def reports_any(entries: list[JSON]) -> bool:
    """Whether any entry is an event webhooks report (cheap: the hot path asks)."""
    return any(entry.get("type") in STREAM_TO_WEBHOOK for entry in entries)


def payload(session_id: str, event: JSON) -> JSON:
    """The `BetaWebhookEvent` reporting one status event of a session."""
    data: JSON = {"type": STREAM_TO_WEBHOOK[str(event["type"])], "id": session_id,
                  "organization_id": ORGANIZATION_ID, "workspace_id": WORKSPACE_ID}
    data.update((k, event[k]) for k in _CARRIED if k in event)
    return {"type": "event", "id": event["id"],
            "created_at": event.get("processed_at") or shapes.timestamp(), "data": data}


class Hub:
    """One store's webhooks in this process: its owners' endpoints, cached because every
    status event asks, and the deliverer to wake when deliveries are written."""

    def __init__(self, store: Store, ttl_s: float = ENDPOINT_TTL_S) -> None:
        self.store = store
        self.ttl_s = ttl_s
        self._endpoints: dict[str, tuple[float, list[tuple[str, frozenset[str]]]]] = {}
        self.wake: Callable[[], None] = lambda: None

    def deliveries(self, owner: str, session_id: str, entries: list[JSON]) -> list[Delivery]:
        """A delivery per reported event among `entries` and endpoint that wants it."""
        endpoints = self._of(owner)
        out: list[Delivery] = []
        if not endpoints:
            return out
        for entry in entries:
            kind = STREAM_TO_WEBHOOK.get(str(entry.get("type")))
            if kind is not None:
                body = payload(session_id, entry)
                out += [(owner, eid, body) for eid, kinds in endpoints if kind in kinds]
        return out

    def forget(self, owner: str) -> None:
        """An endpoint of `owner` was created or deleted here: read them again."""
        self._endpoints.pop(owner, None)

    def _of(self, owner: str) -> list[tuple[str, frozenset[str]]]:
        now = time.monotonic()
        cached = self._endpoints.get(owner)
        if cached is not None and now - cached[0] < self.ttl_s:
            return cached[1]
        docs = _all(self.store, owner)
        endpoints = [(str(d["id"]), frozenset(d.get("event_types") or ())) for d in docs]
        self._endpoints[owner] = (now, endpoints)
        return endpoints


_HUBS: weakref.WeakKeyDictionary[Any, Hub] = weakref.WeakKeyDictionary()


def hub(store: Store) -> Hub:
    """The `Hub` of `store`: one per store object, shared by the API, the sessions' logs
    and the deliverer of this process."""
    found = _HUBS.get(store)
    if found is None:
        found = _HUBS[store] = Hub(store)
    return found


def _all(store: Store, owner: str) -> list[JSON]:
    return list(every(store, KIND, owner))


# Registration (the routes: `wisp.serve.webhook_routes`) ---------------------------------

def endpoint_document(body: Any, *, allow_private: bool = False) -> JSON:
    """A new endpoint from a create request (ShapeError naming the field otherwise). Its
    host must be public unless `allow_private` (`wisp.serve.egress`)."""
    if not isinstance(body, dict):
        raise shapes.ShapeError("body", "expected an object")
    for key in body:
        if key not in ("url", "event_types"):
            raise shapes.ShapeError(str(key), "unknown field")
    url = _url(body.get("url"))
    if not allow_private:
        try:
            egress.refuse_private_literal(str(urlsplit(url).hostname))
        except egress.EgressRefused as exc:
            raise shapes.ShapeError("url", str(exc)) from None
    return {"id": shapes.new_id("whep"), "type": KIND, "url": url,
            "event_types": _event_types(body.get("event_types")), "secret": new_secret(),
            "created_at": shapes.timestamp()}


def public(doc: JSON) -> JSON:
    """An endpoint as listed: the secret is shown once, when it is created."""
    return {k: v for k, v in doc.items() if k != "secret"}


def _url(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise shapes.ShapeError("url", "expected a non-empty string")
    # Sent as is on the request line: nothing that could end it or change its meaning.
    if len(value) > 2048 or not value.isascii() or any(c.isspace() or not c.isprintable()
                                                       for c in value):
        raise shapes.ShapeError("url", "expected at most 2048 printable ASCII characters")
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https"):
        raise shapes.ShapeError("url", "expected an http:// or https:// URL")
    if not parts.hostname:
        raise shapes.ShapeError("url", "expected a URL naming a host")
    if parts.username is not None or parts.password is not None:
        raise shapes.ShapeError("url", "credentials in the URL are not sent; remove them")
    try:
        _ = parts.port
        parse_url(value)  # what the deliverer will do with it
    except ValueError:
        raise shapes.ShapeError("url", "expected a valid port") from None
    return value


def _event_types(value: Any) -> list[str]:
    if value is None:
        return list(DEFAULT_EVENT_TYPES)
    if not isinstance(value, list) or not value:
        raise shapes.ShapeError("event_types", "expected a non-empty array")
    for i, kind in enumerate(value):
        if kind not in WEBHOOK_TYPES:
            renamed = STREAM_TO_WEBHOOK.get(kind) if isinstance(kind, str) else None
            hint = f" (webhooks call {kind} {renamed})" if renamed else ""
            raise shapes.ShapeError(f"event_types[{i}]", "expected one of "
                                    f"{', '.join(sorted(WEBHOOK_TYPES))}{hint}")
    return list(dict.fromkeys(value))


# Signing (Standard Webhooks) ------------------------------------------------------------

def new_secret() -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()


def sign(secret: str, message_id: str, timestamp: int, body: str) -> str:
    """`v1,` + base64 HMAC-SHA256 of `{id}.{timestamp}.{body}`, keyed with the secret's
    bytes (the base64 after `whsec_`)."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    mac = hmac.new(key, f"{message_id}.{timestamp}.{body}".encode(), hashlib.sha256)
    return "v1," + base64.b64encode(mac.digest()).decode()


def signed_headers(secret: str, message_id: str, timestamp: int, body: str) -> dict[str, str]:
    return {"content-type": "application/json", "user-agent": USER_AGENT,
            "webhook-id": message_id, "webhook-timestamp": str(timestamp),
            "webhook-signature": sign(secret, message_id, timestamp, body)}


def backoff(attempts: int, base_s: float = BACKOFF_S, cap_s: float = MAX_BACKOFF_S) -> float:
    """The wait after `attempts` failed attempts: base, 2×base, 4×base … up to `cap_s`."""
    return float(min(cap_s, base_s * 2 ** min(max(attempts - 1, 0), 30)))


# Delivering ----------------------------------------------------------------------------

def _env_float(env: Mapping[str, str], name: str, default: float) -> float:
    try:
        value = float(env.get(name, ""))
    except ValueError:
        return default
    return value if value > 0 else default


class Deliverer:
    """Sends the outbox: polls every `poll_s`, and at once when this process writes
    deliveries. `WISP_SERVE_WEBHOOK_BACKOFF_S`, `…_TIMEOUT_S` and `…_ATTEMPTS` override
    the first backoff, the per-attempt timeout and the attempts before giving up."""

    def __init__(self, store: Store, *, env: Mapping[str, str] = os.environ,
                 poll_s: float = 1.0, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.poll_s = poll_s
        self.clock = clock
        self.backoff_s = _env_float(env, "WISP_SERVE_WEBHOOK_BACKOFF_S", BACKOFF_S)
        self.timeout_s = _env_float(env, "WISP_SERVE_WEBHOOK_TIMEOUT_S", TIMEOUT_S)
        self.max_attempts = int(_env_float(env, "WISP_SERVE_WEBHOOK_ATTEMPTS", MAX_ATTEMPTS))
        # A claim outlives the longest round (every claimed row sent to one slow endpoint)
        # so no other deliverer sends a row meanwhile; after a crash it is the wait.
        self.lease_s = BATCH * self.timeout_s + 10.0
        # Deliveries go only to public addresses, checked at each new connection (and
        # connected to as checked): `wisp.serve.egress`.
        self._pool = ConnectionPool(resolve=None if egress.private_allowed(env)
                                    else egress.public_address)
        self._claimed: set[str] = set()
        self._claiming: asyncio.Future[list[JSON]] | None = None
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        hub(self.store).wake = self.notify
        self._task = asyncio.ensure_future(self._loop())

    def notify(self) -> None:
        self._wake.set()

    async def close(self) -> None:
        """Stops; deliveries claimed and not finished are due again at once (one cut off
        mid-send may have arrived: it will be sent again, as at-least-once allows)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._claiming is not None:  # a claim cut short still claimed its rows
            with contextlib.suppress(Exception):
                await self._claiming
        if self._claimed:
            await off_loop(self.store, self.store.release_deliveries, sorted(self._claimed),
                           self.clock())
            self._claimed.clear()
        await self._pool.aclose()

    async def _loop(self) -> None:
        while True:
            try:
                sent = await self.step()
            except Exception as exc:  # the outbox keeps it; the next round tries again
                print(f"wisp serve: webhook delivery error: {exc!r}", file=sys.stderr)
                sent = 0
            if sent:
                continue  # a full batch may have left more due
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.poll_s)
            self._wake.clear()

    async def step(self) -> int:
        """One round: claims what is due and sends it; the number of deliveries claimed.
        Store calls run off the event loop (`off_loop`); the claim is shielded from
        cancellation, so `close` knows what it claimed and gives it back."""
        self._claiming = asyncio.ensure_future(self._claim())
        rows = await asyncio.shield(self._claiming)
        by_endpoint: dict[tuple[str, str], list[JSON]] = {}
        for row in rows:
            by_endpoint.setdefault((row["owner"], row["endpoint_id"]), []).append(row)
        await asyncio.gather(*(self._send_in_order(owner, endpoint_id, queue)
                               for (owner, endpoint_id), queue in by_endpoint.items()))
        return len(rows)

    async def _claim(self) -> list[JSON]:
        rows = await off_loop(self.store, self.store.claim_deliveries, self.clock(),
                              self.lease_s, BATCH)
        self._claimed.update(row["id"] for row in rows)
        return rows

    async def _send_in_order(self, owner: str, endpoint_id: str, rows: list[JSON]) -> None:
        endpoint = await off_loop(self.store, self.store.get, KIND, owner, endpoint_id)
        for i, row in enumerate(rows):
            if endpoint is None:
                await self._record(row, "the webhook endpoint was deleted", retry=False)
                continue
            error = await self._send(endpoint, row)
            retry_at = await self._record(row, error)
            if error is not None:  # the rest wait for this one's retry (see the docstring)
                rest = [r["id"] for r in rows[i + 1:]]
                await off_loop(self.store, self.store.release_deliveries, rest,
                               retry_at or self.clock())
                self._claimed.difference_update(rest)
                return

    async def _record(self, row: JSON, error: str | None, *, retry: bool = True
                      ) -> float | None:
        """Records an attempt (`error` None: delivered); the retry time, if any."""
        self._claimed.discard(row["id"])
        if error is None:
            await off_loop(self.store, self.store.delivery_done, row["id"])
            return None
        attempts = int(row["attempts"]) + 1
        retry_at = (self.clock() + backoff(attempts, self.backoff_s)
                    if retry and attempts < self.max_attempts else None)
        await off_loop(self.store, self.store.delivery_failed, row["id"], retry_at, error)
        return retry_at

    async def _send(self, endpoint: JSON, row: JSON) -> str | None:
        """One attempt: None on a 2xx, else what went wrong."""
        body = json.dumps(row["payload"], ensure_ascii=False, separators=(",", ":"))
        headers = signed_headers(endpoint["secret"], row["id"], int(self.clock()), body)
        try:
            async with asyncio.timeout(self.timeout_s):
                response = await http_request(
                    "POST", endpoint["url"], headers, body.encode(),
                    connect_timeout=self.timeout_s, read_timeout=self.timeout_s,
                    pool=self._pool)
                try:
                    await response.finish(self.timeout_s)  # read to the end: reusable
                finally:
                    await response.aclose()
        except TimeoutError:
            return f"no answer within {self.timeout_s:g}s"
        except (ModelAPIError, OSError, ValueError) as exc:
            return str(exc) or type(exc).__name__
        return None if 200 <= response.status < 300 else f"HTTP {response.status}"
