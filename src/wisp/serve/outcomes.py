"""Outcomes: a session working toward a `user.define_outcome`, graded after each turn.

The event starts a turn whose prompt is the outcome's description and rubric. When the
agent's turn ends, the grader (`wisp.serve.grader`, a separate model request) scores the
transcript, between `span.outcome_evaluation_start` and `span.outcome_evaluation_end`:
- `satisfied` or `failed`: done, the session idles;
- `needs_revision`: the agent gets the grader's explanation as its next prompt and works
  on; its turn is graded again (iteration + 1);
- still unmet at the outcome's `max_iterations`-th evaluation: `max_iterations_reached`,
  then one last turn in which the agent acknowledges it, with no further evaluation.
An interrupt ends the outcome `interrupted` (while grading, the grader's request is
dropped); a failed or budget-stopped turn ends it `failed`, explained.

The state lives in the session document's `outcome_evaluations` entry (`result`,
`iteration`), and the outcome's rubric and `max_iterations` in its logged event, so a
worker that resumes a session after a crash takes the outcome up where it was.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from wisp.jsontypes import JSON
from wisp.serve import grader, shapes
from wisp.serve.shapes import ClientEvent, TurnStarter
from wisp.serve.shapes import outcomes as outcome_shapes

if TYPE_CHECKING:
    from wisp.engine.outcome import Outcome
    from wisp.serve.driver import SessionDriver
    from wisp.serve.files import Files
    from wisp.serve.shapes.client_events import DefineOutcomeEvent
    from wisp.serve.store.base import Store

# A `span.outcome_evaluation_ongoing` this often while the grader works (seconds).
ONGOING_ENV = "WISP_SERVE_OUTCOME_HEARTBEAT_S"
ONGOING_S = 10.0
OUTCOME = "user.define_outcome"


def task(event: Mapping[str, Any]) -> list[JSON]:
    """The agent's prompt for the outcome `event` defines."""
    rubric = (event.get("rubric") or {}).get("content") or ""
    return [{"type": "text", "text": (
        f"{event.get('description')}\n\nYour work will be graded against this rubric; "
        f"meet every criterion:\n<rubric>\n{rubric}\n</rubric>")}]


def revision(explanation: str) -> list[JSON]:
    return [{"type": "text", "text": (
        "A grader evaluated your work against the rubric and it needs revision:\n"
        f"{explanation}\n\nRevise the work so that it meets every criterion.")}]


def last_word(explanation: str) -> list[JSON]:
    return [{"type": "text", "text": (
        "The evaluation budget for this outcome is spent and the rubric is still not "
        f"met. The grader's last explanation:\n{explanation}\n\nDo not continue the work: "
        "briefly acknowledge this and summarise what is still missing.")}]


def _ongoing_s() -> float:
    try:
        return max(0.05, float(os.environ.get(ONGOING_ENV, ONGOING_S)))
    except ValueError:
        return ONGOING_S


