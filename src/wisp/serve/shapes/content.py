"""Content blocks as client events carry them: text, image, document, search_result
(the readers behind `user.message`, tool results and `system.message`)."""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Final

from wisp.jsontypes import JSON
from wisp.serve.shapes.common import (
    Parser,
    ShapeError,
    child_path,
    optional_field,
    read_bool,
    read_choice,
    read_items,
    read_object,
    read_str,
    read_variant,
    required_field,
)


def read_text_block(obj: JSON, path: str) -> JSON:
    return {"type": "text",
            "text": read_str(required_field(obj, "text", path), child_path(path, "text"))}


# What the model accepts inline: another media type would be sent on and refused by the
# Messages API mid-turn, so it is refused here, naming the field.
IMAGE_TYPES: Final = ("image/jpeg", "image/png", "image/gif", "image/webp")
DOCUMENT_TYPES: Final = ("application/pdf",)


def _base64_source(obj: JSON, path: str, media_types: Sequence[str]) -> JSON:
    data = read_str(required_field(obj, "data", path), child_path(path, "data"))
    try:
        base64.b64decode(data, validate=True)
    except ValueError:
        raise ShapeError(child_path(path, "data"), "expected base64 data") from None
    return {"type": "base64",
            "media_type": read_choice(required_field(obj, "media_type", path),
                                      child_path(path, "media_type"), media_types),
            "data": data}


def _url_source(obj: JSON, path: str) -> JSON:
    return {"type": "url",
            "url": read_str(required_field(obj, "url", path), child_path(path, "url"))}


def read_file_source(obj: JSON, path: str) -> JSON:
    return {"type": "file",
            "file_id": read_str(required_field(obj, "file_id", path), child_path(path, "file_id"))}


def _plain_text_source(obj: JSON, path: str) -> JSON:
    if obj.get("media_type") is not None:
        read_choice(obj["media_type"], child_path(path, "media_type"), ("text/plain",))
    return {"type": "text", "media_type": "text/plain",
            "data": read_str(required_field(obj, "data", path), child_path(path, "data"))}


_IMAGE_SOURCES: Final[Mapping[str, Parser]] = {
    "base64": lambda obj, path: _base64_source(obj, path, IMAGE_TYPES),
    "url": _url_source, "file": read_file_source}
_DOCUMENT_SOURCES: Final[Mapping[str, Parser]] = {
    **_IMAGE_SOURCES, "base64": lambda obj, path: _base64_source(obj, path, DOCUMENT_TYPES),
    "text": _plain_text_source}


def _image_block(obj: JSON, path: str) -> JSON:
    where = child_path(path, "source")
    return {"type": "image",
            "source": read_variant(required_field(obj, "source", path), where, _IMAGE_SOURCES)}


def _document_block(obj: JSON, path: str) -> JSON:
    where = child_path(path, "source")
    block = {"type": "document",
             "source": read_variant(required_field(obj, "source", path), where, _DOCUMENT_SOURCES)}
    for key in ("title", "context"):
        if obj.get(key) is not None:
            block[key] = read_str(obj[key], child_path(path, key))
    return block


def _search_result_block(obj: JSON, path: str) -> JSON:
    citations = optional_field(obj, "citations", path, read_object, {})
    return {"type": "search_result",
            "source": read_str(required_field(obj, "source", path), child_path(path, "source")),
            "title": read_str(required_field(obj, "title", path), child_path(path, "title")),
            "content": read_items(required_field(obj, "content", path), child_path(path, "content"),
                                  lambda v, p: read_variant(v, p, {"text": read_text_block})),
            "citations": {"enabled": optional_field(citations, "enabled",
                                                    child_path(path, "citations"),
                                                    read_bool, False)}}


MESSAGE_BLOCKS: Final[Mapping[str, Parser]] = {
    "text": read_text_block, "image": _image_block, "document": _document_block,
    "redacted": lambda obj, path: {"type": "redacted"}}
RESULT_BLOCKS: Final[Mapping[str, Parser]] = {
    "text": read_text_block, "image": _image_block, "document": _document_block,
    "search_result": _search_result_block}


def read_blocks(value: object, path: str, kinds: Mapping[str, Parser]) -> list[JSON]:
    return read_items(value, path, lambda v, p: read_variant(v, p, kinds))
