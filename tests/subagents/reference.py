"""Subagent and background-task scenarios, run against wisp or the reference CLI (Claude
Code 2.1.332) offline, and the digest of each run that the parity tests compare.

A scenario scripts the model with a router: each request is answered by who is asking
(the main thread, whose first prompt carries `[[MAIN]]`, or the subagent, whose brief
carries `[[SUB]]`) and how far it has got (the number of assistant messages so far), so
concurrent requests of a background subagent and the main thread get the right reply.
The Task tool is `Agent` on the reference's wire and `Task` on wisp's; the router names
whichever the request offers.

The digest keeps what clients depend on: the order of frames (task frames, the main and
the subagent's messages, results), the keys of the task frames, statuses and summaries,
the tool results' structured keys, hook inputs, the subagent transcript the SDKs' helpers
read, a background command's output file, and what the model is told when a task ends.
It drops what differs by nature (ids, paths, timings, token counts, the wording of notes
to the model).

Recorded as fixtures (tests/fixtures/reference/tasks/) with:

    .venv/bin/python -m tests.subagents.reference [scenario ...]
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wisp.testing import ScriptedServer, reply
from wisp.testing.reply import Reply

JSON = dict[str, Any]
ROOT = Path(__file__).resolve().parents[2]
REFERENCE = Path(os.environ.get("WISP_REFERENCE_CLI")
                 or ROOT / ".bench-cache" / "claude-code" / "node_modules" / ".bin" / "claude")
FIXTURES = ROOT / "tests" / "fixtures" / "reference" / "tasks"
PROMPT = "[[MAIN]] go"
LONG = "python3 -c 'import time; time.sleep(20)'"  # the reference refuses a bare long sleep
# A command that ends when the scenario says so (`TaskScenario.release`), so what comes
# before and after its end does not depend on timing.
WAIT = "until [ -e release ]; do sleep 0.1; done"
HOOK_EVENTS = ("SubagentStart", "SubagentStop", "Stop")


def wisp_cli() -> list[str]:
    return [sys.executable, "-m", "wisp"]


def reference_cli() -> list[str]:
    return [str(REFERENCE)]


# Scripting the model ---------------------------------------------------------------------


@dataclass
class Ask:
    who: str  # "main" | "sub" | "other"
    step: int  # assistant messages so far
    body: JSON

    @property
    def task_tool(self) -> str:
        names = {t.get("name") for t in self.body.get("tools") or []}
        return "Agent" if "Agent" in names else "Task"

    def agent(self, description: str, prompt: str, background: bool, tool_id: str) -> Reply:
        return reply.tool_use(self.task_tool, {
            "description": description, "prompt": prompt, "subagent_type": "general-purpose",
            "run_in_background": background}, id=tool_id)


def _text_of(message: JSON) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(str(b.get("text", "")) for b in content or []
                     if isinstance(b, dict) and b.get("type") == "text")


def ask_of(body: JSON) -> Ask:
    messages = body.get("messages") or []
    users = "\n".join(_text_of(m) for m in messages if m.get("role") == "user")
    who = "sub" if "[[SUB]]" in users else "main" if "[[MAIN]]" in users else "other"
    steps = sum(1 for m in messages if m.get("role") == "assistant")
    return Ask(who, steps, body)


# Running ---------------------------------------------------------------------------------


class Session:
    """A running CLI: its stdout frames as they come, and stdin to write to. Once a
    frame satisfies `release` (any line, in text output), the file `release` appears in
    the work folder (see `WAIT`)."""

    def __init__(self, proc: asyncio.subprocess.Process, work: Path,
                 release: Callable[[JSON], bool] | None) -> None:
        self.proc = proc
        self.work = work
        self.release = release
        self.frames: list[JSON] = []
        self.raw: list[str] = []
        self.changed = asyncio.Condition()

    async def read(self) -> None:
        assert self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            text = line.decode("utf-8", "replace")
            self.raw.append(text)
            if not text.startswith("{"):
                self._release(None)
                continue
            frame = json.loads(text)
            self._release(frame)
            async with self.changed:
                self.frames.append(frame)
                self.changed.notify_all()

    def _release(self, frame: JSON | None) -> None:
        if self.release is not None and (frame is None or self.release(frame)):
            (self.work / "release").touch()
            self.release = None

    def send(self, frame: JSON) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(frame) + "\n").encode())

    async def wait_for(self, found: Callable[[JSON], bool], count: int = 1) -> JSON:
        async with self.changed:
            await self.changed.wait_for(lambda: len([f for f in self.frames if found(f)])
                                        >= count)
            return [f for f in self.frames if found(f)][count - 1]

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()


@dataclass
class TaskScenario:
    name: str
    route: Callable[[Ask], Reply]
    # None: print mode (`-p PROMPT`); else duplex stream-json, driven by this
    duplex: Callable[[Session], Awaitable[None]] | None = None
    output: str = "stream-json"
    args: tuple[str, ...] = ()
    # the digest's keys compared whole-sequence ("sequence") or thread by thread
    threads: bool = False
    release: Callable[[JSON], bool] | None = None
    env: dict[str, str] = field(default_factory=dict)
    # False: when the results come among the other frames is a matter of timing (the
    # reference holds a result while a background subagent runs, for a while): only the
    # results' own order is compared ("results").
    results_placed: bool = True


@dataclass
class TaskRun:
    frames: list[JSON]
    stdout: str
    requests: list[JSON]
    returncode: int | None
    stderr: str
    home: Path
    work: Path
    hooks: list[JSON] = field(default_factory=list)


def environment(server: ScriptedServer, home: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "TERM": "dumb",
        "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "sk-test",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1", "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "CLAUDE_CODE_MAX_RETRIES": "1", "WISP_RETRY_BASE_DELAY_MS": "10",
        "PYTHONPATH": str(ROOT / "src"),
    }


def user_settings(home: Path) -> None:
    """Bash and Read allowed; SubagentStart, SubagentStop and Stop hooks that log their
    input, one JSON object a line, to ~/hooks.ndjson."""
    log = home / "hooks.ndjson"
    hook = [{"hooks": [{"type": "command", "command": f"cat >> {log}; echo >> {log}"}]}]
    folder = home / ".claude"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "settings.json").write_text(json.dumps({
        "permissions": {"allow": ["Bash", "Read"]},
        "hooks": {event: hook for event in HOOK_EVENTS}}))


async def run(cli: list[str], scenario: TaskScenario, timeout: float = 90) -> TaskRun:
    tmp = Path(tempfile.mkdtemp(prefix=f"tasks-{scenario.name}-")).resolve()
    home, work = tmp / "home", tmp / "work"
    home.mkdir()
    work.mkdir()
    user_settings(home)
    route = scenario.route
    with ScriptedServer(default=reply.dynamic(lambda body: route(ask_of(body)))) as server:
        if scenario.duplex is None:
            mode = ("-p", PROMPT, "--output-format", scenario.output, "--verbose")
        else:
            mode = ("-p", "--output-format", "stream-json", "--verbose", "--input-format",
                    "stream-json")
        proc = await asyncio.create_subprocess_exec(
            *cli, *mode, *scenario.args, cwd=work,
            env={**environment(server, home), **scenario.env},
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, limit=1 << 24)
        session = Session(proc, work, scenario.release)
        reader = asyncio.ensure_future(session.read())
        assert proc.stderr is not None
        errors = asyncio.ensure_future(proc.stderr.read())
        try:
            if scenario.duplex is None:
                session.close()
            else:
                await asyncio.wait_for(scenario.duplex(session), timeout)
                session.close()
            await asyncio.wait_for(proc.wait(), timeout)
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
        await reader
        stderr = (await errors).decode("utf-8", "replace")
        requests = [r.body for r in server.requests
                    if isinstance(r.body, dict) and "messages" in r.body and r.body.get("stream")]
    log = home / "hooks.ndjson"
    hooks = [json.loads(line) for line in log.read_text().splitlines() if line.strip()] \
        if log.exists() else []
    return TaskRun(session.frames, "".join(session.raw), requests, proc.returncode, stderr,
                   home, work, hooks)


def cleanup(run: TaskRun) -> None:
    """Removes the run's folders: its home and work, and its tasks' output files."""
    import shutil

    for frame in run.frames:
        output = frame.get("output_file") if frame.get("subtype") == "task_notification" else None
        if output:
            shutil.rmtree(Path(output).parent, ignore_errors=True)
    shutil.rmtree(run.home.parent, ignore_errors=True)


# Digests ---------------------------------------------------------------------------------

SUB_KEYS = {"agent_id", "subagent_type", "task_description"}
RESULT_KEYS = {"status", "agentId", "agentType", "prompt", "content", "totalDurationMs",
               "totalTokens", "totalToolUseCount", "isAsync", "description", "outputFile",
               "canReadOutputFile", "stdout", "stderr", "interrupted", "isImage",
               "noOutputExpected", "backgroundTaskId"}
HOOK_KEYS = {"session_id", "transcript_path", "cwd", "hook_event_name", "agent_id",
             "agent_type", "agent_transcript_path", "last_assistant_message",
             "stop_hook_active"}
ID_SHAPES = {"local_agent": re.compile(r"a[0-9a-f]{16}"),
             "local_bash": re.compile(r"b[0-9a-z]{8}")}


def _who(frame: JSON) -> str:
    return "sub" if frame.get("parent_tool_use_id") else "main"


def token(frame: JSON) -> str | None:
    """One frame in a word or three; None for frames the digest leaves out."""
    kind = frame.get("type")
    if kind == "system":
        return _system_token(frame)
    if kind in ("assistant", "user"):
        content = frame["message"]["content"]
        types = ["text"] if isinstance(content, str) else [b.get("type") for b in content]
        return f"{kind} {_who(frame)} {','.join(types)}"
    if kind == "result":
        return f"result {frame.get('subtype')}"
    if kind == "control_response" and frame["response"].get("request_id") == "interrupt":
        return f"interrupt {frame['response'].get('subtype')}"
    if kind == "control_response":
        response = frame["response"]
        if str(response.get("request_id", "")).startswith("stop"):
            return f"stop_task {response.get('subtype')} {json.dumps(response.get('response'))}"
    return None


def _system_token(frame: JSON) -> str | None:  # noqa: PLR0911 (one arm per subtype)
    match frame.get("subtype"):
        case "init":
            return "init"
        case "task_started":
            return f"task_started {frame.get('task_type')} bg={frame.get('is_backgrounded')}"
        case "task_progress":
            return f"task_progress {frame.get('last_tool_name')}"
        case "task_updated":
            return f"task_updated {(frame.get('patch') or {}).get('status')}"
        case "task_notification":
            return f"task_notification {frame.get('status')}"
        case "background_tasks_changed":
            return f"background_tasks_changed {len(frame.get('tasks') or [])}"
        case "session_state_changed":
            return f"state {frame.get('state')}"
    return None


def sequence(frames: list[JSON]) -> list[str]:
    return [t for f in frames if (t := token(f)) is not None]


def threads(frames: list[JSON], results_placed: bool = True) -> JSON:
    """The main thread's frames (task frames but progress included) and the subagent's,
    each in order: how the two interleave is a matter of timing."""
    main, sub = [], []
    for frame in frames:
        word = token(frame)
        if word is None or (not results_placed and frame.get("type") == "result"):
            continue
        is_sub = word.startswith("task_progress") or (
            frame.get("type") in ("assistant", "user") and _who(frame) == "sub")
        (sub if is_sub else main).append(word)
    return {"main": main, "sub": sub}


def _task_type(frame: JSON, types: dict[str, str]) -> str:
    return types.get(str(frame.get("task_id")), "?")


def task_frames(frames: list[JSON]) -> JSON:
    """The keys of each kind of task frame (by task type), statuses and summaries, and
    whether ids have the reference's shape."""
    types = {f["task_id"]: f["task_type"] for f in frames if f.get("subtype") == "task_started"}
    keys: dict[str, list[str]] = {}
    summaries: list[list[str]] = []
    for frame in frames:
        subtype = frame.get("subtype")
        if frame.get("type") != "system" or not str(subtype).startswith(
                ("task_", "background_tasks")):
            continue
        if subtype == "background_tasks_changed":
            for entry in frame.get("tasks") or []:
                keys.setdefault(f"background_tasks_changed/{entry.get('task_type')}",
                                sorted(entry))
            continue
        keys.setdefault(f"{subtype}/{_task_type(frame, types)}", sorted(frame))
        if subtype == "task_notification":
            summary = str(frame.get("summary"))
            for task_id in types:
                summary = summary.replace(task_id, "<id>")
            summaries.append([_task_type(frame, types), str(frame.get("status")), summary,
                              str(frame.get("summary_is_report", False))])
    return {
        "keys": keys,
        "summaries": summaries,
        "ids_shaped": all(ID_SHAPES[kind].fullmatch(task_id) is not None
                          for task_id, kind in types.items() if kind in ID_SHAPES),
        "usage_keys": sorted({k for f in frames if f.get("subtype") in (
            "task_progress", "task_notification") for k in f.get("usage") or {}}),
    }


