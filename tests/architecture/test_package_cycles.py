"""Cycles between wisp's packages, found from the real imports (`ast`, lazy ones too).

There are none: the packages form a layered graph (docs/architecture.md draws it), and
any new cycle fails. The shared machinery sits in leaf packages (`LEAVES`), argv →
configuration in `launch/` below every front end.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from tests.architecture.test_import_graph import SRC, imports_of, module_name, modules

ARCHITECTURE_DOC = SRC.parents[1] / "docs" / "architecture.md"
DOC_BLOCK = re.compile(r"<!-- package-layers:begin -->\n(.*?)<!-- package-layers:end -->",
                       re.DOTALL)


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
            component = _pop_component(stack, node)
            if len(component) > 1:
                found.append(frozenset(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _pop_component(stack: list[str], root: str) -> set[str]:
    """The members above `root` on Tarjan's stack, and `root`: one component."""
    component: set[str] = set()
    while True:
        member = stack.pop()
        component.add(member)
        if member == root:
            return component


def test_no_cycle_between_packages() -> None:
    found = [sorted(c) for c in cycles(package_graph())]
    assert found == [], f"package cycles: {found}"


def layers(graph: Mapping[str, set[str]]) -> dict[str, int]:
    """package → its layer: 0 for a leaf, else one above the highest package it imports
    (the graph must have no cycle)."""
    found: dict[str, int] = {}

    def layer(node: str) -> int:
        if node not in found:
            found[node] = 1 + max((layer(m) for m in graph[node]), default=-1)
        return found[node]

    for node in graph:
        layer(node)
    return found


def render(graph: Mapping[str, set[str]]) -> str:
    """The block docs/architecture.md shows: the layers, top first, then every edge."""
    of = layers(graph)
    rows = [f"{n:>2}  {'  '.join(sorted(p for p in graph if of[p] == n))}"
            for n in sorted(set(of.values()), reverse=True)]
    edges = [f"{p:<12}→ {' '.join(sorted(graph[p])) or '(nothing)'}" for p in sorted(graph)]
    return "```\n" + "\n".join([*rows, "", *edges]) + "\n```\n"


def test_the_architecture_doc_draws_the_graph_of_the_code() -> None:
    block = DOC_BLOCK.search(ARCHITECTURE_DOC.read_text(encoding="utf-8"))
    assert block is not None, "docs/architecture.md lost its package-layers block"
    assert block.group(1) == render(package_graph()), (
        "docs/architecture.md's package graph is out of date; paste this:\n"
        + render(package_graph()))


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
