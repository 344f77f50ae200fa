"""Slash commands in prompts, observed the same way on wisp and on the reference CLI.

Each scenario returns named observations, reduced to what must agree (no uuids, times,
costs or temporary paths). `tests/fixtures/reference/commands/*.json` holds the reference's;
test_reference_commands.py checks wisp, and a fresh reference run, against them.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from tests.refrun import Duplex, Place, kind, print_run
from wisp.testing import ScriptedServer, reply

JSON = dict[str, Any]
CUSTOM = ("greet", "mine", "sub:deep")
GREET = ("---\ndescription: Greets someone\nargument-hint: <name>\n---\n"
         "Say hello to $ARGUMENTS please.\n")


def commands_place(tmp: Path, server: ScriptedServer) -> Place:
    """A project command (with front matter), a nested one, a user one, and a PreCompact
    hook that logs its input."""
    place = Place(tmp, server)
    project = place.work / ".claude" / "commands"
    (project / "sub").mkdir(parents=True)
    (project / "greet.md").write_text(GREET)
    (project / "sub" / "deep.md").write_text("Deep command body $1 / $2\n")
    (place.config / "commands").mkdir()
    (place.config / "commands" / "mine.md").write_text("User command with $ARGUMENTS\n")
    log = tmp / "precompact.jsonl"
    hook = {"type": "command", "command": f"cat >> {log}; echo >> {log}"}
    (place.work / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": {"PreCompact": [{"hooks": [hook]}]}}))
    place.trust()  # the project's hook runs only in a trusted folder, in both CLIs
    return place


# Left out of the frame sequences compared: where `system/init` falls differs (the
# reference sends it after /compact's status frames, wisp before them); the reference's
# `system/background_tasks_changed` after /clear (wisp has no background tasks to report)
# and its `command_lifecycle` frames for a prompt that carries a uuid (not slash-command
# behaviour).
NOT_COMPARED = ("system/init", "system/background_tasks_changed", "command_lifecycle")


def _without_init(frames: list[JSON]) -> list[str]:
    return [kind(f) for f in frames if kind(f) not in NOT_COMPARED]


def _local_result(frame: JSON) -> JSON:
    keys = ("subtype", "is_error", "num_turns", "result", "local_command", "stop_reason")
    seen = {k: frame.get(k) for k in keys}
    seen["has_terminal_reason"] = "terminal_reason" in frame
    return seen


def _texts(message: JSON) -> list[str]:
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    return [b.get("text", "") for b in content or [] if isinstance(b, dict)
            and b.get("type") == "text"]


def _last_user_texts(body: JSON) -> list[str]:
    users = [m for m in body.get("messages") or [] if m.get("role") == "user"]
    return _texts(users[-1]) if users else []


def _all_texts(body: JSON) -> list[str]:
    return [t for m in body.get("messages") or [] for t in _texts(m)]


def _main_requests(server: ScriptedServer, start: int) -> list[JSON]:
    """Requests of the agent loop (they offer tools), not the CLI's side calls."""
    return [r.body for r in server.requests[start:]
            if isinstance(r.body, dict) and r.body.get("tools")]


