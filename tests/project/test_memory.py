"""Memory files (`wisp.project.memory`): where CLAUDE.md files are found, in what order,
how `@path` imports are followed, and the reminder text the model receives. Every tree is
built in tmp_path; `~/` imports use a home folder of the test's own."""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.privileges import IS_ROOT, open_folder, unprivileged
from wisp import diagnostics
from wisp.project.memory import (
    MAX_BYTES,
    MAX_IMPORT_DEPTH,
    MemoryFile,
    load_memory,
    memory_locations,
    memory_reminder,
    read_memory,
    search_folders,
)

ALL = ("user", "project", "local")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def rows(files: list[MemoryFile]) -> list[tuple[str, Path, Path | None]]:
    return [(f.kind, f.path, f.imported_from) for f in files]


@pytest.fixture
def warnings() -> Iterator[list[str]]:
    """What `wisp.diagnostics.warn` says during the test."""
    said: list[str] = []
    diagnostics.route_to(said.append)
    try:
        yield said
    finally:
        diagnostics.route_to(None)


class Tree:
    """A repository `repo/` with `repo/a/b` as the working folder, a config folder and a
    home folder, all under tmp_path."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.repo = root / "repo"
        self.cwd = self.repo / "a" / "b"
        self.config = root / "config"
        self.home = root / "home"
        for folder in (self.repo / ".git", self.cwd, self.config, self.home):
            folder.mkdir(parents=True, exist_ok=True)

    def load(self, sources: tuple[str, ...] = ALL, cwd: Path | None = None, *,
             allow_outside: bool = False) -> list[MemoryFile]:
        return load_memory(cwd or self.cwd, self.config, sources, home=self.home,
                           allow_outside=allow_outside)


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    return Tree(tmp_path)


# Where files are found ------------------------------------------------------------------


def test_nothing_to_find_gives_no_files_and_no_reminder(tree: Tree) -> None:
    assert tree.load() == []
    assert memory_reminder([]) is None


def test_user_file_alone(tree: Tree) -> None:
    user = write(tree.config / "CLAUDE.md", "be brief")
    files = tree.load(("user",))
    assert rows(files) == [("user", user, None)]
    assert files[0].content == "be brief"


def test_each_source_alone_and_together(tree: Tree) -> None:
    user = write(tree.config / "CLAUDE.md", "u")
    project = write(tree.cwd / "CLAUDE.md", "p")
    local = write(tree.cwd / "CLAUDE.local.md", "l")
    assert [f.path for f in tree.load(("user",))] == [user]
    assert [f.path for f in tree.load(("project",))] == [project]
    assert [f.path for f in tree.load(("local",))] == [local]
    assert [f.path for f in tree.load(("project", "local"))] == [project, local]
    assert [f.path for f in tree.load(("user", "local"))] == [user, local]
    assert rows(tree.load()) == [("user", user, None), ("project", project, None),
                                 ("local", local, None)]
    assert tree.load(()) == []


def test_order_is_user_then_outermost_folder_to_cwd(tree: Tree) -> None:
    user = write(tree.config / "CLAUDE.md", "u")
    expected = [("user", user, None)]
    for folder in (tree.repo, tree.repo / "a", tree.cwd):
        expected += [
            ("project", write(folder / "CLAUDE.md", f"p {folder}"), None),
            ("project", write(folder / ".claude" / "CLAUDE.md", f"dot {folder}"), None),
            ("local", write(folder / "CLAUDE.local.md", f"l {folder}"), None),
        ]
    assert rows(tree.load()) == expected


def test_dot_claude_file_alone(tree: Tree) -> None:
    dot = write(tree.cwd / ".claude" / "CLAUDE.md", "x")
    assert rows(tree.load()) == [("project", dot, None)]


def test_parents_above_the_repository_root_are_not_read(tree: Tree) -> None:
    write(tree.root / "CLAUDE.md", "above the repository")
    write(tree.root / "CLAUDE.local.md", "above the repository")
    inside = write(tree.repo / "CLAUDE.md", "root")
    assert [f.path for f in tree.load()] == [inside]


def test_a_git_file_marks_the_root_too(tree: Tree) -> None:
    """A worktree or submodule has a `.git` file, not a folder."""
    (tree.repo / "a" / ".git").write_text("gitdir: elsewhere\n", encoding="utf-8")
    write(tree.repo / "CLAUDE.md", "outer repository")
    inner = write(tree.repo / "a" / "CLAUDE.md", "inner")
    assert [f.path for f in tree.load()] == [inner]
    assert search_folders(tree.cwd) == [tree.repo / "a", tree.cwd]


def test_cwd_at_the_root_is_searched_alone(tree: Tree) -> None:
    root = write(tree.repo / "CLAUDE.md", "root")
    assert [f.path for f in tree.load(cwd=tree.repo)] == [root]


def test_outside_a_repository_only_cwd_is_read(tmp_path: Path) -> None:
    if any((p / ".git").exists() for p in tmp_path.parents):
        pytest.skip("tmp_path lies inside a repository here")
    cwd = tmp_path / "x" / "y"
    write(tmp_path / "CLAUDE.md", "stray file in a parent")
    write(tmp_path / "x" / "CLAUDE.local.md", "stray file in a parent")
    mine = write(cwd / "CLAUDE.md", "mine")
    assert search_folders(cwd) == [cwd]
    assert [f.path for f in load_memory(cwd, tmp_path / "config", ALL)] == [mine]


def test_relative_cwd_is_made_absolute(tree: Tree, monkeypatch: pytest.MonkeyPatch) -> None:
    project = write(tree.cwd / "CLAUDE.md", "p")
    monkeypatch.chdir(tree.repo)
    files = tree.load(cwd=Path("a/b"))
    assert [f.path for f in files] == [project]
    assert files[0].path.is_absolute()


def test_locations_name_every_candidate_in_order(tree: Tree) -> None:
    located = memory_locations(tree.repo / "a", tree.config, ALL)
    assert located == [
        ("user", tree.config / "CLAUDE.md"),
        ("project", tree.repo / "CLAUDE.md"), ("project", tree.repo / ".claude/CLAUDE.md"),
        ("local", tree.repo / "CLAUDE.local.md"),
        ("project", tree.repo / "a/CLAUDE.md"), ("project", tree.repo / "a/.claude/CLAUDE.md"),
        ("local", tree.repo / "a/CLAUDE.local.md")]
    assert memory_locations(tree.cwd, tree.config, ("local",))[0] == (
        "local", tree.repo / "CLAUDE.local.md")


def test_a_folder_or_fifo_named_claude_md_is_not_read(tree: Tree) -> None:
    (tree.cwd / "CLAUDE.md").mkdir()
    os.mkfifo(tree.cwd / "CLAUDE.local.md")  # opening it would block
    assert tree.load() == []


def test_one_file_reached_twice_is_loaded_once(tree: Tree) -> None:
    """Here the config folder is the project's `.claude`, as when wisp runs in ~."""
    shared = write(tree.cwd / ".claude" / "CLAUDE.md", "shared")
    files = load_memory(tree.cwd, tree.cwd / ".claude", ALL, home=tree.home)
    assert rows(files) == [("user", shared, None)]


