"""Slash commands in prompts, in process: routing (wisp.commands.prompts) and what a
`Runtime` does for /compact, /clear and a custom command, with the transcript and the
hooks around them."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from wisp.commands.prompts import (
    LocalCommand,
    expand_prompt,
    listing,
    local_command,
    names,
    prompt_text,
)
from wisp.engine import events as ev
from wisp.engine.compaction import SUMMARY_PREFIX
from wisp.runtime.config import RuntimeConfig
from wisp.runtime.runtime import Runtime
from wisp.sessions.load import load_conversation
from wisp.settings.trust import record
from wisp.testing import ScriptedModel, reply

JSON = dict[str, Any]


@pytest.fixture
def place(tmp_path: Path) -> tuple[Path, Path]:
    cwd, config = tmp_path / "work", tmp_path / "config"
    (cwd / ".claude" / "commands").mkdir(parents=True)
    (config / "commands").mkdir(parents=True)
    (cwd / ".claude" / "commands" / "greet.md").write_text(
        "---\ndescription: Greets\nargument-hint: <name>\n---\nSay hello to $ARGUMENTS.\n")
    (config / "commands" / "mine.md").write_text("Mine: $1\n")
    (cwd / ".claude" / "commands" / "compact.md").write_text("shadowed by the built-in\n")
    return cwd, config


# Routing -----------------------------------------------------------------------------


def test_built_ins_and_their_aliases() -> None:
    assert local_command("/compact keep it short") == LocalCommand("compact", "keep it short")
    assert local_command("/clear") == LocalCommand("clear", "")
    assert local_command("/reset") == local_command("/new") == LocalCommand("clear", "")
    assert local_command([{"type": "text", "text": "/compact"}]) == LocalCommand("compact", "")
    for prompt in ("compact", " /compact", "/tmp/x is empty", "/compacting",
                   [{"type": "text", "text": "/clear"}, {"type": "text", "text": "more"}]):
        assert local_command(prompt) is None


def test_prompt_text_is_only_for_plain_text() -> None:
    assert prompt_text("hi") == "hi"
    assert prompt_text([{"type": "text", "text": "hi"}]) == "hi"
    assert prompt_text([{"type": "image", "source": {}}]) is None


def test_a_custom_command_expands_as_the_reference_sends_it(place: tuple[Path, Path]) -> None:
    cwd, config = place
    assert expand_prompt("/greet Ann Lee", cwd, config) == [
        {"type": "text", "text": "<command-message>greet</command-message>\n"
                                 "<command-name>/greet</command-name>\n"
                                 "<command-args>Ann Lee</command-args>"},
        {"type": "text", "text": "Say hello to Ann Lee."}]
    assert expand_prompt("/mine a b", cwd, config)[1]["text"] == "Mine: a"  # type: ignore[index]
    for prompt in ("/unknown x", "/tmp/file", "plain", "/compact"):
        assert expand_prompt(prompt, cwd, config) == prompt


def test_the_lists_for_initialize_and_init(place: tuple[Path, Path]) -> None:
    cwd, config = place
    assert listing(cwd, config) == [
        {"name": "compact", "description": "shadowed by the built-in (project)",
         "argumentHint": ""},
        {"name": "greet", "description": "Greets (project)", "argumentHint": "<name>"},
        {"name": "mine", "description": "Mine: $1 (user)", "argumentHint": ""},
        {"name": "clear", "description": "Start a new session with empty context",
         "argumentHint": "", "aliases": ["reset", "new"], "builtin": True},
        {"name": "compact", "description": "Free up context by summarizing the conversation "
         "so far", "argumentHint": "<optional custom summarization instructions>",
         "builtin": True}]
    assert names(cwd, config) == ["compact", "greet", "mine", "clear"]


@pytest.mark.parametrize("sources", [("user",), ("project",), ("user", "project")])
def test_the_settings_sources_decide_whose_commands_count(
        place: tuple[Path, Path], sources: tuple[str, ...]) -> None:
    """As the reference: `--setting-sources user` leaves the project's commands out (the
    official SDK's e2e test_setting_sources_user_only checks system/init for it)."""
    from wisp.project.context import ProjectContext

    cwd, config = place
    project = ProjectContext(cwd, config, sources, (), ())
    listed = names(cwd, config, project)
    assert ("greet" in listed, "mine" in listed) == ("project" in sources, "user" in sources)
    expanded = expand_prompt("/greet Ada", cwd, config, project)
    assert (expanded != "/greet Ada") is ("project" in sources)


