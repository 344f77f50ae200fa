"""--json-schema: the StructuredOutput tool, validation, retries, the nudge, the string slip."""

from __future__ import annotations

import json

import pytest

from wisp.engine.structured import DESCRIPTION, NUDGE, TOOL_NAME
from wisp.testing import reply

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "count": {"type": "integer"}},
    "required": ["name", "count"],
}
RAW = json.dumps(SCHEMA)


def structured(wisp, *extra, output="stream-json", env=None):
    verbose = ("--verbose",) if output == "stream-json" else ()
    return wisp(
        "-p", "give obj", "--output-format", output, *verbose, "--json-schema", RAW, *extra, env=env
    )


def call(value):
    return reply.tool_use(TOOL_NAME, value)


def tool_results(run):
    return [
        b
        for f in run.of_type("user")
        for b in f["message"]["content"]
        if b.get("type") == "tool_result"
    ]


def test_a_valid_first_call_ends_the_run_without_another_model_call(wisp, server):
    server.script(call({"name": "fake", "count": 3}), reply.text("never requested"))
    run = structured(wisp)
    assert run.returncode == 0, run.stderr
    result = run.result
    assert result["subtype"] == "success" and result["is_error"] is False
    assert result["structured_output"] == {"name": "fake", "count": 3}
    assert result["result"] == '{"name":"fake","count":3}'
    assert result["num_turns"] == 2  # docs/protocol.md, "Counting turns"
    assert result["stop_reason"] == "tool_use"
    assert len(server.requests) == 1
    tool = next(t for t in server.requests[0].body["tools"] if t["name"] == TOOL_NAME)
    assert tool == {"name": TOOL_NAME, "description": DESCRIPTION, "input_schema": SCHEMA}
    assert TOOL_NAME in run.of_type("system", "init")[0]["tools"]
    assert tool_results(run)[0]["is_error"] is False


def test_text_and_json_output_carry_the_object(wisp, server):
    server.script(call({"name": "fake", "count": 3}))
    assert structured(wisp, output="text").stdout == '{"name":"fake","count":3}\n'
    server.script(call({"name": "fake", "count": 3}))
    result = json.loads(structured(wisp, output="json").stdout)
    assert result["structured_output"] == {"name": "fake", "count": 3}


def test_an_invalid_call_is_answered_with_each_violation_then_a_valid_one_wins(wisp, server):
    server.script(call({"wrong": 1, "count": "three"}), call({"name": "fixed", "count": 1}))
    run = structured(wisp)
    assert run.returncode == 0, run.stderr
    first = tool_results(run)[0]
    assert first["is_error"] is True
    assert "root: 'name' is a required property" in first["content"]
    assert "root.count: 'three' is not of type 'integer'" in first["content"]
    # The model saw the error text in its next request.
    sent = server.requests[1].body["messages"][-1]["content"]
    assert sent[0]["content"] == first["content"]
    assert run.result["structured_output"] == {"name": "fixed", "count": 1}
    assert run.result["num_turns"] == 3
    assert len(server.requests) == 2


def test_nested_violations_name_their_path(wisp, server):
    schema = {
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "items": {"type": "object", "properties": {"n": {"type": "integer"}}},
            }
        },
    }
    server.script(call({"items": [{"n": 1}, {"n": "x"}]}), call({"items": []}))
    run = wisp(
        "-p",
        "x",
        "--output-format",
        "stream-json",
        "--verbose",
        "--json-schema",
        json.dumps(schema),
    )
    assert "root.items[1].n: 'x' is not of type 'integer'" in tool_results(run)[0]["content"]


def test_retries_run_out_with_the_error_subtype(wisp, server):
    server.script(*[call({"bad": i}) for i in range(3)])
    run = structured(wisp, env={"MAX_STRUCTURED_OUTPUT_RETRIES": "2"})
    assert run.returncode == 1
    result = run.result
    assert result["subtype"] == "error_max_structured_output_retries"
    assert result["is_error"] is True
    assert "structured_output" not in result
    assert len(server.requests) == 2
    assert len(tool_results(run)) == 2


def test_five_attempts_by_default(wisp, server):
    server.script(*[call({"bad": i}) for i in range(6)])
    run = structured(wisp, output="json")
    assert run.returncode == 1
    assert json.loads(run.stdout)["subtype"] == "error_max_structured_output_retries"
    assert len(server.requests) == 5