def test_a_symlinked_file_counts_once(tree: Tree) -> None:
    real = write(tree.cwd / "CLAUDE.md", "once")
    (tree.cwd / ".claude").mkdir()
    (tree.cwd / ".claude" / "CLAUDE.md").symlink_to(real)
    assert [f.path for f in tree.load()] == [real]


# Reading ------------------------------------------------------------------------------


def test_non_utf8_file_is_skipped_with_a_warning(tree: Tree, warnings: list[str]) -> None:
    bad = tree.cwd / "CLAUDE.md"
    bad.write_bytes(b"caf\xe9 au lait\n")
    good = write(tree.cwd / "CLAUDE.local.md", "fine")
    assert [f.path for f in tree.load()] == [good]
    assert len(warnings) == 1
    assert str(bad) in warnings[0] and "UTF-8" in warnings[0]


def test_unreadable_file_is_skipped_with_a_warning(warnings: list[str]) -> None:
    """Run as a user the file's mode binds (as root, a forked child that dropped to
    nobody), in a folder that user can enter."""
    with open_folder() as root:
        tree = Tree(root)
        locked = write(tree.cwd / "CLAUDE.md", "secret")
        locked.chmod(0)

        def load() -> tuple[list[Path], list[str]]:
            return [f.path for f in tree.load()], list(warnings)

        loaded, said = unprivileged(load)
    assert loaded == []
    assert len(said) == 1 and str(locked) in said[0]


@pytest.mark.skipif(not IS_ROOT, reason="only root reads a file whatever its mode")
def test_root_reads_a_file_whatever_its_mode(tree: Tree, warnings: list[str]) -> None:
    """The other side, where the suite runs as root: wisp adds no mode check of its own."""
    locked = write(tree.cwd / "CLAUDE.md", "secret")
    locked.chmod(0)
    assert [f.path for f in tree.load()] == [locked] and warnings == []