# The runtime ---------------------------------------------------------------------------


class Sink:
    def __init__(self) -> None:
        self.events: list[ev.Event] = []
        self.costs: list[float] = []  # the session's, as each result reports it

    def emit(self, event: ev.Event) -> None:
        self.events.append(event)
        if isinstance(event, ev.RunFinished):
            self.costs.append(event.stats.session_usage.cost_usd)

    def of(self, kind: type[Any]) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]


def runtime(cwd: Path, config: Path, model: ScriptedModel, **env: str) -> tuple[Runtime, Sink]:
    log = cwd.parent / "hooks.jsonl"
    hook = {"type": "command", "command": f"cat >> {log}; echo >> {log}"}
    events = ("PreCompact", "SessionStart", "SessionEnd")
    (cwd / ".claude" / "settings.json").write_text(json.dumps(
        {"hooks": {e: [{"hooks": [hook]}] for e in events}}))
    base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(cwd.parent),
            "CLAUDE_CONFIG_DIR": str(config), "ANTHROPIC_API_KEY": "sk-test", **env}
    record(cwd, base, hasTrustDialogAccepted=True)  # the project's hooks need trust
    sink = Sink()
    rt = Runtime.open(RuntimeConfig(cwd=cwd, env=base, setting_sources=("project",),
                                    permission_mode="bypassPermissions",
                                    permission_mode_set=True, bypass_allowed=True),
                      sink, model=model)
    return rt, sink


def hook_log(cwd: Path) -> list[JSON]:
    path = cwd.parent / "hooks.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_compact_summarises_and_the_transcript_resumes_from_the_summary(
        place: tuple[Path, Path]) -> None:
    cwd, config = place
    model = ScriptedModel(reply.text("noted"), reply.text("SUMMARY"))
    rt, sink = runtime(cwd, config, model)

    async def scenario() -> None:
        await rt.run_prompt("remember 42")
        await rt.run_prompt("/compact keep the numbers")
        await rt.aclose()

    asyncio.run(scenario())
    [finished] = [e for e in sink.of(ev.RunFinished) if e.local_command]
    assert finished.local_command == "compact" and finished.outcome.text == ""
    assert finished.stats.num_turns == 0
    [compacted] = sink.of(ev.Compacted)
    assert compacted.trigger == "manual" and compacted.summary == SUMMARY_PREFIX + "SUMMARY"
    assert [e.text for e in sink.of(ev.LocalCommandOutput)] == ["Compacted"]
    summary_request = model.requests[1].body["messages"][-1]["content"]
    assert "keep the numbers" in json.dumps(summary_request)
    assert rt.session.history == [{"role": "user", "content": SUMMARY_PREFIX + "SUMMARY"}]
    pre = [h for h in hook_log(cwd) if h["hook_event_name"] == "PreCompact"]
    assert [(h["trigger"], h["custom_instructions"]) for h in pre] == [
        ("manual", "keep the numbers")]
    # The transcript: a boundary that starts a new chain, then the summary; resuming
    # starts from the summary.
    path = Path(str(rt.session.transcript_path))
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    boundary = next(e for e in lines if e.get("subtype") == "compact_boundary")
    assert boundary["parentUuid"] is None and boundary["logicalParentUuid"]
    assert boundary["compactMetadata"]["trigger"] == "manual"
    resumed = load_conversation(path)
    assert resumed is not None
    assert resumed.history == [{"role": "user", "content": SUMMARY_PREFIX + "SUMMARY"}]
    assert "remember 42" not in json.dumps(resumed.history)