def tool_results(frames: list[JSON]) -> list[JSON]:
    """What the main thread's tool calls returned: the structured result's keys that
    clients read, and its status."""
    found = []
    for frame in frames:
        if frame.get("type") != "user" or frame.get("parent_tool_use_id"):
            continue
        data = frame.get("tool_use_result")
        if isinstance(data, dict):
            found.append({"keys": sorted(RESULT_KEYS & set(data)),
                          "status": data.get("status")})
        elif data is not None:
            found.append({"text": str(data)})
    return found


def sub_frames(frames: list[JSON]) -> list[list[str]]:
    """Which of agent_id, subagent_type, task_description a subagent's frames carry."""
    return [list(keys) for keys in sorted({tuple(sorted(SUB_KEYS & set(f))) for f in frames
                                           if f.get("type") in ("assistant", "user")
                                           and f.get("parent_tool_use_id")})]


def hooks(run: TaskRun) -> JSON:
    found: JSON = {}
    for entry in run.hooks:
        event = entry.get("hook_event_name")
        found.setdefault(event, sorted(HOOK_KEYS & set(entry)))
        path = entry.get("agent_transcript_path")
        if path:
            session = entry["session_id"]
            expected = (Path(entry["transcript_path"]).with_suffix("") / "subagents"
                        / f"agent-{entry['agent_id']}.jsonl")
            found[f"{event}/agent_transcript_path"] = (
                "<session>/subagents/agent-<agent_id>.jsonl" if Path(path) == expected
                and session in path and Path(path).exists() else path)
    return found


