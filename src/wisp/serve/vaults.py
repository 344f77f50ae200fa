"""Vaults and their credentials: what the vault routes and a session's MCP connections
both act through.

A vault is a document of kind `vault`; its credentials are documents of kind
`vault_credential:<vault id>` and their sealed secrets documents of kind
`vault_secret:<vault id>` under the credential's id, so a response, which shows the
credential document, can never carry a secret. A secret is written before its
credential (a crash in between leaves a secret nothing points at, never a credential
without one), and dropped when its credential is archived: an archived credential
cannot be used again, and its secret has no reason to stay.

A vault holds at most one active credential per MCP server URL: which one a session
uses is never a guess.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from wisp.jsontypes import JSON
from wisp.serve import sealing, shapes
from wisp.serve.exclusive import exclusive
from wisp.serve.http import HttpError
from wisp.serve.shapes import vaults as vault_shapes
from wisp.serve.store.base import Store, every

VAULT = "vault"
UPDATE_LEASE = "vault_credential_update:"  # + credential id: the lease of its updates
CREATE_LEASE = "vault_credential_create:"  # + vault id: the lease of its creates


def credentials_kind(vault_id: str) -> str:
    return f"vault_credential:{vault_id}"


def secrets_kind(vault_id: str) -> str:
    return f"vault_secret:{vault_id}"


def _no_key(exc: sealing.SealingError) -> HttpError:
    return HttpError(400, "invalid_request_error", str(exc))


def _not_archived(doc: shapes.VaultDocument) -> shapes.VaultDocument:
    if doc.get("archived_at"):
        raise HttpError(400, "invalid_request_error", f"vault {doc['id']} is archived: "
                        "its credentials cannot be created or changed")
    return doc


def _not_archived_credential(doc: shapes.CredentialDocument) -> shapes.CredentialDocument:
    if doc.get("archived_at"):
        raise HttpError(400, "invalid_request_error", f"credential {doc['id']} is archived")
    return doc


class Vaults:
    def __init__(self, store: Store, owner: str) -> None:
        self.store = store
        self.owner = owner

    def _all(self, kind: str) -> Iterator[JSON]:
        return every(self.store, kind, self.owner, order="asc", include_archived=True)

    # Vaults ---------------------------------------------------------------------------

    def found(self, vault_id: str) -> shapes.VaultDocument:
        doc = self.store.get(VAULT, self.owner, vault_id)
        if doc is None:
            raise HttpError(404, "not_found_error", f"vault {vault_id} not found")
        return shapes.as_vault(doc)

    def writable(self, vault_id: str) -> shapes.VaultDocument:
        return _not_archived(self.found(vault_id))

    def update(self, vault_id: str, body: object) -> shapes.VaultDocument:
        """`POST /v1/vaults/{id}`, made to the vault as stored (`Store.modify`): a
        concurrent update or archive is neither lost nor undone."""
        def change(stored: JSON) -> shapes.VaultDocument:
            return vault_shapes.vault_updated(_not_archived(shapes.as_vault(stored)), body)

        stored = self.store.modify(VAULT, self.owner, vault_id, change)
        if stored is None:
            raise HttpError(404, "not_found_error", f"vault {vault_id} not found")
        return shapes.as_vault(stored)

    def archive(self, vault_id: str) -> shapes.VaultDocument:
        """The vault and every credential in it (archiving cannot be undone)."""
        doc = self.found(vault_id)
        if doc.get("archived_at"):
            return doc
        for credential in list(self._all(credentials_kind(vault_id))):
            if not credential.get("archived_at"):
                self.archive_credential(vault_id, credential["id"])
        # Archived as stored (an update made meanwhile is kept).
        stored = self.store.modify(VAULT, self.owner, vault_id, shapes.archived_once)
        if stored is None:
            raise HttpError(404, "not_found_error", f"vault {vault_id} not found")
        return shapes.as_vault(stored)

    def delete(self, vault_id: str) -> None:
        self.found(vault_id)
        for kind in (credentials_kind(vault_id), secrets_kind(vault_id)):
            for doc in list(self._all(kind)):
                self.store.delete(kind, self.owner, doc["id"])
        self.store.delete(VAULT, self.owner, vault_id)

    def check_session_vaults(self, vault_ids: Sequence[str]) -> None:
        """A session names vaults that exist, are this key's and are not archived."""
        for index, vault_id in enumerate(vault_ids):
            doc = self.store.get(VAULT, self.owner, vault_id)
            if doc is None or doc.get("archived_at"):
                state = "not found" if doc is None else "archived"
                raise HttpError(400, "invalid_request_error",
                                f"vault_ids[{index}]: vault {vault_id} is {state}")

    # Credentials ----------------------------------------------------------------------

    def credential(self, vault_id: str, credential_id: str) -> shapes.CredentialDocument:
        self.found(vault_id)
        doc = self.store.get(credentials_kind(vault_id), self.owner, credential_id)
        if doc is None:
            raise HttpError(404, "not_found_error", f"credential {credential_id} not found")
        return shapes.as_credential(doc)

    def _active_for(self, vault_id: str, url: str) -> JSON | None:
        key = vault_shapes.url_key(url)
        return next((c for c in self._all(credentials_kind(vault_id))
                     if not c.get("archived_at")
                     and vault_shapes.url_key(c["auth"]["mcp_server_url"]) == key), None)

    def create_credential(self, vault_id: str, body: object) -> shapes.CredentialDocument:
        """One create at a time per vault (`exclusive`): that no active credential of
        the vault has the URL is read from the others, which a concurrent create would
        change between the check and the write."""
        self.writable(vault_id)
        doc, secret = vault_shapes.credential_create(vault_id, body)
        with exclusive(self.store, f"{CREATE_LEASE}{vault_id}", f"a credential of vault "
                       f"{vault_id} is being created by another request"):
            self._create_credential(vault_id, doc, secret)
        return doc

    def _create_credential(self, vault_id: str, doc: shapes.CredentialDocument,
                           secret: JSON) -> None:
        clash = self._active_for(vault_id, doc["auth"]["mcp_server_url"])
        if clash is not None:
            raise HttpError(409, "invalid_request_error",
                            f"auth.mcp_server_url: credential {clash['id']} of this vault "
                            "already authenticates that server (archive it first)",
                            headers={"x-should-retry": "false"})
        self._keep_secret(vault_id, doc["id"], secret, create=True)
        self.store.create(credentials_kind(vault_id), self.owner, doc)

    def update_credential(self, vault_id: str, credential_id: str,
                          body: object) -> shapes.CredentialDocument:
        """One update at a time per credential (`exclusive`): its secret and its
        document are two documents, and an update reads both before writing both, so two
        at once could each keep half of their change. The document is written as stored
        (`Store.modify`): an archive that landed meanwhile refuses the update."""
        self.writable(vault_id)
        self.credential(vault_id, credential_id)  # 404 before the lease is taken
        with exclusive(self.store, f"{UPDATE_LEASE}{credential_id}",
                       f"credential {credential_id} is being updated by another request"):
            doc = _not_archived_credential(self.credential(vault_id, credential_id))
            secret = self._secret(vault_id, credential_id)
            new_secret = vault_shapes.credential_updated(doc, secret, body)[1]
            if new_secret != secret:  # written first: a crash never leaves it behind
                self._keep_secret(vault_id, credential_id, new_secret, create=False)

            def change(stored: JSON) -> shapes.CredentialDocument:
                current = _not_archived_credential(shapes.as_credential(stored))
                return vault_shapes.credential_updated(current, secret, body)[0]

            updated = self.store.modify(credentials_kind(vault_id), self.owner,
                                        credential_id, change)
        if updated is None:
            raise HttpError(404, "not_found_error", f"credential {credential_id} not found")
        return shapes.as_credential(updated)

    def archive_credential(self, vault_id: str,
                           credential_id: str) -> shapes.CredentialDocument:
        doc = self.credential(vault_id, credential_id)
        if doc.get("archived_at"):
            return doc
        stored = self.store.modify(credentials_kind(vault_id), self.owner, credential_id,
                                   shapes.archived_once)  # as stored: an update is kept
        if stored is None:
            raise HttpError(404, "not_found_error", f"credential {credential_id} not found")
        self.store.delete(secrets_kind(vault_id), self.owner, credential_id)
        return shapes.as_credential(stored)

    def delete_credential(self, vault_id: str, credential_id: str) -> None:
        self.credential(vault_id, credential_id)
        self.store.delete(secrets_kind(vault_id), self.owner, credential_id)
        self.store.delete(credentials_kind(vault_id), self.owner, credential_id)

    # Secrets --------------------------------------------------------------------------

    def _keep_secret(self, vault_id: str, credential_id: str, secret: JSON, *,
                     create: bool) -> None:
        try:
            sealed = sealing.seal(secret, credential_id)
        except sealing.SealingError as exc:
            raise _no_key(exc) from None
        now = shapes.timestamp()
        doc = {"id": credential_id, "sealed": sealed, "created_at": now, "updated_at": now}
        if create:
            self.store.create(secrets_kind(vault_id), self.owner, doc)
        else:
            self.store.update(secrets_kind(vault_id), self.owner, credential_id, doc)

    def _secret(self, vault_id: str, credential_id: str) -> JSON:
        doc = self.store.get(secrets_kind(vault_id), self.owner, credential_id)
        if doc is None:
            return {}
        try:
            return sealing.unseal(str(doc["sealed"]), credential_id)
        except sealing.SealingError as exc:
            raise _no_key(exc) from None

    def bearer_for(self, vault_ids: Sequence[str], url: str) -> str:
        """The token for an MCP server at `url` from the first of a session's vaults
        holding an active credential for it. Raises `LookupError` saying why there is
        none (the session reports it as an MCP authentication failure)."""
        for vault_id in vault_ids:
            vault = self.store.get(VAULT, self.owner, vault_id)
            if vault is None or vault.get("archived_at"):
                continue
            credential = self._active_for(vault_id, url)
            if credential is None:
                continue
            secret = self.store.get(secrets_kind(vault_id), self.owner, credential["id"])
            try:
                fields = sealing.unseal(str((secret or {}).get("sealed", "")),
                                        credential["id"])
            except sealing.SealingError as exc:
                raise LookupError(f"credential {credential['id']}: {exc}") from None
            token = vault_shapes.bearer_token(credential["auth"], fields)
            if token is None:
                raise LookupError(f"credential {credential['id']} has expired")
            return token
        raise LookupError(f"no active credential for {url} in the session's vaults "
                          f"({', '.join(vault_ids) or 'none'})")
