"""The runtime is a boundary: front ends ask it (`Runtime` verbs, `RuntimeConfig`) instead
of reaching into the engine it built.

Outside `runtime/` and `engine/`, no code reads or writes the engine's run context
(`.ctx`), the configuration behind a runtime or a run context (`runtime.config`,
`ctx.config`), or a session's history (`session.history`). `REACHING` was the debt when the
check came in (issue 29): how many such reach-throughs each module still made; it is
paid off. It only shrinks: a module may not make more, no other module may start, and a
module that makes fewer must lower its number (or leave the list).
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.architecture.test_import_graph import SRC, modules

SEALED_INSIDE = ("runtime/", "engine/")
# None left: front ends go through `RuntimeConfig` (a host's history, recorder, tools,
# sandbox) and `Runtime` verbs. A new entry here is new debt.
REACHING: dict[str, int] = {}


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else None


def reach_throughs(source: str) -> list[str]:
    """Each `.ctx`, `<runtime or ctx>.config` and `<session>.history` in `source`; an
    outer one hides those inside it (so `runtime.ctx.config` counts once)."""
    found: list[str] = []
    inner: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Attribute) or id(node) in inner:
            continue
        base = _name(node.value)
        if node.attr == "ctx" or (node.attr == "config" and base in ("ctx", "runtime")) \
                or (node.attr == "history" and base == "session"):
            found.append(ast.unparse(node))
            inner.update(id(n) for n in ast.walk(node))
    return found


def reaching() -> dict[str, int]:
    counts: dict[str, int] = {}
    for path in modules():
        name = Path(path).relative_to(SRC).as_posix()
        if name.startswith(SEALED_INSIDE):
            continue
        found = reach_throughs(path.read_text(encoding="utf-8"))
        if found:
            counts[name] = len(found)
    return counts


def test_front_ends_reach_into_the_runtime_no_more_than_recorded() -> None:
    found = reaching()
    grown = {m: n for m, n in found.items() if n > REACHING.get(m, 0)}
    assert grown == {}, ("reaching into a Runtime's engine (.ctx, .config, session "
                         f"history): add a Runtime verb instead: {grown}")


def test_the_recorded_debt_is_the_real_one() -> None:
    found = reaching()
    shrunk = {m: found.get(m, 0) for m, n in REACHING.items() if found.get(m, 0) < n}
    assert shrunk == {}, f"fewer reach-throughs than recorded: lower REACHING to {shrunk}"


def test_the_check_sees_each_kind_of_reach_through() -> None:
    source = ("server.ctx.config.tools = {}\nx = runtime.config.env\n"
              "h = self.runtime.session.history\nok = settings.config\ny = ctx\n")
    assert sorted(reach_throughs(source)) == [
        "runtime.config", "self.runtime.session.history", "server.ctx.config"]
