"""Session behaviours of the reference CLI (Claude Code 2.1.332), as cases that run either CLI
and reduce what it did to a comparable observation: exit code, stderr, the frames that
matter, the transcript lines the SDKs' session helpers read, and what those helpers answer.

`tests/fixtures/reference/sessions/<case>.json` holds the reference's observations;
tests/sessions/test_reference_sessions.py checks wisp against them (always) and re-runs the
reference to check them (when .bench-cache has it). To record them again:

    .venv/bin/python -m tests.sessions.reference_cases

Both CLIs run offline against the scripted Messages API server, each in a fresh HOME with
neither CLAUDE_CONFIG_DIR nor WISP_CONFIG_DIR set: everything lands in `$HOME/.claude`.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wisp.paths import project_key
from wisp.testing import ScriptedServer, reply

JSON = dict[str, Any]
ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "reference" / "sessions"
REFERENCE = Path(os.environ.get("WISP_REFERENCE_CLI")
                 or ROOT / ".bench-cache" / "claude-code" / "node_modules" / ".bin" / "claude")
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
MISSING = "11111111-2222-4333-8444-555555555555"
NOWHERE = "99999999-2222-4333-8444-555555555555"
TIMEOUT = 120
# The top-level keys of the reference's error result for a session that cannot start.
START_FAILED_KEYS = sorted([
    "type", "subtype", "duration_ms", "duration_api_ms", "is_error", "num_turns",
    "stop_reason", "session_id", "total_cost_usd", "usage", "modelUsage",
    "permission_denials", "uuid", "errors", "result_index"])


@dataclass
class Cli:
    """One CLI to observe, with its own HOME (so its own `~/.claude`) under `root`."""

    name: str  # "wisp" or "reference"
    command: list[str]
    root: Path

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def config(self) -> Path:
        return self.home / ".claude"

    def env(self, server: ScriptedServer) -> dict[str, str]:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "TERM": "dumb",
            "LANG": "C.UTF-8",
            "ANTHROPIC_BASE_URL": server.url,
            "ANTHROPIC_API_KEY": "sk-test",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_MAX_RETRIES": "1",
            "WISP_RETRY_BASE_DELAY_MS": "10",
        }
        if "VIRTUAL_ENV" in os.environ:
            env["VIRTUAL_ENV"] = os.environ["VIRTUAL_ENV"]
        return env

    def folder(self, name: str) -> Path:
        path = self.root / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    def transcripts(self, cwd: Path) -> Path:
        return self.config / "projects" / project_key(cwd)


def wisp_cli(root: Path) -> Cli:
    return Cli("wisp", [sys.executable, "-m", "wisp"], root)


def reference_cli(root: Path) -> Cli:
    return Cli("reference", [str(REFERENCE)], root)


@dataclass
class Run:
    rc: int
    stdout: str
    stderr: str

    def frames(self) -> list[JSON]:
        return [json.loads(line) for line in self.stdout.splitlines() if line.startswith("{")]

    def session_id(self) -> str:
        return str(self.frames()[-1]["session_id"])


def run(cli: Cli, server: ScriptedServer, cwd: Path, *args: str, stdin: str = "") -> Run:
    proc = subprocess.run([*cli.command, *args], cwd=cwd, env=cli.env(server), input=stdin,
                          capture_output=True, text=True, timeout=TIMEOUT, check=False)
    return Run(proc.returncode, proc.stdout, proc.stderr)


class Duplex:
    """A `--input-format stream-json` session driven frame by frame."""

    def __init__(self, cli: Cli, server: ScriptedServer, cwd: Path, *args: str) -> None:
        self.proc = subprocess.Popen(
            [*cli.command, "-p", "--input-format", "stream-json", "--output-format",
             "stream-json", "--verbose", *args],
            cwd=cwd, env=cli.env(server), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
        self.frames: queue.Queue[JSON | None] = queue.Queue()
        self.seen: list[JSON] = []
        threading.Thread(target=self._read, daemon=True).start()
        self._ids = 0

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith("{"):
                self.frames.put(json.loads(line))
        self.frames.put(None)

    def send(self, frame: JSON) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(frame) + "\n")
        self.proc.stdin.flush()

    def wait(self, kind: str) -> JSON | None:
        """The next frame of `kind`, or None when the output ends first."""
        while True:
            frame = self.frames.get(timeout=TIMEOUT)
            if frame is None:
                return None
            self.seen.append(frame)
            if frame.get("type") == kind:
                return frame

    def call(self, subtype: str, **fields: Any) -> JSON:
        self._ids += 1
        self.send({"type": "control_request", "request_id": f"r{self._ids}",
                   "request": {"subtype": subtype, **fields}})
        frame = self.wait("control_response")
        assert frame is not None, "the session ended before answering"
        return dict(frame["response"])

    def user(self, text: str) -> JSON | None:
        self.send({"type": "user", "message": {"role": "user", "content": text},
                   "parent_tool_use_id": None, "session_id": ""})
        return self.wait("result")

    def finish(self) -> tuple[int, str]:
        assert self.proc.stdin is not None and self.proc.stderr is not None
        self.proc.stdin.close()
        while self.frames.get(timeout=TIMEOUT) is not None:
            pass
        code = self.proc.wait(timeout=TIMEOUT)
        return code, self.proc.stderr.read()


@contextlib.contextmanager
def helpers_see(cli: Cli) -> Iterator[Any]:
    """The official SDK's session helpers, reading this CLI's config dir."""
    import claude_agent_sdk

    old = os.environ.get("CLAUDE_CONFIG_DIR")
    os.environ["CLAUDE_CONFIG_DIR"] = str(cli.config)
    try:
        yield claude_agent_sdk
    finally:
        if old is None:
            del os.environ["CLAUDE_CONFIG_DIR"]
        else:
            os.environ["CLAUDE_CONFIG_DIR"] = old


# Reducing what a CLI did to what must agree -----------------------------------------------


def lines_of(path: Path) -> list[JSON]:
    out = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        with contextlib.suppress(ValueError):
            out.append(json.loads(raw))
    return out


def names(text: str, known: dict[str, str]) -> str:
    """`text` with each uuid replaced by its name in `known`, else "<uuid>"; the reference's
    program name becomes wisp's."""
    text = UUID.sub(lambda m: known.get(m.group(0), "<uuid>"), text)
    return text.replace("claude -p", "wisp -p")


