"""A crafted transcript cannot make a resumed session's requests malformed.

Before: blocks of a resumed transcript went to the API as they were: a `tool_use` with no
id (answered by a made-up result for id "None"), a non-string id, a block of an unknown
type, a field of the wrong type. Every later request of the session then failed with a
400. Now `wisp -p --resume` drops or repairs each one, says so on stderr, and the request
the scripted API server records is well-formed by the API's rules, checked here
independently of wisp's code.
"""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path
from typing import Any

from tests.conftest import Runner
from tests.sessions.conftest import SID, transcript
from wisp.testing import reply

JSON = dict[str, Any]
ID = re.compile(r"[a-zA-Z0-9_-]+")
FIELDS = {
    "text": {"type", "text"},
    "image": {"type", "source"},
    "tool_use": {"type", "id", "name", "input"},
    "tool_result": {"type", "tool_use_id", "content", "is_error"},
    "thinking": {"type", "thinking", "signature"},
}
ROLE_TYPES = {"user": {"text", "image", "tool_result"},
              "assistant": {"text", "tool_use", "thinking"}}


def check_api_shape(messages: list[JSON]) -> None:
    """The Messages API's rules for a history: alternating roles from a user turn, known
    block types with known fields, unique well-formed tool_use ids, and each tool_use
    answered by exactly one tool_result in the next message (and no other result)."""
    assert messages and messages[0]["role"] == "user"
    seen: set[str] = set()
    expected: set[str] = set()
    for n, message in enumerate(messages):
        assert message["role"] == ("user" if n % 2 == 0 else "assistant"), messages
        content = message["content"]
        if isinstance(content, str):
            assert content.strip() and not expected, message
            continue
        assert content, message
        results = [b["tool_use_id"] for b in content if b["type"] == "tool_result"]
        assert sorted(results) == sorted(expected), (message, expected)
        expected = set()
        for block in content:
            assert block["type"] in ROLE_TYPES[message["role"]], block
            assert set(block) <= FIELDS[block["type"]], block
            if block["type"] == "text":
                assert isinstance(block["text"], str) and block["text"].strip(), block
            if block["type"] == "tool_use":
                assert isinstance(block["id"], str) and ID.fullmatch(block["id"]), block
                assert ID.fullmatch(block["name"]) and isinstance(block["input"], dict), block
                assert block["id"] not in seen, block
                seen.add(block["id"])
                expected.add(block["id"])
            if block["type"] == "tool_result":
                assert isinstance(block["content"], str | list), block
    assert not expected, "the last tool_use has no result"


class Lines:
    def __init__(self) -> None:
        self.lines: list[JSON] = []
        self.parent: str | None = None

    def add(self, kind: str, content: Any) -> None:
        line = {"type": kind, "uuid": str(uuid.uuid4()), "parentUuid": self.parent,
                "sessionId": SID, "message": {"role": kind, "content": content}}
        self.lines.append(line)
        self.parent = line["uuid"]

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(line) + "\n" for line in self.lines))


def use(tool_id: Any, name: str = "Bash", **extra: Any) -> JSON:
    block: JSON = {"type": "tool_use", "name": name, "input": {"command": "ls"}, **extra}
    if tool_id is not None:
        block["id"] = tool_id
    return block


def result(tool_id: Any, content: Any = "fine") -> JSON:
    return {"type": "tool_result", "tool_use_id": tool_id, "content": content}


def crafted(wisp: Runner) -> Path:
    t = Lines()
    t.add("user", "FIRST-PROMPT")
    t.add("assistant", [
        {"type": "text", "text": "working on it"},
        use(None), use(42), use("../../etc/passwd"), use("toolu_badname", name="bad name!"),
        use("toolu_good", cache_control={"type": "ephemeral"}, partial_json="{"),
        use("toolu_two"), use("toolu_noinput") | {"input": "rm -rf /"},
        {"type": "evil", "payload": "\x1b]0;pwned\x07"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "x"}},
        "not even an object",
    ])
    t.add("user", [
        result("toolu_good", "GOOD-RESULT"), result("toolu_good", "second answer"),
        result("toolu_two", {"oops": 1}), result("toolu_ghost", "GHOST-RESULT"), result(7),
        {"type": "text", "text": 12},
    ])
    t.add("assistant", [{"type": "text", "text": "THE-ANSWER"}, use("toolu_good")])
    t.add("user", 12345)
    path = transcript(wisp, SID)
    t.write(path)
    return path


def test_a_crafted_transcript_resumes_into_a_well_formed_request(wisp, server):
    path = crafted(wisp)
    server.script(reply.text("resumed fine"))
    run = wisp("-p", "NEXT-PROMPT", "--resume", SID, "--output-format", "json")
    assert run.returncode == 0, run.stderr[-2000:]
    assert json.loads(run.stdout)["result"] == "resumed fine"
    [request] = [r for r in server.requests if r.path.startswith("/v1/messages")]
    history = request.body["messages"]
    check_api_shape(history)
    sent = json.dumps(history)
    for kept in ("FIRST-PROMPT", "working on it", "GOOD-RESULT", "THE-ANSWER", "NEXT-PROMPT"):
        assert kept in sent, kept
    for dropped in ("GHOST-RESULT", "second answer", "etc/passwd", "evil", "pwned",
                    "cache_control", "partial_json", "rm -rf"):
        assert dropped not in sent, dropped
    # The one call kept whose result was unusable is answered as unknown, not dropped.
    two = next(b for m in history for b in m["content"] if isinstance(b, dict)
               and b.get("tool_use_id") == "toolu_two")
    assert two["is_error"] is True and "No result was recorded" in two["content"]
    warning = [line for line in run.stderr.splitlines() if str(path) in line]
    assert len(warning) == 1, run.stderr
    assert warning[0].startswith(f"wisp: warning: {path}: left out 15 malformed parts")
    for why in ("a tool_use whose id is missing or not a valid id (3)",
                "a block of unknown type 'evil' (1)",
                "a tool_result that answers no tool_use just before it (1)",
                "a tool_use whose id repeats an earlier one (1)",
                "an image block in an assistant message (1)"):
        assert why in warning[0], why


def test_a_well_formed_transcript_resumes_without_a_warning(wisp, server):
    t = Lines()
    t.add("user", "hello")
    t.add("assistant", [{"type": "text", "text": "calling"}, use("toolu_a")])
    t.add("user", [result("toolu_a", "done")])
    t.add("assistant", [{"type": "text", "text": "all done"}])
    t.write(transcript(wisp, SID))
    server.script(reply.text("again"))
    run = wisp("-p", "more", "--resume", SID)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "warning" not in run.stderr
    [request] = [r for r in server.requests if r.path.startswith("/v1/messages")]
    check_api_shape(request.body["messages"])
    assert request.body["messages"][:4] == [
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": [{"type": "text", "text": "calling"}, use("toolu_a")]},
        {"role": "user", "content": [result("toolu_a", "done")]},
        {"role": "assistant", "content": [{"type": "text", "text": "all done"}]},
    ]