def duplex_scenario(which: str, tmp: Path) -> JSON:
    """initialize's commands, system/init's slash_commands, custom commands, /compact
    (with instructions, a PreCompact hook, and what the next turn and the transcript
    hold), /clear, an unknown command."""
    seen: JSON = {}
    with ScriptedServer(default=reply.echo()) as server:
        place = commands_place(tmp, server)
        cli = Duplex(which, place)
        try:
            init = cli.control({"subtype": "initialize", "hooks": None})["response"]
            rows = init["commands"]
            seen["initialize_custom_rows"] = [r for r in rows if "builtin" not in r]
            seen["initialize_builtin_rows"] = [
                {k: r.get(k) for k in ("name", "aliases", "builtin")}
                for r in rows if r.get("builtin") and r["name"] in ("clear", "compact")]
            seen["compact_row"] = next(r for r in rows if r["name"] == "compact"
                                       and r.get("builtin"))
            frames = cli.prompt("hi there")
            first_cost = frames[-1]["total_cost_usd"]
            slash = next(f for f in frames if kind(f) == "system/init")["slash_commands"]
            seen["slash_commands_custom"] = [n for n in slash if n in CUSTOM]
            seen["slash_commands_builtins"] = sorted(
                n for n in slash if n in ("clear", "compact"))
            for prompt in ("/greet Bob Smith", "/sub:deep a b", "/mine x y"):
                start = len(server.requests)
                frames = cli.prompt(prompt)
                texts = _last_user_texts(_main_requests(server, start)[-1])
                seen[f"model_input {prompt}"] = [t.strip() for t in texts[-2:]]
                seen[f"result {prompt}"] = frames[-1]["result"].strip()
            last_assistant = [f for f in cli.frames if f["type"] == "assistant"][-1]["uuid"]

            frames = cli.prompt("/compact keep the numbers")
            seen["compact_frames"] = _without_init(frames)
            boundary = next(f for f in frames if kind(f) == "system/compact_boundary")
            metadata = boundary["compact_metadata"]
            seen["compact_metadata"] = {"trigger": metadata["trigger"],
                                        "pre_tokens_positive": metadata["pre_tokens"] > 0,
                                        "has_duration_ms": "duration_ms" in metadata}
            seen["compact_logical_parent_is_last_message"] = (
                boundary.get("logical_parent_uuid") == last_assistant)
            summary, stdout = [f for f in frames if f["type"] == "user"]
            seen["compact_summary_flags"] = [summary.get("isReplay"), summary.get("isSynthetic")]
            seen["compact_stdout"] = [stdout.get("isReplay"),
                                      stdout["message"]["content"].startswith(
                                          "<local-command-stdout>Compacted")]
            seen["compact_result"] = _local_result(frames[-1])

            start = len(server.requests)
            cli.prompt("after compact")
            after = _all_texts(_main_requests(server, start)[-1])
            seen["after_compact_request"] = {
                "earlier_prompts": [t for t in after if t.strip() in (
                    "hi there", "Say hello to Bob Smith please.", "User command with x y")],
                "holds_summary": any(t.startswith("This session") and "echo:" in t
                                     for t in after),
                "holds_prompt": "after compact" in after}
            old_session = frames[-1]["session_id"]
            seen["compact_transcript"] = _boundary_lines(place, old_session, last_assistant)

            clear_uuid = str(uuid.uuid4())
            frames = cli.prompt("/clear", uuid=clear_uuid)
            seen["clear_frames"] = _without_init(frames)
            reset = next(f for f in frames if f["type"] == "conversation_reset")
            init = next(f for f in frames if kind(f) == "system/init")
            seen["clear_reset_keys"] = sorted(reset)
            new_session = init["session_id"]
            seen["clear_sessions"] = {
                "reset_names_old": reset["session_id"] == old_session,
                "conversation_id_is_frame_uuid": reset["new_conversation_id"] == reset["uuid"],
                "conversation_id_is_not_a_session_id": reset["new_conversation_id"] not in (
                    old_session, new_session),
                "init_names_new": new_session != old_session,
                "result_names_new": frames[-1]["session_id"] == new_session,
                "reset_before_init": frames.index(reset) < frames.index(init),
                "user_message_uuid": reset.get("user_message_uuid") == clear_uuid,
                "trigger": reset.get("trigger")}
            seen["clear_result"] = {**_local_result(frames[-1]),
                                    "total_cost_usd": frames[-1]["total_cost_usd"]}
            start = len(server.requests)
            frames = cli.prompt("after clear")
            after = _all_texts(_main_requests(server, start)[-1])
            seen["after_clear_request_earlier_prompts"] = [
                t for t in after if t.strip() in ("hi there", "after compact")
                or t.startswith("This session")]
            # The cost starts again from zero: one turn's, as the first turn's was.
            seen["after_clear_cost_restarts"] = (
                frames[-1]["total_cost_usd"] < 1.5 * first_cost)

            frames = cli.prompt("/nosuchcommand foo")
            seen["unknown_command_result"] = frames[-1]["result"]

            frames = cli.prompt("/compact")
            seen["compact_bare_frames"] = _without_init(frames)
        finally:
            code = cli.close()
        seen["exit_code"] = code
        log = (tmp / "precompact.jsonl").read_text().splitlines()
        seen["precompact_hooks"] = [
            {k: json.loads(e)[k] for k in ("hook_event_name", "trigger", "custom_instructions")}
            for e in log if e.strip()]
    return seen