def transcripts(run: TaskRun) -> JSON:
    """What the SDKs' subagent helpers read, and the task output files."""
    from claude_agent_sdk import get_subagent_messages, list_subagents

    started = [f for f in run.frames if f.get("subtype") == "task_started"]
    agents = [f for f in started if f.get("task_type") == "local_agent"]
    if not started:
        return {}
    session = started[0]["session_id"]
    found: JSON = {}
    os.environ["CLAUDE_CONFIG_DIR"] = str(run.home / ".claude")
    try:
        if agents:
            listed = list_subagents(session, directory=str(run.work))
            found["listed"] = sorted(listed) == sorted(f["task_id"] for f in agents)
            messages = get_subagent_messages(session, agents[0]["task_id"],
                                             directory=str(run.work))
            found["messages"] = [m.type for m in messages]
            found["parent_tool_use_id"] = sorted({str(m.parent_tool_use_id == agents[0][
                "tool_use_id"]) for m in messages})
    finally:
        os.environ.pop("CLAUDE_CONFIG_DIR", None)
    outputs = {f["task_id"]: f["output_file"] for f in run.frames
               if f.get("subtype") == "task_notification" and f.get("output_file")}
    for frame in started:
        path = Path(outputs.get(frame["task_id"], ""))
        if frame["task_type"] == "local_bash" and path.is_file():
            found["bash_output"] = path.read_text()
        elif frame["task_type"] == "local_agent" and path.is_symlink():
            found["agent_output"] = Path(os.readlink(path)).name.replace(
                frame["task_id"], "<id>")
    return found


