"""Every Managed Agents method of the official `anthropic` SDK reaches a route of `wisp
serve`: none is answered with the router's "no such resource" (a method with no route) or
a 405. What each route does is tested in the scenario modules (tests/serve/test_sdk_*);
this one keeps the surface from having holes, and fails when an SDK upgrade adds a method.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.serve.harness import anthropic, serving
from wisp.testing import ScriptedServer

# The SDK namespaces that make up the Managed Agents API (issue 26). Others under
# `client.beta` (organization administration, tunnels, compliance, dreams, user
# profiles, messages, models) are not part of it.
MANAGED = ("agents", "environments", "sessions", "files", "skills", "vaults",
           "memory_stores", "deployments", "deployment_runs")
# Arguments each required parameter gets (a made-up id is enough: the route must answer
# for itself, a 404 for an unknown resource is an answer).
_VALUES: dict[str, Any] = {"events": [], "file": ("a.txt", b"a", "text/plain"),
                           "files": [("s/SKILL.md", b"x", "text/markdown")],
                           "model": "claude-sonnet-4-5", "name": "n", "path": "/a.md",
                           "content": "c", "config": {"type": "cloud"}, "type": "file",
                           "display_name": "d", "auth": {"type": "static_bearer",
                                                         "token": "t", "mcp_server_url": "u"}}


def managed_methods(client: Any) -> Iterator[tuple[str, Any]]:
    def is_resource(value: Any) -> bool:  # a namespace of methods: the SDK's resources
        return type(value).__module__.startswith("anthropic.resources.")

    def walk(resource: Any, path: str) -> Iterator[tuple[str, Any]]:
        for name in sorted(dir(resource)):
            if name.startswith("_") or name.startswith("with_"):
                continue
            value = getattr(resource, name)
            if is_resource(value):
                yield from walk(value, f"{path}.{name}")
            elif inspect.ismethod(value) and name not in ("worker",):
                yield f"{path}.{name}", value

    for namespace in MANAGED:
        if hasattr(client.beta, namespace):
            yield from walk(getattr(client.beta, namespace), namespace)


def _call(method: Any) -> None:
    args = {}
    for name, parameter in inspect.signature(method).parameters.items():
        if parameter.default is inspect.Parameter.empty and parameter.kind in (
                parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY):
            args[name] = _VALUES.get(name, "id_0123456789")
    result = method(**args)
    if hasattr(result, "close"):  # a stream or a binary response
        result.close()


def test_every_managed_agents_method_has_a_route(tmp_path: Path,
                                                server: ScriptedServer) -> None:
    holes = []
    with serving(tmp_path, server) as served:
        methods = list(managed_methods(served.client()))
        for name, method in methods:
            try:
                _call(method)
            except anthropic.APIStatusError as exc:
                if exc.status_code == 405 or "no such resource" in str(exc.message):
                    holes.append(f"{name}: {exc.status_code} {exc.message}")
            except anthropic.APIConnectionError as exc:
                holes.append(f"{name}: {exc}")
    assert len(methods) >= 80, [n for n, _ in methods]
    assert holes == [], "\n".join(holes)