def test_compact_with_nothing_to_compact_says_so(place: tuple[Path, Path]) -> None:
    cwd, config = place
    model = ScriptedModel()
    rt, sink = runtime(cwd, config, model)
    outcome = asyncio.run(rt.run_prompt("/compact"))
    assert outcome.text == ""  # type: ignore[union-attr]
    [output] = sink.of(ev.LocalCommandOutput)
    assert output.failed and output.text == "Error: No messages to compact"
    assert model.requests == []


def test_clear_starts_a_fresh_conversation(place: tuple[Path, Path]) -> None:
    cwd, config = place
    model = ScriptedModel(reply.text("first"), reply.text("second"))
    rt, sink = runtime(cwd, config, model)
    old = rt.session.session_id
    announced: list[str] = []

    async def scenario() -> None:
        await rt.run_prompt("hello")
        await rt.run_prompt("/clear", uuid="clear-uuid",
                            announce=lambda: announced.append(rt.session.session_id))
        await rt.run_prompt("again")
        await rt.aclose()

    asyncio.run(scenario())
    [reset] = sink.of(ev.ConversationReset)
    new = rt.session.session_id
    assert reset.new_session_id == new != old and reset.user_message_uuid == "clear-uuid"
    assert announced == [new]  # the front end's init names the new session
    # The model sees nothing of before; the cost starts again.
    assert model.requests[1].body["messages"] == [{"role": "user", "content": "again"}]
    finished = sink.of(ev.RunFinished)
    assert finished[1].local_command == "clear"
    assert sink.costs[1] == 0
    assert sink.costs[2] == finished[2].stats.run_usage.cost_usd > 0
    assert Path(str(rt.session.transcript_path)).name == f"{new}.jsonl"
    hooks = [(h["hook_event_name"], h.get("source") or h.get("reason"), h["session_id"])
             for h in hook_log(cwd) if h["hook_event_name"] != "PreCompact"]
    assert hooks == [("SessionStart", "startup", old), ("SessionEnd", "clear", old),
                     ("SessionStart", "clear", new), ("SessionEnd", "other", new)]


def test_a_custom_command_reaches_the_model_expanded(place: tuple[Path, Path]) -> None:
    cwd, config = place
    model = ScriptedModel(reply.text("hello Ann"))
    rt, _ = runtime(cwd, config, model)
    asyncio.run(rt.run_prompt("/greet Ann"))
    sent = model.requests[0].body["messages"][-1]["content"]
    assert [b["text"] for b in sent][-1] == "Say hello to Ann."


def test_checkpoints_through_the_runtime_and_a_subagent(place: tuple[Path, Path]) -> None:
    cwd, config = place
    model = ScriptedModel(
        reply.tool_use("Write", {"file_path": str(cwd / "a.txt"), "content": "one\n"}),
        reply.text("wrote"),
        reply.tool_use("Task", {"description": "write b", "prompt": "write b"}),
        reply.tool_use("Write", {"file_path": str(cwd / "b.txt"), "content": "b\n"}),
        reply.text("sub done"),
        reply.text("parent done"))
    rt, _ = runtime(cwd, config, model, CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING="true")

    async def scenario() -> None:
        await rt.run_prompt("write a", uuid="m1")
        await rt.run_prompt("delegate", uuid="m2")

    asyncio.run(scenario())
    assert (cwd / "b.txt").exists()
    assert rt.rewind_files("m2", dry_run=True) == {
        "canRewind": True, "filesChanged": [str(cwd / "b.txt")], "insertions": 0,
        "deletions": 1}
    assert rt.rewind_files("m1")["canRewind"] is True
    assert not (cwd / "a.txt").exists() and not (cwd / "b.txt").exists()
    assert rt.checkpoints is not None
    assert rt.checkpoints.folder == config / "file-history" / rt.session.session_id


def test_checkpoints_off(place: tuple[Path, Path]) -> None:
    cwd, config = place
    rt, _ = runtime(cwd, config, ScriptedModel())
    assert rt.rewind_files("m1", dry_run=True) == {
        "canRewind": False, "error": "File rewinding is not enabled."}
