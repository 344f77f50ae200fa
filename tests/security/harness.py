"""Runs the real `wisp -p` against a scripted model that makes tool calls, and reads back
what became of each call: the tool_result the model got, the `system/permission_denied`
frame, the entry in the result's `permission_denials`, and what a probe saw on disk.

`run_one` is a one-call session. `run_session` scripts several calls into one session
(the model makes them one after another); a probe runs between calls, when the next
request arrives, so each call is attributed its own effect and the workspace can be reset
before the next. Batching keeps the suite fast: a wisp process costs most of a second.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.conftest import base_env, wisp_command
from tests.frame_check import check_frame
from wisp.settings.trust import record
from wisp.testing import RecordedRequest, ScriptedServer, reply
from wisp.testing.reply import Reply

JSON = dict[str, Any]
PROMPT = "do what the script says"


@dataclass(frozen=True)
class Call:
    """One scripted tool call; `case` names it in reports and parametrize ids."""

    case: str
    tool: str
    input: JSON


def bash(case: str, command: str) -> Call:
    return Call(case, "Bash", {"command": command})


@dataclass(repr=False)
class Outcome:
    """What became of one call."""

    call: Call
    tool_use_id: str
    result: JSON | None = None  # the tool_result block the model got (None: never ran)
    denied_frame: JSON | None = None  # the system/permission_denied frame for it
    denial: JSON | None = None  # its entry in the result frame's permission_denials
    observed: Any = None  # what the probe returned after the call

    @property
    def is_error(self) -> bool:
        return self.result is not None and self.result.get("is_error") is True

    @property
    def text(self) -> str:
        """The tool_result content, flattened to text."""
        if self.result is None:
            return ""
        content = self.result.get("content")
        if isinstance(content, str):
            return content
        return "\n".join(b.get("text", json.dumps(b)) for b in content or [])

    def denied(self) -> bool:
        """Denied and reported as such: an error result, a permission_denied frame, and an
        entry in permission_denials with the call's own input."""
        return (self.is_error and self.denied_frame is not None and self.denial is not None
                and self.denial.get("tool_input") == self.call.input)

    def __str__(self) -> str:
        shown = self.text if len(self.text) < 600 else self.text[:600] + " …"
        return (f"case {self.call.case!r}: {self.call.tool} {json.dumps(self.call.input)}\n"
                f"  tool_result (is_error={self.is_error}): {shown!r}\n"
                f"  permission_denied frame: {self.denied_frame is not None}; "
                f"in permission_denials: {self.denial is not None}; observed: {self.observed!r}")

    __repr__ = __str__


@dataclass(repr=False)
class Session:
    returncode: int
    stdout: str
    stderr: str
    frames: list[JSON]
    requests: list[RecordedRequest]  # the POST /v1/messages requests, in order
    outcomes: dict[str, Outcome] = field(default_factory=dict)

    def __getitem__(self, case: str) -> Outcome:
        return self.outcomes[case]

    @property
    def outcome(self) -> Outcome:
        """The outcome of a one-call session."""
        [only] = self.outcomes.values()
        return only

    @property
    def result(self) -> JSON:
        results = [f for f in self.frames if f.get("type") == "result"]
        assert len(results) == 1, f"expected one result frame:\n{self.stdout}\n{self.stderr}"
        return results[0]

    def received(self) -> str:
        """Everything the model was sent in the whole session, as one string."""
        return "\n".join(json.dumps(r.body) for r in self.requests)

    def __str__(self) -> str:
        return (f"wisp exited {self.returncode}; {len(self.requests)} model requests\n"
                f"stderr: {self.stderr[-2000:]}")

    __repr__ = __str__


@dataclass(frozen=True)
class Workspace:
    """A temp cwd, a clean HOME (wisp's config dir inside it) and a folder outside both."""

    cwd: Path
    home: Path
    outside: Path

    @classmethod
    def create(cls, root: Path) -> Workspace:
        ws = cls(root / "work", root / "home", root / "outside")
        for folder in (ws.cwd, ws.home, ws.outside, ws.home / ".wisp"):
            folder.mkdir(parents=True, exist_ok=True)
        return ws

    def trust(self) -> None:
        """The user trusts `cwd` (recorded in the config dir `run_session` gives wisp), so
        its settings' grants apply."""
        record(self.cwd, {"HOME": str(self.home), "WISP_CONFIG_DIR": str(self.home / ".wisp")},
               hasTrustDialogAccepted=True)


