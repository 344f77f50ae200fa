"""Cycles between wisp's packages, found from the real imports (`ast`, lazy ones too).

One cycle is left (issue 29 breaks it): `cli` ↔ `duplex`. It is listed here so the
check is a ratchet: a new cycle, or a known one that grows, fails; a known one that
shrinks or goes passes, and its entry should then be narrowed or removed.
"""

from __future__ import annotations

from collections.abc import Mapping

from tests.architecture.test_import_graph import SRC, imports_of, module_name, modules

KNOWN_CYCLES = (
    frozenset({"cli", "duplex"}),
)


def package_graph() -> dict[str, set[str]]:
    """package → the other packages of wisp it imports (packages are folders)."""
    packages = {p.name for p in SRC.iterdir() if (p / "__init__.py").exists()}
    graph: dict[str, set[str]] = {name: set() for name in packages}
    for path in modules():
        parts = module_name(path).split(".")
        if len(parts) < 2 or parts[1] not in packages:
            continue
        for imported in imports_of(path):
            target = imported.split(".")
            if len(target) > 1 and target[0] == "wisp" and target[1] in packages \
                    and target[1] != parts[1]:
                graph[parts[1]].add(target[1])
    return graph


def cycles(graph: Mapping[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components with more than one package (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[frozenset[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_new_cycle_between_packages() -> None:
    unknown = [sorted(c) for c in cycles(package_graph())
               if not any(c <= known for known in KNOWN_CYCLES)]
    assert unknown == [], f"new or grown package cycles: {unknown}"


def test_the_cycle_finder_finds_cycles_and_only_cycles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": {"e"}, "e": set(),
             "f": {"g"}, "g": {"f"}}
    assert sorted(sorted(c) for c in cycles(graph)) == [["a", "b", "c"], ["f", "g"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


# The leaves the shared machinery stands on: each may import only the packages listed.
LEAVES: dict[str, set[str]] = {
    "paths": set(),  # where things live on disk
    "rules": set(),  # permission rule parsing and matching
    "processes": set(),  # process groups and capped output
    "shell": {"paths"},  # the shell analyser (used by tools, permissions and the sandbox)
}


def test_the_leaf_packages_stay_leaves() -> None:
    graph = package_graph()
    assert {leaf: sorted(graph[leaf] - allowed) for leaf, allowed in LEAVES.items()} == {
        leaf: [] for leaf in LEAVES}


def test_permissions_judge_a_protocol_not_the_tools() -> None:
    assert "tools" not in package_graph()["permissions"]


def test_the_graph_sees_a_known_edge() -> None:
    assert "permissions" in package_graph()["tools"]  # tools use the judged protocol
