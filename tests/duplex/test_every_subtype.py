"""Every control subtype seed 000 lists, sent by a host to a real wisp process: none is
answered "Unsupported control request subtype"; those wisp implements succeed and do
what they say; the rest get their precise error (docs/protocol.md, "Every control
subtype")."""

from __future__ import annotations

import json
import os
import subprocess

from wisp.testing import reply

# Seed 000's 42 schema subtypes (35 client → loop, 6 loop → client, mcp_message both ways)
# and its 16 string-only worker branches, as the seed lists them.
SCHEMA = (
    "initialize", "interrupt", "set_permission_mode", "set_model", "set_max_thinking_tokens",
    "rename_session", "set_color", "apply_flag_settings", "get_settings", "get_context_usage",
    "get_session_cost", "get_usage", "get_binary_version", "list_models", "file_suggestions",
    "read_file", "get_workspace_diff", "get_plan", "rewind_files", "seed_read_state",
    "set_cwd", "register_repo_root", "cancel_async_message", "stop_task", "background_tasks",
    "mcp_status", "mcp_set_servers", "mcp_reconnect", "mcp_toggle",
    "set_mcp_permission_mode_override", "mcp_call", "mcp_message", "reload_plugins",
    "reload_skills", "message_rated", "submit_feedback", "can_use_tool", "hook_callback",
    "oauth_token_refresh", "host_auth_token_refresh", "elicitation", "request_user_dialog",
)
STRING_ONLY = (
    "add_directory", "channel_enable", "claude_authenticate", "claude_oauth_callback",
    "claude_oauth_wait_for_completion", "end_session", "generate_session_title",
    "mcp_authenticate", "mcp_clear_auth", "mcp_oauth_callback_url", "poll_event",
    "remote_control", "rewind_conversation", "side_question", "stage_file",
    "ultrareview_launch",
)
# Refused on purpose, each with its reason (wisp.wire.host_requests): services wisp does
# not run, and the requests that only ever go from wisp to its host.
NOT_AVAILABLE = {"set_color", "channel_enable", "claude_authenticate", "claude_oauth_callback",
                 "claude_oauth_wait_for_completion", "poll_event", "remote_control",
                 "rewind_conversation", "stage_file", "ultrareview_launch"}
WRONG_WAY = {"can_use_tool", "hook_callback", "oauth_token_refresh",
             "host_auth_token_refresh", "elicitation", "request_user_dialog"}


def _fields(cwd: str) -> dict[str, dict[str, object]]:
    """What a host sends with each subtype (the seed's key fields)."""
    return {
        "set_permission_mode": {"mode": "default"}, "set_model": {"model": "sonnet"},
        "set_max_thinking_tokens": {"max_thinking_tokens": 1024},
        "rename_session": {"title": "named"}, "set_color": {"color": "red"},
        "apply_flag_settings": {"settings": {}}, "file_suggestions": {"query": "note"},
        "read_file": {"path": "notes.txt"}, "rewind_files": {"user_message_id": None,
                                                             "dry_run": True},
        "seed_read_state": {"path": "notes.txt", "mtime": 1.0},
        "set_cwd": {"path": cwd}, "register_repo_root": {"directory": cwd},
        "cancel_async_message": {"message_uuid": "nope"}, "stop_task": {"task_id": "t1"},
        "mcp_set_servers": {"servers": {}}, "mcp_reconnect": {"serverName": "none"},
        "mcp_toggle": {"serverName": "none", "enabled": True},
        "set_mcp_permission_mode_override": {"serverName": "none", "mode": None},
        "mcp_call": {"tool": "mcp__none__t", "arguments": {}},
        "mcp_message": {"server_name": "none", "message": {"jsonrpc": "2.0",
                                                           "method": "notifications/x"}},
        "message_rated": {"messageUuid": "u1", "sentiment": "positive"},
        "submit_feedback": {"description": "fine"}, "add_directory": {"path": cwd},
        "generate_session_title": {"description": "fixing the parser"},
        "side_question": {"question": "what is left?"}, "mcp_clear_auth": {"serverName": "x"},
        "mcp_authenticate": {"serverName": "x"},
        "mcp_oauth_callback_url": {"serverName": "x", "callbackUrl": "http://127.0.0.1/cb"},
    }


