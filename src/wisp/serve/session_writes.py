"""The store work of the session routes (`wisp.serve.app`): creating a session, and
checking and logging a client's events. Synchronous, and touching no event-loop object,
so a request runs each of these off the event loop in one hop
(`wisp.serve.store.offload`); the caller wakes the session's followers afterwards.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from wisp.jsontypes import JSON
from wisp.serve import answers, outcomes, resources, shapes, threads
from wisp.serve.files import Files
from wisp.serve.http import HttpError
from wisp.serve.skills import Skills
from wisp.serve.store.base import Store
from wisp.serve.vaults import Vaults
from wisp.serve.work import WorkQueue


class SessionWrites:
    def __init__(self, store: Store, work: WorkQueue, files: Files | None) -> None:
        self.store = store
        self.work = work
        self.files = files

    def new_session(self, owner: str, body: Any, deployment_id: str | None = None
                    ) -> tuple[shapes.SessionDocument, bool]:
        """`Api.start_session`'s store work (it may run off the loop, see the module);
        whether it logged initial events (whose followers are then to be woken)."""
        fields = shapes.session_create(body)
        shapes.check_session_fields(fields)
        agent = self.agent_of(owner, fields["agent"])
        environment = self.store.get("environment", owner, fields["environment_id"])
        if environment is None:
            raise HttpError(404, "not_found_error",
                            f"environment {fields['environment_id']} not found",
                            details={"error_code": "environment_not_found"})
        if environment.get("archived_at"):
            raise HttpError(400, "invalid_request_error",
                            f"environment {environment['id']} is archived",
                            details={"error_code": "environment_archived"})
        latest = self.store.get("agent", owner, agent["id"]) or agent
        if latest.get("archived_at"):  # an archived agent's versions are archived too
            raise HttpError(400, "invalid_request_error", f"agent {agent['id']} is archived")
        fields["resources"] = resources.checked(self.store, owner, fields["resources"])
        Vaults(self.store, owner).check_session_vaults(fields.get("vault_ids") or [])
        snapshot = threads.session_roster(
            self.store, owner, environment,
            shapes.session_agent(agent, fields["agent"].get("overrides")))
        shapes.check_agent_fields(snapshot, "agent")
        Skills(self.store, owner).resolve_session(snapshot)
        doc = shapes.session_document(fields, snapshot, deployment_id=deployment_id)
        self.store.create("session", owner, doc)
        initial = fields.get("initial_events") or []
        if initial:
            self.log_client_events(owner, doc["id"], initial)
        self.offer_work(owner, doc, environment)
        return doc, bool(initial)

    def environment_of(self, owner: str, session: JSON) -> JSON | None:
        """The session's environment, for what its type decides. A document that cannot
        be read must not stop a client's events from being logged: the turn that needs
        it fails on it and reports that."""
        try:
            return self.store.get("environment", owner, str(session["environment_id"]))
        except json.JSONDecodeError:
            return None

    def offer_work(self, owner: str, session: Mapping[str, Any],
                   environment: JSON | None) -> None:
        """A self-hosted session needs a worker of its environment (the work queue)."""
        if ((environment or {}).get("config") or {}).get("type") == "self_hosted":
            self.work.offer(owner, str(session["environment_id"]), str(session["id"]))

    def agent_of(self, owner: str, ref: shapes.AgentRef) -> JSON:
        agent = self.store.get("agent", owner, ref["id"])
        if agent is not None and ref.get("version") not in (None, agent["version"]):
            agent = self.store.get("agent_version", owner, f"{ref['id']}@{ref['version']}")
        if agent is None:
            raise HttpError(404, "not_found_error", f"agent {ref['id']} not found")
        return agent

    def accept(self, owner: str, session: JSON, events: list[shapes.ClientEvent]
               ) -> list[JSON]:
        """Client events checked against the session and logged, and the session offered
        to its environment's workers (store work only: it runs off the loop)."""
        environment = self.environment_of(owner, session)
        answers.check(self.store, session["id"], environment, events)
        stored = self.log_client_events(owner, session["id"], events)
        self.offer_work(owner, session, environment)
        return stored

    def log_client_events(self, owner: str, session_id: str,
                          events: list[shapes.ClientEvent]) -> list[JSON]:
        """Client events into the log (queued, processed_at null): once this returns
        they are durable, whatever happens next (`_woken` then tells the worker)."""
        events = outcomes.with_rubric_text(self.files, owner, events)
        stored = self.store.append(session_id, [
            shapes.log_entry(shapes.client_event_record(e)) for e in events])
        outcomes.record(self.store, owner, session_id, stored)
        return stored
