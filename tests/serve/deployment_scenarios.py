"""What the deployment tests do through the official `anthropic` SDK, on whichever store
the service runs on (SQLite in tests/serve, PostgreSQL in tests/serve/pg): deployments
made, listed, updated, paused, run now and archived, their runs listed with every
filter; and a run fired by the service's own scheduler."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from tests.serve.harness import anthropic, cloud_setup, user_message, wait_for
from tests.serve.test_sdk_settings import idled, refused
from wisp.testing import ScriptedServer, reply

JSON = dict[str, Any]
WEEKDAYS = {"type": "cron", "expression": "0 9 * * 1-5", "timezone": "Europe/Oslo"}


def prompted(server: ScriptedServer, text: str) -> bool:
    return any(text in str(r.body.get("messages")) for r in server.requests)


def deployments_api(server: ScriptedServer, client: Any) -> None:
    server.script(reply.text("report written"))
    deployments, runs = client.beta.deployments, client.beta.deployment_runs
    agent, environment = cloud_setup(client)
    made = deployments.create(name="nightly", agent=agent.id, environment_id=environment.id,
                              initial_events=[user_message("write the report")],
                              schedule=WEEKDAYS, metadata={"team": "a"})
    assert (made.type, made.status, made.paused_reason, made.archived_at) == (
        "deployment", "active", None, None)
    assert made.agent.id == agent.id and made.agent.version == agent.version
    assert made.schedule is not None and made.schedule.last_run_at is None
    upcoming = made.schedule.upcoming_runs_at or []
    assert len(upcoming) == 5 and all(t.minute == 0 and t.weekday() < 5 for t in upcoming)
    updated = deployments.update(made.id, description="daily", metadata={"team": None})
    assert (updated.description, updated.metadata, updated.name) == ("daily", {}, "nightly")
    paused = deployments.pause(made.id)
    assert paused.status == "paused" and paused.paused_reason is not None
    assert paused.paused_reason.type == "manual"
    assert [d.id for d in deployments.list(status="paused")] == [made.id]
    run = deployments.run(made.id)  # a manual run goes ahead while paused
    assert run.session_id is not None and run.error is None
    assert run.trigger_context.type == "manual" and run.deployment_id == made.id
    events = wait_for(client, run.session_id, idled("end_turn"))
    assert any(e["type"] == "agent.message" for e in events)
    assert prompted(server, "write the report")
    session = client.beta.sessions.retrieve(run.session_id)
    assert session.deployment_id == made.id
    assert [s.id for s in client.beta.sessions.list(deployment_id=made.id)] == [session.id]
    assert deployments.unpause(made.id).status == "active"
    failed = failing_run(client, agent)
    assert [r.id for r in runs.list(deployment_id=made.id)] == [run.id]
    assert [r.id for r in runs.list(has_error=True)] == [failed.id]
    assert [r.id for r in runs.list(has_error=False)] == [run.id]
    assert [r.id for r in runs.list(trigger_type="schedule")] == []
    assert runs.retrieve(run.id).session_id == run.session_id
    refusals(client, agent, environment, made.id)
    archived = deployments.archive(made.id)
    assert archived.archived_at is not None and archived.status == "active"
    assert archived.schedule is not None and archived.schedule.upcoming_runs_at == []
    assert made.id not in [d.id for d in deployments.list()]
    assert made.id in [d.id for d in deployments.list(include_archived=True)]
    refused(lambda: deployments.run(made.id), "archived")
    refused(lambda: deployments.update(made.id, name="x"), "archived")


def failing_run(client: Any, agent: Any) -> Any:
    """A deployment whose environment was archived since: its run records the error."""
    environment = client.beta.environments.create(name="gone", config={"type": "cloud"})
    doomed = client.beta.deployments.create(
        name="doomed", agent={"type": "agent", "id": agent.id, "version": agent.version},
        environment_id=environment.id, initial_events=[user_message("never")])
    client.beta.environments.archive(environment.id)
    failed = client.beta.deployments.run(doomed.id)
    assert failed.session_id is None and failed.error is not None
    assert failed.error.type == "environment_archived_error"
    assert client.beta.deployments.retrieve(doomed.id).status == "active"  # manual: no pause
    return failed


def refusals(client: Any, agent: Any, environment: Any, deployment_id: str) -> None:
    deployments = client.beta.deployments
    create: Callable[..., Any] = deployments.create
    with pytest.raises(anthropic.NotFoundError):
        create(name="x", agent="agent_missing", environment_id=environment.id,
               initial_events=[])
    refused(lambda: create(name="x", agent=agent.id, environment_id=environment.id,
                           initial_events=[], schedule={**WEEKDAYS, "expression": "0 9 *"}),
            "schedule.expression")
    refused(lambda: create(name="x", agent=agent.id, environment_id=environment.id,
                           initial_events=[], schedule={**WEEKDAYS, "timezone": "Mars/Base"}),
            "Mars/Base")
    refused(lambda: create(name="x", agent=agent.id, environment_id=environment.id,
                           initial_events=[], vault_ids=["vlt_1"]), "vault_ids[0]", "not found")
    refused(lambda: deployments.list(status="paused", include_archived=True), "status")
    refused(lambda: client.beta.deployment_runs.list(extra_query={"session_id": "x"}),
            "session_id")
    with pytest.raises(anthropic.NotFoundError):
        deployments.pause("depl_missing")
    assert deployments.retrieve(deployment_id).status == "active"


def scheduled_run(server: ScriptedServer, client: Any, timeout: float = 90) -> None:
    """An every-minute schedule: the service fires it at the next minute, once; another
    one whose environment was archived records the error and is paused."""
    server.script(reply.text("scheduled report"))
    agent, environment = cloud_setup(client)
    minutely = {"type": "cron", "expression": "* * * * *", "timezone": "UTC"}
    made = client.beta.deployments.create(
        name="minutely", agent=agent.id, environment_id=environment.id,
        initial_events=[user_message("the scheduled prompt")], schedule=minutely)
    gone = client.beta.environments.create(name="gone", config={"type": "cloud"})
    doomed = client.beta.deployments.create(
        name="doomed", agent=agent.id, environment_id=gone.id,
        initial_events=[user_message("never")], schedule=minutely)
    client.beta.environments.archive(gone.id)
    deadline = time.monotonic() + timeout
    found: list[Any] = []
    while not found and time.monotonic() < deadline:
        time.sleep(0.5)
        found = list(client.beta.deployment_runs.list(deployment_id=made.id))
    assert found, "no scheduled run within the timeout"
    time.sleep(2)  # time for a second replica (if any) to fire the same occurrence
    [run] = list(client.beta.deployment_runs.list(deployment_id=made.id))
    assert run.trigger_context.type == "schedule" and run.error is None
    scheduled_at = run.trigger_context.scheduled_at
    assert scheduled_at.second == 0 and scheduled_at.microsecond == 0
    assert run.session_id is not None
    wait_for(client, run.session_id, idled("end_turn"))
    assert prompted(server, "the scheduled prompt")
    after = client.beta.deployments.retrieve(made.id)
    assert after.schedule is not None and after.schedule.last_run_at is not None
    client.beta.deployments.archive(made.id)
    [failed] = list(client.beta.deployment_runs.list(deployment_id=doomed.id))
    assert failed.error is not None and failed.error.type == "environment_archived_error"
    paused = client.beta.deployments.retrieve(doomed.id)  # a failed scheduled run pauses it
    assert paused.status == "paused" and paused.paused_reason is not None
    assert paused.paused_reason.type == "error"
    client.beta.deployments.archive(doomed.id)