def test_no_subtype_of_the_seed_is_unsupported(duplex, server, wisp):
    server.script(reply.text("Parser fixes"), reply.text("Nothing is left."))
    (wisp.cwd / "notes.txt").write_text("n\n")
    proc = duplex()
    proc.initialize()
    fields = _fields(str(wisp.cwd))
    answers = {}
    for subtype in (*SCHEMA, *STRING_ONLY):
        if subtype != "end_session":  # last: it ends the input
            answers[subtype] = proc.call(subtype, **fields.get(subtype, {}))
    answers["end_session"] = proc.call("end_session")
    assert len(answers) == 58
    for subtype, answer in answers.items():
        assert "Unsupported control request subtype" not in answer.get("error", ""), subtype
        if subtype in NOT_AVAILABLE:
            assert answer["error_code"] == "not_available", answer
            assert answer["error"].startswith(f"{subtype} is not available in wisp: ")
        elif subtype in WRONG_WAY:
            assert answer["error_code"] == "wrong_direction", answer
    # Those naming a server that does not exist say so; everything else succeeded.
    missing = {"mcp_reconnect", "mcp_toggle", "set_mcp_permission_mode_override",
               "mcp_call", "mcp_message", "mcp_clear_auth", "mcp_authenticate",
               "mcp_oauth_callback_url"}
    for subtype in set(answers) - NOT_AVAILABLE - WRONG_WAY - missing:
        assert answers[subtype]["subtype"] == "success", answers[subtype]
    for subtype in missing:
        assert answers[subtype]["error_code"] == "not_found", answers[subtype]
    assert answers["generate_session_title"]["response"] == {"title": "Parser fixes"}
    assert answers["side_question"]["response"] == {"response": "Nothing is left.",
                                                    "synthetic": False}
    assert proc.proc.wait(10) == 0  # end_session ended it, stdin still open


def test_workspace_requests(duplex, wisp, tmp_path):
    (wisp.cwd / "src").mkdir()
    (wisp.cwd / "src" / "parser.py").write_text("x = 1\n")
    (wisp.cwd / "README.md").write_text("r\n")
    proc = duplex()
    version = proc.call("get_binary_version")["response"]
    assert version["version"] == proc.initialize()["response"]["claude_code_version"]
    found = proc.call("file_suggestions", query="pars")["response"]["suggestions"]
    assert found[0] == {"path": "src/parser.py", "displayText": "src/parser.py", "type": "file"}
    assert proc.call("get_workspace_diff")["response"] == {"diff": None}  # not a repository
    other = tmp_path / "elsewhere"
    other.mkdir()
    added = proc.call("register_repo_root", directory=str(other))["response"]
    assert added == {"directory": str(other.resolve())}
    missing = proc.call("set_cwd", path=str(tmp_path / "nope"))["response"]
    assert (missing["status"], missing["changed"]) == ("not_found", False)
    moved = proc.call("set_cwd", path=str(other))["response"]
    assert (moved["status"], moved["cwd"], moved["changed"]) == ("ok", str(other.resolve()),
                                                                 True)
    assert proc.finish() == 0


def test_workspace_diff_in_a_repository(duplex, wisp):
    git = ["git", "-C", str(wisp.cwd), "-c", "user.name=t", "-c", "user.email=t@t"]
    (wisp.cwd / "a.txt").write_text("one\n")
    for args in (["init", "-q"], ["add", "a.txt"], ["commit", "-qm", "first"]):
        subprocess.run([*git, *args], check=True, capture_output=True)
    (wisp.cwd / "a.txt").write_text("two\n")
    (wisp.cwd / "new.txt").write_text("n\n")
    proc = duplex()
    diff = proc.call("get_workspace_diff")["response"]
    assert "-one\n+two" in diff["diff"] and diff["untracked"] == ["new.txt"]
    assert diff["truncated"] is False
    assert proc.finish() == 0


def test_workspace_diff_runs_none_of_the_repositorys_own_commands(duplex, wisp, tmp_path):
    """A cloned repository's `.git/config` can name commands read-only git would run
    (fsmonitor, filter drivers, textconv): the host's diff must run none of them."""
    git = ["git", "-C", str(wisp.cwd), "-c", "user.name=t", "-c", "user.email=t@t"]
    (wisp.cwd / "a.txt").write_text("one\n")
    (wisp.cwd / ".gitattributes").write_text("*.txt filter=evil diff=evil\n")
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "first"]):
        subprocess.run([*git, *args], check=True, capture_output=True)
    ran = tmp_path / "ran"
    for key in ("core.fsmonitor", "filter.evil.clean", "filter.evil.process",
                "filter.evil.smudge", "diff.evil.textconv", "diff.evil.command"):
        subprocess.run([*git, "config", key, f"echo {key} >> {ran}; cat"], check=True)
    (wisp.cwd / "a.txt").write_text("two\n")
    os.utime(wisp.cwd / "a.txt", (0, 0))  # a stale stat: git must look at the content
    proc = duplex()
    diff = proc.call("get_workspace_diff")["response"]
    assert "-one\n+two" in diff["diff"]
    assert proc.finish() == 0
    assert not ran.exists(), ran.read_text()


def test_a_queued_prompt_can_be_cancelled(duplex, server):
    server.script(reply.text("first", delay=1.0), reply.text("third"))
    proc = duplex()
    proc.initialize()
    for number, text in enumerate(("one", "two", "three")):
        proc.send({"type": "user", "uuid": f"m{number}", "session_id": "",
                   "message": {"role": "user", "content": text}})
    assert proc.call("cancel_async_message", message_uuid="m1")["response"] == {
        "cancelled": True}
    assert proc.call("cancel_async_message", message_uuid="m1")["response"] == {
        "cancelled": False}
    assert proc.finish() == 0
    prompts = [json.dumps(r.body["messages"]) for r in server.requests]
    assert len(prompts) == 2 and "two" not in prompts[1] and "three" in prompts[1]
