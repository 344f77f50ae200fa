"""`wisp serve` as a real process for the tests, with the official `anthropic` client
pointed at it, and the scripted Messages API server as its model."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from wisp.testing import ScriptedServer

anthropic = pytest.importorskip("anthropic", reason="the anthropic SDK is not installed")

KEYS = ("key-alpha", "key-beta")
JSON = dict[str, Any]


class Served:
    """One `wisp serve` process."""

    def __init__(self, tmp: Path, model: ScriptedServer, *extra: str,
                 env: dict[str, str] | None = None, store: str | None = None) -> None:
        self.tmp = tmp
        self.store = tmp / "serve" / "wisp.db"
        self.store_spec = store or f"sqlite:{self.store}"
        base = {k: v for k, v in os.environ.items()
                if not k.startswith(("ANTHROPIC_", "CLAUDE_", "WISP_"))}
        self.env = {**base, "ANTHROPIC_BASE_URL": model.url, "ANTHROPIC_API_KEY": "sk-test",
                    "HOME": str(tmp / "home"), "WISP_CONFIG_DIR": str(tmp / "config"),
                    "WISP_SERVE_API_KEYS": ",".join(KEYS), "WISP_RETRY_BASE_DELAY_MS": "10",
                    **(env or {})}
        self.extra = extra
        self.proc: subprocess.Popen[str] | None = None
        self.url = ""
        self.worker_name = ""

    def start(self, port: int = 0) -> Served:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "wisp", "serve", "--port", str(port), "--poll", "0.2",
             "--store", self.store_spec, "--data-dir", str(self.store.parent),
             *self.extra],
            env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            start_new_session=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if line.startswith("wisp serve: worker "):  # --role worker: no HTTP
            self.worker_name = line.split()[3]
            return self
        assert line.startswith("wisp serve: listening on "), (line, self.stderr())
        self.url = line.rsplit(" ", 1)[1].strip()
        return self

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    def client(self, key: str = KEYS[0]) -> Any:
        return anthropic.Anthropic(base_url=self.url, api_key=key, max_retries=0)

    def async_client(self, key: str = KEYS[0]) -> Any:
        return anthropic.AsyncAnthropic(base_url=self.url, api_key=key, max_retries=0)

    def kill(self) -> None:
        """`kill -9`: no drain, no cleanup."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> int:
        if self.proc is None:
            return 0
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()
        return self.proc.returncode

    def stderr(self) -> str:
        if self.proc is None or self.proc.poll() is None:
            return ""
        assert self.proc.stderr is not None
        return self.proc.stderr.read()


@contextmanager
def serving(tmp: Path, model: ScriptedServer, *extra: str,
            env: dict[str, str] | None = None) -> Iterator[Served]:
    served = Served(tmp, model, *extra, env=env).start()
    try:
        yield served
    finally:
        served.stop()


@contextmanager
def split_serving(tmp: Path, model: ScriptedServer, *extra: str, dsn: str,
                  env: dict[str, str] | None = None) -> Iterator[Served]:
    """A PostgreSQL deployment split by role: one worker process (DBOS turns) and one
    API process, sharing `tmp` (so workspaces are where the tests look). Yields the API."""
    worker = Served(tmp, model, "--role", "worker", *extra, env=env, store=dsn).start()
    try:
        api = Served(tmp, model, "--role", "api", *extra, env=env, store=dsn).start()
        try:
            yield api
        finally:
            api.stop()
    finally:
        worker.stop()


def cloud_setup(client: Any, *, tools: list[JSON] | None = None,
                config: JSON | None = None) -> tuple[Any, Any]:
    """An agent (the whole toolset unless `tools`) and an environment."""
    agent = client.beta.agents.create(
        name="tester", model="claude-sonnet-4-5",
        tools=tools if tools is not None else [{"type": "agent_toolset_20260401"}])
    environment = client.beta.environments.create(
        name="env", config=config or {"type": "cloud"})
    return agent, environment


def user_message(text: str) -> JSON:
    return {"type": "user.message", "content": [{"type": "text", "text": text}]}


def wait_for(client: Any, session_id: str, done: Callable[[list[JSON]], bool],
             timeout: float = 30) -> list[JSON]:
    """Lists the session's events until `done(events)` (each event as a dict)."""
    deadline = time.monotonic() + timeout
    while True:
        events = [e.model_dump() for e in client.beta.sessions.events.list(session_id)]
        if done(events):
            return events
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out; events so far: {[e['type'] for e in events]}")
        time.sleep(0.05)


def idle_end_turn(events: list[JSON]) -> bool:
    return any(e["type"] == "session.status_idle"
               and (e.get("stop_reason") or {}).get("type") == "end_turn" for e in events)


def agent_texts(events: list[JSON]) -> list[str]:
    """The text of each `agent.message` (its first block), in order."""
    return [e["content"][0]["text"] for e in events if e["type"] == "agent.message"]


def delegated_once(client: Any, helper_skills: list[JSON] | None = None) -> tuple[str, str, str]:
    """A coordinator ("lead") delegating to "researcher", whose session has had one turn
    with one delegation (the test scripts the model for it): (lead id, session id, the
    delegate's thread id)."""
    skills = {"skills": helper_skills} if helper_skills else {}
    helper = client.beta.agents.create(name="researcher", model="claude-sonnet-4-5", **skills)
    lead = client.beta.agents.create(name="lead", model="claude-sonnet-4-5",
                                     multiagent={"type": "coordinator", "agents": [helper.id]})
    _, environment = cloud_setup(client)
    session = client.beta.sessions.create(agent=lead.id, environment_id=environment.id)
    client.beta.sessions.events.send(session.id, events=[user_message("X?")])
    wait_for(client, session.id, idle_end_turn)
    [thread] = list(client.beta.sessions.threads.list(session.id))
    return lead.id, session.id, thread.id


def types(events: list[JSON]) -> list[str]:
    return [e["type"] for e in events]
