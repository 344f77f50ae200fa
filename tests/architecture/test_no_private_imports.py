"""No code of ours imports a private name of another package.

A private module or name (`anthropic._models`, `from x import _helper`) can change or vanish
in any release: a test that imported one once broke a fresh clone when the dependency moved
on. Our own packages (`wisp`, `tests`, `bench`) may use their own private names.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("src", "tests", "bench", "examples", "scripts")
OURS = {"wisp", "tests", "bench", "benchlib", "conftest"}


def python_files() -> list[Path]:
    return sorted(
        path for folder in SCANNED for path in (ROOT / folder).rglob("*.py")
        if "node_modules" not in path.parts and "__pycache__" not in path.parts)


def _private(dotted: str) -> bool:
    return any(part.startswith("_") and not part.startswith("__") for part in dotted.split("."))


def private_imports(tree: ast.AST) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names
                      if alias.name.split(".")[0] not in OURS and _private(alias.name)]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] in OURS:
                continue
            names = [f"{node.module}.{alias.name}" for alias in node.names]
            found += [(node.lineno, name) for name in names if _private(name)]
    return found


def test_no_private_name_of_another_package_is_imported() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for path in python_files()
        for line, name in private_imports(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert offenders == []


def test_the_check_sees_private_imports() -> None:
    sample = ast.parse("import anthropic._models\nfrom pkg.sub import _helper\n"
                       "from pkg._inner import thing\nfrom wisp.tools import _guard\n"
                       "from os import path\n")
    assert [name for _, name in private_imports(sample)] == [
        "anthropic._models", "pkg.sub._helper", "pkg._inner.thing"]
