"""The runtime is a boundary: front ends ask it (`Runtime` verbs, `RuntimeConfig`) instead
of reaching into the engine it built.

Outside `runtime/` and `engine/`, no code reads or writes the engine's run context
(`.ctx`), the configuration behind a runtime or a run context (`runtime.config`,
`ctx.config`), or a session's history (`session.history`). `REACHING` was the debt when the
check came in (issue 29): how many such reach-throughs each module still made; it is
paid off. It only shrinks: a module may not make more, no other module may start, and a
module that makes fewer must lower its number (or leave the list).

Reading a session's plain facts (its id, model, usage) stays open; changing its state does
not: outside `runtime/` and `engine/`, nothing assigns to, deletes from or calls a
mutating method on what a runtime's (or a server's) `.session`, `.tool_state` or
`.policy` leads to, directly or through a name bound to it (`policy.deny += ...` after
`policy = runtime.session.policy`). Front ends say what they mean with a `Runtime` verb
(`runtime/session_verbs.py`). `MUTATING` holds that debt as `REACHING` does.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from pathlib import Path

from tests.architecture.test_import_graph import SRC, modules

SEALED_INSIDE = ("runtime/", "engine/")
# None left: front ends go through `RuntimeConfig` (a host's history, recorder, tools,
# sandbox) and `Runtime` verbs. A new entry here is new debt.
REACHING: dict[str, int] = {}
# None left either: rules, working folders, processes, read files, the cwd and rewinds go
# through `Runtime` verbs. A new entry here is new debt.
MUTATING: dict[str, int] = {}

# `<owner>.<state>`: the engine's session state as a front end reaches it (front ends
# name a Runtime `runtime` and a duplex server `server`, as attributes or not).
STATE = frozenset({"session", "tool_state", "policy"})
OWNERS = frozenset({"runtime", "server"})
# Methods that change the object they are called on (lists, sets, dicts, the session's
# own history and process registry).
MUTATORS = frozenset({
    "append", "extend", "insert", "remove", "pop", "popitem", "clear", "sort", "reverse",
    "add", "discard", "update", "setdefault", "difference_update",
    "intersection_update", "symmetric_difference_update",
    "rewind_to", "add_user", "add_assistant", "record_user", "kill_all"})
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef)


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


def _spine(node: ast.expr) -> Iterator[ast.expr]:
    """`node` and what it is taken from: `a.b[c].d()` → the call, `a.b[c].d`, `a.b[c]`,
    `a.b`, `a`."""
    current: ast.expr | None = node
    while current is not None:
        yield current
        if isinstance(current, (ast.Attribute, ast.Subscript)):
            current = current.value
        elif isinstance(current, ast.Call):
            current = current.func
        else:
            current = None


def _is_state(node: ast.expr, aliases: set[str]) -> bool:
    for part in _spine(node):
        if isinstance(part, ast.Name) and part.id in aliases:
            return True
        if isinstance(part, ast.Attribute) and part.attr in STATE \
                and _name(part.value) in OWNERS:
            return True
    return False


def _holds_state(value: ast.expr, aliases: set[str]) -> bool:
    """`value` is session state, or a literal gathering some (`{"allow": policy.allow}`)."""
    if isinstance(value, (ast.Tuple, ast.List, ast.Set)):
        return any(_holds_state(e, aliases) for e in value.elts)
    if isinstance(value, ast.Dict):
        return any(_holds_state(v, aliases) for v in value.values)
    return _is_state(value, aliases)


def _bindings(node: ast.AST) -> list[tuple[ast.expr, ast.expr]]:
    """(target, value) pairs `node` binds names with; a tuple unpacked from a tuple pairs
    its parts."""
    pairs: list[tuple[ast.expr, ast.expr]] = []
    if isinstance(node, ast.Assign):
        pairs = [(t, node.value) for t in node.targets]
    elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
        pairs = [(node.target, node.value)]
    elif isinstance(node, (ast.For, ast.AsyncFor)):
        pairs = [(node.target, node.iter)]
    spread: list[tuple[ast.expr, ast.expr]] = []
    for target, value in pairs:
        if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, ast.Tuple) \
                and len(target.elts) == len(value.elts):
            spread += zip(target.elts, value.elts, strict=True)
        else:
            spread.append((target, value))
    return spread


def _own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of `scope` outside the functions defined in it (each its own scope)."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, SCOPES):
            stack.extend(ast.iter_child_nodes(node))


def _aliases(nodes: list[ast.AST], inherited: set[str]) -> set[str]:
    """The names bound, in one scope, to session state (to a fixpoint: `b = a.x` after
    `a = runtime.session`)."""
    aliases = set(inherited)
    grew = True
    while grew:
        grew = False
        for node in nodes:
            for target, value in _bindings(node):
                names = {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
                if not names <= aliases and _holds_state(value, aliases):
                    aliases |= names
                    grew = True
    return aliases


def _changed(node: ast.AST, aliases: set[str]) -> list[ast.expr]:
    """What `node` changes of session state: assigned or deleted parts, mutated objects."""
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        targets = [node.target]
    elif isinstance(node, ast.Delete):
        targets = list(node.targets)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr in MUTATORS and _is_state(node.func.value, aliases):
        return [node.func]
    parts = [p for t in targets for p in ast.walk(t)  # the stored parts, not what they read
             if isinstance(p, (ast.Attribute, ast.Subscript))
             and isinstance(p.ctx, (ast.Store, ast.Del))]
    return [p for p in parts if _is_state(p.value, aliases)]


def state_changes(source: str) -> list[str]:
    """Each change `source` makes to a runtime's session state (see the module's doc)."""
    found: list[str] = []
    scopes: list[tuple[ast.AST, set[str]]] = [(ast.parse(source), set())]
    while scopes:
        scope, inherited = scopes.pop()
        nodes = list(_own_nodes(scope))
        aliases = _aliases(nodes, inherited)
        for node in nodes:
            found += (ast.unparse(p) for p in _changed(node, aliases))
            if isinstance(node, SCOPES):
                scopes.append((node, aliases - {a.arg for a in ast.walk(node.args)
                                                 if isinstance(a, ast.arg)}))
    return found


def _counted(check: Callable[[str], list[str]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for path in modules():
        name = Path(path).relative_to(SRC).as_posix()
        if name.startswith(SEALED_INSIDE):
            continue
        found = check(path.read_text(encoding="utf-8"))
        if found:
            counts[name] = len(found)
    return counts


def reaching() -> dict[str, int]:
    return _counted(reach_throughs)


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


def mutating() -> dict[str, int]:
    return _counted(state_changes)


def test_front_ends_change_session_state_only_through_runtime_verbs() -> None:
    found = mutating()
    grown = {m: n for m, n in found.items() if n > MUTATING.get(m, 0)}
    assert grown == {}, ("changing a runtime's session state (.session, .tool_state, "
                         f".policy) from a front end: add a Runtime verb instead: {grown}")


def test_the_recorded_state_changes_are_the_real_ones() -> None:
    found = mutating()
    shrunk = {m: found.get(m, 0) for m, n in MUTATING.items() if found.get(m, 0) < n}
    assert shrunk == {}, f"fewer state changes than recorded: lower MUTATING to {shrunk}"


def test_the_check_sees_each_kind_of_state_change() -> None:
    source = """
def edits(app, server, driver):
    app.runtime.session.policy.allow.append(rule)
    policy = driver.runtime.session.policy
    policy.deny = [r for r in policy.deny if r.rank != 9]
    policy.deny += more
    files = server.session.tool_state.setdefault("read_files", {})
    files["a"] = 1.0
    session, runtime = app.runtime.session, app.runtime
    session.cwd = target
    lists = {"allow": policy.allow}
    lists["allow"][:] = []
    del server.tool_state.policy.ask[0]

    def later():
        policy.extra_dirs.clear()

def reads(app, runtime, policy, session):
    print(app.runtime.session.session_id, runtime.session.policy.mode)
    found = list_sessions(exclude=runtime.session.session_id)
    found.append(1)
    policy.allow.append(rule)
    session.cwd = elsewhere
    self.session(params).pop()
    mode = runtime.session.permission_mode
    mode = "plan"
"""
    assert sorted(state_changes(source)) == sorted([
        "app.runtime.session.policy.allow.append", "policy.deny", "policy.deny",
        "server.session.tool_state.setdefault", "files['a']", "session.cwd",
        "lists['allow'][:]", "server.tool_state.policy.ask[0]", "policy.extra_dirs.clear"])