def _boundary_lines(place: Place, session_id: str, leaf: str) -> JSON:
    """The compaction as recorded in the session's transcript."""
    [path] = [p for p in place.transcripts() if p.stem == session_id]
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.startswith("{")]
    boundary = next(e for e in lines if e.get("subtype") == "compact_boundary")
    summary = next(e for e in lines if e.get("parentUuid") == boundary["uuid"])
    return {
        "boundary": {"type": boundary["type"], "parentUuid": boundary["parentUuid"],
                     "logical_parent_is_leaf": boundary.get("logicalParentUuid") == leaf,
                     "content": boundary.get("content"),
                     "trigger": boundary["compactMetadata"]["trigger"],
                     "preTokens_positive": boundary["compactMetadata"]["preTokens"] > 0},
        "summary": {"type": summary["type"], "isCompactSummary": summary.get("isCompactSummary"),
                    "isVisibleInTranscriptOnly": summary.get("isVisibleInTranscriptOnly")},
    }


def print_scenario(which: str, tmp: Path) -> JSON:
    """The same commands as one-shot `-p` prompts: nothing to compact yet, a custom
    command, /compact of a resumed session and the turn after it, /clear."""
    seen: JSON = {}
    stream = ("--output-format", "stream-json", "--verbose")
    with ScriptedServer(default=reply.echo()) as server:
        place = commands_place(tmp, server)
        code, _, frames = print_run(which, place, "-p", "/compact", *stream)
        seen["fresh_compact_frames"] = [kind(f) for f in frames]
        error = frames[1]
        seen["fresh_compact_error"] = {
            "text": error["message"]["content"],
            "model": error["message"]["model"],
            "local_command_run": error.get("local_command_run"),
            "local_command_outcome": error.get("local_command_outcome"),
            "local_command_source": error.get("local_command_source")}
        seen["fresh_compact_result"] = {**_local_result(frames[-1]), "exit_code": code}
        code, out, _ = print_run(which, place, "-p", "/compact")
        seen["fresh_compact_text"] = [code, out]
        code, out, frames = print_run(which, place, "-p", "/compact", "--output-format", "json")
        seen["fresh_compact_json"] = {**_local_result(frames[0]), "exit_code": code}

        start = len(server.requests)
        code, _, frames = print_run(which, place, "-p", "/greet Ann", *stream)
        texts = _last_user_texts(_main_requests(server, start)[-1])
        seen["greet_model_input"] = [t.strip() for t in texts[-2:]]

        _, _, frames = print_run(which, place, "-p", "remember 42", *stream)
        session = frames[-1]["session_id"]
        code, _, frames = print_run(which, place, "-p", "/compact short please",
                                    "--resume", session, *stream)
        seen["resumed_compact_frames"] = _without_init(frames)
        boundary = next(f for f in frames if kind(f) == "system/compact_boundary")
        seen["resumed_compact_metadata"] = {
            "trigger": boundary["compact_metadata"]["trigger"],
            "pre_tokens_positive": boundary["compact_metadata"]["pre_tokens"] > 0}
        seen["resumed_compact_session_kept"] = frames[-1]["session_id"] == session
        start = len(server.requests)
        _, _, frames = print_run(which, place, "-p", "what number?", "--resume", session,
                                 *stream)
        after = _all_texts(_main_requests(server, start)[-1])
        seen["after_resumed_compact_request"] = {
            "earlier_prompt": [t for t in after if t.strip() == "remember 42"],
            "earlier_answer": [t for t in after if t.strip() == "echo: remember 42"],
            "holds_summary": any(t.startswith("This session") for t in after),
            "holds_prompt": "what number?" in after}

        code, _, frames = print_run(which, place, "-p", "/clear", "--resume", session, *stream)
        kinds = [kind(f) for f in frames if kind(f) not in NOT_COMPARED[1:]]
        seen["clear_frames"] = kinds
        reset = frames[0]
        init = next(f for f in frames if kind(f) == "system/init")
        seen["clear_sessions"] = {"reset_names_old": reset["session_id"] == session,
                                  "init_names_new": init["session_id"] != session,
                                  "result_names_new": frames[-1]["session_id"]
                                  == init["session_id"]}
        seen["clear_result"] = {**_local_result(frames[-1]), "exit_code": code}
        code, out, _ = print_run(which, place, "-p", "/clear")
        seen["clear_text"] = [code, out]
    return seen
