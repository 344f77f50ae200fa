"""Golden screens of the UI's main views: the permission dialog (a command, an edit with
its diff), the summary after an edit, the tasks panel and the rewind pickers, rendered
at 80 columns as the live region draws them. Each is compared whole with a file in
tests/tui/golden/: `.txt` is what a person reads, `.ansi` the same with its colours
(`cat` it in a terminal). A change in how a view looks fails here until the files are
regenerated (`WISP_UPDATE_GOLDEN=1`) and the change is reviewed in the diff.

The tmux tests check behaviour; these pin the look, so they render in-process: the same
`Picker.render` and rich renderer the live region uses, without a clock or a pid in the
picture.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from wisp.engine.tasks import Task
from wisp.models.catalog import resolve_model
from wisp.permissions.engine import Verdict
from wisp.tui import tasks_panel, tool_summary
from wisp.tui.dialog import Picker
from wisp.tui.diff_view import hunks
from wisp.tui.model_picker import ModelPicker, model_choice
from wisp.tui.permission import permission_picker
from wisp.tui.render import Renderer
from wisp.tui.rewind import PromptMark, action_picker, prompt_picker
from wisp.tui.search_picker import SearchPicker
from wisp.tui.tool_group import CallGroup

GOLDEN = Path(__file__).parent / "golden"
WIDTH, ROWS = 80, 24
_SGR = re.compile(r"\x1b\[[0-9;]*m")
SOURCE = "".join(f"value_{i} = {i}\n" for i in range(1, 13))


def picked(make: Callable[[], Picker], width: int = WIDTH, rows: int = ROWS,
           keys: Callable[[Picker], None] | None = None) -> str:
    """The picker as the live region draws it (a Picker needs a running loop), after
    `keys` (what the user typed into it)."""
    async def draw() -> str:
        picker = make()
        if keys is not None:
            keys(picker)
        return picker.render(Renderer(width, {}), rows)
    return asyncio.run(draw())


def check(name: str, ansi: str) -> None:
    plain = _SGR.sub("", ansi)
    for suffix, text in ((".txt", plain), (".ansi", ansi)):
        path = GOLDEN / f"{name}{suffix}"
        if os.environ.get("WISP_UPDATE_GOLDEN") == "1":
            path.parent.mkdir(exist_ok=True)
            path.write_text(text)
            continue
        assert path.exists(), f"no golden {path.name}: run with WISP_UPDATE_GOLDEN=1"
        assert text == path.read_text(), f"{path.name} changed:\n{plain}"


def test_bash_permission_dialog(tmp_path: Path) -> None:
    check("dialog_bash", picked(lambda: permission_picker(
        "Bash", {"command": "npm test -- --watch=false && git status"},
        Verdict("ask", "Permission to use Bash has not been granted: npm. Allow it with "
                "--allowedTools 'Bash(<command>:*)'.", "mode"),
        tmp_path, ["Bash(npm test:*)"])))


def test_edit_permission_dialog_with_its_diff(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "values.py").write_text(SOURCE)
    check("dialog_edit_diff", picked(lambda: permission_picker(
        "Edit", {"file_path": str(tmp_path / "src" / "values.py"),
                 "old_string": "value_6 = 6\n", "new_string": "value_6 = 600\nvalue_6b = 7\n"},
        Verdict("ask", "", "mode"), tmp_path, ["Edit(src/**)"])))


def test_summary_after_an_edit(tmp_path: Path) -> None:
    after = SOURCE.replace("value_6 = 6\n", "value_6 = 600\nvalue_6b = 7\n")
    data = {"filePath": str(tmp_path / "values.py"), "structuredPatch": hunks(SOURCE, after)}
    text = tool_summary.summary("Edit", {}, data, "The file has been updated.",
                                is_error=False, cwd=tmp_path)
    assert text is not None
    from wisp.tui.render import under_call

    check("after_edit", Renderer(WIDTH, {}).ansi(under_call(text)))


def test_tasks_panel() -> None:
    def tasks() -> list[Task]:
        shell = Task("b1234567", "local_bash", "npm run dev", "toolu_1", backgrounded=True)
        agent = Task("a0000000000000001", "local_agent", "review the parser", "toolu_2",
                     agent_type="code-reviewer", backgrounded=True)
        agent.status = "completed"
        return [agent, shell]
    check("tasks_panel", picked(lambda: tasks_panel.list_picker(tasks())))


def test_rewind_pickers() -> None:
    marks = [PromptMark("u3", "add a --verbose flag to the CLI", 6, "p3"),
             PromptMark("u2", "now write tests for it\nwith pytest", 4, "p2"),
             PromptMark("u1", "read the parser and explain it", 0, None)]
    check("rewind_prompts", picked(lambda: prompt_picker(marks)))
    preview = {"canRewind": True, "filesChanged": ["/p/cli.py", "/p/test_cli.py"],
               "insertions": 12, "deletions": 3}
    check("rewind_actions", picked(lambda: action_picker(marks[0], preview)))


SESSIONS = [("a1", "2026-12-01 09:12  fix the flaky parser test  · 5f0c2a11"),
            ("b2", "2026-11-30 17:40  write the user docs for /resume  · 0be41d9c"),
            ("c3", "2026-11-28 08:05  make logging less noisy  · 77aa03e1")]
PREVIEWS = {"a1": ["❯ fix the flaky parser test", "⏺ The test races the file watcher; I "
                   "made it wait for the event.", "❯ run it 50 times", "⏺ 50 passed."],
            "b2": ["❯ write the user docs for /resume", "⏺ Done: docs/terminal-ui.md"],
            "c3": ["❯ make logging less noisy", "⏺ Debug lines now go to the log file only."]}


def resume_picker() -> Picker:
    return SearchPicker("Resume a session", SESSIONS, label=lambda s: s[1],
                        search=lambda rows, q: [r for r in rows if q.casefold() in r[1]],
                        preview=lambda s, width: PREVIEWS[s[0]], verb="resume")


def test_resume_picker_with_its_preview() -> None:
    check("resume_picker", picked(resume_picker))
    check("resume_picker_60x20", picked(resume_picker, 60, 18,
                                        keys=lambda p: (p.type("docs"), None)[1]))


def test_model_picker_with_effort() -> None:
    def make() -> Picker:
        aliases = ("sonnet", "opus", "haiku")
        return ModelPicker([*(model_choice(a, {}) for a in aliases), "keep claude-opus-5-5"],
                           [*(resolve_model(a, {}) for a in aliases), "claude-opus-5-5"],
                           "high")
    check("model_picker", picked(make))
    check("model_picker_60x20", picked(make, 60, 18))


def test_grouped_reads_and_searches() -> None:
    group = CallGroup(0)
    for i, (name, tool_input) in enumerate([("Read", {"file_path": "a.py"}),
                                            ("Read", {"file_path": "b.py"}),
                                            ("Grep", {"pattern": "TODO"}),
                                            ("Glob", {"pattern": "**/*.md"})]):
        group.add(f"t{i}", name, tool_input)
    check("tool_group", Renderer(WIDTH, {}).ansi(group.summary_line(0)))


@pytest.mark.parametrize("name", ["dialog_bash", "dialog_edit_diff", "after_edit",
                                  "tasks_panel", "rewind_prompts", "rewind_actions",
                                  "resume_picker", "resume_picker_60x20", "model_picker",
                                  "model_picker_60x20",
                                  "tool_group"])
def test_every_golden_is_plain_text_a_person_can_read(name: str) -> None:
    text = (GOLDEN / f"{name}.txt").read_text()
    assert "\x1b" not in text and text.strip()
