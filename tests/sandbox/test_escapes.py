"""The escape classes of the sandbox design brief that apply to the filesystem view and
the process sandbox, each tried for real: a session's sandbox is built in this process
and the commands run in real bubblewrap. Effects are checked on the host."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sandbox.helpers import gone, make_sandbox, run
from wisp.sandbox import placeholders
from wisp.sandbox.runner import CommandSandbox

pytestmark = pytest.mark.usefixtures("bwrap")
SECRET = "top-secret-value"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text(SECRET)
    return home


@pytest.fixture
def work(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    (work / ".git" / "hooks").mkdir(parents=True)
    (work / ".git" / "config").write_text("[core]\n")
    return work


@pytest.fixture
def box(work: Path, home: Path) -> Iterator[CommandSandbox]:
    sandbox = make_sandbox(work, home)
    yield sandbox
    sandbox.close()


def test_a_symlink_into_a_masked_folder_reads_nothing(box, work, home):
    assert run(box, f"ln -s {home / '.ssh'} k", work).returncode == 0
    done = run(box, "cat k/id_ed25519", work)
    assert done.returncode != 0 and SECRET not in done.stdout
    assert (work / "k").is_symlink()  # the link was made; what it points to stays hidden


def test_a_protected_folder_swapped_for_a_link_keeps_its_mask_on_the_target(work, home):
    decoy = work / "decoy"
    decoy.mkdir()
    (work / ".claude").symlink_to(decoy)
    (decoy / "settings.json").write_text("{}")
    box = make_sandbox(work, home)
    try:
        done = run(box, "echo '{\"hooks\": 1}' > .claude/settings.json; "
                        "touch .claude/agents; mkdir .claude/commands", work)
    finally:
        box.close()
    assert done.returncode != 0
    assert (decoy / "settings.json").read_text() == "{}"
    assert sorted(p.name for p in decoy.iterdir()) == ["settings.json"]


def test_moving_a_protected_folder_aside_fails(work, home):
    """A folder holding a mask is pinned: renamed, its hooks (or a denied file) would be
    out of reach of the next command's masks."""
    (work / "certs").mkdir()
    (work / "certs" / "site.pem").write_text(SECRET)
    box = make_sandbox(work, home, deny=["Read(./certs/site.pem)"])
    try:
        done = run(box, "mv .git/hooks h; mv .git .g; mv certs c; ls -a", work)
        again = run(box, "cat c/site.pem certs/site.pem", work)
    finally:
        box.close()
    # (mv may copy what it cannot rename: a copy of a folder is no threat to it)
    assert (work / ".git" / "hooks").is_dir() and (work / "certs" / "site.pem").exists()
    assert not (work / ".g").exists() and not (work / "c" / "site.pem").exists(), done.stdout
    assert SECRET not in again.stdout


def test_absent_protected_paths_cannot_be_created_and_leave_nothing(box, tmp_path, home):
    bare = tmp_path / "bare"
    bare.mkdir()
    sandbox = make_sandbox(bare, home)
    try:
        done = run(sandbox, "mkdir -p .git/hooks; touch .mcp.json; mkdir .claude; "
                            "echo x > .envrc; mkdir .vscode; touch ok", bare)
    finally:
        sandbox.close()
    assert done.stderr.count("cannot") + done.stderr.count("denied") >= 5, done.stderr
    assert sorted(p.name for p in bare.iterdir()) == ["ok"]
    assert placeholders.held() == []


def test_missing_git_hooks_in_an_existing_repository(box, work):
    (work / ".git" / "hooks").rmdir()
    done = run(box, "mkdir .git/hooks && echo made", work)
    assert "made" not in done.stdout
    assert not (work / ".git" / "hooks").exists()


def test_a_hard_link_cannot_reach_around_a_read_only_file(box, work):
    done = run(box, "ln .git/config c && echo '[alias] x = !evil' >> c", work)
    assert done.returncode != 0
    assert (work / ".git" / "config").read_text() == "[core]\n"
    assert not (work / "c").exists()


def test_host_processes_are_invisible(box, work):
    done = run(box, f"ls /proc | grep -E '^[0-9]+$' | wc -l; cat /proc/{os.getpid()}/cmdline",
               work)
    count = int(done.stdout.split()[0])
    assert count <= 6  # the sandbox's own: its init, bash, ls, grep, wc
    assert "pytest" not in done.stdout


def test_no_terminal_to_inject_into(box, work):
    code = ("import fcntl, termios\n"
            "for target in (0, '/dev/tty'):\n"
            "    try:\n"
            "        fd = target if target == 0 else open(target, 'wb').fileno()\n"
            "        fcntl.ioctl(fd, termios.TIOCSTI, b'x')\n"
            "        print('INJECTED', target)\n"
            "    except OSError as exc:\n"
            "        print('refused', target, exc.errno)\n")
    done = run(box, f"python3 -c \"{code}\"", work)
    assert "INJECTED" not in done.stdout and done.stdout.count("refused") == 2


def test_no_descriptor_leaks_in(box, work):
    read_end, write_end = os.pipe()
    os.set_inheritable(read_end, True)
    try:
        done = run(box, "ls /proc/self/fd", work)
    finally:
        os.close(read_end)
        os.close(write_end)
    assert sorted(int(fd) for fd in done.stdout.split()) == [0, 1, 2, 3]  # 3: ls's own