def test_bom_and_windows_line_ends_are_normalised(tree: Tree) -> None:
    (tree.cwd / "CLAUDE.md").write_bytes("\ufeffone\r\ntwo\r\n".encode())
    assert tree.load()[0].content == "one\ntwo\n"


def test_a_big_file_is_cut_with_a_note(tree: Tree, warnings: list[str]) -> None:
    # A two-byte character straddles the cut: it is dropped, not an error.
    big = write(tree.cwd / "CLAUDE.md", "x" * (MAX_BYTES - 1) + "é" + "tail" * 1000)
    [memory] = tree.load()
    assert memory.content.startswith("x" * (MAX_BYTES - 1) + "\n\n[")
    assert "tail" not in memory.content
    assert str(big) in memory.content and "256 KB" in memory.content
    assert len(memory.content) < MAX_BYTES + 200
    assert warnings == []


def test_a_file_of_exactly_the_cap_is_whole(tree: Tree) -> None:
    write(tree.cwd / "CLAUDE.md", "y" * MAX_BYTES)
    assert tree.load()[0].content == "y" * MAX_BYTES


def test_describe(tree: Tree) -> None:
    top = write(tree.cwd / "CLAUDE.md", "see @more.md")
    more = write(tree.cwd / "more.md", "ünï")
    described = [f.describe() for f in tree.load()]
    assert described == [
        {"path": str(top), "type": "project", "chars": 12},
        {"path": str(more), "type": "project", "chars": 3, "imported_from": str(top)}]


# Imports -------------------------------------------------------------------------------


def test_imports_follow_their_importer_and_take_its_kind(tree: Tree) -> None:
    user = write(tree.config / "CLAUDE.md", "@prefs.md")
    prefs = write(tree.config / "prefs.md", "prefs")
    project = write(tree.cwd / "CLAUDE.md", "Read @docs/style.md and @../notes.md first.")
    style = write(tree.cwd / "docs" / "style.md", "style")
    notes = write(tree.repo / "a" / "notes.md", "notes")
    local = write(tree.cwd / "CLAUDE.local.md", "local, see\n@/" + str(notes)[1:] + "\n")
    assert rows(tree.load()) == [
        ("user", user, None), ("user", prefs, user),
        ("project", project, None), ("project", style, project),
        ("project", notes, project),
        ("local", local, None)]  # notes is loaded already


def test_import_paths_are_relative_to_the_importing_file(tree: Tree) -> None:
    top = write(tree.cwd / "CLAUDE.md", "@sub/one.md")
    one = write(tree.cwd / "sub" / "one.md", "@two.md")
    two = write(tree.cwd / "sub" / "two.md", "two")
    write(tree.cwd / "two.md", "the wrong two")
    assert rows(tree.load()) == [("project", top, None), ("project", one, top),
                                 ("project", two, one)]


def test_nested_imports_are_depth_first(tree: Tree) -> None:
    top = write(tree.cwd / "CLAUDE.md", "@a.md @b.md")
    a = write(tree.cwd / "a.md", "@a1.md")
    a1 = write(tree.cwd / "a1.md", "a1")
    b = write(tree.cwd / "b.md", "b")
    assert [f.path for f in tree.load()] == [top, a, a1, b]


def test_home_imports_use_the_given_home(tree: Tree) -> None:
    """(The home folder is outside the project: a project file reaches it only once the
    user approved imports from outside, see the tests below.)"""
    top = write(tree.cwd / "CLAUDE.md", "@~/notes/mine.md")
    mine = write(tree.home / "notes" / "mine.md", "mine")
    assert rows(tree.load(allow_outside=True)) == [("project", top, None),
                                                   ("project", mine, top)]
    user = write(tree.config / "CLAUDE.md", "@~/notes/mine.md")
    assert rows(tree.load(("user",))) == [("user", user, None), ("user", mine, user)]


# Files outside the project ---------------------------------------------------------------


