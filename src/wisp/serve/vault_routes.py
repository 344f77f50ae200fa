"""The vault routes (`client.beta.vaults`, `.vaults.credentials`). Responses show
credential documents only: secrets live sealed beside them (`wisp.serve.vaults`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from wisp.serve import mcp_probe, shapes
from wisp.serve.http import EventStream, Request, Response, Router
from wisp.serve.shapes import vaults as vault_shapes
from wisp.serve.store.base import Store
from wisp.serve.store.offload import off_loop
from wisp.serve.vaults import VAULT, Vaults, credentials_kind

Route = Callable[[Request], Awaitable[Response | EventStream]]
_VAULTS = "/v1/vaults"
_VAULT = _VAULTS + "/{vault_id}"
_CREDENTIALS = _VAULT + "/credentials"
_CREDENTIAL = _CREDENTIALS + "/{credential_id}"


def add_routes(router: Router, store: Store, wrap: Callable[[Route], Route]) -> None:
    routes = _Routes(store)
    for method, path, handler in (
        ("POST", _VAULTS, routes.create_vault),
        ("GET", _VAULTS, routes.list_vaults),
        ("GET", _VAULT, routes.retrieve_vault),
        ("POST", _VAULT, routes.update_vault),
        ("DELETE", _VAULT, routes.delete_vault),
        ("POST", _VAULT + "/archive", routes.archive_vault),
        ("POST", _CREDENTIALS, routes.create_credential),
        ("GET", _CREDENTIALS, routes.list_credentials),
        ("GET", _CREDENTIAL, routes.retrieve_credential),
        ("POST", _CREDENTIAL, routes.update_credential),
        ("DELETE", _CREDENTIAL, routes.delete_credential),
        ("POST", _CREDENTIAL + "/archive", routes.archive_credential),
        ("POST", _CREDENTIAL + "/mcp_oauth_validate", routes.validate_credential),
    ):
        router.add(method, path, wrap(handler))


class _Routes:
    """Store calls run off the event loop (`off_loop`): see `wisp.serve.app`. A `Vaults`
    call is one hop, however many store calls it makes."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def _vaults(self, request: Request) -> Vaults:
        return Vaults(self.store, request.owner)

    async def _listing(self, kind: str, request: Request) -> Response:
        query = vault_shapes.list_query(request.query)
        page = await off_loop(self.store, self.store.list, kind, request.owner,
                              limit=query["limit"], page=query["page"],
                              include_archived=query["include_archived"])
        return Response(200, shapes.list_page(page.items, page.next_page))

    # Vaults ---------------------------------------------------------------------------

    async def create_vault(self, request: Request) -> Response:
        doc = vault_shapes.vault_create(request.json())
        await off_loop(self.store, self.store.create, VAULT, request.owner, doc)
        return Response(200, doc)

    async def list_vaults(self, request: Request) -> Response:
        return await self._listing(VAULT, request)

    async def retrieve_vault(self, request: Request) -> Response:
        return Response(200, await off_loop(self.store, self._vaults(request).found,
                                            request.params["vault_id"]))

    async def update_vault(self, request: Request) -> Response:
        return Response(200, await off_loop(self.store, self._vaults(request).update,
                                            request.params["vault_id"], request.json()))

    async def delete_vault(self, request: Request) -> Response:
        vault_id = request.params["vault_id"]
        await off_loop(self.store, self._vaults(request).delete, vault_id)
        return Response(200, {"id": vault_id, "type": "vault_deleted"})

    async def archive_vault(self, request: Request) -> Response:
        return Response(200, await off_loop(self.store, self._vaults(request).archive,
                                            request.params["vault_id"]))

    # Credentials ----------------------------------------------------------------------

    async def create_credential(self, request: Request) -> Response:
        doc = await off_loop(self.store, self._vaults(request).create_credential,
                             request.params["vault_id"], request.json())
        return Response(200, doc)

    async def list_credentials(self, request: Request) -> Response:
        vault_id = request.params["vault_id"]
        await off_loop(self.store, self._vaults(request).found, vault_id)
        return await self._listing(credentials_kind(vault_id), request)

    async def retrieve_credential(self, request: Request) -> Response:
        return Response(200, await off_loop(
            self.store, self._vaults(request).credential, request.params["vault_id"],
            request.params["credential_id"]))

    async def update_credential(self, request: Request) -> Response:
        return Response(200, await off_loop(
            self.store, self._vaults(request).update_credential, request.params["vault_id"],
            request.params["credential_id"], request.json()))

    async def delete_credential(self, request: Request) -> Response:
        credential_id = request.params["credential_id"]
        await off_loop(self.store, self._vaults(request).delete_credential,
                       request.params["vault_id"], credential_id)
        return Response(200, {"id": credential_id, "type": "vault_credential_deleted"})

    async def archive_credential(self, request: Request) -> Response:
        return Response(200, await off_loop(
            self.store, self._vaults(request).archive_credential, request.params["vault_id"],
            request.params["credential_id"]))

    async def validate_credential(self, request: Request) -> Response:
        """A live probe of the credential's MCP server (`initialize`, `tools/list`)."""
        vaults = self._vaults(request)
        vault_id = request.params["vault_id"]
        doc = await off_loop(self.store, vaults.credential, vault_id,
                             request.params["credential_id"])
        if doc["auth"]["type"] != "mcp_oauth":
            raise shapes.ShapeError("credential_id", "only an mcp_oauth credential is "
                                    "validated this way")
        status, probe = await mcp_probe.probe(vaults, doc)
        return Response(200, vault_shapes.validation(doc, status, probe))
