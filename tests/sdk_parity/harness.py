"""Parity harness: one set of SDK scenarios, run through three backends.

  - `inprocess`: `wisp.sdk` with no `cli_path` (the agent loop runs in this event loop);
  - `wisp-cli`:  `wisp.sdk` driving the `wisp` executable over stream-json;
  - `official`:  Anthropic's `claude_agent_sdk` driving the same `wisp` executable.

A scenario is an `async def scenario(b: Backend) -> dict`: it scripts the model server
(`b.server`), runs the SDK through `b.sdk` / `b.options(...)`, and returns a summary that
holds no ids, timings, costs or paths (see `summary.py`). Each test module asserts a
scenario's summary per backend; `test_agreement.py` runs every scenario through all three
backends in one test and asserts their summaries are equal.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import os
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.sdk.conftest import sdk_env, wisp_executable
from wisp.testing import ScriptedServer

BACKENDS = ("inprocess", "wisp-cli", "official")
SANDBOX = {"IS_SANDBOX": "1"}  # bypassPermissions as root (the suite may run as root)
SCENARIO_TIMEOUT = 60
# How long a run waits, after its scenario, for the agent processes it started to exit.
LEFTOVER_GRACE = 15

Scenario = Callable[["Backend"], Awaitable[dict[str, Any]]]


def sdk_module(name: str) -> ModuleType:
    """The SDK a backend uses. The official one may be missing (skip); wisp.sdk must
    import, and a failure to do so fails the test with the import error."""
    if name == "official":
        return pytest.importorskip(
            "claude_agent_sdk",
            reason="claude-agent-sdk is not installed (bash scripts/install-sdk-deps)")
    try:
        return importlib.import_module("wisp.sdk")
    except Exception as exc:  # the package is being written: say exactly why
        pytest.fail(f"wisp.sdk does not import: {type(exc).__name__}: {exc}", pytrace=False)


@dataclass
class Backend:
    name: str
    sdk: ModuleType
    server: ScriptedServer
    root: Path  # this backend's own temporary folder
    cli: str | None  # cli_path, or None for in-process
    stderr_lines: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.cwd = self.root / "work"
        self.home = self.root / "home"
        self.cwd.mkdir(parents=True, exist_ok=True)
        self.home.mkdir(parents=True, exist_ok=True)
        self.env = sdk_env(self.server, self.home)

    @property
    def types(self) -> ModuleType:
        """The SDK's `types` module (for names not exported at the top, as in the official
        SDK: PermissionRuleValue, ...)."""
        return importlib.import_module(f"{self.sdk.__name__}.types")

    def options(self, **kwargs: Any) -> Any:
        """This SDK's ClaudeAgentOptions with cwd (unless given), env and cli_path filled
        in. `extra_env` adds variables; stderr lines go to `stderr_lines` unless given."""
        extra_env = kwargs.pop("extra_env", {})
        kwargs.setdefault("stderr", self.stderr_lines.append)
        kwargs.setdefault("cwd", str(self.cwd))
        return self.sdk.ClaudeAgentOptions(
            cli_path=self.cli, env={**self.env, **extra_env}, **kwargs)

    async def query(self, prompt: Any, **kwargs: Any) -> tuple[list[Any], str | None]:
        """Every message of one `query()`, and the name of the SDK error it ended with.
        Only the SDK's own errors are an outcome to compare; anything else (a TypeError
        from a bad option, a bug) errors the test instead of becoming a shared name."""
        messages: list[Any] = []
        try:
            async for message in self.sdk.query(prompt=prompt, options=self.options(**kwargs)):
                messages.append(message)
        except self.sdk.ClaudeSDKError as exc:
            return messages, type(exc).__name__
        return messages, None

    def run(self, scenario: Scenario, timeout: float = SCENARIO_TIMEOUT) -> dict[str, Any]:
        """Runs a scenario in a fresh event loop and returns its summary, after checking
        what holds for every scenario: the transport is the one this backend names (the
        agent CLI was spawned, or not), and this process's environment and working folder
        are as they were (the in-process session must keep `options.env` and `cwd` to
        itself)."""
        environ, cwd = dict(os.environ), os.getcwd()
        with _spawned_programs() as spawned:
            summary = asyncio.run(_settled(asyncio.wait_for(scenario(self), timeout),
                                           spawned.transports))
        changed = sorted(k for k in {*environ, *os.environ} if environ.get(k) != os.environ.get(k))
        assert not changed, f"{self.name}: the run changed os.environ: {changed}"
        assert os.getcwd() == cwd, f"{self.name}: the run changed the working folder"
        programs = [argv[0] for argv in spawned.argvs]
        if self.cli is None:
            assert not [argv for argv in spawned.argvs if Path(argv[0]).name == "wisp"
                        or "wisp" in argv[1:3] or "wisp.cli.main" in " ".join(argv)], (
                f"the in-process backend started a wisp process: {spawned}")
        else:
            assert self.cli in programs, f"{self.name}: {self.cli} never started: {programs}"
        return summary


async def _settled(run: Awaitable[dict[str, Any]],
                   transports: list[asyncio.SubprocessTransport]) -> dict[str, Any]:
    """The scenario's result, once the agent processes it started have exited, while the
    loop still runs. A query() left early closes the CLI's stdin, and the CLI rightly
    finishes the turn it has (stdin EOF is not an abort); a process still running when
    asyncio.run closed the loop could no longer be reaped, and its transport's finaliser
    printed "Event loop is closed" tracebacks at the end of every test run."""
    summary = await run
    loop = asyncio.get_running_loop()
    deadline = loop.time() + LEFTOVER_GRACE
    while any(t.get_returncode() is None for t in transports) and loop.time() < deadline:
        await asyncio.sleep(0.05)
    for transport in transports:
        if transport.get_returncode() is None:
            transport.kill()
        transport.close()
    await asyncio.sleep(0)  # the transports' connection_lost callbacks
    return summary


@dataclass
class Spawned:
    argvs: list[list[str]] = field(default_factory=list)
    transports: list[asyncio.SubprocessTransport] = field(default_factory=list)


@contextlib.contextmanager
def _spawned_programs() -> Iterator[Spawned]:
    """The programs started through the event loop meanwhile (asyncio's and anyio's
    subprocess functions both come down to `loop.subprocess_exec`)."""
    spawned = Spawned()
    real = asyncio.base_events.BaseEventLoop.subprocess_exec

    async def spy(loop: Any, protocol_factory: Any, program: Any, *args: Any, **kwargs: Any
                  ) -> Any:
        spawned.argvs.append([os.fsdecode(program), *(os.fsdecode(a) for a in args)])
        transport, protocol = await real(loop, protocol_factory, program, *args, **kwargs)
        spawned.transports.append(transport)
        return transport, protocol

    asyncio.base_events.BaseEventLoop.subprocess_exec = spy  # type: ignore[method-assign]
    try:
        yield spawned
    finally:
        asyncio.base_events.BaseEventLoop.subprocess_exec = real  # type: ignore[method-assign]


@contextlib.contextmanager
def open_backend(name: str, root: Path) -> Iterator[Backend]:
    module = sdk_module(name)
    with ScriptedServer() as server:
        root.mkdir(parents=True, exist_ok=True)
        cli = None if name == "inprocess" else wisp_executable(root)
        yield Backend(name, module, server, root, cli)


SCENARIOS: dict[str, tuple[Scenario, tuple[str, ...]]] = {}


def scenario(*differs: str) -> Callable[[Scenario], Scenario]:
    """Registers a scenario for the all-backends agreement test. `differs` names summary
    keys that legitimately differ between backends: the per-backend test asserts each
    backend's value (and says why); the agreement test compares everything else."""

    def register(fn: Scenario) -> Scenario:
        assert fn.__name__ not in SCENARIOS, f"two scenarios named {fn.__name__}"
        SCENARIOS[fn.__name__] = (fn, differs)
        return fn

    return register