def stderr_lines(text: str, known: dict[str, str]) -> list[str]:
    return [names(line, known) for line in text.splitlines() if line.strip()]


def result_of(frame: JSON, known: dict[str, str]) -> JSON:
    return {
        "keys": sorted(frame),
        "subtype": frame.get("subtype"),
        "is_error": frame.get("is_error"),
        "num_turns": frame.get("num_turns"),
        "errors": [names(e, known) for e in frame.get("errors") or []],
        "session_id": names(str(frame.get("session_id")), known),
    }


def failed_start(run_: Run, known: dict[str, str]) -> JSON:
    """A run that could not start: its code, stderr, and any frames (just the result)."""
    return {
        "rc": run_.rc,
        "stderr": stderr_lines(run_.stderr, known),
        "frames": [result_of(f, known) if f.get("type") == "result" else f.get("type")
                   for f in run_.frames()],
        "stdout_is_frames_only": all(line.startswith("{") for line in run_.stdout.splitlines()),
    }


def message_lines(path: Path) -> list[JSON]:
    return [e for e in lines_of(path) if e.get("type") in ("user", "assistant")]


# The cases -------------------------------------------------------------------------------


def resume_unknown(cli: Cli) -> JSON:
    """`--resume <uuid>` of no session, in each output format and in duplex mode."""
    cwd = cli.folder("work")
    known = {MISSING: "<requested>"}
    out: JSON = {}
    with ScriptedServer() as server:
        for fmt in ("text", "json", "stream-json"):
            done = run(cli, server, cwd, "-p", "hi", "--resume", MISSING, "--output-format", fmt,
                       "--verbose")
            out[fmt] = failed_start(done, known)
        duplex = Duplex(cli, server, cwd, "--resume", MISSING)
        duplex.send({"type": "control_request", "request_id": "init",
                     "request": {"subtype": "initialize"}})
        result = duplex.wait("result")
        code, stderr = duplex.finish()
        out["duplex"] = {"rc": code, "stderr": stderr_lines(stderr, known),
                         "frames": [result_of(f, known) if f["type"] == "result" else f["type"]
                                    for f in duplex.seen],
                         "got_result": result is not None}
        fork = run(cli, server, cwd, "-p", "hi", "--resume", MISSING, "--fork-session",
                   "--output-format", "stream-json", "--verbose")
        out["stream-json --fork-session"] = failed_start(fork, known)
        assert not server.requests, "nothing reaches the model"
    return out


