"""Loading a transcript into a valid API history (in-process: no wisp run needed)."""

from __future__ import annotations

import json
from pathlib import Path

from wisp.sessions.load import load_conversation
from wisp.sessions.repair import MISSING_RESULT, repair_history


def use(tid):
    return {"type": "tool_use", "id": tid, "name": "Bash", "input": {}}


def result(tid, text="ok"):
    return {"type": "tool_result", "tool_use_id": tid, "content": text}


def test_consecutive_same_role_messages_merge():
    fixed = repair_history(
        [
            {"role": "user", "content": "a"},
            {"role": "user", "content": "b"},
            {"role": "assistant", "content": [{"type": "text", "text": "c"}]},
            {"role": "assistant", "content": [use("t1")]},
            {"role": "user", "content": [result("t1")]},
        ]
    )
    assert [m["role"] for m in fixed] == ["user", "assistant", "user"]
    assert [b["text"] for b in fixed[0]["content"]] == ["a", "b"]
    assert [b["type"] for b in fixed[1]["content"]] == ["text", "tool_use"]


def test_a_dangling_tool_use_at_the_end_is_answered_with_an_error():
    fixed = repair_history(
        [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [use("t1"), use("t2")]},
            {"role": "user", "content": [result("t1")]},
        ]
    )
    assert fixed[-1]["content"] == [
        result("t1"),
        {"type": "tool_result", "tool_use_id": "t2", "content": MISSING_RESULT, "is_error": True},
    ]
    fixed = repair_history(
        [{"role": "user", "content": "go"}, {"role": "assistant", "content": [use("t1")]}]
    )
    assert fixed[-1]["role"] == "user" and fixed[-1]["content"][0]["tool_use_id"] == "t1"


def test_results_come_first_and_stray_results_are_dropped():
    fixed = repair_history(
        [
            {"role": "user", "content": [result("ghost"), {"type": "text", "text": "hi"}]},
            {"role": "assistant", "content": [use("t1")]},
            {
                "role": "user",
                "content": [{"type": "text", "text": "note"}, result("t1"), result("t1", "dup")],
            },
        ]
    )
    assert fixed[0] == {"role": "user", "content": "hi"}
    assert fixed[2]["content"] == [result("t1"), {"type": "text", "text": "note"}]


def test_leading_assistant_empty_text_and_parse_leftovers_are_removed():
    fixed = repair_history(
        [
            {"role": "assistant", "content": [{"type": "text", "text": "orphan"}]},
            {"role": "user", "content": "q"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": ""},
                    {**use("t1"), "partial_json": '"x"', "input_error": "not an object"},
                ],
            },
        ]
    )
    assert fixed[0] == {"role": "user", "content": "q"}
    assert fixed[1]["content"] == [use("t1")]


def write(path: Path, entries: list[dict]) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in entries) + "{torn")
    return path


def line(uuid, parent, kind, content, **extra):
    role = "assistant" if kind == "assistant" else "user"
    return {
        "type": kind,
        "uuid": uuid,
        "parentUuid": parent,
        "message": {"role": role, "content": content},
        **extra,
    }


def test_the_chain_follows_parents_through_other_line_types(tmp_path):
    path = write(
        tmp_path / "s.jsonl",
        [
            {"type": "queue-operation", "operation": "enqueue"},
            line("u1", None, "user", "first"),
            {"type": "attachment", "uuid": "at1", "parentUuid": "u1", "attachment": {}},
            line("a1", "at1", "assistant", [{"type": "text", "text": "one"}]),
            line("u2", "a1", "user", "abandoned branch"),
            line("a2", "u2", "assistant", [{"type": "text", "text": "two"}]),
            line(
                "side", "a1", "assistant", [{"type": "text", "text": "subagent"}], isSidechain=True
            ),
            line("u3", "a1", "user", "newest branch"),
            line("a3", "u3", "assistant", [{"type": "text", "text": "three"}]),
            {"type": "last-prompt", "lastPrompt": "newest branch"},
        ],
    )
    conversation = load_conversation(path)
    assert conversation is not None
    assert [e["uuid"] for e in conversation.entries] == ["u1", "a1", "u3", "a3"]
    assert conversation.leaf_uuid == "a3"
    at = load_conversation(path, at_uuid="a2")
    assert at is not None and [e["uuid"] for e in at.entries] == ["u1", "a1", "u2", "a2"]
    assert load_conversation(path, at_uuid="nope") is None


def test_a_file_without_messages_is_no_conversation(tmp_path):
    path = write(tmp_path / "s.jsonl", [{"type": "queue-operation"}])
    assert load_conversation(path) is None