def test_prose_instead_of_the_tool_is_nudged_once(wisp, server):
    server.script(
        reply.text("here you go in prose"), reply.text("still prose"), reply.text("never requested")
    )
    run = structured(wisp)
    assert run.returncode == 0
    assert len(server.requests) == 2
    last = server.requests[1].body["messages"][-1]
    assert last["role"] == "user" and NUDGE in json.dumps(last["content"])
    assert run.result["result"] == "still prose"
    assert "structured_output" not in run.result


def test_a_nudge_that_works_gives_the_object(wisp, server):
    server.script(reply.text("prose"), call({"name": "late", "count": 2}))
    run = structured(wisp)
    assert run.result["structured_output"] == {"name": "late", "count": 2}


@pytest.mark.parametrize(
    "block_input",
    [
        json.dumps({"name": "str", "count": 4}),  # the whole input as a JSON string
        {"output": json.dumps({"name": "str", "count": 4})},  # one property holding the string
    ],
)
def test_the_object_sent_as_a_json_string_is_accepted(wisp, server, block_input):
    server.script(
        reply.message(
            [{"type": "tool_use", "name": TOOL_NAME, "input": block_input}], stop_reason="tool_use"
        )
    )
    run = structured(wisp)
    assert run.returncode == 0, run.stderr
    assert run.result["structured_output"] == {"name": "str", "count": 4}
    assert len(server.requests) == 1


def test_a_string_that_does_not_validate_is_still_an_error(wisp, server):
    server.script(
        reply.message(
            [{"type": "tool_use", "name": TOOL_NAME, "input": json.dumps({"name": "x"})}],
            stop_reason="tool_use",
        ),
        call({"name": "x", "count": 1}),
    )
    run = structured(wisp)
    assert tool_results(run)[0]["is_error"] is True
    assert "'count' is a required property" in tool_results(run)[0]["content"]
    assert run.result["structured_output"] == {"name": "x", "count": 1}


def test_a_non_object_schema_is_carried_under_one_property(wisp, server):
    schema = {"type": "array", "items": {"type": "integer"}}
    server.script(call({"value": [1, 2, 3]}))
    run = wisp("-p", "x", "--output-format", "json", "--json-schema", json.dumps(schema))
    assert json.loads(run.stdout)["structured_output"] == [1, 2, 3]
    tool = next(t for t in server.requests[0].body["tools"] if t["name"] == TOOL_NAME)
    assert tool["input_schema"]["type"] == "object"


@pytest.mark.parametrize(
    ("raw", "phrase"),
    [
        ("{not json", "--json-schema is not valid JSON"),
        ('{"type": "objekt"}', "--json-schema is not a valid JSON Schema"),
        ('{"type": "object", "required": "name"}', "--json-schema is not a valid JSON Schema"),
        ("[1, 2]", "--json-schema must be a JSON object"),
    ],
)
def test_an_invalid_schema_is_a_startup_error(wisp, server, raw, phrase):
    run = wisp("-p", "x", "--json-schema", raw)
    assert run.returncode == 1
    assert run.stderr.startswith(f"Error: {phrase}")
    assert server.requests == []


def test_without_a_schema_no_structured_tool_is_offered(wisp, server):
    server.script(reply.text("hi"))
    wisp("-p", "x")
    assert all(t["name"] != TOOL_NAME for t in server.requests[0].body["tools"])


def test_a_plain_string_input_is_rejected_as_not_an_object(wisp, server):
    server.script(
        reply.message(
            [{"type": "tool_use", "name": TOOL_NAME, "input": "just some words"}],
            stop_reason="tool_use",
        ),
        call({"name": "ok", "count": 0}),
    )
    run = structured(wisp)
    first = tool_results(run)[0]
    assert first["is_error"] is True
    assert "root: the input must be a JSON object" in first["content"]
    # The history sent back holds an API-valid tool_use (no parse leftovers).
    block = server.requests[1].body["messages"][1]["content"][0]
    assert set(block) == {"type", "id", "name", "input"}
    assert run.result["structured_output"] == {"name": "ok", "count": 0}
