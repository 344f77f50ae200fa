"""A `Read(...)` deny on one subtree does not refuse a search of the whole folder: Grep and
Glob run, the denied subtree is skipped, and nothing in it reaches the model, whichever
Grep engine runs (the bundled ripgrep, or Python's in a child where there is none).

Before: the permission check treated a search of `.` as a read of everything below it, so
`Read(./secret/**)` denied every Grep and Glob of the project.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.needs import ripgrep_or_skip
from tests.security.harness import Call, Session, Workspace, run_session

TOKEN = "hunter2-5be1d0"
DENY = ("--disallowedTools", "Read(./secret/**)")
ENGINES = {
    "ripgrep": {},
    # No `rg` on this PATH, and the bundled one not taken: Python's engine in a child.
    "python-child": {"USE_BUILTIN_RIPGREP": "0", "PATH": "/usr/bin:/bin"},
}
MODES = ("files_with_matches", "content", "count")


def workspace(root: Path) -> Workspace:
    ws = Workspace.create(root)
    (ws.cwd / "secret" / "deep").mkdir(parents=True)
    (ws.cwd / "secret" / "x.txt").write_text(f"needle {TOKEN}\n")
    (ws.cwd / "secret" / "deep" / "y.txt").write_text(f"needle {TOKEN}\n")
    (ws.cwd / "public.txt").write_text("needle public\nmore\n")
    (ws.cwd / "src").mkdir()
    (ws.cwd / "src" / "app.py").write_text("print('needle')\n")
    return ws


def calls() -> list[Call]:
    grep = [Call(f"Grep-{mode}", "Grep", {"pattern": "needle", "path": ".", "output_mode": mode,
                                          "-C": 1})
            for mode in MODES]
    return [*grep,
            Call("Grep-no-path", "Grep", {"pattern": "needle"}),
            Call("Glob", "Glob", {"pattern": "**/*"}),
            Call("Glob-txt", "Glob", {"pattern": "**/*.txt"}),
            Call("Grep-into-secret", "Grep", {"pattern": "needle", "path": "secret"}),
            Call("Glob-into-secret", "Glob", {"pattern": "*", "path": "secret"})]


def session(root: Path, engine: str) -> Session:
    if engine == "ripgrep":
        ripgrep_or_skip()
    ws = workspace(root)
    return run_session(ws, calls(), *DENY, env=ENGINES[engine])


@pytest.fixture(scope="module", params=sorted(ENGINES))
def searched(request, tmp_path_factory) -> Session:
    return session(tmp_path_factory.mktemp(request.param), request.param)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("case", [c.case for c in calls()[:6]])
def test_the_search_runs_and_skips_the_denied_subtree(searched: Session, case):
    outcome = searched[case]
    assert outcome.result is not None, f"the call never ran\n{searched}"
    assert not outcome.is_error and not outcome.denied(), outcome
    assert "public.txt" in outcome.text, outcome  # the rest of the folder was searched
    assert "secret" not in outcome.text and TOKEN not in outcome.text, outcome


@pytest.mark.timeout(120)
@pytest.mark.parametrize("case", ["Grep-into-secret", "Glob-into-secret"])
def test_a_search_of_the_denied_folder_itself_is_refused(searched: Session, case):
    assert searched[case].denied(), searched[case]


@pytest.mark.timeout(120)
def test_nothing_of_the_subtree_reaches_the_model(searched: Session):
    assert TOKEN not in searched.received(), searched
    assert searched.returncode == 0, searched


@pytest.mark.timeout(120)
@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_a_file_name_with_a_newline_cannot_smuggle_a_denied_line(tmp_path, engine):
    """`secret/evil\\n<cwd>/public.txt` printed grep-style reads as a line of public.txt."""
    if engine == "ripgrep":
        ripgrep_or_skip()
    ws = Workspace.create(tmp_path)
    (ws.cwd / "secret").mkdir()
    (ws.cwd / "public.txt").write_text("needle public\n")
    evil = os.fsencode(ws.cwd / "secret" / "evil") + b"\n" + os.fsencode(ws.cwd / "public.txt")
    os.makedirs(os.path.dirname(evil), exist_ok=True)
    with open(evil, "w") as f:
        f.write(f"needle {TOKEN}\n")
    result = run_session(ws, [Call(f"content-{engine}", "Grep",
                                   {"pattern": "needle", "output_mode": "content"})],
                         *DENY, env=ENGINES[engine])
    outcome = result.outcome
    assert not outcome.is_error, outcome
    assert outcome.text.splitlines() == [f"{ws.cwd / 'public.txt'}:1:needle public"], outcome
    assert TOKEN not in result.received()