class Outcomes:
    """One driver's outcomes (see the module docstring)."""

    def __init__(self, driver: SessionDriver) -> None:
        self.driver = driver
        self.grading: asyncio.Task[grader.Verdict] | None = None

    def begin(self, event: DefineOutcomeEvent) -> list[JSON]:
        """The outcome's turn starts: its entry is `running`; the prompt to send."""
        self._change(event["outcome_id"], result="running")
        return task(event)

    async def stop(self, why: str, result: str = "failed") -> None:
        """The outcome under way ends here (`failed` or `interrupted`), explained."""
        active = await self._active()
        if active is not None and active["result"] != "pending":
            self._change(active["outcome_id"], result=result, explanation=why)

    def dropped(self, events: Sequence[TurnStarter]) -> None:
        """Outcomes an interrupt dropped before they began."""
        for event in events:
            if event["type"] == "user.define_outcome":
                self._change(event["outcome_id"], result="interrupted",
                             explanation="interrupted before the agent began work")

    async def ungraded(self) -> bool:
        """Whether an outcome is under way (its turn over, a crash cut its grading)."""
        active = await self._active()
        return active is not None and active["result"] in ("running", "evaluating")

    def interrupt(self) -> None:
        if self.grading is not None:
            self.grading.cancel()

    async def pursue(self, ended: Outcome | None) -> None:
        """After a turn: grade it while an outcome is under way, and revise."""
        while (active := await self._active()) is not None and active["result"] != "pending":
            if not await self._graded_turn(ended):
                return
            explanation, again = await self._evaluate(active)
            if again is None:
                return
            if not await self.driver.within_budget():
                await self.stop("the session's budget was reached")
                return
            ended = await self.driver.once(again(explanation))
            if again is last_word:
                return

    async def _graded_turn(self, ended: Outcome | None) -> bool:
        """Whether the turn ended so that it may be graded; else the outcome ends."""
        from wisp.engine.outcome import (
            Aborted,
            ApiFailed,
            Failed,
            LimitHit,
            StructuredRetriesExhausted,
        )

        if isinstance(ended, Aborted):
            await self.stop("the agent's turn was interrupted", "interrupted")
        elif isinstance(ended, LimitHit):
            await self.stop("the session's budget was reached")
        elif ended is None or isinstance(ended, (ApiFailed, Failed,
                                                 StructuredRetriesExhausted)):
            await self.stop("the agent's turn failed (see the session's errors)")
        else:
            return True
        return False

    async def _evaluate(self, active: JSON) -> tuple[str, Any]:
        """One evaluation cycle: its spans, the entry's new state, and what the agent is
        told next (None: nothing, the outcome is over)."""
        outcome_id, iteration = str(active["outcome_id"]), int(active["iteration"])
        event = await self.driver.log.call(functools.partial(
            outcome_event, self.driver.store, self.driver.session_id, outcome_id))
        self._change(outcome_id, result="evaluating")
        [start] = self.driver.log.emit(outcome_shapes.outcome_evaluation_start(
            outcome_id, iteration))
        verdict = await self._verdict(event, outcome_id, iteration)
        result = verdict.result
        if result == "needs_revision" and iteration + 1 >= int(event["max_iterations"]):
            result = "max_iterations_reached"
        self.driver.log.emit(outcome_shapes.outcome_evaluation_end(
            start, result, verdict.explanation, verdict.usage))
        if verdict.usage and self.driver.projection is not None:
            # The grader's cost is the session's: in its usage, and in the ledger the
            # budget of the turn's next model requests is checked against.
            self.driver.projection.usages.append(verdict.usage)
            session = (await self.driver.opened()).session
            session.usage.add(session.model, verdict.usage)
        if result == "needs_revision":
            self._change(outcome_id, result="running", iteration=iteration + 1,
                         explanation=verdict.explanation)
            return verdict.explanation, revision
        self._change(outcome_id, result=result, explanation=verdict.explanation)
        return verdict.explanation, last_word if result == "max_iterations_reached" else None

    async def _verdict(self, event: JSON, outcome_id: str, iteration: int) -> grader.Verdict:
        """The grader's verdict, heartbeats while it works; an interrupt or a failed
        request is a verdict too (`interrupted`, `failed`)."""
        from wisp.errors import ModelAPIError

        runtime = await self.driver.opened()
        asked = grader.request(runtime.session.model, str(event["description"]),
                               str((event.get("rubric") or {}).get("content") or ""),
                               list(runtime.conversation))
        self.grading = asyncio.ensure_future(grader.grade_retrying(*runtime.side_model, asked))
        try:
            while True:
                done, _ = await asyncio.wait({self.grading}, timeout=_ongoing_s())
                if done:
                    return self.grading.result()
                self.driver.log.emit(outcome_shapes.outcome_evaluation_ongoing(
                    outcome_id, iteration))
        except asyncio.CancelledError:
            if not self.grading.cancelled():
                raise  # the turn itself is cancelled (the session is let go)
            return grader.Verdict("interrupted", "interrupted while the grader worked")
        except ModelAPIError as exc:
            self.driver.log.emit(shapes.session_error(
                "model_request_failed_error", f"the outcome grader's request failed: "
                f"{exc.message}"))
            return grader.Verdict("failed", f"the grader could not run: {exc.message}")
        finally:
            grading, self.grading = self.grading, None
            if not grading.done():
                grading.cancel()
                with contextlib.suppress(BaseException):
                    await grading

    # The session's state ------------------------------------------------------------------

    async def _active(self) -> JSON | None:
        if self.driver.billed_to != self.driver.session_id:
            return None  # a session thread: outcomes are its session's
        doc = await self.driver.log.call(self.driver.document)  # after queued `_change`s
        return None if doc is None else outcome_shapes.active_outcome(doc)

    def _change(self, outcome_id: str, **fields: Any) -> None:
        """Queued with the driver's writes (`SessionLog.later`): made off the loop, in
        order with them and before `_active`'s next read."""
        store, session_id = self.driver.store, self.driver.session_id

        def change() -> None:
            owner = store.owner_of("session", session_id)
            if owner is not None:  # one locked read-modify-write: no other write is lost
                store.modify("session", owner, session_id, lambda doc: (
                    outcome_shapes.outcome_changed(doc, outcome_id, **fields)))
        self.driver.log.later(change)


