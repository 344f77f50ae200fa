"""A session's `budget` (`{"type": "limit", "max_list_cost": {"amount", "currency"}}`):
its list cost kept in the document's `usage.list_cost`, and the ceiling a turn may spend.

The API's rule: the session stops issuing model requests once the tracked list cost
reaches the limit, and idles with `budget_reached`. The engine checks its own ledger
before each model request (`max_budget_usd`), so a turn is given the ledger's cost so
far plus what the budget leaves; a turn that would start over budget does not start.
Costs are list prices from `wisp.models.catalog` (a model it does not know costs 0).
A session thread's model use is billed to its session (`SessionDriver.billed_to`): it
counts in the session's usage and against its budget.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from wisp.jsontypes import JSON

if TYPE_CHECKING:
    from wisp.runtime.runtime import Runtime
    from wisp.serve.driver import SessionDriver
    from wisp.serve.shapes import SessionDocument
    from wisp.serve.store.base import Store

NOT_RUN = "Not run: the session's budget was reached before this call could run."


def list_cost(doc: Mapping[str, Any]) -> Decimal:
    """The session's cost so far, from its document."""
    cost = (doc.get("usage") or {}).get("list_cost") or {}
    return Decimal(str(cost.get("amount") or "0"))


def limit_of(doc: Mapping[str, Any]) -> Decimal | None:
    """The budget's `max_list_cost` in USD, or None without a budget."""
    budget = doc.get("budget") or {}
    amount = (budget.get("max_list_cost") or {}).get("amount")
    return None if amount is None else Decimal(str(amount))


def reached(doc: Mapping[str, Any]) -> bool:
    limit = limit_of(doc)
    return limit is not None and list_cost(doc) >= limit


def remaining(doc: Mapping[str, Any]) -> float | None:
    """What the budget still allows (never below 0), or None without a budget."""
    limit = limit_of(doc)
    return None if limit is None else float(max(limit - list_cost(doc), Decimal(0)))


def with_cost(doc: SessionDocument, model: str, usages: list[JSON]) -> SessionDocument:
    """`doc` with the list cost of these model requests added to `usage.list_cost`."""
    from wisp.models import catalog

    total = list_cost(doc)
    for usage in usages:
        tokens = {key: int(usage.get(key) or 0) for key in (
            "input_tokens", "output_tokens", "cache_creation_input_tokens",
            "cache_read_input_tokens")}
        total += Decimal(repr(catalog.cost_usd(model, tokens)))
    amount = format(total.quantize(Decimal("0.000001")), "f")
    return {**doc, "usage": {**doc["usage"],
                             "list_cost": {"amount": amount, "currency": "USD"}}}


def settle_unrun_calls(runtime: Runtime) -> None:
    """The engine stops a run whose model request overshot the budget before running
    that request's tool calls. Each is answered as not run (an `agent.tool_result` for
    the calls run here), so the conversation stays valid for the next turn."""
    runtime.answer_unrun_calls(NOT_RUN)


def billed_document(store: Store, session_id: str) -> SessionDocument | None:
    """The document of the session `session_id` is billed to (store calls only)."""
    from wisp.serve import shapes

    owner = store.owner_of("session", session_id)
    doc = store.get("session", owner, session_id) if owner else None
    return None if doc is None else shapes.as_session(doc)


async def billed(driver: SessionDriver) -> SessionDocument | None:
    """The document of the session the driver's model use is billed to, read after the
    driver's queued writes, off the event loop (`SessionLog.call`)."""
    return await driver.log.call(functools.partial(billed_document, driver.store,
                                                   driver.billed_to))


async def account(driver: SessionDriver, model: str) -> None:
    """The model usage of the driver's turn so far added to the totals of the session it
    is billed to: the document's `usage` and `list_cost`, and a `session.usage` event
    carrying them."""
    from wisp.serve import shapes

    projection = driver.projection
    if projection is None or not projection.usages:
        return
    usages, projection.usages = projection.usages, []
    # Off the loop, after the driver's queued writes (`billed` reads after it too).
    doc = await driver.log.call(functools.partial(add_usage, driver.store,
                                                  driver.billed_to, model, usages))
    if doc is not None:
        driver.log.emit(shapes.session_usage(doc["usage"], doc.get("budget")))


def add_usage(store: Store, session_id: str, model: str,
              usages: list[JSON]) -> SessionDocument | None:
    """`usages` added to the session's document (store calls only: it runs off the
    loop); the document as updated, None when the session is gone."""
    from wisp.serve import shapes

    owner = store.owner_of("session", session_id)
    if owner is None:
        return None

    def added(stored: JSON) -> SessionDocument:
        doc = shapes.as_session(stored)
        for usage in usages:
            doc = shapes.session_usage_added(doc, usage)
        return with_cost(doc, model, usages)

    # One locked read-modify-write: the session's other writers (a status change, the
    # API's update, a thread billed to it) cannot slip in between and be overwritten.
    stored = store.modify("session", owner, session_id, added)
    return None if stored is None else shapes.as_session(stored)
