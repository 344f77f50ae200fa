"""Images and documents that name a file of the Files API.

A client may send `{"type": "image", "source": {"type": "file", "file_id": "file_…"}}`
(or a `document` block) in a `user.message` or in a tool result. The id is one of *this*
service's files, which the model provider has never seen, so the block is rewritten
before the model reads it: an image or PDF becomes a base64 source, a text file a plain
text source. The event log keeps the block as the client posted it.

Checked on receipt (`check`), so a missing file, a media type the model cannot read, or
a file over the provider's size limits is a 400 naming the field, not a failure mid-turn.
A file deleted between receipt and the turn becomes a text block saying so (`inline`).
"""

from __future__ import annotations

import base64
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from wisp.jsontypes import JSON
from wisp.serve import files as files_api
from wisp.serve.shapes import ShapeError
from wisp.serve.shapes.content import DOCUMENT_TYPES, IMAGE_TYPES
from wisp.serve.store.base import Store
from wisp.serve.store.offload import off_loop

# The Messages API's own limits (an image's bytes, a request's PDF): larger is refused
# there mid-turn, so it is refused here first.
MAX_IMAGE_BYTES: Final = 5 * 1024 * 1024
MAX_DOCUMENT_BYTES: Final = 32 * 1024 * 1024
_CONTENT_EVENTS: Final = ("user.message", "user.custom_tool_result", "user.tool_result")


def _names_a_file(block: object) -> bool:
    return (isinstance(block, dict) and block.get("type") in ("image", "document")
            and isinstance(block.get("source"), dict)
            and block["source"].get("type") == "file")


def _file_blocks(blocks: Sequence[object], where: str) -> Iterator[tuple[str, JSON]]:
    """(field path, block) for each image or document block with a `file` source."""
    for index, block in enumerate(blocks):
        if _names_a_file(block):
            assert isinstance(block, dict)
            yield f"{where}[{index}].source.file_id", block


def _refusal(block: JSON, doc: Mapping[str, Any]) -> str | None:
    """Why the model could not read this file as this block; None when it can."""
    mime = str(doc.get("mime_type") or "")
    size = int(doc.get("size_bytes") or 0)
    if block["type"] == "image":
        if mime not in IMAGE_TYPES:
            return f"an image must be one of {', '.join(IMAGE_TYPES)}, not {mime}"
        return (f"an image may be at most {MAX_IMAGE_BYTES} bytes"
                if size > MAX_IMAGE_BYTES else None)
    if mime not in DOCUMENT_TYPES and not mime.startswith("text/"):
        return f"a document must be a PDF or text, not {mime}"
    return (f"a document may be at most {MAX_DOCUMENT_BYTES} bytes"
            if size > MAX_DOCUMENT_BYTES else None)


def check(files: files_api.Files | None, owner: str,
          events: Sequence[Mapping[str, Any]]) -> None:
    """Every file a posted event's content names exists for `owner` (404 otherwise) and
    can be read by the model as the block it is in (ShapeError naming the field)."""
    for index, event in enumerate(events):
        if event.get("type") not in _CONTENT_EVENTS:
            continue
        for where, block in _file_blocks(event.get("content") or [],
                                         f"events[{index}].content"):
            if files is None:
                raise ShapeError(where, "file sources need the Files API (a data folder)")
            reason = _refusal(block, files.found(owner, str(block["source"]["file_id"])))
            if reason is not None:
                raise ShapeError(where, reason)


def inline(store: Store, owner: str, blocks: list[JSON]) -> list[JSON]:
    """`blocks` with each file source replaced by the file's bytes (base64) or text."""
    if not any(_names_a_file(block) for block in blocks):
        return blocks
    return [_inlined(store, owner, block) if _names_a_file(block) else block
            for block in blocks]


async def inline_for_session(store: Store, session_id: str,
                             blocks: list[JSON]) -> list[JSON]:
    """`inline` with the session's owner, from async code: the store reads and the file
    reads run on the store's thread pool (none when no block names a file)."""
    if not any(_names_a_file(block) for block in blocks):
        return blocks
    return await off_loop(store, _inline_for_session, store, session_id, blocks)


def _inline_for_session(store: Store, session_id: str, blocks: list[JSON]) -> list[JSON]:
    return inline(store, store.owner_of("session", session_id) or "", blocks)


def _inlined(store: Store, owner: str, block: JSON) -> JSON:
    file_id = str(block["source"]["file_id"])
    doc = store.get(files_api.KIND, owner, file_id)
    if doc is None or files_api.expired(doc):
        return {"type": "text", "text": f"[{block['type']} {file_id}: the file was deleted"
                                        " before the model could read it]"}
    data = Path(str(doc["path"])).read_bytes()
    mime = str(doc.get("mime_type") or "")
    if block["type"] == "document" and mime.startswith("text/"):
        source: JSON = {"type": "text", "media_type": "text/plain",
                        "data": data.decode("utf-8", errors="replace")}
    else:
        source = {"type": "base64", "media_type": mime,
                  "data": base64.b64encode(data).decode("ascii")}
    return {**block, "source": source}