def resume_by_title(cli: Cli) -> JSON:
    """`--resume <title>`: a session of this project whose title matches, ignoring case;
    an unmatched value is refused (with a result in stream-json). Titles set by the
    `rename_session` control request (`custom-title` + `agent-name` lines, no response
    body, the reference's refusals) and read back by the official SDK."""
    cwd, elsewhere = cli.folder("work"), cli.folder("elsewhere")
    with ScriptedServer() as server:
        server.default = reply.text("ok")
        duplex = Duplex(cli, server, cwd)
        duplex.call("initialize")
        before = duplex.call("rename_session", title="Before Any", source="host")
        duplex.user("hello")
        session_id = duplex.seen[-1]["session_id"]
        known = {session_id: "<session>", MISSING: "<other>"}
        answers = {
            "before any message": before,
            "padded": duplex.call("rename_session", title="  Padded  ", source="host"),
            "null": duplex.call("rename_session", title=None, source="host"),
            "blank": duplex.call("rename_session", title="   ", source="host"),
            "other session": duplex.call("rename_session", title="x", source="host",
                                         session_id=MISSING),
            "this session": duplex.call("rename_session", title="Padded", source="host",
                                        session_id=session_id),
        }
        code, _ = duplex.finish()
        path = cli.transcripts(cwd) / f"{session_id}.jsonl"
        entries = lines_of(path)
        first_message = next(n for n, e in enumerate(entries) if "uuid" in e)
        titles = sorted({(e["type"], e.get("customTitle") or e.get("agentName"))
                         for e in entries if e.get("type") in ("custom-title", "agent-name")})
        with helpers_see(cli) as sdk:
            info = sdk.get_session_info(session_id, str(cwd))
        by_title = run(cli, server, cwd, "-p", "again", "--resume", "padded",
                       "--output-format", "json")
        not_here = run(cli, server, elsewhere, "-p", "again", "--resume", "Padded",
                       "--output-format", "stream-json", "--verbose")
        unmatched = run(cli, server, cwd, "-p", "again", "--resume", "No Such Title",
                        "--output-format", "text")
    return {
        "duplex_rc": code,
        "answers": {k: {key: names(str(v), known) for key, v in a.items() if key != "request_id"}
                    for k, a in answers.items()},
        "title_lines": [list(t) for t in titles],
        "a_title_line_before_the_first_message": any(
            e.get("type") == "custom-title" for e in entries[:first_message]),
        "sdk_custom_title": info.custom_title if info else None,
        "resumed_by_title": {"rc": by_title.rc,
                             "session": names(by_title.session_id(), known)
                             if by_title.rc == 0 else None},
        "title_of_another_project": failed_start(not_here, known),
        "unmatched_title": failed_start(unmatched, known),
    }


def initialize_title(cli: Cli) -> JSON:
    """`initialize` with a title names a new session (`custom-title`, no `agent-name`);
    a resumed session keeps the title it has."""
    cwd = cli.folder("work")
    with ScriptedServer() as server:
        server.default = reply.text("ok")
        duplex = Duplex(cli, server, cwd)
        duplex.call("initialize", title="Init Title")
        duplex.user("hello")
        session_id = duplex.seen[-1]["session_id"]
        duplex.finish()
        path = cli.transcripts(cwd) / f"{session_id}.jsonl"
        first = sorted({(e["type"], e.get("customTitle") or e.get("agentName"))
                        for e in lines_of(path)
                        if e.get("type") in ("custom-title", "agent-name")})
        again = Duplex(cli, server, cwd, "--resume", session_id)
        again.call("initialize", title="Other Init")
        again.user("again")
        again.finish()
        with helpers_see(cli) as sdk:
            info = sdk.get_session_info(session_id, str(cwd))
    return {"title_lines": [list(t) for t in first],
            "after_resume_with_another_title": info.custom_title if info else None}


def sdk_rename_survives_a_big_turn(cli: Cli) -> JSON:
    """The official SDK's `rename_session` appends a title; a resumed turn that writes more
    than the 64 KiB the SDKs read of a file's tail still leaves the title (and the prompt)
    where `list_sessions` sees them."""
    cwd = cli.folder("work")
    with ScriptedServer() as server:
        server.default = reply.text("ok")
        session_id = run(cli, server, cwd, "-p", "first", "--output-format", "stream-json",
                         "--verbose").session_id()
        with helpers_see(cli) as sdk:
            sdk.rename_session(session_id, "SDK Title", directory=str(cwd))
        server.script(reply.text("z" * 100_000))
        big = run(cli, server, cwd, "-p", "a big one", "--resume", session_id,
                  "--output-format", "json")
        with helpers_see(cli) as sdk:
            [info] = sdk.list_sessions(str(cwd))
    return {"rc": big.rc, "custom_title": info.custom_title, "summary": info.summary}


