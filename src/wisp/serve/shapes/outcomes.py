"""Outcomes (`user.define_outcome`): the session's `outcome_evaluations` entries and the
`span.outcome_evaluation_*` events, as the SDK's types define them.

An entry's `result` moves `pending` → `running` (the agent works) → `evaluating` (the
grader scores) → `running` again for a revision, until a terminal result: `satisfied`,
`max_iterations_reached`, `failed` or `interrupted`. `iteration` is the 0-indexed
revision cycle.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from wisp.jsontypes import JSON
from wisp.serve.shapes.common import new_id, read_choice, timestamp
from wisp.serve.shapes.event_types import (
    SpanOutcomeEvaluationEndEvent,
    SpanOutcomeEvaluationOngoingEvent,
    SpanOutcomeEvaluationStartEvent,
)
from wisp.serve.shapes.server_events import model_usage

RESULTS: Final = ("pending", "running", "evaluating", "satisfied", "needs_revision",
                  "max_iterations_reached", "failed", "interrupted")
TERMINAL: Final = frozenset({"satisfied", "max_iterations_reached", "failed", "interrupted"})
VERDICTS: Final = ("satisfied", "needs_revision", "failed")  # what a grader may answer


def outcome_entry(event: Mapping[str, Any]) -> JSON:
    """The session's entry for a just-defined outcome (`pending`)."""
    return {"type": "outcome_evaluation", "outcome_id": str(event["outcome_id"]),
            "description": str(event["description"]), "iteration": 0,
            "result": "pending", "explanation": None, "completed_at": None}


def outcome_added(doc: JSON, event: Mapping[str, Any]) -> JSON:
    """The session document with an entry for the outcome `event` defines."""
    entries = [*(doc.get("outcome_evaluations") or []), outcome_entry(event)]
    return {**doc, "outcome_evaluations": entries, "updated_at": timestamp()}


def outcome_changed(doc: JSON, outcome_id: str, **fields: Any) -> JSON:
    """The session document with the outcome's entry updated (a terminal result gets
    its `completed_at`)."""
    if "result" in fields:
        read_choice(fields["result"], "result", RESULTS)
        if fields["result"] in TERMINAL:
            fields.setdefault("completed_at", timestamp())
    entries = [{**entry, **fields} if entry.get("outcome_id") == outcome_id else entry
               for entry in doc.get("outcome_evaluations") or []]
    return {**doc, "outcome_evaluations": entries, "updated_at": timestamp()}


def active_outcome(doc: Mapping[str, Any]) -> JSON | None:
    """The outcome the session works toward: the first not yet finished."""
    return next((dict(e) for e in doc.get("outcome_evaluations") or []
                 if e.get("result") not in TERMINAL), None)


def outcome_evaluation_start(outcome_id: str, iteration: int
                             ) -> SpanOutcomeEvaluationStartEvent:
    return {"id": new_id("sevt"), "type": "span.outcome_evaluation_start",
            "outcome_id": outcome_id, "iteration": iteration, "processed_at": timestamp()}


def outcome_evaluation_ongoing(outcome_id: str, iteration: int
                               ) -> SpanOutcomeEvaluationOngoingEvent:
    return {"id": new_id("sevt"), "type": "span.outcome_evaluation_ongoing",
            "outcome_id": outcome_id, "iteration": iteration, "processed_at": timestamp()}


def outcome_evaluation_end(start: Mapping[str, Any], result: str, explanation: str,
                           usage: Mapping[str, Any] | None = None
                           ) -> SpanOutcomeEvaluationEndEvent:
    """The verdict of the cycle `start` opened, with the grader's summed usage."""
    read_choice(result, "result", RESULTS)
    return {"id": new_id("sevt"), "type": "span.outcome_evaluation_end",
            "outcome_evaluation_start_id": start["id"], "outcome_id": start["outcome_id"],
            "iteration": start["iteration"], "result": result, "explanation": explanation,
            "usage": model_usage(usage), "processed_at": timestamp()}