def outcome_event(store: Store, session_id: str, outcome_id: str) -> JSON:
    """The outcome's `user.define_outcome` as logged (its rubric, max_iterations). A
    store call (it runs off the event loop, in order with the driver's writes: `_evaluate`
    reads it through the log's `call`); the log may be long."""
    page = store.events(session_id, limit=1000, page=None, types=[OUTCOME], order="desc")
    return next((e for e in page.items if e.get("outcome_id") == outcome_id),
                {"description": "", "rubric": {}, "max_iterations": 1})


# The API's side: outcomes as they are defined ------------------------------------------

RUBRIC_CHARS = 262_144  # the API's maximum for a rubric's text


def with_rubric_text(files: Files | None, owner: str,
                     events: list[ClientEvent]) -> list[ClientEvent]:
    """`events` with each outcome's file rubric resolved to its text content (as the API
    does: the echo carries a text rubric). 404 for a file that is not the owner's."""
    resolved: list[ClientEvent] = []
    for index, event in enumerate(events):
        if event["type"] == "user.define_outcome" and event["rubric"].get("type") == "file":
            text = _file_text(files, owner, str(event["rubric"]["file_id"]),
                              f"events[{index}].rubric.file_id")
            resolved.append({**event, "rubric": {"type": "text", "content": text}})
        else:
            resolved.append(event)
    return resolved


def _file_text(files: Files | None, owner: str, file_id: str, where: str) -> str:
    if files is None:
        raise shapes.ShapeError(where, "file rubrics need the Files API (a data folder)")
    doc = files.found(owner, file_id)
    try:
        with open(str(doc["path"]), encoding="utf-8") as handle:
            text = handle.read(RUBRIC_CHARS + 1)
    except (OSError, UnicodeDecodeError):
        raise shapes.ShapeError(where, "the rubric file is not readable text") from None
    if len(text) > RUBRIC_CHARS:
        raise shapes.ShapeError(where, f"a rubric may be at most {RUBRIC_CHARS} characters")
    return text


def record(store: Store, owner: str, session_id: str, stored: list[JSON]) -> None:
    """The session's `outcome_evaluations` entries (`pending`) for outcomes just logged."""
    defined = [e for e in shapes.stored_client_events(stored)
               if e["type"] == "user.define_outcome"]
    if not defined:
        return

    def added(doc: JSON) -> JSON:
        for event in defined:
            doc = outcome_shapes.outcome_added(doc, event)
        return doc

    # One locked read-modify-write: the worker's usage and status writes are kept.
    store.modify("session", owner, session_id, added)