def transcript_metadata(cli: Cli) -> JSON:
    """What each transcript carries for the SDKs' listings: `gitBranch` on message lines
    (the branch; "HEAD" when detached or outside git), `last-prompt` lines (one line, cut to
    200 characters), and a session whose first prompt is too big for the 64 KiB head still
    listed, by its last prompt."""
    out: JSON = {}
    with ScriptedServer() as server:
        server.default = reply.text("ok")
        branch, detached, outside = cli.folder("branch"), cli.folder("detached"), \
            cli.folder("outside")
        git(branch, "init", "-q", "-b", "feature")
        git(detached, "init", "-q", "-b", "main")
        git(detached, "commit", "-q", "--allow-empty", "-m", "one")
        git(detached, "checkout", "-q", "--detach")
        prompt = "  lead\n\n  mid   " + "w " * 150
        for name, cwd in (("branch", branch), ("detached", detached), ("outside", outside)):
            done = run(cli, server, cwd, "-p", "--output-format", "stream-json", "--verbose",
                       stdin=prompt)
            path = cli.transcripts(cwd) / f"{done.session_id()}.jsonl"
            out[f"gitBranch {name}"] = sorted({e.get("gitBranch") for e in message_lines(path)})
        entries = lines_of(cli.transcripts(branch) / f"{done_id(cli, branch)}.jsonl")
        uuids = {e["uuid"] for e in entries if "uuid" in e}
        prompts = [e for e in entries if e.get("type") == "last-prompt"]
        last_message = max(n for n, e in enumerate(entries) if e.get("type") in ("user",
                                                                                  "assistant"))
        out["last-prompt"] = sorted({json.dumps({"keys": list(e), "lastPrompt": e["lastPrompt"],
                                                 "leaf_is_a_line": e["leafUuid"] in uuids})
                                     for e in prompts})
        out["a last-prompt after the last message"] = any(
            e.get("type") == "last-prompt" for e in entries[last_message:])
        huge = cli.folder("huge")
        run(cli, server, huge, "-p", "--output-format", "json",
            stdin="p" * 70_000 + "\nsecond line")
        with helpers_see(cli) as sdk:
            out["huge first prompt listed"] = [
                {"summary": s.summary, "first_prompt": s.first_prompt}
                for s in sdk.list_sessions(str(huge))]
    return out


def done_id(cli: Cli, cwd: Path) -> str:
    [path] = cli.transcripts(cwd).glob("*.jsonl")
    return path.stem


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd,
                   check=True, capture_output=True, timeout=30)


def continue_with_nothing(cli: Cli) -> JSON:
    """`--continue` where no session was: a new session, no error."""
    with ScriptedServer() as server:
        server.default = reply.text("fresh")
        done = run(cli, server, cli.folder("work"), "-p", "hi", "--continue",
                   "--output-format", "stream-json", "--verbose")
        frames = done.frames()
    return {"rc": done.rc, "stderr": done.stderr.strip(),
            "kinds": [f["type"] for f in frames if f["type"] in ("system", "result")],
            "result": frames[-1].get("result"), "model_requests": len(server.requests) > 0}


# Truncating resumes ---------------------------------------------------------------------


def uid(n: int) -> str:
    return f"00000000-0000-4000-8000-{n:012d}"


SOURCE_ID = "aaaaaaaa-0000-4000-8000-000000000001"


def write_source(cli: Cli, cwd: Path, queued: bool) -> Path:
    """A hand-built session in Claude Code's line format: two turns, the second with a tool
    call; with `queued`, a prompt that arrived mid-turn sits after the tool's result."""
    steps: list[tuple[str, Any]] = [
        ("user", "first"), ("assistant", [{"type": "text", "text": "a1"}]),
        ("user", "second"),
        ("assistant", [{"type": "tool_use", "id": "toolu_1", "name": "Bash",
                        "input": {"command": "true"}}]),
        ("user", [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}]),
    ]
    if queued:
        steps.append(("user", "queued prompt"))
    steps.append(("assistant", [{"type": "text", "text": "a2"}]))
    entries, parent = [], None
    for n, (kind, content) in enumerate(steps, start=1):
        entry: JSON = {"parentUuid": parent, "isSidechain": False, "type": kind,
                       "uuid": uid(n), "timestamp": f"2026-01-01T00:00:{n:02d}.000Z",
                       "cwd": str(cwd), "sessionId": SOURCE_ID, "version": "2.1.332",
                       "userType": "external"}
        if kind == "user":
            entry["message"] = {"role": "user", "content": content}
        else:
            entry["message"] = {"id": f"msg_{n}", "type": "message", "role": "assistant",
                                "model": "claude-opus-5-5", "content": content,
                                "stop_reason": "end_turn",
                                "usage": {"input_tokens": 1, "output_tokens": 1}}
        entries.append(entry)
        parent = uid(n)
    path = cli.transcripts(cwd) / f"{SOURCE_ID}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return path


