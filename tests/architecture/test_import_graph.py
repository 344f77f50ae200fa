"""The layering rules of ARCHITECTURE.md, checked on the source: the engine knows no wire
and no front end, the runtime no front end, the libraries below neither, and nothing
outside `cli/` changes the process's environment or working directory.

Every import is found with `ast`, including those inside functions and under
`TYPE_CHECKING`: a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "wisp"

# package → packages it must not import (each a `wisp.<name>` prefix)
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "engine": ("wire", "cli", "duplex", "runtime"),
    "runtime": ("cli", "duplex"),
    "models": ("cli", "duplex", "runtime"),
    "tools": ("cli", "duplex", "runtime"),
    "permissions": ("cli", "duplex", "runtime", "tools", "engine"),
    "hooks": ("cli", "duplex", "runtime"),
    "sessions": ("cli", "duplex", "runtime"),
    # Custom slash commands: shared by every front end, so it imports none of them.
    "commands": ("cli", "duplex", "runtime", "tui"),
    # The OS sandbox sits below the tools that run commands in it.
    "sandbox": ("cli", "duplex", "runtime", "engine", "tools", "tui", "serve"),
    # The editor front end drives Runtimes; it imports no other front end.
    "acp": ("cli", "duplex", "tui", "sdk", "serve"),
    # The other front ends: none imports another, except that the SDK's in-process link
    # runs a duplex session (sdk → duplex). argv → configuration is `launch/`, below them.
    "tui": ("cli", "duplex", "sdk", "serve", "acp"),
    "serve": ("cli", "duplex", "sdk", "tui", "acp"),
    "duplex": ("cli", "sdk", "tui", "serve", "acp"),
    "sdk": ("cli", "tui", "serve", "acp"),
    "launch": ("cli", "duplex", "sdk", "tui", "serve", "acp"),
}
# Writes to the process's environment or cwd: allowed in cli/ only.
PROCESS_WRITES = re.compile(
    r"os\.environ\[[^\]]+\]\s*=(?!=)|os\.environ\.(update|setdefault|pop|clear)\(|"
    r"os\.putenv\(|os\.unsetenv\(|os\.chdir\(|del\s+os\.environ\[")


def modules() -> list[Path]:
    return sorted(p for p in SRC.rglob("*.py") if "__pycache__" not in p.parts)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, package: str | None = None) -> set[str]:
    """Every module `path` imports, absolute, wherever the import statement is."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    if package is None:
        name = module_name(path)
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            # `from wisp import cli` imports wisp.cli
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def _violations(package: str, banned: tuple[str, ...]) -> list[str]:
    bad = []
    for path in modules():
        name = module_name(path)
        if not (name == f"wisp.{package}" or name.startswith(f"wisp.{package}.")):
            continue
        for imported in sorted(imports_of(path)):
            for target in banned:
                prefix = f"wisp.{target}"
                if imported == prefix or imported.startswith(prefix + "."):
                    bad.append(f"{name} imports {imported}")
    return bad


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_layering(package: str) -> None:
    assert _violations(package, FORBIDDEN[package]) == []


def test_the_checker_sees_imports_inside_functions(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from wisp.cli.main import main\n    import wisp.duplex\n"
                      "    from ..wire import frames\n")
    assert {"wisp.cli.main", "wisp.duplex", "wisp.wire.frames"} <= imports_of(
        module, package="wisp.engine")


def test_nothing_outside_cli_changes_the_process_environment_or_cwd() -> None:
    offenders = []
    for path in modules():
        if module_name(path).startswith("wisp.cli"):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if PROCESS_WRITES.search(line):
                offenders.append(f"{path.relative_to(SRC.parent)}:{number}: {line.strip()}")
    assert offenders == []


def test_the_pattern_catches_every_kind_of_write() -> None:
    for line in ('os.environ["A"] = "1"', "os.environ.update(x)", "os.putenv('A', '1')",
                 "os.chdir(path)", "os.environ.setdefault('A', 'b')", "del os.environ['A']"):
        assert PROCESS_WRITES.search(line), line
    assert not PROCESS_WRITES.search('if os.environ["A"] == "1":')


def test_nothing_but_cli_imports_cli() -> None:
    """`cli/` is the top: the `wisp` command. What other front ends share with it (argv →
    configuration) is `launch/`. `wisp.__main__` is `python -m wisp`, the same command."""
    bad = [f"{module_name(path)} imports {imported}" for path in modules()
           if not module_name(path).startswith("wisp.cli") and module_name(path) != "wisp.__main__"
           for imported in sorted(imports_of(path))
           if imported == "wisp.cli" or imported.startswith("wisp.cli.")]
    assert bad == []


def test_nothing_below_the_sdk_imports_it() -> None:
    """wisp.sdk is a front end: the runtime, engine and the other front ends stand alone."""
    bad = [f"{module_name(path)} imports {imported}" for path in modules()
           if not module_name(path).startswith("wisp.sdk")
           for imported in sorted(imports_of(path))
           if imported == "wisp.sdk" or imported.startswith("wisp.sdk.")]
    assert bad == []