def test_project_imports_outside_the_project_are_left_out_and_listed(tree: Tree) -> None:
    """`@~/.ssh/id_rsa`, an absolute path, `../..` past the repository root, from a
    project file and from a local one: none is loaded unless approved."""
    key = write(tree.home / ".ssh" / "id_rsa", "PRIVATE KEY")
    beside = write(tree.root / "beside.txt", "beside the repository")
    inside = write(tree.repo / "docs.md", "inside")
    top = write(tree.cwd / "CLAUDE.md", f"@~/.ssh/id_rsa @{beside} @../../docs.md")
    local = write(tree.cwd / "CLAUDE.local.md", "@../../../beside.txt")
    loaded = read_memory(tree.cwd, tree.config, ALL, tree.home)
    assert rows(loaded.files) == [("project", top, None), ("project", inside, top),
                                  ("local", local, None)]
    assert loaded.outside == [key, beside]
    approved = read_memory(tree.cwd, tree.config, ALL, tree.home, allow_outside=True)
    assert [f.path for f in approved.files] == [top, key, beside, inside, local]
    assert approved.outside == []


def test_a_symlink_out_of_the_project_counts_as_outside(tree: Tree) -> None:
    """The text of a path says nothing: a link inside the repository to a file outside
    it, whether imported or named CLAUDE.md itself, is outside."""
    secret = write(tree.root / "secret.txt", "SECRET")
    (tree.cwd / "inner.md").symlink_to(secret)
    (tree.repo / "CLAUDE.md").symlink_to(secret)
    top = write(tree.cwd / "CLAUDE.md", "@inner.md")
    loaded = read_memory(tree.cwd, tree.config, ALL, tree.home)
    assert [f.path for f in loaded.files] == [top]
    assert loaded.outside == [tree.repo / "CLAUDE.md", tree.cwd / "inner.md"]
    assert all("SECRET" not in f.content for f in loaded.files)


def test_outside_a_repository_the_working_folder_is_the_project(tmp_path: Path) -> None:
    cwd = tmp_path / "work"
    top = write(cwd / "CLAUDE.md", "@sub/a.md @../b.md")
    a = write(cwd / "sub" / "a.md", "a")
    b = write(tmp_path / "b.md", "b")
    loaded = read_memory(cwd, tmp_path / "config", ALL)
    assert [f.path for f in loaded.files] == [top, a]
    assert loaded.outside == [b]


def test_other_users_homes_are_not_imported(tree: Tree) -> None:
    write(tree.cwd / "CLAUDE.md", "@~root/x.md @~")
    assert len(tree.load()) == 1


def test_depth_limit(tree: Tree) -> None:
    chain = [write(tree.cwd / "CLAUDE.md", "@f1.md")]
    for i in range(1, MAX_IMPORT_DEPTH + 3):
        chain.append(write(tree.cwd / f"f{i}.md", f"@f{i + 1}.md"))
    loaded = [f.path for f in tree.load()]
    assert loaded == chain[:MAX_IMPORT_DEPTH + 1]  # the file itself and five hops


def test_cycles_end(tree: Tree) -> None:
    a = write(tree.cwd / "CLAUDE.md", "@b.md @CLAUDE.md @./CLAUDE.md")
    b = write(tree.cwd / "b.md", "@CLAUDE.md @b.md @../b/CLAUDE.md")
    assert [f.path for f in tree.load()] == [a, b]


def test_code_fences_and_spans_are_not_imports(tree: Tree) -> None:
    for name in ("f1", "f2", "f3", "f4", "f5", "real"):
        write(tree.cwd / f"{name}.md", name)
    top = write(tree.cwd / "CLAUDE.md", "\n".join([
        "```sh", "@f1.md", "```",
        "~~~", "@f2.md", "```", "still fenced @f2.md", "~~~",
        "Run `cat @f3.md` or ``x @f4.md ` y`` please.",
        "````", "```", "@f5.md", "````",
        "Then @real.md.",
    ]))
    loaded = tree.load()
    assert [f.path for f in loaded] == [top, tree.cwd / "real.md"]
    assert loaded[0].content.endswith("Then @real.md.")  # the import line stays as written


def test_an_unclosed_fence_runs_to_the_end(tree: Tree) -> None:
    write(tree.cwd / "x.md", "x")
    write(tree.cwd / "CLAUDE.md", "```\n@x.md\n")
    assert len(tree.load()) == 1


def test_addresses_and_missing_targets_are_ignored(tree: Tree, warnings: list[str]) -> None:
    write(tree.cwd / "b.com", "not an import")
    write(tree.cwd / "CLAUDE.md", "Mail a@b.com or @nobody, see @missing.md and @")
    assert len(tree.load()) == 1
    assert warnings == []


def test_an_imported_folder_is_not_read(tree: Tree) -> None:
    (tree.cwd / "docs").mkdir()
    write(tree.cwd / "CLAUDE.md", "@docs")
    assert len(tree.load()) == 1


