"""The mask plan and the bubblewrap argv built from it, on a real folder tree (no
bubblewrap needed): what is hidden, read-only, pinned or held by a placeholder, in which
order, and that placeholders never outlive the commands that need them."""

from __future__ import annotations

import os
from pathlib import Path

from wisp.sandbox import placeholders
from wisp.sandbox.profile import Limits, SandboxProfile, bwrap_argv
from wisp.sandbox.view import Planner


def planner(work: Path, home: Path, **kw) -> Planner:
    return Planner([str(work)], hide=kw.pop("hide", ()), readonly=(),
                   deny_read=kw.pop("deny_read", ()), deny_write=(),
                   allow_read=kw.pop("allow_read", ()), home=str(home))


def tree(tmp_path: Path) -> tuple[Path, Path]:
    work, home = tmp_path / "work", tmp_path / "home"
    (work / ".git" / "hooks").mkdir(parents=True)
    (work / ".git" / "config").write_text("")
    (home / ".ssh").mkdir(parents=True)
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text("x")
    return work, home


def test_protected_paths_are_read_only_and_absent_ones_held(tmp_path):
    work, home = tree(tmp_path)
    plan = planner(work, home).plan()
    try:
        assert {str(work / ".git" / "hooks"), str(work / ".git" / "config")} <= set(
            plan.readonly)
        assert {str(work / n) for n in (".mcp.json", ".claude", ".envrc", ".vscode")
                } <= set(plan.placeholders)
        assert (work / ".mcp.json").is_file()  # on the host while the command runs
        assert str(work / ".git") in plan.pinned
    finally:
        plan.release()
    assert sorted(p.name for p in work.iterdir()) == [".git"]
    assert placeholders.held() == []


def test_a_placeholder_is_shared_and_removed_by_its_last_user(tmp_path):
    work, home = tree(tmp_path)
    first, second = planner(work, home).plan(), planner(work, home).plan()
    first.release()
    assert (work / ".mcp.json").exists()
    second.release()
    assert not (work / ".mcp.json").exists()


def test_a_placeholder_someone_filled_in_is_left_alone(tmp_path):
    work, home = tree(tmp_path)
    plan = planner(work, home).plan()
    os.unlink(work / ".envrc")
    (work / ".envrc").write_text("the user's own\n")
    plan.release()
    assert (work / ".envrc").read_text() == "the user's own\n"


def test_masks_land_on_the_target_of_a_link(tmp_path):
    work, home = tree(tmp_path)
    (work / "decoy").mkdir()
    (work / ".claude").symlink_to(work / "decoy")
    plan = planner(work, home).plan()
    try:
        assert str(work / "decoy") in plan.readonly
        assert str(work / ".claude") not in plan.placeholders
    finally:
        plan.release()


def test_credential_stores_are_hidden_unless_granted_back(tmp_path):
    work, home = tree(tmp_path)
    plan = planner(work, home).plan()
    plan.release()
    assert {str(home / ".ssh"), str(home / ".aws")} <= set(plan.hidden)
    granted = planner(work, home, allow_read=(str(home / ".aws"),)).plan()
    granted.release()
    assert str(home / ".aws") not in granted.hidden and str(home / ".ssh") in granted.hidden
    partly = planner(work, home, allow_read=(str(home / ".aws" / "credentials"),)).plan()
    partly.release()
    assert str(home / ".aws") in partly.hidden
    credentials = str(home / ".aws" / "credentials")
    assert partly.after[-3:] == ["--ro-bind", credentials, credentials]


def test_deny_globs_expand_to_what_exists(tmp_path):
    work, home = tree(tmp_path)
    (work / "a" / "b").mkdir(parents=True)
    (work / "a" / "b" / "k.pem").write_text("")
    (work / "a" / "b" / "k.txt").write_text("")
    plan = planner(work, home, deny_read=(f"{work}/**/*.pem", f"{work}/secret/**")).plan()
    plan.release()
    assert str(work / "a" / "b" / "k.pem") in plan.hidden
    assert str(work / "a" / "b" / "k.txt") not in plan.hidden
    assert str(work / "a") in plan.pinned and str(work / "a" / "b") in plan.pinned