def notices(run: TaskRun) -> list[list[str]]:
    """For each main-thread model request, the statuses of the task notifications in
    what it adds since the model last spoke."""
    seen = []
    for body in run.requests:
        if ask_of(body).who != "main":
            continue
        messages = body["messages"]
        spoke = [i for i, m in enumerate(messages) if m.get("role") == "assistant"]
        text = json.dumps(messages[spoke[-1] + 1:] if spoke else messages)
        seen.append(re.findall(r"<status>(\w+)</status>", text)
                    if "<task-notification>" in text else [])
    return seen


def results(frames: list[JSON]) -> list[JSON]:
    return [{"subtype": f.get("subtype"), "result": f.get("result"),
             "origin": (f.get("origin") or {}).get("kind")}
            for f in frames if f.get("type") == "result"]


def digest(run: TaskRun, scenario: TaskScenario) -> JSON:
    found: JSON = {
        "returncode": run.returncode,
        "tasks": task_frames(run.frames),
        "tool_results": tool_results(run.frames),
        "sub_frames": sub_frames(run.frames),
        "results": results(run.frames),
        "hooks": hooks(run),
        "transcripts": transcripts(run),
        "notices": notices(run),
    }
    if scenario.threads:
        found["threads"] = threads(run.frames, scenario.results_placed)
    else:
        found["sequence"] = sequence(run.frames)
    if scenario.output == "text":
        found["stdout"] = run.stdout
    return found