def run_session(ws: Workspace, calls: Sequence[Call], *flags: str,
                env: Mapping[str, str] | None = None,
                probe: Callable[[Call], Any] | None = None,
                cwd: Path | None = None, timeout: float = 90) -> Session:
    """Run `wisp -p --output-format stream-json --verbose *flags` once; the scripted model
    makes `calls` in order, then says "done"."""
    assert len({c.case for c in calls}) == len(calls), "case names must be unique"
    ids = {c.case: f"toolu_sec{i:03d}" for i, c in enumerate(calls)}
    observed: dict[str, Any] = {}

    def turn(k: int) -> Reply:
        def answer(_body: JSON) -> Reply:
            if k > 0 and probe is not None:
                previous = calls[k - 1]
                try:
                    observed[previous.case] = probe(previous)
                except Exception as exc:  # reported with the case, never kills the server
                    observed[previous.case] = f"probe failed: {exc!r}"
            if k < len(calls):
                return reply.tool_use(calls[k].tool, calls[k].input, id=ids[calls[k].case])
            return reply.text("done")
        return reply.dynamic(answer)

    with ScriptedServer(*(turn(k) for k in range(len(calls) + 1))) as server:
        full_env = {**base_env(server, ws.home), **(env or {})}
        proc = subprocess.run(
            [*wisp_command(), "-p", PROMPT, "--output-format", "stream-json", "--verbose",
             *flags],
            cwd=cwd or ws.cwd, env=full_env, input="", capture_output=True, text=True,
            timeout=timeout, check=False)
        requests = [r for r in server.requests if r.path.startswith("/v1/messages")
                    and not r.path.startswith("/v1/messages/count_tokens")]
    frames = []
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            frame = json.loads(line)
            check_frame(frame)
            frames.append(frame)
    session = Session(proc.returncode, proc.stdout, proc.stderr, frames, requests)
    session.outcomes = _outcomes(calls, ids, session, observed)
    return session


def run_one(ws: Workspace, call: Call, *flags: str, **kwargs: Any) -> Session:
    """A one-tool-call session: frames, recorded requests, returncode, and `.outcome`."""
    return run_session(ws, [call], *flags, **kwargs)


def _outcomes(calls: Sequence[Call], ids: Mapping[str, str], session: Session,
              observed: Mapping[str, Any]) -> dict[str, Outcome]:
    results: dict[str, JSON] = {}
    for request in session.requests:
        for block in _tool_results((request.body or {}).get("messages") or []):
            results.setdefault(str(block.get("tool_use_id")), block)
    denied = {f.get("tool_use_id"): f for f in session.frames
              if f.get("type") == "system" and f.get("subtype") == "permission_denied"}
    finals = [f for f in session.frames if f.get("type") == "result"]
    denials = {d.get("tool_use_id"): d for f in finals for d in f.get("permission_denials") or []}
    return {c.case: Outcome(c, ids[c.case], results.get(ids[c.case]), denied.get(ids[c.case]),
                            denials.get(ids[c.case]), observed.get(c.case)) for c in calls}


def _tool_results(messages: Iterable[Any]) -> Iterable[JSON]:
    for message in messages:
        if isinstance(message, dict) and message.get("role") == "user" and isinstance(
                message.get("content"), list):
            yield from (b for b in message["content"]
                        if isinstance(b, dict) and b.get("type") == "tool_result")


def snapshot(folder: Path) -> dict[str, tuple[str, int]]:
    """Every entry below `folder` (symlinks not followed): relative name → (content or link
    target, permission bits)."""
    seen: dict[str, tuple[str, int]] = {}
    if not folder.exists():
        return seen
    for path in sorted(folder.rglob("*")):
        st = path.lstat()
        if path.is_symlink():
            body = "-> " + str(path.readlink())
        elif path.is_dir():
            body = "<dir>"
        else:
            body = path.read_bytes().decode("utf-8", "replace")
        seen[str(path.relative_to(folder))] = (body, st.st_mode & 0o7777)
    return seen


def sections(outcomes: Iterable[Outcome]) -> str:
    return "\n".join(str(o) for o in outcomes)
