"""`system/init` is written before the tools load, from the registry's table of names;
that list must always equal what the engine really offers the model."""

from __future__ import annotations

import json

import pytest

from wisp.testing import reply
from wisp.tools.registry import BUILTIN_TOOL_NAMES, builtin_tools


def test_each_name_builds_the_tool_of_that_name():
    assert [tool.name for tool in builtin_tools().values()] == list(BUILTIN_TOOL_NAMES)


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
