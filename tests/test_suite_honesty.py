"""Checks of the test suite itself, so its green keeps meaning what it says.

- Fixtures outside the repository are found relative to the checkout (tests/shared_fixtures),
  never by an absolute path that exists only where a test was written.
- A broad `except` (bare, Exception, BaseException) in a test must re-raise or fail the
  test; the few that turn an exception into a value a test then asserts on are listed
  below with the reason. A new one that swallows errors would make errors look like
  agreement.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
BROAD = {"Exception", "BaseException"}
# (file, enclosing function) → why the exception becomes a value the test asserts on.
SWALLOWING_ALLOWED = {
    ("tests/sdk/test_python_sdk_bypass.py", "scenario"):
        "the official SDK raises a bare Exception; the test asserts its exact message",
    ("tests/sdk/test_python_sdk_first_run.py", "collect"):
        "what the SDK raises is what a user gets; the tests assert its type and message",
    ("tests/security/harness.py", "answer"):
        "a failed probe is recorded with its case, which then fails on that value",
    ("tests/security/conftest.py", "__call__"):
        "kept and raised again for every case of the batch",
    ("tests/privileges.py", "unprivileged"):
        "carried from the forked child to the parent, which raises it",
}


def _sources() -> list[Path]:
    return [p for p in TESTS.rglob("*.py") if "node_modules" not in p.parts]


def _is_broad(handler: ast.ExceptHandler) -> bool:
    kind = handler.type
    return kind is None or (isinstance(kind, ast.Name) and kind.id in BROAD)


def _fails_or_raises(handler: ast.ExceptHandler) -> bool:
    for node in ast.walk(ast.Module(body=handler.body, type_ignores=[])):
        if isinstance(node, ast.Raise):
            return True
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "fail"):
            return True
    return False


def _handlers_by_function(tree: ast.Module) -> list[tuple[str, ast.ExceptHandler]]:
    """Each except handler with the name of the innermost function around it."""
    found: list[tuple[str, ast.ExceptHandler]] = []

    def visit(node: ast.AST, function: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, child.name)
                continue
            if isinstance(child, ast.ExceptHandler):
                found.append((function, child))
            visit(child, function)

    visit(tree, "<module>")
    return found


def _swallowing_handlers() -> list[tuple[str, str, int]]:
    found = []
    for path in _sources():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function, handler in _handlers_by_function(tree):
            if _is_broad(handler) and not _fails_or_raises(handler):
                found.append((path.relative_to(ROOT).as_posix(), function, handler.lineno))
    return found


def test_no_broad_except_swallows_errors() -> None:
    unexplained = sorted({(f, fn, line) for f, fn, line in _swallowing_handlers()
                          if (f, fn) not in SWALLOWING_ALLOWED})
    assert unexplained == [], "a broad except that neither raises nor fails:\n" + "\n".join(
        f"  {f}:{line} in {fn}" for f, fn, line in unexplained)


def test_the_allowlist_names_only_real_handlers() -> None:
    present = {(f, fn) for f, fn, _ in _swallowing_handlers()}
    assert set(SWALLOWING_ALLOWED) <= present, set(SWALLOWING_ALLOWED) - present


def test_no_test_reads_fixtures_by_an_absolute_work_path() -> None:
    offenders = [p.relative_to(ROOT).as_posix() for p in _sources()
                 if p.name != "test_suite_honesty.py"
                 and 'Path("/work/' in p.read_text(encoding="utf-8")]
    assert offenders == [], offenders