# Scenarios -------------------------------------------------------------------------------


def foreground(ask: Ask) -> Reply:
    """The main thread hands a job to a subagent and waits; the subagent says something,
    runs a command, and reports."""
    if ask.who == "main":
        if ask.step == 0:
            return ask.agent("count the files", "[[SUB]] count", False, "toolu_fg_agent")
        return reply.text("all done")
    if ask.who == "sub":
        if ask.step == 0:
            return reply.tool_use("Bash", {"command": "echo hi-from-sub",
                                           "description": "say hi"},
                                  id="toolu_sub_bash", text="sub thinking aloud")
        return reply.text("sub done")
    return reply.text("other")


def background_agent(ask: Ask) -> Reply:
    if ask.who == "main":
        if ask.step == 0:
            return ask.agent("slow count", "[[SUB]] count", True, "toolu_bg_agent")
        return reply.text(f"main step {ask.step}")
    if ask.who == "sub":
        if ask.step == 0:
            return reply.tool_use("Bash", {"command": f"{WAIT}; echo slow-sub",
                                           "description": "wait a bit"},
                                  id="toolu_sub_bash", text="bg sub musing")
        return reply.text("sub finished counting")
    return reply.text("other")


def background_command(command: str) -> Callable[[Ask], Reply]:
    def route(ask: Ask) -> Reply:
        if ask.who == "main" and ask.step == 0:
            return reply.tool_use("Bash", {"command": command, "description": "run slow job",
                                           "run_in_background": True}, id="toolu_bg_bash")
        return reply.text(f"main step {ask.step}")
    return route