def test_non_utf8_import_is_skipped_with_a_warning(tree: Tree, warnings: list[str]) -> None:
    write(tree.cwd / "CLAUDE.md", "@logo.png @ok.md")
    (tree.cwd / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\xff")
    ok = write(tree.cwd / "ok.md", "ok")
    assert [f.path for f in tree.load()][1:] == [ok]
    assert len(warnings) == 1 and "logo.png" in warnings[0]


@pytest.mark.parametrize("seed", range(8))
def test_random_import_graphs(tmp_path: Path, seed: int) -> None:
    """Each file reachable within the depth limit appears exactly once, after its
    importer, and nothing further away appears at all."""
    rng = random.Random(seed)
    tree = Tree(tmp_path)
    count = rng.randint(2, 14)
    names = ["CLAUDE.md", *(f"n{i}.md" for i in range(1, count))]
    edges = {name: rng.sample(names, rng.randint(0, min(3, count))) for name in names}
    for name, targets in edges.items():
        noise = rng.choice(["", "`@n1.md` ", "x@n1.md ", "@gone.md "])
        write(tree.cwd / name, noise + " ".join(f"@{t}" for t in targets))

    # Shortest hop counts from the top file, breadth-first.
    hops = {"CLAUDE.md": 0}
    frontier = ["CLAUDE.md"]
    while frontier:
        nxt = []
        for name in frontier:
            for target in edges[name]:
                if target not in hops:
                    hops[target] = hops[name] + 1
                    nxt.append(target)
        frontier = nxt

    loaded = tree.load(("project",))
    got = [f.path.name for f in loaded]
    assert len(got) == len(set(got))
    assert got[0] == "CLAUDE.md"
    assert set(got) == {n for n, h in hops.items() if h <= MAX_IMPORT_DEPTH}
    position = {name: i for i, name in enumerate(got)}
    for memory in loaded[1:]:
        assert memory.kind == "project"
        assert memory.imported_from is not None
        parent = memory.imported_from.name
        assert memory.path.name in edges[parent]
        assert position[parent] < position[memory.path.name]


def test_a_file_found_late_by_a_long_chain_still_brings_its_near_imports(tree: Tree) -> None:
    """CLAUDE.md imports a long chain first, which reaches `near.md` at the depth limit,
    then `near.md` directly: `near.md`'s own import is one hop further, well within."""
    write(tree.cwd / "CLAUDE.md", "@c1.md @near.md")
    for i in range(1, MAX_IMPORT_DEPTH):
        write(tree.cwd / f"c{i}.md", f"@c{i + 1}.md" if i < MAX_IMPORT_DEPTH - 1 else "@near.md")
    write(tree.cwd / "near.md", "@leaf.md")
    write(tree.cwd / "leaf.md", "leaf")
    names = [f.path.name for f in tree.load()]
    assert names.index("near.md") < names.index("leaf.md")
    assert sorted(names) == sorted(["CLAUDE.md", "near.md", "leaf.md",
                                    *(f"c{i}.md" for i in range(1, MAX_IMPORT_DEPTH))])


# The reminder ---------------------------------------------------------------------------


def test_reminder_holds_every_file_in_order_with_its_kind(tree: Tree) -> None:
    user = write(tree.config / "CLAUDE.md", "USER TEXT")
    project = write(tree.repo / "CLAUDE.md", "PROJECT TEXT\n@extra.md\n")
    extra = write(tree.repo / "extra.md", "EXTRA TEXT")
    local = write(tree.cwd / "CLAUDE.local.md", "LOCAL TEXT")
    text = memory_reminder(tree.load())
    assert text is not None
    assert text.startswith("<system-reminder>\n") and text.endswith("\n</system-reminder>")
    marks = [str(user), "USER TEXT", str(project), "PROJECT TEXT\n@extra.md", str(extra),
             "EXTRA TEXT", str(local), "LOCAL TEXT"]
    at = [text.index(mark) for mark in marks]
    assert at == sorted(at)
    assert "the user's private instructions for all projects" in text
    assert "project instructions, checked in" in text
    assert "private project instructions, not checked in" in text
    assert f"imported by {project}" in text
    preface = text.split("\n")[1]
    assert "precedence" in preface and "default behaviour" in preface


def test_reminder_of_one_file(tmp_path: Path) -> None:
    memory = MemoryFile(tmp_path / "CLAUDE.md", "project", "\nhello\n\n")
    text = memory_reminder([memory])
    assert text is not None
    assert f"{tmp_path / 'CLAUDE.md'} (project instructions, checked in)" in text
    assert "\nhello\n</system-reminder>" in text
