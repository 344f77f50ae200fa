from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

from wisp.tools.base import ToolContext
from wisp.tools.registry import BUILTIN_TOOL_NAMES, builtin_tool_classes, builtin_tools

NAMES = ["Bash", "Edit", "ExitPlanMode", "Glob", "Grep", "Read", "TodoWrite", "WebFetch", "Write"]


def test_order_and_names() -> None:
    assert list(BUILTIN_TOOL_NAMES) == NAMES
    assert [cls.name for cls in builtin_tool_classes()] == NAMES
    tools = builtin_tools()
    assert list(tools) == NAMES
    assert builtin_tools()["Bash"] is not tools["Bash"]


def test_a_selection_builds_only_those_tools_in_offering_order() -> None:
    assert list(builtin_tools(["Write", "Task", "Bash"])) == ["Bash", "Write"]
    assert builtin_tools([]) == {}


def test_api_definitions_are_well_formed() -> None:
    for tool in builtin_tools().values():
        definition = tool.api_definition()
        assert definition["name"] == tool.name
        assert definition["description"].strip()
        schema = definition["input_schema"]
        assert schema["type"] == "object"
        assert set(schema["required"]) <= set(schema["properties"])
        assert tool.kind in ("read", "edit", "execute", "network", "meta")


def test_every_tool_answers_bad_input_with_an_error_result(tmp_path: Path) -> None:
    async def main() -> None:
        for tool in builtin_tools().values():
            for bad in ({}, {"file_path": 3, "pattern": 4, "command": 5, "url": 6, "todos": 7}):
                result = await tool.run(bad, ToolContext(cwd=tmp_path))
                assert result.is_error, (tool.name, bad)

    asyncio.run(main())


def test_importing_the_registry_stays_light() -> None:
    """No tool loads with the registry, and building the tools loads none of the helpers
    they need only to run."""
    code = (
        "import sys, wisp.tools.registry as r; "
        "tools = [m for m in sys.modules if m.startswith('wisp.tools.') and m not in "
        "('wisp.tools.registry',)]; "
        "r.builtin_tools(); "
        "heavy = [m for m in ('urllib.request', 'html.parser', 'http.client', 'jsonschema', "
        "'shutil', 'difflib', 'shlex', 'wisp.tools._bash_exec', "
        "'wisp.tools._grep_search', 'wisp.tools._web_http') if m in sys.modules]; "
        "print(tools + heavy)"
    )
    src = str(Path(__file__).resolve().parents[2] / "src")
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": src},
        check=True,
    )
    assert out.stdout.strip() == "[]"
