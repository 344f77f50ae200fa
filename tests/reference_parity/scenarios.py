"""The scenarios recorded from the reference CLI and replayed against wisp: hook semantics
(`hooks/`) and control requests (`control/`), each with the digest that is compared.

A digest keeps what clients depend on and drops what differs by nature (ids, paths,
timings, token counts of two different system prompts, the reference's own wording of
notes to the model). Where wisp differs on purpose, the scenario says so in `wisp_differs`:
those digest keys are compared with wisp's own expected value instead.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.reference_parity.driver import Run, Scenario, Step, control, user
from wisp.testing import reply

JSON = dict[str, Any]
ROOT = Path(__file__).resolve().parents[2]
CALC = ROOT / "tests" / "mcp" / "calc_server.py"
ABSENT = "<absent>"


@dataclass
class Case:
    kind: str  # "hooks" | "control": the fixture folder
    scenario: Scenario
    digest: Callable[[Run, Scenario], JSON]
    # digest key → the value wisp gives instead, where it differs from the reference on purpose
    wisp_differs: JSON = field(default_factory=dict)


def once(answer: JSON) -> Callable[[JSON, int], JSON]:
    """The first call gets `answer`; later ones (the next prompt's) get no opinion."""
    return lambda _input, count: answer if count == 1 else {}


def hooks_for(event: str) -> JSON:
    return {"subtype": "initialize", "hooks": {event: [{"matcher": None,
                                                        "hookCallbackIds": ["h"]}]}}


def bash(command: str = "echo hi") -> Any:
    return reply.tool_use("Bash", {"command": command, "description": "run it"})


def two_prompts(event: str, answer: JSON, replies: list[Any], name: str) -> Scenario:
    """A hook answers the first prompt's call; the second prompt shows what was kept."""
    return Scenario(
        name=name,
        steps=[Step({"type": "control_request", "request_id": "init", "request": hooks_for(event)},
                    response="init"),
               Step(user("go"), results=1), Step(user("again"), results=2)],
        replies=[*replies, reply.text("answer two")],
        hooks={"h": once(answer)},
        prompts=("go", "again"),
    )


def command_hook(event: str, command: str, name: str, replies: list[Any],
                 args: tuple[str, ...] = ()) -> Scenario:
    return Scenario(
        name=name, steps=[Step(user("go"), results=1)], replies=replies, args=args,
        settings={"hooks": {event: [{"matcher": "*", "hooks": [
            {"type": "command", "command": command}]}]}},
        prompts=("go",))


# Digests ---------------------------------------------------------------------------------


def _or_absent(frame: JSON, key: str) -> Any:
    return frame.get(key, ABSENT)


def result_digest(frame: JSON) -> JSON:
    digest = {key: _or_absent(frame, key) for key in (
        "subtype", "is_error", "num_turns", "stop_reason", "terminal_reason", "result",
        "origin", "user_message_uuid", "user_message_uuids")}
    digest["errors"] = frame.get("errors") or []
    digest["denied"] = [d.get("tool_name") for d in frame.get("permission_denials") or []]
    return digest


def tool_result_digest(frame: JSON) -> list[JSON]:
    metas = frame.get("tool_result_meta") or [{}]
    found = []
    for block, meta in zip(frame["message"]["content"], metas, strict=False):
        if block.get("type") != "tool_result":
            continue
        content = block.get("content")
        found.append({
            "content": content if isinstance(content, str) else "<blocks>",
            "is_error": bool(block.get("is_error")),
            "non_execution_kind": meta.get("non_execution_kind", ABSENT),
            "permission_decision": _decision(meta.get("permission_decision")),
        })
    return found


def _decision(found: Any) -> Any:
    """A hook's decision whole; of others (rules, modes: not these scenarios' subject) only
    whether the call was accepted."""
    if not isinstance(found, dict):
        return ABSENT
    return found if found.get("source") == "hook" else {"decision": found.get("decision")}


def _texts(message: JSON) -> list[str]:
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    return [b.get("text", "") if b.get("type") == "text" else str(b.get("content", ""))
            for b in content or [] if isinstance(b, dict)]


def prompts_seen(run: Run, scenario: Scenario) -> list[list[str]]:
    """For each model request, which of the scenario's prompts its user turns carry."""
    return [[text.strip() for m in body["messages"] if m.get("role") == "user"
             for text in _texts(m) if text.strip() in scenario.prompts]
            for body in run.requests]


def conversation(run: Run, scenario: Scenario) -> JSON:
    out = run.out()
    informational = [
        {k: v for k, v in f.items() if k not in ("type", "subtype", "uuid", "session_id")}
        for f in out if f.get("type") == "system" and f.get("subtype") == "informational"]
    return {
        "results": [result_digest(f) for f in out if f.get("type") == "result"],
        "informational": informational,
        "tool_results": [r for f in out if f.get("type") == "user" and f.get("tool_result_meta")
                         for r in tool_result_digest(f)],
        "permission_denied_frames": len([f for f in out if f.get("subtype")
                                         == "permission_denied"]),
        "model_requests": len(run.requests),
        "prompts_seen": prompts_seen(run, scenario),
        "returncode": run.returncode,
    }


def without(*paths: str) -> Callable[[Run, Scenario], JSON]:
    """`conversation`, less the listed keys (`key` or `key.N.field`)."""
    def digest(run: Run, scenario: Scenario) -> JSON:
        found = conversation(run, scenario)
        for path in paths:
            _drop(found, path.split("."))
        return found
    return digest


def _drop(value: Any, parts: list[str]) -> None:
    head, rest = parts[0], parts[1:]
    if isinstance(value, list):
        for item in (value if head == "*" else [value[int(head)]]):
            _drop(item, rest) if rest else None
        return
    if not rest:
        value.pop(head, None)
    elif head in value:
        _drop(value[head], rest)


def responses(run: Run) -> dict[str, list[JSON]]:
    """Every answer to our requests, by request id (a list: a request may be answered
    more than once)."""
    found: dict[str, list[JSON]] = {}
    for frame in run.out():
        if frame.get("type") == "control_response":
            response = frame["response"]
            found.setdefault(str(response.get("request_id")), []).append(response)
    return found


# Hooks -------------------------------------------------------------------------------------

STOP = {"continue": False, "stopReason": "halt now"}
DENY = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                               "permissionDecisionReason": "not this one"}}
WRITE = reply.tool_use("Write", {"file_path": "note.txt", "content": "hi\n"})

