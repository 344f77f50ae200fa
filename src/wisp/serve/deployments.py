"""Deployments: an agent bound to what its sessions start with, run now (`fire`, a
`manual` run) or on its cron schedule (`Scheduler`, a `schedule` run).

A run creates a session through the same path as `POST /v1/sessions` (`SessionStarter`)
and records a deployment run: the session's id, or the error that stopped it (typed as
the API types them: `agent_archived_error`, `environment_not_found_error`, …). A
scheduled run that fails on such an error pauses its deployment (`paused_reason:
{type: "error", error}`); a manual one does not.

Scheduling is the service's own, on either store: each scheduled deployment has an entry
(kind `deployment_schedule`, under the service's own owner `SERVICE`) with the next time
it is due. Every API process runs a `Scheduler` that looks at the entries every few
seconds; a due occurrence is claimed first (a `deployment_fire` document whose id is the
deployment and the occurrence: the store's unique key lets one process create it), so
however many replicas run, at most one run is recorded per (deployment, scheduled time).
Occurrences missed while no process ran are not made up: the next one after now is due.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from wisp.jsontypes import JSON
from wisp.serve.cron import Cron
from wisp.serve.http import HttpError
from wisp.serve.shapes import (
    AgentReference,
    DeploymentDocument,
    DeploymentRunDocument,
    SessionDocument,
    as_deployment,
)
from wisp.serve.shapes import deployments as shapes
from wisp.serve.skills import Skills
from wisp.serve.store.base import Store, every
from wisp.serve.store.offload import off_loop

KIND = "deployment"
RUNS = "deployment_run"
SCHEDULE = "deployment_schedule"
FIRE = "deployment_fire"
SERVICE = "wisp-service"  # no API key's owner hash looks like this
# (owner, POST /v1/sessions body, deployment id) -> the session; HttpError when refused.
# Called off the event loop (a run is store work), so it must be safe on another thread.
SessionStarter = Callable[[str, JSON, str], SessionDocument]
# Run errors a scheduled run pauses its deployment for (the paused reasons the API has).
_PAUSING = frozenset({"environment_archived_error", "agent_archived_error",
                      "environment_not_found_error", "file_not_found_error",
                      "memory_store_archived_error", "skill_not_found_error",
                      "unknown_error"})


def error(kind: str, message: str) -> JSON:
    return {"type": kind, "message": message}


def _problem(store: Store, owner: str, deployment: DeploymentDocument) -> JSON | None:
    """Why a session of this deployment cannot start, in the run error's terms."""
    return (_agent_problem(store, owner, deployment["agent"])
            or _environment_problem(store, owner, deployment["environment_id"])
            or _resource_problem(store, owner, deployment.get("resources") or []))


def _agent_problem(store: Store, owner: str, ref: AgentReference) -> JSON | None:
    agent = store.get("agent", owner, ref["id"])
    if agent is None or agent.get("archived_at"):
        return error("agent_archived_error", f"agent {ref['id']} is archived or gone")
    pinned = store.get("agent_version", owner, f"{ref['id']}@{ref['version']}") or agent
    skills = Skills(store, owner)
    for entry in pinned.get("skills") or []:
        try:
            skills.version(entry["skill_id"], entry["version"])
        except HttpError:
            return error("skill_not_found_error", f"skill {entry['skill_id']} not found")
    return None


def _environment_problem(store: Store, owner: str, environment_id: str) -> JSON | None:
    environment = store.get("environment", owner, environment_id)
    if environment is None:
        return error("environment_not_found_error", f"environment {environment_id} not found")
    if environment.get("archived_at"):
        return error("environment_archived_error", f"environment {environment_id} is archived")
    return None


def _resource_problem(store: Store, owner: str, resources: list[JSON]) -> JSON | None:
    for resource in resources:
        if resource["type"] == "file" and store.get("file", owner, resource["file_id"]) is None:
            return error("file_not_found_error", f"file {resource['file_id']} not found")
        if resource["type"] == "memory_store":
            doc = store.get("memory_store", owner, resource["memory_store_id"])
            if doc is None or doc.get("archived_at"):
                return error("memory_store_archived_error",
                             f"memory store {resource['memory_store_id']} is archived or gone")
    return None


def fire(store: Store, owner: str, deployment: DeploymentDocument, trigger: JSON,
         start: SessionStarter) -> DeploymentRunDocument:
    """One run: the session started, or the error; the run is recorded either way."""
    problem = _problem(store, owner, deployment)
    session_id = None
    if problem is None:
        try:
            session_id = str(start(owner, shapes.session_body(deployment), deployment["id"])["id"])
        except HttpError as exc:
            problem = error("session_creation_rejected_error", exc.message)
        except ValueError as exc:  # a ShapeError: the body no longer passes
            problem = error("session_creation_rejected_error", str(exc))
    run = shapes.run_document(deployment, trigger, session_id=session_id, error=problem)
    store.create(RUNS, owner, run)
    return run


# Schedules ------------------------------------------------------------------------------

