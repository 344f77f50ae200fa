"""The deployments routes (`client.beta.deployments`, `client.beta.deployment_runs`):
create, list, retrieve, update, archive, pause, unpause, run now; runs listed (newest
first, every SDK filter applied) and retrieved.

A deployment is checked when saved as its sessions will be: the agent (pinned to its
latest version when named by id) and environment must exist and not be archived, and its
session body (initial events, resources, budget, vault ids) must be one
`POST /v1/sessions` accepts, so what would be refused at run time is a 400 now."""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from wisp.jsontypes import JSON
from wisp.serve import resources
from wisp.serve import shapes as common
from wisp.serve.deployments import KIND, RUNS, SessionStarter, fire, scheduled
from wisp.serve.http import EventStream, HttpError, Request, Response, Router
from wisp.serve.shapes import deployments as shapes
from wisp.serve.store.base import Store
from wisp.serve.store.offload import off_loop
from wisp.serve.vaults import Vaults

Route = Callable[[Request], Awaitable[Response | EventStream]]
# A change to a deployment as stored (None: leave it as it is); it raises to refuse.
DeploymentChange = Callable[[common.DeploymentDocument], common.DeploymentDocument | None]
_ONE = "/v1/deployments/{deployment_id}"


def add_routes(router: Router, store: Store, start: SessionStarter,
               wrap: Callable[[Route], Route]) -> None:
    routes = _Routes(store, start)
    for method, path, handler in (
        ("POST", "/v1/deployments", routes.create),
        ("GET", "/v1/deployments", routes.list),
        ("GET", _ONE, routes.retrieve),
        ("POST", _ONE, routes.update),
        ("POST", _ONE + "/archive", routes.archive),
        ("POST", _ONE + "/pause", routes.pause),
        ("POST", _ONE + "/unpause", routes.unpause),
        ("POST", _ONE + "/run", routes.run),
        ("GET", "/v1/deployment_runs", routes.list_runs),
        ("GET", "/v1/deployment_runs/{deployment_run_id}", routes.retrieve_run),
    ):
        router.add(method, path, wrap(handler))


def _invalid(message: str) -> HttpError:
    return HttpError(400, "invalid_request_error", message)


def _not_archived(doc: common.DeploymentDocument) -> common.DeploymentDocument:
    if doc.get("archived_at"):
        raise _invalid(f"deployment {doc['id']} is archived")
    return doc


def _run_matches(run: JSON, query: JSON) -> bool:
    return (query["deployment_id"] in (None, run["deployment_id"])
            and query["trigger_type"] in (None, run["trigger_context"]["type"])
            and (query["has_error"] is None or query["has_error"] == (run["error"] is not None))
            and common.created_within(run, query))