def truncating_resume(cli: Cli) -> JSON:
    """`--resume-session-at` (with `--resume-drops-turn`, as the SDKs' truncating resume
    passes it): a matching message forks (or branches) cleanly from it; an unknown one,
    and a drop that is not exactly the declared turn, are refused."""
    known = {uid(n): f"<line {n}>" for n in range(1, 8)} | {SOURCE_ID: "<source>",
                                                            NOWHERE: "<nowhere>"}
    out: JSON = {}
    with ScriptedServer() as server:
        server.default = reply.text("ok")

        def attempt(cwd: Path, *args: str, fmt: str = "stream-json") -> Run:
            return run(cli, server, cwd, "-p", "q", "--resume", SOURCE_ID, *args,
                       "--output-format", fmt, "--verbose")

        plain, queued = cli.folder("plain"), cli.folder("queued")
        for fmt in ("text", "stream-json"):
            for fork in ((), ("--fork-session",)):
                write_source(cli, plain, queued=False)
                key = " ".join(["unknown at", fmt, *fork])
                out[key] = failed_start(attempt(plain, *fork, "--resume-session-at", NOWHERE,
                                                fmt=fmt), known)
        out["requires --resume"] = failed_start(run(
            cli, server, plain, "-p", "q", "--resume-session-at", uid(2)), known)
        out["drops requires at"] = failed_start(run(
            cli, server, plain, "-p", "q", "--resume", SOURCE_ID, f"--resume-drops-turn={uid(3)}"),
            known)
        refusals = {"prompt queued mid-turn": (uid(2), uid(3)),
                    "starts mid-turn": (uid(4), uid(3)),
                    "not the next turn": (uid(2), uid(6)),
                    "not a uuid": (uid(2), "")}
        for name, (at, turn) in refusals.items():
            write_source(cli, queued, queued=True)
            out[f"refused: {name}"] = failed_start(attempt(
                queued, "--fork-session", f"--resume-session-at={at}",
                f"--resume-drops-turn={turn}"), known)
        for name, at, turn in (("drops the turn after", uid(2), uid(3)),
                               ("drops nothing", uid(6), uid(3))):
            source = write_source(cli, plain, queued=False)
            before = source.read_bytes()
            done = attempt(plain, "--fork-session", f"--resume-session-at={at}",
                           f"--resume-drops-turn={turn}")
            fork = cli.transcripts(plain) / f"{done.session_id()}.jsonl"
            out[f"accepted: {name}"] = {
                "rc": done.rc,
                "fork_lines": [names(e["uuid"], known) for e in message_lines(fork)],
                "source_untouched": source.read_bytes() == before}
        source = write_source(cli, plain, queued=False)
        done = attempt(plain, f"--resume-session-at={uid(2)}")
        added = [e for e in message_lines(source) if e["uuid"] not in known]
        out["branch in place"] = {
            "rc": done.rc, "session": names(done.session_id(), known),
            "new_lines_chain_onto": names(str(added[0]["parentUuid"]), known) if added else None}
    return out


CASES: dict[str, Callable[[Cli], JSON]] = {
    "resume_unknown": resume_unknown,
    "resume_by_title": resume_by_title,
    "initialize_title": initialize_title,
    "sdk_rename_survives_a_big_turn": sdk_rename_survives_a_big_turn,
    "transcript_metadata": transcript_metadata,
    "continue_with_nothing": continue_with_nothing,
    "truncating_resume": truncating_resume,
}


def fixture(case: str) -> JSON:
    return dict(json.loads((FIXTURES / f"{case}.json").read_text(encoding="utf-8")))


def record(root: Path) -> None:
    """Runs every case against the reference and writes the fixtures."""
    FIXTURES.mkdir(parents=True, exist_ok=True)
    for case, observe in CASES.items():
        seen = observe(reference_cli(root / case))
        (FIXTURES / f"{case}.json").write_text(
            json.dumps(seen, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"recorded {case}")


if __name__ == "__main__":
    import tempfile

    if not REFERENCE.exists():
        raise SystemExit(f"the reference CLI is not at {REFERENCE}")
    with tempfile.TemporaryDirectory() as scratch:
        record(Path(scratch))
