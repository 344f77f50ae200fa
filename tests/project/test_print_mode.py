"""`wisp -p` reads the project's files the way Claude Code users keep them, and the model
receives what they say: CLAUDE.md memory (with imports), file agents, skills (the body
only once asked for), the output style, and a plugin's command, agent, hook and MCP
server. Each test runs the real `wisp` against the scripted Messages API server."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import Runner
from tests.mcp.conftest import gone, needs_mcp, pids
from tests.project import tree
from wisp.testing import ScriptedServer, reply

STREAM = ("--output-format", "stream-json", "--verbose")


def config_dir(wisp: Runner) -> Path:
    return Path(wisp.env["WISP_CONFIG_DIR"])


# ---- memory ---------------------------------------------------------------------------


def test_claude_md_files_and_their_imports_reach_the_model_in_order(wisp: Runner,
                                                                   server: ScriptedServer):
    tree.memory_files(wisp.cwd, config_dir(wisp))
    server.script(reply.text("ok"))
    run = wisp("-p", "hello", *STREAM)
    assert run.returncode == 0, run.stderr
    text = tree.user_text(server.requests[0].body)
    order = [text.index(mark) for mark in (tree.USER_RULE, tree.PROJECT_RULE,
                                           tree.IMPORTED_RULE, tree.LOCAL_RULE)]
    assert order == sorted(order)
    # The model can tell which file each part came from.
    for path in (wisp.cwd / "CLAUDE.md", wisp.cwd / "docs" / "style.md",
                 wisp.cwd / "CLAUDE.local.md", config_dir(wisp) / "CLAUDE.md"):
        assert str(path) in text
    assert text.rstrip().endswith("hello")  # the prompt itself comes last
    [recall] = run.of_type("system", "memory_recall")
    assert [m["path"] for m in recall["memories"]] == [
        str(config_dir(wisp) / "CLAUDE.md"), str(wisp.cwd / "CLAUDE.md"),
        str(wisp.cwd / "docs" / "style.md"), str(wisp.cwd / "CLAUDE.local.md")]
    assert run.frames.index(recall) == 1  # right after system/init
    # Memory is context for each request, not part of the conversation's record.
    transcript = next(config_dir(wisp).glob("projects/*/*.jsonl")).read_text()
    assert tree.PROJECT_RULE not in transcript


def test_setting_sources_choose_which_memory_files_load(wisp: Runner, server: ScriptedServer):
    tree.memory_files(wisp.cwd, config_dir(wisp))
    server.script(reply.text("a"), reply.text("b"), reply.text("c"))
    wisp("-p", "x", "--setting-sources", "project")
    wisp("-p", "x", "--setting-sources", "user")
    wisp("-p", "x", "--setting-sources", "")
    project_only, user_only, none = (tree.user_text(r.body) for r in server.requests)
    assert tree.PROJECT_RULE in project_only and tree.IMPORTED_RULE in project_only
    assert tree.USER_RULE not in project_only and tree.LOCAL_RULE not in project_only
    assert tree.USER_RULE in user_only and tree.PROJECT_RULE not in user_only
    assert none == "x"


def test_no_memory_files_means_no_context_block_and_no_frame(wisp: Runner,
                                                              server: ScriptedServer):
    server.script(reply.text("ok"))
    run = wisp("-p", "plain", *STREAM)
    assert run.returncode == 0, run.stderr
    assert tree.user_text(server.requests[0].body) == "plain"
    assert run.of_type("system", "memory_recall") == []


# ---- agents ---------------------------------------------------------------------------


def test_an_agent_file_is_listed_and_task_runs_it_with_its_prompt(wisp: Runner,
                                                                  server: ScriptedServer):
    tree.agent_file(wisp.cwd)
    server.script(
        reply.tool_use("Task", {"description": "review", "prompt": "review the diff",
                                "subagent_type": "reviewer"}),
        reply.text("looks fine"), reply.text("done"))
    run = wisp("-p", "review please", *STREAM)
    assert run.returncode == 0, run.stderr
    assert "reviewer" in run.of_type("system", "init")[0]["agents"]
    task_tool = next(t for t in server.requests[0].body["tools"] if t["name"] == "Task")
    assert "reviewer" in task_tool["description"] and "Reviews diffs" in task_tool["description"]
    child = server.requests[1].body
    assert tree.AGENT_PROMPT in tree.system_text(child)
    assert {t["name"] for t in child["tools"]} == {"Read", "Grep"}


def test_an_explicit_agent_definition_wins_over_the_file(wisp: Runner, server: ScriptedServer):
    tree.agent_file(wisp.cwd)
    server.script(
        reply.tool_use("Task", {"description": "r", "prompt": "go",
                                "subagent_type": "reviewer"}),
        reply.text("ok"), reply.text("done"))
    agents = json.dumps({"reviewer": {"description": "flag one", "prompt": "FLAG-PROMPT"}})
    run = wisp("-p", "go", *STREAM, "--agents", agents)
    assert run.returncode == 0, run.stderr
    child = tree.system_text(server.requests[1].body)
    assert "FLAG-PROMPT" in child and tree.AGENT_PROMPT not in child
    assert run.of_type("system", "init")[0]["agents"].count("reviewer") == 1


# ---- skills ---------------------------------------------------------------------------


def test_a_skill_is_offered_by_name_and_its_body_loads_only_when_asked(
        wisp: Runner, server: ScriptedServer):
    folder = tree.skill(wisp.cwd)
    server.script(reply.tool_use("Skill", {"skill": "pdf"}), reply.text("done"))
    run = wisp("-p", "summarise the pdf", *STREAM)
    assert run.returncode == 0, run.stderr
    init = run.of_type("system", "init")[0]
    assert init["skills"] == ["pdf"] and "Skill" in init["tools"]
    assert "pdf" in init["slash_commands"]
    first = server.requests[0].body
    skill_tool = next(t for t in first["tools"] if t["name"] == "Skill")
    assert "pdf" in skill_tool["description"]
    assert "Work with PDF files" in skill_tool["description"]
    assert tree.SKILL_BODY not in tree.all_text(first)  # not before it is asked for
    result = next(b for b in server.requests[1].body["messages"][-1]["content"]
                  if b["type"] == "tool_result")
    loaded = json.dumps(result["content"])
    assert tree.SKILL_BODY in loaded and str(folder) in loaded
    assert "reference.md" in loaded  # the skill's other files are named, not sent


def test_no_skills_means_no_skill_tool(wisp: Runner, server: ScriptedServer):
    server.script(reply.text("ok"))
    run = wisp("-p", "x", *STREAM)
    assert "Skill" not in run.of_type("system", "init")[0]["tools"]
    assert "Skill" not in {t["name"] for t in server.requests[0].body["tools"]}


# ---- output styles --------------------------------------------------------------------


def test_the_local_settings_style_shapes_the_system_prompt(wisp: Runner,
                                                          server: ScriptedServer):
    tree.output_style(wisp.cwd, local=True)
    tree.write(wisp.cwd / ".claude" / "settings.json", json.dumps({"outputStyle": "default"}))
    tree.write(config_dir(wisp) / "settings.json", json.dumps({"outputStyle": "default"}))
    server.script(reply.text("ok"))
    run = wisp("-p", "x", *STREAM)
    assert run.returncode == 0, run.stderr
    assert run.of_type("system", "init")[0]["output_style"] == "Terse"
    assert tree.STYLE_BODY in tree.system_text(server.requests[0].body)


def test_the_default_style_leaves_the_prompt_alone(wisp: Runner, server: ScriptedServer):
    tree.write(wisp.cwd / ".claude" / "output-styles" / "terse.md", f"{tree.STYLE_BODY}\n")
    server.script(reply.text("ok"))
    run = wisp("-p", "x", *STREAM)
    assert run.of_type("system", "init")[0]["output_style"] == "default"
    assert tree.STYLE_BODY not in tree.all_text(server.requests[0].body)


def test_an_unknown_style_warns_and_falls_back_to_default(wisp: Runner,
                                                         server: ScriptedServer):
    tree.write(wisp.cwd / ".claude" / "settings.json", json.dumps({"outputStyle": "Nope"}))
    server.script(reply.text("ok"))
    run = wisp("-p", "x", *STREAM)
    assert run.returncode == 0
    assert "Nope" in run.stderr
    # Reported by its configured name, as the reference does; the default style's
    # instructions apply (no style section in the prompt).
    assert run.of_type("system", "init")[0]["output_style"] == "Nope"
    assert "Output style" not in str(server.requests[0].body["system"])


# ---- plugins --------------------------------------------------------------------------


@needs_mcp
def test_a_plugins_command_agent_hook_and_mcp_server_all_work(wisp: Runner,
                                                             server: ScriptedServer,
                                                             tmp_path: Path):
    pid_file = tmp_path / "calc.pids"
    root = tree.plugin(tmp_path / "deployer", pid_file)
    tool = tree.plugin_tool()
    server.script(
        reply.tool_use(tool, {"a": 2, "b": 3}),
        reply.tool_use("Task", {"description": "check", "prompt": "check it",
                                "subagent_type": "deployer:checker"}),
        reply.text("checked"), reply.text("shipped"))
    run = wisp("-p", "/deployer:ship prod", *STREAM, "--plugin-dir", str(root),
               "--allowedTools", tool)
    assert run.returncode == 0, run.stderr
    init = run.of_type("system", "init")[0]
    assert init["plugins"] == [{"name": "deployer", "path": str(root.resolve()),
                                "source": "deployer@local", "version": "1.2.0"}]
    assert "deployer:ship" in init["slash_commands"]
    assert "deployer:checker" in init["agents"]
    assert {"name": "plugin:deployer:calc", "status": "connected",
            "source": "stdio"} in init["mcp_servers"]
    assert tool in init["tools"]
    # The command: its body, with the arguments, is the prompt.
    assert "PLUGIN-COMMAND-6a7b: deploy prod now." in tree.all_text(server.requests[0].body)
    # The MCP server: its tool ran and the result reached the model.
    result = next(b for b in server.requests[1].body["messages"][-1]["content"]
                  if b["type"] == "tool_result")
    assert result["is_error"] is False and result["content"] == [{"type": "text",
                                                                  "text": "5"}]
    # The hook: it ran before the tool, from the plugin's own folder.
    assert (wisp.cwd / "hook.log").read_text() == f"{tree.HOOK_MARK} {tool}\n"
    # The agent: Task ran it with the plugin agent's prompt.
    assert tree.PLUGIN_AGENT_PROMPT in tree.system_text(server.requests[2].body)
    [pid] = pids(pid_file)
    assert gone(pid)


def test_a_broken_plugin_is_skipped_with_a_warning_and_the_run_goes_on(
        wisp: Runner, server: ScriptedServer, tmp_path: Path):
    broken = tmp_path / "broken"
    tree.write(broken / ".claude-plugin" / "plugin.json", "{not json")
    missing = tmp_path / "nowhere"
    good = tmp_path / "good"
    tree.write(good / "commands" / "hi.md", "Say hi.\n")
    server.script(reply.text("fine"))
    run = wisp("-p", "x", *STREAM, "--plugin-dir", str(broken), "--plugin-dir", str(missing),
               "--plugin-dir", str(good))
    assert run.returncode == 0, run.stderr
    assert f"plugin {broken}" in run.stderr and "not valid JSON" in run.stderr
    assert f"plugin {missing}" in run.stderr and "no such folder" in run.stderr
    init = run.of_type("system", "init")[0]
    assert [p["name"] for p in init["plugins"]] == ["good"]
    assert "good:hi" in init["slash_commands"]
    assert run.result["result"] == "fine"


def test_a_user_skills_other_files_may_be_read_but_deny_rules_still_win(
        wisp: Runner, server: ScriptedServer):
    folder = tree.skill(config_dir(wisp), user=True)  # ~/.claude/skills/pdf: outside the project
    assert folder.is_relative_to(config_dir(wisp))
    notes = str(folder / "reference.md")
    server.script(reply.tool_use("Skill", {"skill": "pdf"}),
                  reply.tool_use("Read", {"file_path": notes}), reply.text("read it"),
                  reply.tool_use("Read", {"file_path": notes}), reply.text("denied"))
    run = wisp("-p", "use the pdf skill", *STREAM)
    assert run.returncode == 0, run.stderr
    read = next(b for b in server.requests[2].body["messages"][-1]["content"]
                if b["type"] == "tool_result")
    assert read.get("is_error") is not True and "extra notes" in json.dumps(read["content"])
    assert run.result["permission_denials"] == []
    denied = wisp("-p", "again", *STREAM, "--disallowedTools", f"Read({folder}/**)")
    result = next(b for b in server.requests[4].body["messages"][-1]["content"]
                  if b["type"] == "tool_result")
    assert result["is_error"] is True
    assert [d["tool_name"] for d in denied.result["permission_denials"]] == ["Read"]