HOOKS: list[Case] = [
    Case("hooks", two_prompts("UserPromptSubmit", {"decision": "block", "reason": "not today"},
                              [], "ups_block"), conversation),
    Case("hooks", two_prompts("UserPromptSubmit", {"decision": "block"}, [],
                              "ups_block_no_reason"), conversation),
    Case("hooks", two_prompts("UserPromptSubmit", STOP, [], "ups_continue_false"),
         conversation),
    Case("hooks", two_prompts("UserPromptSubmit", {"continue": False}, [],
                              "ups_continue_false_no_reason"), conversation),
    Case("hooks", two_prompts("PreToolUse", STOP, [bash(), reply.text("after")],
                              "pre_tool_use_continue_false"), conversation),
    Case("hooks", two_prompts("PostToolUse", STOP, [bash(), reply.text("after")],
                              "post_tool_use_continue_false"), conversation),
    Case("hooks", two_prompts("Stop", STOP, [reply.text("done")], "stop_continue_false"),
         conversation),
    Case("hooks", two_prompts("PreToolUse", DENY, [bash(), reply.text("after")],
                              "pre_tool_use_deny"), conversation),
    Case("hooks", two_prompts("PreToolUse", {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny"}},
        [bash(), reply.text("after")], "pre_tool_use_deny_no_reason"), conversation),
    Case("hooks", two_prompts("PreToolUse", {"decision": "block", "reason": "blocked!"},
                              [bash(), reply.text("after")], "pre_tool_use_block"),
         conversation),
    # The Write tool's own words differ (wisp's names the absolute path): not compared.
    Case("hooks", two_prompts("PreToolUse", {"decision": "approve", "reason": "fine"},
                              [WRITE, reply.text("after")], "pre_tool_use_approve"),
         without("tool_results.*.content")),
    # A PermissionRequest hook's refusal is reported like a rule's (permission_denied).
    Case("hooks", two_prompts("PermissionRequest", {"hookSpecificOutput": {
        "hookEventName": "PermissionRequest", "decision": {"behavior": "deny",
                                                           "message": "no writes"}}},
        [WRITE, reply.text("after")], "permission_request_deny"), conversation),
    Case("hooks", two_prompts("PreToolUse", {"systemMessage": "a note for the user",
                                             "suppressOutput": True},
                              [bash(), reply.text("after")], "pre_tool_use_system_message"),
         conversation),
    Case("hooks", command_hook("PreToolUse", "echo 'no shell today' >&2; exit 2",
                               "command_pre_tool_use_exit_2", [bash(), reply.text("after")]),
         conversation),
    # The reference's `prompt_submit_outcome.reason` is the bare stderr; wisp's the reason
    # as the model reads it, "[command]: stderr".
    Case("hooks", command_hook("UserPromptSubmit", "echo 'not now' >&2; exit 2",
                               "command_ups_exit_2", []),
         without("informational.*.prompt_submit_outcome")),
    Case("hooks", command_hook(
        "PostToolUse", "echo '{\"systemMessage\": \"post note\", \"suppressOutput\": true}'",
        "command_post_tool_use_system_message", [bash(), reply.text("after")]), conversation),
    Case("hooks", Scenario(
        name="budget_single_turn", args=("--max-budget-usd", "0.001"),
        steps=[Step(user("go"), results=1), Step(user("again"), results=2)],
        replies=[reply.text("only answer"), reply.text("never sent")], prompts=("go", "again")),
        conversation),
    Case("hooks", Scenario(
        name="budget_tool_turn", args=("--max-budget-usd", "0.001"),
        steps=[Step(user("go"), results=1)], replies=[bash(), reply.text("never sent")],
        prompts=("go",)), conversation),
    Case("hooks", Scenario(
        name="result_origin",
        steps=[Step(user("p1", origin={"kind": "human"},
                         uuid="11111111-2222-3333-4444-555555555555"), results=1),
               Step(user("p2", origin={"kind": "human", "extra": 1}), results=2),
               Step(user("p3", origin={"kind": "task-notification"}), results=3),
               Step(user("p4", origin="human"), results=4),
               Step(user("p5"), results=5)],
        replies=[reply.text(f"a{i}") for i in range(1, 6)],
        prompts=("p1", "p2", "p3", "p4", "p5")),
        without("prompts_seen")),
]


# Control -----------------------------------------------------------------------------------


def _calc(*extra: str) -> JSON:
    return {"command": sys.executable, "args": [str(CALC), *extra]}


def status_digest(answer: JSON) -> list[JSON]:
    rows = []
    for row in answer.get("mcpServers") or []:
        entry = {k: _or_absent(row, k) for k in ("name", "status", "transport", "scope",
                                                 "source", "tools")}
        entry["serverInfo"] = (row["serverInfo"].get("name") if "serverInfo" in row
                               else ABSENT)
        entry["config"] = row["config"].get("type") if "config" in row else ABSENT
        entry["error"] = "error" in row
        rows.append(entry)
    return rows


def set_servers_digest(answer: JSON) -> JSON:
    return {"added": answer.get("added"), "removed": answer.get("removed"),
            "errors": sorted(answer.get("errors") or {})}


def mcp_digest(run: Run, scenario: Scenario) -> JSON:
    answers = responses(run)
    digest: JSON = {}
    for rid, [first, *_] in answers.items():
        body = first.get("response") or {}
        if rid.startswith("status"):
            digest[rid] = status_digest(body)
        elif rid.startswith("set"):
            digest[rid] = (set_servers_digest(body) if first["subtype"] == "success"
                           else {"error": first.get("error")})
    out = run.out()
    inits = [f for f in out if f.get("type") == "system" and f.get("subtype") == "init"]
    digest["init_mcp_servers"] = [sorted([s["name"], s["status"]] for s in f["mcp_servers"])
                                  for f in inits]
    # Whether each tool ran (their words, and how an MCP result becomes text, differ).
    digest["tools_failed"] = [r["is_error"] for f in out if f.get("type") == "user"
                              and f.get("tool_result_meta") for r in tool_result_digest(f)]
    return digest


def queries_digest(run: Run, scenario: Scenario) -> JSON:
    answers = {rid: found[0] for rid, found in responses(run).items()}
    work = str(run.work.resolve())

    def body(rid: str) -> JSON:
        answer = answers[rid]
        return answer.get("response") or {} if answer["subtype"] == "success" else {
            "error": answer.get("error")}

    usage = body("usage")
    models = body("models")
    read = {rid: {k: (v.replace(work, "<work>") if isinstance(v, str) else v)
                  for k, v in body(rid).items()}
            for rid in answers if rid.startswith("read")}
    return {
        "usage_keys": sorted(usage), "usage_session_keys": sorted(usage.get("session") or {}),
        "usage_nulls": {k: usage.get(k) for k in ("subscription_type", "rate_limits_available",
                                                   "rate_limits", "behaviors")},
        "models_keys": sorted({k for m in models.get("models") or [] for k in m}
                              & {"value", "resolvedModel", "displayName", "description"}),
        "model_values": [m.get("value") for m in models.get("models") or []],
        "cost_labels": [line.split(":")[0].strip() for line in body("cost")["text"].splitlines()],
        "skills": sorted(body("skills")),
        "plan": body("plan"),
        "read": read,
    }


def duplicates_digest(run: Run, scenario: Scenario) -> JSON:
    answers = responses(run)
    return {"answers_to_dup": len(answers.get("dup", [])),
            "answers_to_after": [a["subtype"] for a in answers.get("after", [])]}


INIT = control("init", "initialize", hooks=None)
CONTROL: list[Case] = [
    Case("control", Scenario(
        name="mcp_set_servers",
        steps=[Step(control("init", "initialize", hooks=None, sdkMcpServers=["alpha"]),
                    response="init"),
               Step(control("set_1", "mcp_set_servers", servers={
                   "calc": _calc(), "beta": {"type": "sdk", "name": "beta"}}),
                    response="set_1"),
               Step(user("use the tools"), results=1),
               Step(control("status_2", "mcp_status"), response="status_2"),
               Step(control("set_2", "mcp_set_servers", servers={
                   "beta": {"type": "sdk", "name": "beta"},
                   "bad": {"type": "stdio", "command": "/nonexistent/mcp-server"}}),
                    response="set_2"),
               Step(control("status_3", "mcp_status"), response="status_3"),
               Step(control("set_3", "mcp_set_servers", servers={"beta": {
                   "type": "sdk", "name": "beta"}}), response="set_3"),
               Step(control("set_4", "mcp_set_servers", servers={}), response="set_4"),
               Step(control("status_4", "mcp_status"), response="status_4"),
               Step(control("set_bad", "mcp_set_servers", servers={"x": 5}),
                    response="set_bad")],
        args=("--permission-mode", "bypassPermissions"),
        replies=[reply.tool_use("mcp__calc__add", {"a": 2, "b": 3}),
                 reply.tool_use("mcp__beta__pong", {"x": "y"}), reply.text("done")],
        sdk_tools={"alpha": ["ping"], "beta": ["pong"]}),
        # Statuses are read after a turn: a call's SDK-hosted servers connect before wisp
        # answers it, while the reference leaves them pending until the next turn.
        mcp_digest),
    Case("control", Scenario(
        name="queries",
        steps=[Step(INIT, response="init"),
               Step(control("usage", "get_usage"), response="usage"),
               Step(control("models", "list_models"), response="models"),
               Step(control("cost", "get_session_cost"), response="cost"),
               Step(control("skills", "reload_skills"), response="skills"),
               Step(control("plan", "get_plan"), response="plan"),
               Step(control("read_text", "read_file", path="hello.txt"), response="read_text"),
               Step(control("read_head", "read_file", path="hello.txt", max_bytes=3),
                    response="read_head"),
               Step(control("read_b64", "read_file", path="hello.txt", encoding="base64"),
                    response="read_b64"),
               Step(control("read_missing", "read_file", path="missing.txt"),
                    response="read_missing"),
               Step(control("read_outside", "read_file", path="/etc/hostname"),
                    response="read_outside"),
               Step(control("read_folder", "read_file", path="."), response="read_folder"),
               Step(control("read_no_path", "read_file"), response="read_no_path")],
        files={"hello.txt": "hello world\n"}),
        # Shapes are compared: the reference lists its own skills, wisp has none.
        queries_digest),
    Case("control", Scenario(
        name="duplicate_request_id",
        steps=[Step(INIT, response="init"),
               Step(control("dup", "get_context_usage")),
               Step(control("dup", "get_context_usage"), response="dup", sleep=2.0),
               Step(control("after", "mcp_status"), response="after")]),
        duplicates_digest,
        # The reference runs a repeated request id twice and answers twice; wisp answers once.
        wisp_differs={"answers_to_dup": 1}),
]

CASES: dict[str, Case] = {case.scenario.name: case for case in [*HOOKS, *CONTROL]}