def test_no_capabilities_and_no_new_privileges(box, work):
    done = run(box, "grep -E '^(CapEff|CapPrm|NoNewPrivs)' /proc/self/status; "
                    f"umount {box.profile.home}/.ssh && echo UNMOUNTED", work)
    status = dict(line.split(":\t") for line in done.stdout.splitlines() if ":\t" in line)
    assert int(status["CapEff"], 16) == 0 and int(status["CapPrm"], 16) == 0
    assert status["NoNewPrivs"].strip() == "1"
    assert "UNMOUNTED" not in done.stdout


def test_a_nested_user_namespace_cannot_unmask(box, work, home):
    done = run(box, f"unshare -rm sh -c 'umount {home}/.ssh; cat {home}/.ssh/id_ed25519'",
               work)
    assert SECRET not in done.stdout


def test_a_detached_process_dies_with_the_command(box, work):
    marker = f"{4000 + os.getpid() % 1000}.{os.getpid()}"
    run(box, f"setsid nohup sleep {marker} > /dev/null 2>&1 & disown; echo started", work)
    # bubblewrap reports the command's exit as soon as it happens; the namespace's
    # teardown (SIGKILL to all in it) completes a moment later.
    assert gone(marker)


def test_a_fork_bomb_stops_at_the_process_limit(work, home):
    box = make_sandbox(work, home, max_processes=40)
    code = ("import os, time\nn = 0\ntry:\n    while n < 500:\n        if os.fork() == 0:\n"
            "            time.sleep(5)\n            os._exit(0)\n        n += 1\n"
            "except OSError as exc:\n    print('stopped', n, exc.errno)\n")
    try:
        done = run(box, f"python3 -c \"{code}\"", work, timeout=30)
    finally:
        box.close()
    assert done.stdout.startswith("stopped"), done.stdout + done.stderr
    assert int(done.stdout.split()[1]) < 40


def test_a_runaway_write_stops_at_the_file_size_limit(work, home):
    box = make_sandbox(work, home, max_file_mb=1)
    try:
        done = run(box, "head -c 3000000 /dev/zero > big; echo status $?", work)
    finally:
        box.close()
    assert "status 0" not in done.stdout
    assert (work / "big").stat().st_size <= 1024 * 1024


def test_writes_go_only_to_the_working_folder_and_the_private_temp(box, work):
    done = run(box, "echo in > inside && echo t > \"$TMPDIR/t\" && cat \"$TMPDIR/t\"; "
                    "echo x > /etc/wisp-escape; echo x > /usr/wisp-escape; "
                    "echo x > /tmp/wisp-escape; echo x > /var/tmp/wisp-escape", work)
    assert (work / "inside").read_text() == "in\n"
    assert "t" in done.stdout.split()
    assert Path(box.profile.temp_dir, "t").read_text() == "t\n"
    for path in ("/etc/wisp-escape", "/usr/wisp-escape", "/tmp/wisp-escape",
                 "/var/tmp/wisp-escape"):
        assert not os.path.exists(path)


def test_read_deny_rules_hide_paths_inside_the_working_folder(work, home):
    (work / "secret").mkdir()
    (work / "secret" / "key").write_text(SECRET)
    (work / "certs").mkdir()
    (work / "certs" / "site.pem").write_text(SECRET)
    (work / "certs" / "site.txt").write_text("public")
    box = make_sandbox(work, home, deny=["Read(./secret/**)", "Read(./**/*.pem)"])
    try:
        done = run(box, "cat secret/key; cat certs/site.pem; cat certs/site.txt", work)
    finally:
        box.close()
    assert SECRET not in done.stdout and "public" in done.stdout


def test_allow_read_grants_a_credential_store_back(work, home):
    (home / ".aws").mkdir()
    (home / ".aws" / "config").write_text("[default]\n")
    box = make_sandbox(work, home, allow_read=(str(home / ".aws"),))
    try:
        done = run(box, "cat ~/.aws/config; cat ~/.ssh/id_ed25519", work,
                   env={"HOME": str(home)})
    finally:
        box.close()
    assert "[default]" in done.stdout and SECRET not in done.stdout


def test_granting_a_folder_that_holds_the_keys_does_not_grant_the_keys(work, home):
    """allowRead of HOME (or of a folder above it) names a folder, not the credential
    stores in it."""
    (home / ".aws").mkdir()
    (home / ".aws" / "config").write_text(SECRET)
    (home / "notes.txt").write_text("public")
    for grant in (str(home), str(home.parent)):
        box = make_sandbox(work, home, allow_read=(grant,))
        try:
            done = run(box, "cat ~/notes.txt ~/.ssh/id_ed25519 ~/.aws/config", work,
                       env={"HOME": str(home)})
        finally:
            box.close()
        assert "public" in done.stdout and SECRET not in done.stdout, grant


def test_the_agent_configuration_folder_is_hidden(work, home):
    config = home / ".wisp"
    (config / "projects").mkdir(parents=True)
    (config / "projects" / "other-session.jsonl").write_text(SECRET)
    box = make_sandbox(work, home)
    try:
        done = run(box, f"cat {config}/projects/other-session.jsonl; ls -a {config}", work)
    finally:
        box.close()
    assert SECRET not in done.stdout and "projects" not in done.stdout