def test_argv_order_hidden_folders_holding_work_come_first_and_end_read_only(tmp_path):
    work, home = tree(tmp_path)
    temp = tmp_path / "t"
    temp.mkdir()
    profile = SandboxProfile(writable=(str(work),), temp_dir=str(temp), home=str(home),
                             hide=(str(tmp_path),), limits=Limits(10, 1))
    plan = profile.planner().plan()
    try:
        argv = bwrap_argv("/usr/bin/bwrap", profile, plan, ["bash", "-c", "x"],
                          disable_userns=False, weak_proc=False)
    finally:
        plan.release()
    hide = argv.index("--tmpfs")
    bind = argv.index("--bind")
    assert argv[hide + 1] == str(tmp_path) and hide < bind
    assert argv[bind:bind + 3] == ["--bind", str(work), str(work)]
    remount = argv.index("--remount-ro")
    assert argv[remount + 1] == str(tmp_path)
    last_mount = max(i for i, a in enumerate(argv) if a in ("--bind", "--ro-bind", "--tmpfs"))
    assert remount > last_mount
    assert argv[-4:] == ["--", "bash", "-c", "x"]
    for flag in ("--unshare-user", "--unshare-pid", "--unshare-net", "--new-session",
                 "--die-with-parent"):
        assert flag in argv
    assert argv[argv.index("--cap-drop") + 1] == "ALL"


def test_a_hidden_folder_hides_what_is_below_it_and_no_sibling(tmp_path):
    """Two denied folders whose names share a prefix are two masks: one is not inside
    the other. A grant back below one of them re-exposes only that."""
    work, home = tree(tmp_path)
    for name in ("keys", "keys-old", "keysafe"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "k").write_text("")
    denied = tuple(str(tmp_path / n) for n in ("keys", "keys-old", "keysafe"))
    plan = planner(work, home, deny_read=denied,
                   allow_read=(str(tmp_path / "keys-old" / "k"),)).plan()
    plan.release()
    assert set(denied) <= set(plan.hidden)
    granted = str(tmp_path / "keys-old" / "k")
    assert _triple_at(plan.after, "--ro-bind", granted) >= 0
    assert _triple_at(plan.after, "--ro-bind", str(tmp_path / "keys" / "k")) == -1


def _triple_at(argv: list[str], option: str, path: str) -> int:
    """Where `option path path` is in argv; -1 when it is not."""
    return next((i for i in range(len(argv) - 2)
                 if argv[i:i + 3] == [option, path, path]), -1)


def test_read_only_paths_in_the_writable_folder_are_bound_read_only_over_it(tmp_path):
    """Listing a path as read-only is not enough: inside a writable folder it stays
    writable unless a read-only bind lands on it after the folder's writable bind."""
    work, home = tree(tmp_path)
    temp = tmp_path / "t"
    temp.mkdir()
    profile = SandboxProfile(writable=(str(work),), temp_dir=str(temp), home=str(home),
                             limits=Limits(10, 1))
    plan = profile.planner().plan()
    try:
        argv = bwrap_argv("/usr/bin/bwrap", profile, plan, ["true"], disable_userns=False,
                          weak_proc=False)
    finally:
        plan.release()
    bind = _triple_at(argv, "--bind", str(work))
    assert bind >= 0
    for protected in (work / ".git" / "hooks", work / ".git" / "config"):
        assert _triple_at(argv, "--ro-bind", str(protected)) > bind, protected


def test_limits_never_exceed_what_this_process_may_grant():
    import resource

    line = Limits(10**9, 10**6).prelude()
    hard = resource.getrlimit(resource.RLIMIT_NPROC)[1]
    wanted = 10**9 if hard == resource.RLIM_INFINITY else min(10**9, hard)
    assert line.startswith("ulimit -c 0 -u ") and f"-u {wanted} " in line
