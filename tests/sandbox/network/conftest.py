"""Shared by the network jail's tests: real bubblewrap, real sockets, all on 127.0.0.1 or
Unix sockets. Names the tests allow resolve only through a resolver the test injects
(every lookup recorded), never through DNS.

Without bubblewrap (or perl, for the bridge) these tests skip, unless
WISP_REQUIRE_SANDBOX=1 (set by .ci/run, which installs them): then they fail, so a broken
install can never pass as "skipped".
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sandbox.network.helpers import Jailer, Resolver, Upstream
from wisp.sandbox.network import NetworkGate, NetworkPolicy


def _require(tool: str) -> str:
    found = shutil.which(tool)
    if found is not None:
        return found
    if os.environ.get("WISP_REQUIRE_SANDBOX") == "1":
        pytest.fail(f"WISP_REQUIRE_SANDBOX=1 but {tool} is not installed")
    pytest.skip(f"{tool} is not installed")


@pytest.fixture(scope="session")
def bwrap_path() -> str:
    path = _require("bwrap")
    trial = subprocess.run([path, "--unshare-user", "--unshare-net", "--ro-bind", "/", "/",
                            "true"], check=False, capture_output=True, text=True,
                           timeout=30)
    if trial.returncode != 0:
        reason = f"bubblewrap cannot run here: {trial.stderr.strip()}"
        if os.environ.get("WISP_REQUIRE_SANDBOX") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    return path


@pytest.fixture(scope="session")
def perl_path() -> str:
    return _require("perl")


@pytest.fixture(scope="session")
def socat_path() -> str:
    return _require("socat")


@pytest.fixture
def jailer(bwrap_path: str) -> Jailer:
    _require("curl")  # the client most tests run inside
    return Jailer(bwrap_path)


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    server = Upstream()
    yield server
    server.close()


@pytest.fixture
def resolver() -> Resolver:
    return Resolver({"allowed.test": "127.0.0.1", "www.allowed.test": "127.0.0.1",
                     "rebind.test": "127.0.0.1"})


class Gates:
    """Makes gates for a test, records their violations, closes them after it."""

    def __init__(self, runtime_dir: Path, resolver: Resolver) -> None:
        self.runtime_dir = runtime_dir
        self.resolver = resolver
        self.violations: list[str] = []
        self.made: list[NetworkGate] = []

    def __call__(self, *allowed: str, **fields: object) -> NetworkGate:
        policy = NetworkPolicy(tuple(allowed), **fields)  # type: ignore[arg-type]
        gate = NetworkGate(policy, runtime_dir=self.runtime_dir,
                           on_violation=self.violations.append, resolver=self.resolver)
        self.made.append(gate)
        return gate


@pytest.fixture
def gates(tmp_path: Path, resolver: Resolver, perl_path: str) -> Iterator[Gates]:
    made = Gates(tmp_path / "run", resolver)
    yield made
    for gate in made.made:
        gate.close()
