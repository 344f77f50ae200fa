"""How a session's turn ended, as the API reports it: a failed model request whose retries
are spent is `retries_exhausted` with a `session.error`; a model that refused (again,
after the engine's one retry: `wisp.engine.refusal`) is `refusal` with `stop_details`,
and no error; a budget spent is `budget_reached`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from wisp.jsontypes import JSON
from wisp.serve import shapes
from wisp.serve.projection import error_kind

if TYPE_CHECKING:
    from wisp.engine.outcome import Outcome
    from wisp.serve.driver import SessionDriver


def report_failure(driver: SessionDriver, outcome: Outcome) -> None:
    """A failed turn's `session.error` and stop reason."""
    from wisp.engine.outcome import ApiFailed

    error = error_of(outcome)
    if error is None:
        return
    assert driver.projection is not None
    if isinstance(outcome, ApiFailed) and driver.projection.refused:
        driver.projection.refused = False
        driver.stop_reason = "refusal"
        driver.stop_details = {"type": "refusal", "category": None,
                               "explanation": "The model's safeguards refused the response."}
    elif isinstance(outcome, ApiFailed):
        driver.projection.failed_request()
        driver.stop_reason = "retries_exhausted"
        driver.log.emit(shapes.session_error(*error, retry_status="exhausted"))
    else:
        driver.log.emit(shapes.session_error(*error))


def error_of(outcome: Outcome) -> tuple[str, str] | None:
    """(error type, message) of a turn that failed (an interrupt is no error)."""
    from wisp.engine.outcome import ApiFailed, Failed, api_error_text

    if isinstance(outcome, ApiFailed):
        return error_kind(outcome.error.status), api_error_text(outcome.error)
    if isinstance(outcome, Failed):
        return "unknown_error", outcome.message
    return None


def budget_hit(outcome: Outcome) -> bool:
    from wisp.engine.decide import BudgetExhausted
    from wisp.engine.outcome import LimitHit

    return isinstance(outcome, LimitHit) and isinstance(outcome.limit, BudgetExhausted)


def status_event(status: str, stop_reason: JSON | None) -> shapes.ServerEvent:
    """The event of a session's new status (`SessionDriver.set_status`)."""
    if status == "running":
        return shapes.status_running()
    if status == "rescheduling":
        return shapes.status_rescheduled()
    reason = stop_reason or {"type": "end_turn"}
    return shapes.status_idle(reason["type"], event_ids=reason.get("event_ids", ()),
                              stop_details=reason.get("stop_details"))