def scheduled(store: Store, owner: str, deployment: DeploymentDocument, *,
              again: bool = True) -> None:
    """Keeps the deployment's schedule entry in line with it as stored now (none when
    archived, deleted or unscheduled; a paused one keeps its entry and is skipped when
    due). Read again here, not taken from the caller: of two requests' calls, the later
    one then writes what the later state asks for (the scheduler brings an entry that
    still lost that race in line when it comes due)."""
    stored = store.get(KIND, owner, deployment["id"])
    current = None if stored is None else as_deployment(stored)
    entry = store.get(SCHEDULE, SERVICE, deployment["id"])
    schedule = None if current is None else current.get("schedule")
    if current is None or not schedule or current.get("archived_at"):
        if entry is not None:
            store.delete(SCHEDULE, SERVICE, deployment["id"])
        return
    due = Cron.parse(schedule["expression"], schedule["timezone"]).after(datetime.now(UTC))
    new = {"id": current["id"], "owner": owner, "created_at": current["created_at"],
           "due_at": None if due is None else shapes.stamp(due), "cron": cron_of(current)}
    if entry is None:
        if not _created(store, new) and again:  # another request's came first
            scheduled(store, owner, deployment, again=False)
    elif entry.get("cron") != new["cron"]:
        store.update(SCHEDULE, SERVICE, deployment["id"], new)


def cron_of(deployment: Mapping[str, Any]) -> list[str] | None:
    """What a schedule entry keeps of the deployment's schedule (None: unscheduled)."""
    schedule = deployment.get("schedule")
    return [schedule["expression"], schedule["timezone"]] if schedule else None


def _created(store: Store, entry: JSON) -> bool:
    """Whether this created the entry; False when another request's did first (two
    updates that both scheduled an unscheduled deployment)."""
    try:
        store.create(SCHEDULE, SERVICE, entry)
    except Exception:
        if store.get(SCHEDULE, SERVICE, entry["id"]) is None:
            raise
        return False
    return True


def _claimed(store: Store, fire_id: str) -> bool:
    """Whether this process won the occurrence (the unique key decides)."""
    try:
        store.create(FIRE, SERVICE, {"id": fire_id, "created_at": shapes.stamp(
            datetime.now(UTC))})
    except Exception:
        if store.get(FIRE, SERVICE, fire_id) is not None:
            return False  # another process created it first
        raise
    return True


class Scheduler:
    """Looks every `WISP_SERVE_SCHEDULE_POLL_S` seconds (5) for due occurrences."""

    def __init__(self, store: Store, start: SessionStarter, *,
                 env: Mapping[str, str] | None = None,
                 clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self.store = store
        self.start_session = start
        self.poll_s = float((env or {}).get("WISP_SERVE_SCHEDULE_POLL_S") or 5.0)
        self.clock = clock
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.ensure_future(self._loop())

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _loop(self) -> None:
        while True:
            try:  # off the event loop: a step is many store calls
                await off_loop(self.store, self.step)
            except Exception as exc:  # the entries stay; the next look tries again
                print(f"wisp serve: deployment scheduler error: {exc!r}", file=sys.stderr)
            await asyncio.sleep(self.poll_s)

    def step(self) -> list[DeploymentRunDocument]:
        """Fires every entry due now; answers the runs recorded."""
        now = self.clock()
        runs: list[DeploymentRunDocument] = []
        for entry in every(self.store, SCHEDULE, SERVICE, order="asc"):
            if entry.get("due_at") and entry["due_at"] <= shapes.stamp(now):
                runs += self._due(entry, now)
        return runs

    def _due(self, entry: JSON, now: datetime) -> list[DeploymentRunDocument]:
        owner, due_at = str(entry["owner"]), str(entry["due_at"])
        cron = Cron.parse(*entry["cron"])
        following = cron.after(now)

        def advanced(current: JSON) -> JSON | None:
            if current.get("due_at") != due_at:
                return None  # moved on since it was read (a new cron, another scheduler)
            return {**current, "due_at": None if following is None else shapes.stamp(following)}

        self.store.modify(SCHEDULE, SERVICE, entry["id"], advanced)
        stored = self.store.get(KIND, owner, entry["id"])
        deployment = None if stored is None else as_deployment(stored)
        if deployment is None or deployment.get("archived_at"):
            self.store.delete(SCHEDULE, SERVICE, entry["id"])
            return []
        if cron_of(deployment) != entry["cron"]:
            # Written for an earlier state of the deployment (two updates' schedule
            # writes landed out of order): brought in line with it, and this occurrence,
            # which the deployment no longer asks for, is not run.
            scheduled(self.store, owner, deployment)
            return []
        if deployment["status"] == "paused" or not _claimed(
                self.store, f"{entry['id']}@{due_at}"):
            return []
        run = fire(self.store, owner, deployment, {"type": "schedule", "scheduled_at": due_at},
                   self.start_session)
        self._after_run(owner, deployment, run)
        return [run]

    def _after_run(self, owner: str, deployment: DeploymentDocument,
                   run: DeploymentRunDocument) -> None:
        def ran(current: JSON) -> JSON:
            new = dict(current)
            if current.get("schedule"):  # (the API may have unscheduled it meanwhile)
                new["schedule"] = {**current["schedule"], "last_run_at": run["created_at"]}
            if run["error"] is not None and run["error"]["type"] in _PAUSING:
                new.update(status="paused", paused_reason={"type": "error",
                                                           "error": run["error"]})
            return new

        # Merged into the deployment as stored: an update the API made meanwhile is kept.
        self.store.modify(KIND, owner, deployment["id"], ran)