class _Routes:
    """Store calls run off the event loop (`off_loop`): see `wisp.serve.app`. The
    helpers below (`_found`, `_checked`, `_save`, …) are store work, each one hop."""

    def __init__(self, store: Store, start: SessionStarter) -> None:
        self.store = store
        self.start = start

    def _found(self, request: Request) -> common.DeploymentDocument:
        doc = self.store.get(KIND, request.owner, request.params["deployment_id"])
        if doc is None:
            raise HttpError(404, "not_found_error",
                            f"deployment {request.params['deployment_id']} not found")
        return common.as_deployment(doc)

    def _live(self, request: Request) -> common.DeploymentDocument:
        return _not_archived(self._found(request))

    def _checked(self, owner: str, fields: Mapping[str, Any]) -> None:
        """Pins the agent and checks what a run would need (400/404 naming it)."""
        ref = fields["agent"]
        agent = self.store.get("agent", owner, ref["id"])
        if agent is None:
            raise HttpError(404, "not_found_error", f"agent: agent {ref['id']} not found")
        if agent.get("archived_at"):
            raise _invalid(f"agent: agent {ref['id']} is archived")
        ref["version"] = ref["version"] or agent["version"]
        if self.store.get("agent_version", owner, f"{ref['id']}@{ref['version']}") is None:
            raise HttpError(404, "not_found_error",
                            f"agent: agent {ref['id']} version {ref['version']} not found")
        environment = self.store.get("environment", owner, fields["environment_id"])
        if environment is None:
            raise HttpError(404, "not_found_error",
                            f"environment_id: environment {fields['environment_id']} not found")
        if environment.get("archived_at"):
            raise _invalid(f"environment_id: environment {environment['id']} is archived")
        body = common.session_create(shapes.session_body(fields))
        common.check_session_fields(body)
        resources.checked(self.store, owner, body["resources"])
        Vaults(self.store, owner).check_session_vaults(body.get("vault_ids") or [])

    def _modified(self, request: Request, change: DeploymentChange) -> Response:
        """`change` made to the deployment as stored (`Store.modify`), so what the
        scheduler wrote meanwhile (`last_run_at`, a pause for a failed run) or another
        request did is kept; then its schedule entry follows it."""
        def locked(current: JSON) -> common.DeploymentDocument | None:
            return change(common.as_deployment(current))

        stored = self.store.modify(KIND, request.owner, request.params["deployment_id"],
                                   locked)
        if stored is None:
            raise HttpError(404, "not_found_error",
                            f"deployment {request.params['deployment_id']} not found")
        doc = common.as_deployment(stored)
        scheduled(self.store, request.owner, doc)
        return Response(200, shapes.with_schedule(doc))

    def _updated(self, request: Request) -> Response:
        """Checked as the deployment read now would be with the patch, then the patch
        made to it as stored (with the agent version the check pinned, when it names an
        agent)."""
        doc = self._live(request)
        patch = shapes.deployment_update(request.json())
        checked = shapes.deployment_updated(doc, copy.deepcopy(patch))
        self._checked(request.owner, checked)

        def change(current: common.DeploymentDocument) -> common.DeploymentDocument:
            new = shapes.deployment_updated(_not_archived(current), copy.deepcopy(patch))
            return {**new, "agent": checked["agent"]} if "agent" in patch else new

        return self._modified(request, change)

    def _created(self, owner: str, fields: shapes.DeploymentFields
                 ) -> common.DeploymentDocument:
        self._checked(owner, fields)
        doc = shapes.deployment_document(fields)
        self.store.create(KIND, owner, doc)
        scheduled(self.store, owner, doc)
        return doc

    async def create(self, request: Request) -> Response:
        fields = shapes.deployment_create(request.json())
        return Response(200, await off_loop(self.store, self._created, request.owner, fields))

    async def list(self, request: Request) -> Response:
        query = shapes.deployments_query(request.query)
        page = await off_loop(self.store, self.store.list, KIND, request.owner,
                              limit=query["limit"], page=query["page"],
                              include_archived=query["include_archived"])
        items = [shapes.with_schedule(common.as_deployment(d)) for d in page.items
                 if query["agent_id"] in (None, d["agent"]["id"])
                 and query["status"] in (None, d["status"])
                 and common.created_within(d, query)]
        return Response(200, common.list_page(items, page.next_page))

    async def retrieve(self, request: Request) -> Response:
        return Response(200, shapes.with_schedule(await off_loop(self.store, self._found,
                                                                 request)))

    async def update(self, request: Request) -> Response:
        return await off_loop(self.store, self._updated, request)

    async def archive(self, request: Request) -> Response:
        def archive_once(current: common.DeploymentDocument
                         ) -> common.DeploymentDocument | None:
            if current.get("archived_at"):
                return None
            # Archived deployments report `active`, with `archived_at` set.
            return shapes.with_schedule({**common.archived(current), "status": "active",
                                         "paused_reason": None})

        return await off_loop(self.store, self._modified, request, archive_once)

    async def pause(self, request: Request) -> Response:
        def paused(current: common.DeploymentDocument) -> common.DeploymentDocument:
            return {**_not_archived(current), "status": "paused",
                    "paused_reason": {"type": "manual"}, "updated_at": common.timestamp()}

        return await off_loop(self.store, self._modified, request, paused)

    async def unpause(self, request: Request) -> Response:
        def unpaused(current: common.DeploymentDocument) -> common.DeploymentDocument:
            return {**_not_archived(current), "status": "active", "paused_reason": None,
                    "updated_at": common.timestamp()}

        return await off_loop(self.store, self._modified, request, unpaused)

    async def run(self, request: Request) -> Response:
        """Now, whether the deployment is paused or not (a pause stops its schedule)."""
        doc = await off_loop(self.store, self._live, request)
        # `start` may be called off the loop: the API's wakes the session on the loop.
        return Response(200, await off_loop(self.store, fire, self.store, request.owner, doc,
                                            {"type": "manual"}, self.start))

    async def list_runs(self, request: Request) -> Response:
        query = shapes.runs_query(request.query)
        page = await off_loop(self.store, self.store.list, RUNS, request.owner,
                              limit=query["limit"], page=query["page"])
        items = [run for run in page.items if _run_matches(run, query)]
        return Response(200, common.list_page(items, page.next_page))

    async def retrieve_run(self, request: Request) -> Response:
        run = await off_loop(self.store, self.store.get, RUNS, request.owner,
                             request.params["deployment_run_id"])
        if run is None:
            raise HttpError(404, "not_found_error", "deployment run "
                            f"{request.params['deployment_run_id']} not found")
        return Response(200, run)
