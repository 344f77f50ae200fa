"""`system/init` is written before the tools load, from a cheap list of their names; that
list must always equal what the engine really offers the model."""

from __future__ import annotations

import json

import pytest

from wisp.testing import reply
from wisp.tools.names import BUILTIN_TOOL_NAMES
from wisp.tools.registry import builtin_tools


def test_static_names_match_the_registry():
    assert tuple(builtin_tools()) == BUILTIN_TOOL_NAMES


@pytest.mark.parametrize("flags", [
    (),
    ("--tools", "Bash,Read"),
    ("--tools", ""),
    ("--disallowedTools", "Bash,Task"),
    ("--tools", "Task,Write", "--disallowedTools", "Write"),
    ("--json-schema", json.dumps({"type": "object", "properties": {"a": {"type": "string"}}})),
])
def test_init_lists_exactly_the_tools_sent_to_the_model(wisp, server, flags):
    server.script(reply.text("ok"))
    run = wisp("-p", "x", "--output-format", "stream-json", "--verbose", *flags)
    init = run.of_type("system", "init")[0]
    sent = [t["name"] for t in server.requests[0].body.get("tools", [])]
    assert sorted(init["tools"]) == sorted(sent)