def stopped_agent(ask: Ask) -> Reply:
    if ask.who == "main":
        if ask.step == 0:
            return ask.agent("long agent", "[[SUB]] wait", False, "toolu_fg_agent")
        return reply.text(f"main step {ask.step}")
    if ask.who == "sub" and ask.step == 0:
        return reply.tool_use("Bash", {"command": LONG, "description": "sub long job"},
                              id="toolu_sub_long")
    return reply.text("sub done")


def is_result(frame: JSON) -> bool:
    return frame.get("type") == "result"


def interrupted(ask: Ask) -> Reply:
    """A background command starts; the turn's next reply is slow, and interrupted."""
    if ask.who == "main" and ask.step == 0:
        return reply.tool_use("Bash", {"command": f"{WAIT}; echo bg-out",
                                       "description": "run slow job",
                                       "run_in_background": True}, id="toolu_bg_bash")
    if ask.who == "main" and ask.step == 1:
        return reply.slow("a long answer " * 10, 0.2, chunks=20)
    return reply.text(f"main step {ask.step}")


async def interrupt_turn(session: Session) -> None:
    """The interrupt ends the turn, not the background command: its end, later, still
    wakes a turn."""
    session.send({"type": "control_request", "request_id": "init",
                  "request": {"subtype": "initialize"}})
    session.send(prompt_frame(PROMPT))
    await session.wait_for(lambda f: f.get("type") == "user" and not f.get(
        "parent_tool_use_id") and f["message"]["content"][0].get("type") == "tool_result")
    await asyncio.sleep(1.0)
    session.send({"type": "control_request", "request_id": "interrupt",
                  "request": {"subtype": "interrupt"}})
    await session.wait_for(is_result, 2)


async def two_results(session: Session) -> None:
    session.send({"type": "control_request", "request_id": "init",
                  "request": {"subtype": "initialize"}})
    session.send(prompt_frame(PROMPT))
    await session.wait_for(is_result, 2)


def _stop(task_id: str) -> JSON:
    return {"type": "control_request", "request_id": "stop_real",
            "request": {"subtype": "stop_task", "task_id": task_id}}


BOGUS_STOP = {"type": "control_request", "request_id": "stop_unknown",
              "request": {"subtype": "stop_task", "task_id": "no-such-task"}}


def prompt_frame(text: str) -> JSON:
    return {"type": "user", "message": {"role": "user", "content": text},
            "parent_tool_use_id": None, "session_id": ""}


async def stop_command(session: Session) -> None:
    """A background command is stopped after the turn that started it; the next prompt's
    request tells the model."""
    session.send({"type": "control_request", "request_id": "init",
                  "request": {"subtype": "initialize"}})
    session.send(prompt_frame(PROMPT))
    started = await session.wait_for(lambda f: f.get("subtype") == "task_started")
    await session.wait_for(lambda f: f.get("type") == "result")
    session.send(BOGUS_STOP)
    await session.wait_for(lambda f: f.get("type") == "control_response"
                           and f["response"].get("request_id") == "stop_unknown")
    session.send(_stop(started["task_id"]))
    await session.wait_for(lambda f: f.get("type") == "control_response"
                           and f["response"].get("request_id") == "stop_real")
    await asyncio.sleep(1.0)  # no turn of its own: a stopped task's notice waits
    session.send(prompt_frame("[[MAIN]] next"))
    await session.wait_for(lambda f: f.get("type") == "result", 2)


async def stop_subagent(session: Session) -> None:
    """A foreground subagent is stopped while its command runs: the Task call ends as
    interrupted and the main thread goes on."""
    session.send({"type": "control_request", "request_id": "init",
                  "request": {"subtype": "initialize"}})
    session.send(prompt_frame(PROMPT))
    progress = await session.wait_for(lambda f: f.get("subtype") == "task_progress")
    await session.wait_for(lambda f: f.get("type") == "assistant"
                           and f.get("parent_tool_use_id") is not None
                           and f["message"]["content"][0].get("type") == "tool_use")
    await asyncio.sleep(0.5)
    session.send(_stop(progress["task_id"]))
    await session.wait_for(lambda f: f.get("type") == "result")


