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
    _at,
    _bool,
    _choice,
    _get,
    _items,
    _obj,
    _required,
    _str,
    _variant,
)


def _text_block(obj: JSON, path: str) -> JSON:
    return {"type": "text", "text": _str(_required(obj, "text", path), _at(path, "text"))}


# What the model accepts inline: another media type would be sent on and refused by the
# Messages API mid-turn, so it is refused here, naming the field.
IMAGE_TYPES: Final = ("image/jpeg", "image/png", "image/gif", "image/webp")
DOCUMENT_TYPES: Final = ("application/pdf",)


def _base64_source(obj: JSON, path: str, media_types: Sequence[str]) -> JSON:
    data = _str(_required(obj, "data", path), _at(path, "data"))
    try:
        base64.b64decode(data, validate=True)
    except ValueError:
        raise ShapeError(_at(path, "data"), "expected base64 data") from None
    return {"type": "base64",
            "media_type": _choice(_required(obj, "media_type", path),
                                  _at(path, "media_type"), media_types),
            "data": data}


def _url_source(obj: JSON, path: str) -> JSON:
    return {"type": "url", "url": _str(_required(obj, "url", path), _at(path, "url"))}


def _file_source(obj: JSON, path: str) -> JSON:
    return {"type": "file",
            "file_id": _str(_required(obj, "file_id", path), _at(path, "file_id"))}


def _plain_text_source(obj: JSON, path: str) -> JSON:
    if obj.get("media_type") is not None:
        _choice(obj["media_type"], _at(path, "media_type"), ("text/plain",))
    return {"type": "text", "media_type": "text/plain",
            "data": _str(_required(obj, "data", path), _at(path, "data"))}


_IMAGE_SOURCES: Final[Mapping[str, Parser]] = {
    "base64": lambda obj, path: _base64_source(obj, path, IMAGE_TYPES),
    "url": _url_source, "file": _file_source}
_DOCUMENT_SOURCES: Final[Mapping[str, Parser]] = {
    **_IMAGE_SOURCES, "base64": lambda obj, path: _base64_source(obj, path, DOCUMENT_TYPES),
    "text": _plain_text_source}


def _image_block(obj: JSON, path: str) -> JSON:
    where = _at(path, "source")
    return {"type": "image",
            "source": _variant(_required(obj, "source", path), where, _IMAGE_SOURCES)}


def _document_block(obj: JSON, path: str) -> JSON:
    where = _at(path, "source")
    block = {"type": "document",
             "source": _variant(_required(obj, "source", path), where, _DOCUMENT_SOURCES)}
    for key in ("title", "context"):
        if obj.get(key) is not None:
            block[key] = _str(obj[key], _at(path, key))
    return block


def _search_result_block(obj: JSON, path: str) -> JSON:
    citations = _get(obj, "citations", path, _obj, {})
    return {"type": "search_result",
            "source": _str(_required(obj, "source", path), _at(path, "source")),
            "title": _str(_required(obj, "title", path), _at(path, "title")),
            "content": _items(_required(obj, "content", path), _at(path, "content"),
                              lambda v, p: _variant(v, p, {"text": _text_block})),
            "citations": {"enabled": _get(citations, "enabled", _at(path, "citations"),
                                          _bool, False)}}


_MESSAGE_BLOCKS: Final[Mapping[str, Parser]] = {
    "text": _text_block, "image": _image_block, "document": _document_block,
    "redacted": lambda obj, path: {"type": "redacted"}}
_RESULT_BLOCKS: Final[Mapping[str, Parser]] = {
    "text": _text_block, "image": _image_block, "document": _document_block,
    "search_result": _search_result_block}


def _blocks(value: object, path: str, kinds: Mapping[str, Parser]) -> list[JSON]:
    return _items(value, path, lambda v, p: _variant(v, p, kinds))
