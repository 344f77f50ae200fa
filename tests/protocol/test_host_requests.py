"""The checks of the host requests in `wisp.wire.host_requests` say what their TypedDicts
say, and refuse what they should, naming the field."""

from __future__ import annotations

import typing
from typing import Any

import pytest

from wisp import errors
from wisp.wire import host_requests as h
from wisp.wire import protocol as p

SUBTYPE = "subtype"


def _typed_dict(subtype: str) -> Any:
    for value in vars(h).values():
        annotations = getattr(value, "__annotations__", {})
        if (isinstance(value, type) and SUBTYPE in annotations
                and annotations[SUBTYPE] == typing.Literal[subtype]):
            return value
    raise AssertionError(f"no TypedDict for {subtype}")


@pytest.mark.parametrize("kind", list(h.HOST_INBOUND.values()), ids=lambda k: k.subtype)
def test_declared_fields_match_the_typed_dict(kind: p.RequestType[Any]):
    typed = _typed_dict(kind.subtype)
    assert {f.name for f in kind.fields if f.required} == set(typed.__required_keys__) - {
        SUBTYPE}
    assert {f.name for f in kind.fields} == set(typed.__annotations__) - {SUBTYPE}


def test_no_subtype_is_both_answered_and_refused():
    answered = set(p.INBOUND) | set(h.HOST_INBOUND)
    assert not answered & set(h.UNAVAILABLE)
    assert not answered & set(h.SENT_TO_HOST)


@pytest.mark.parametrize(("request_", "error"), [
    ({"subtype": "file_suggestions"}, "Invalid file_suggestions request: `query` must be a "
                                      "string"),
    ({"subtype": "set_cwd", "path": 5}, "Invalid set_cwd request: `path` must be a string"),
    ({"subtype": "seed_read_state", "path": "a", "mtime": "x"},
     "Invalid seed_read_state request: `mtime` must be a number"),
    ({"subtype": "set_mcp_permission_mode_override", "serverName": "s", "mode": "bypass"},
     "Invalid set_mcp_permission_mode_override request: `mode` must be default, auto or "
     "null"),
    ({"subtype": "mcp_call", "tool": "Bash"},
     "Invalid mcp_call request: `tool` must be mcp__<server>__<tool>"),
    ({"subtype": "add_directory"}, "Invalid add_directory request: `path` must be a string"),
])
def test_invalid_requests_are_refused(request_: dict[str, Any], error: str):
    with pytest.raises(errors.InvalidRequest) as caught:
        h.HOST_INBOUND[request_[SUBTYPE]].parse(request_)
    assert str(caught.value) == error
