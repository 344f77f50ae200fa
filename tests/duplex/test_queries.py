"""The host's questions about the session (get_usage, get_session_cost, list_models,
reload_skills, get_plan, read_file) against a real wisp process. Their shapes against the
reference's are in tests/reference_parity; here, what wisp puts in them."""

from __future__ import annotations

import base64

from wisp.testing import reply


def test_usage_and_cost_follow_the_session(duplex, server):
    server.script(reply.text("hello", usage={"input_tokens": 1500, "output_tokens": 20}))
    proc = duplex()
    before = proc.call("get_usage")["response"]
    assert before["session"]["total_cost_usd"] == 0 and before["session"]["model_usage"] == {}
    assert proc.call("get_session_cost")["response"]["text"].splitlines()[-1].startswith(
        "Usage:")
    proc.user("hi")
    result = proc.wait_frame("result")
    after = proc.call("get_usage")["response"]["session"]
    assert after["total_cost_usd"] == result["total_cost_usd"] > 0
    assert after["total_api_duration_ms"] == result["duration_api_ms"]
    [(model, usage)] = after["model_usage"].items()
    assert usage["inputTokens"] == 1500 and usage["outputTokens"] == 20
    cost = proc.call("get_session_cost")["response"]["text"]
    assert f"{model}:  1.5k input, 20 output, 0 cache read, 0 cache write" in cost
    assert cost.startswith(f"Estimated cost:        ${result['total_cost_usd']:.4f}")
    assert proc.finish() == 0


def test_models_skills_and_plan(duplex):
    proc = duplex()
    models = proc.call("list_models")["response"]["models"]
    assert models == proc.initialize()["response"]["models"]
    assert proc.call("reload_skills")["response"] == {"skills": []}
    assert proc.call("get_plan")["response"] == {"exists": False}
    assert proc.finish() == 0


def test_read_file_follows_the_read_permission_rules(duplex, wisp):
    (wisp.cwd / "notes.txt").write_text("héllo\n")
    (wisp.cwd / "secret.txt").write_text("hunter2\n")
    (wisp.cwd / "blob.bin").write_bytes(b"\xff\xfe\x00")
    proc = duplex("--disallowedTools", "Read(./secret.txt)")
    text = proc.call("read_file", path="notes.txt")["response"]
    assert text == {"contents": "héllo\n", "absPath": str((wisp.cwd / "notes.txt").resolve()),
                    "requested_path": "notes.txt", "lossy": False}
    head = proc.call("read_file", path="notes.txt", max_bytes=2)["response"]
    assert (head["contents"], head["truncated"], head["lossy"]) == ("h\ufffd", True, True)
    blob = proc.call("read_file", path="blob.bin", encoding="base64")["response"]
    assert base64.b64decode(blob["contents"]) == b"\xff\xfe\x00"
    assert blob["encoding"] == "base64" and "lossy" not in blob
    for path in ("secret.txt", "../outside.txt", "missing.txt", "."):
        refused = proc.call("read_file", path=path)
        assert (refused["subtype"], refused["error"]) == ("error", f"read denied: {path}")
    assert proc.finish() == 0


def test_a_reload_that_changes_the_commands_says_so(duplex, wisp):
    """As the reference: `system/commands_changed` with the whole new list, ahead of the
    reload's answer; none when nothing changed."""
    proc = duplex()
    before = [c["name"] for c in proc.initialize()["response"]["commands"]]
    folder = wisp.cwd / ".claude" / "skills" / "late"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: late\ndescription: Written later\n---\nBODY\n")
    proc.call("reload_skills")
    proc.call("reload_skills")
    assert proc.finish() == 0
    [changed] = proc.of("system", "commands_changed")
    names = [c["name"] for c in changed["commands"]]
    assert "late" in names and "late" not in before
    kinds = [f["type"] for f in proc.frames]
    at = kinds.index("system", [f is changed for f in proc.frames].index(True))
    assert kinds[at + 1:] == ["control_response", "control_response"]  # ahead of both answers