SCENARIOS: dict[str, TaskScenario] = {s.name: s for s in [
    TaskScenario("foreground_agent", foreground),
    TaskScenario("foreground_agent_forwarded", foreground, args=("--forward-subagent-text",)),
    TaskScenario("background_agent", background_agent, threads=True, results_placed=False,
                 release=lambda f: f.get("type") == "assistant" and not f.get(
                     "parent_tool_use_id") and f["message"]["content"][0]["type"] == "text"),
    TaskScenario("background_bash", background_command(f"{WAIT}; echo bg-out"),
                 release=is_result),
    TaskScenario("background_bash_failed",
                 background_command(f"{WAIT}; echo partial; exit 3"), release=is_result),
    TaskScenario("background_bash_text", background_command(f"{WAIT}; echo bg-out"),
                 output="text", release=is_result),
    TaskScenario("stop_background_bash", background_command(LONG), duplex=stop_command),
    TaskScenario("stop_foreground_agent", stopped_agent, duplex=stop_subagent),
    TaskScenario("interrupt_keeps_background_command", interrupted, duplex=interrupt_turn,
                 release=is_result),
    # With session state (as the SDKs ask): not idle while a background subagent runs.
    TaskScenario("background_agent_session_state", background_agent, duplex=two_results,
                 threads=True, release=is_result,
                 env={"CLAUDE_CODE_SDK_READS_SESSION_STATE": "1"}),
]}


# Recording -------------------------------------------------------------------------------


def fixture_path(name: str) -> Path:
    return FIXTURES / f"{name}.json"


def reference_version() -> str:
    done = subprocess.run([str(REFERENCE), "--version"], capture_output=True, text=True,
                          timeout=30, check=False)
    return done.stdout.strip()


def _frames_kept(run: TaskRun) -> list[JSON]:
    """The run's frames, for reading: init as its keys, long strings cut, paths named."""
    tmp = str(run.home.parent)
    kept = []
    for frame in run.frames:
        shown = {"type": "system", "subtype": "init"} if frame.get("subtype") == "init" \
            else frame
        text = json.dumps(shown).replace(tmp, "<tmp>")
        text = re.sub(r"/tmp/claude-\d+/[^\"]*?/tasks/", "<tasks>/", text)
        kept.append(_cut(json.loads(text)))
    return kept


def _cut(value: Any) -> Any:
    if isinstance(value, str):
        return value if len(value) <= 300 else value[:300] + f"…[{len(value)} chars]"
    if isinstance(value, list):
        return [_cut(v) for v in value]
    if isinstance(value, dict):
        return {k: _cut(v) for k, v in value.items() if k != "modelUsage"}
    return value


async def record(name: str) -> Path:
    scenario = SCENARIOS[name]
    started = time.monotonic()
    found = await run(reference_cli(), scenario)
    path = fixture_path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({
        "scenario": name,
        "reference": reference_version(),
        "recorded_with": f"python -m tests.subagents.reference {name}",
        "seconds": round(time.monotonic() - started, 1),
        "digest": digest(found, scenario),
        "frames": _frames_kept(found),
    }, indent=1, ensure_ascii=False) + "\n")
    cleanup(found)
    return path


def main(names: list[str]) -> int:
    if not REFERENCE.exists():
        print(f"the reference CLI is not installed at {REFERENCE}", file=sys.stderr)
        return 1
    for name in names or list(SCENARIOS):
        with contextlib.suppress(KeyboardInterrupt):
            path = asyncio.run(record(name))
            print(f"recorded {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
