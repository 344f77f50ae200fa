"""`wisp serve` holds each session in its own sandbox: two keys, and two sessions of one
key, where attacking sessions try every way we know to reach a victim's workspace, the
store, the service's environment and the host's files, through bash (several
interpreters) and through the file tools; one session's fork bomb, CPU loop and huge
write do not stall another's turn; the environment's `networking` decides egress; the
default data folder works for file work. Real `wisp serve`, the official `anthropic`
SDK, the scripted model server, real bubblewrap."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.serve.harness import KEYS, Served, cloud_setup, idle_end_turn, user_message, wait_for
from tests.waits import wait_until
from wisp.testing import ScriptedServer, reply
from wisp.testing.reply import Reply

JSON = dict[str, Any]
Step = tuple[str, JSON]

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None and
                                os.environ.get("WISP_REQUIRE_SANDBOX") != "1",
                                reason="bubblewrap is not installed (CI installs it)")

# Made afresh each run, so no file on the host holds them but the ones planted here (a
# copy of this source elsewhere on a CI machine would otherwise be a false leak).
VICTIM_SECRET = f"VICTIM-SECRET-{os.urandom(6).hex()}"
HOME_SECRET = f"HOME-SECRET-{os.urandom(6).hex()}"
SERVICE_SECRET = f"SERVICE-SECRET-{os.urandom(6).hex()}"


def first_user_text(body: JSON) -> str:
    first = (body.get("messages") or [{}])[0]
    content = first.get("content")
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content or [] if b.get("type") == "text")


def tool_results(body: JSON) -> int:
    return sum(1 for m in body.get("messages") or [] if isinstance(m.get("content"), list)
               for b in m["content"] if b.get("type") == "tool_result")


class Programs:
    """The scripted model: each session's first prompt names its list of tool calls,
    made one per request; then it says "done"."""

    def __init__(self) -> None:
        self.steps: dict[str, list[Step]] = {}

    def reply(self, body: JSON) -> Reply:
        steps = self.steps.get(first_user_text(body), [])
        done = tool_results(body)
        if done < len(steps):
            name, tool_input = steps[done]
            return reply.tool_use(name, tool_input)
        return reply.text("done")


@pytest.fixture
def programs() -> Iterator[tuple[Programs, ScriptedServer]]:
    scripted = Programs()
    with ScriptedServer(default=reply.dynamic(scripted.reply)) as model:
        yield scripted, model


@pytest.fixture
def served(tmp_path: Path, programs: tuple[Programs, ScriptedServer]) -> Iterator[Served]:
    home = tmp_path / "home"
    home.mkdir()
    (home / "secret.txt").write_text(HOME_SECRET)
    service = Served(tmp_path, programs[1], "--session-processes", "64",
                     "--command-file-mb", "16",
                     env={"DATABASE_URL": f"postgresql://wisp:{SERVICE_SECRET}@db/wisp"})
    service.start()
    try:
        yield service
    finally:
        service.stop()


def start_session(service: Served, key: str, prompt: str,
                  config: JSON | None = None) -> str:
    client = service.client(key)
    agent, environment = cloud_setup(client, config=config)
    session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
    client.beta.sessions.events.send(session.id, events=[user_message(prompt)])
    return str(session.id)


def finished(service: Served, key: str, session_id: str, timeout: float = 120) -> list[JSON]:
    return wait_for(service.client(key), session_id, idle_end_turn, timeout=timeout)


def descendants(pid: int) -> set[int]:
    """Every live process below `pid`, from each process's parent in /proc."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue  # gone meanwhile
        parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = set[int](), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def results(events: list[JSON]) -> list[JSON]:
    return [e for e in events if e["type"] == "agent.tool_result"]


def text(result: JSON) -> str:
    return json.dumps(result["content"])


def victim(service: Served, programs: Programs) -> tuple[str, Path]:
    """A session of the first key that keeps a secret in its workspace."""
    programs.steps["keep a secret"] = [("bash", {"command": f"echo {VICTIM_SECRET} > "
                                                            "victim.txt"})]
    session_id = start_session(service, KEYS[0], "keep a secret")
    finished(service, KEYS[0], session_id)
    workspace = service.store.parent / "workspaces" / session_id
    assert (workspace / "victim.txt").read_text().strip() == VICTIM_SECRET
    return session_id, workspace


def attacks(workspace: Path, service: Served, home: Path) -> list[Step]:
    """Every way to the victim, the store, the service's secrets and the host we know."""
    data, store = service.store.parent, service.store
    target = workspace / "victim.txt"
    bash = [
        f"cat {target}", f"ls -la {data}/workspaces", f"ls {data}", f"cat {store}",
        f"head -c 4000 {store}", f"cat {home}/secret.txt", f"ls -la {home}",
        "env", "cat /proc/1/environ | tr '\\0' '\\n'", "cat /proc/*/environ | tr '\\0' '\\n'",
        f"ln -s {workspace} link; cat link/victim.txt", f"cp {target} stolen.txt; cat stolen.txt",
        f"echo planted > {workspace}/planted.txt", f"mkdir -p {workspace}/x",
        f"python3 -c \"print(open('{target}').read())\"",
        f"python3 -c \"import os; print(os.listdir('{data}/workspaces'))\"",
        f"perl -e 'open(F, \"<\", \"{target}\") && print <F>'",
        f"sh -c 'cat {target}'", f"awk '{{print}}' {target}",
        "find / -name victim.txt -not -path '/proc/*' 2>/dev/null | xargs cat",
        "grep -r 'VICTIM-SEC[R]ET' / --exclude-dir=proc 2>/dev/null | head",
        f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {service.port}),"
        " 2); print('CONNECTED' + '-TO-SERVICE')\"",
        f"python3 -c \"import urllib.request as u; print(u.urlopen('{service.url}/v1/agents',"
        " timeout=5).read())\"",
        f"cat {store}-wal {store}-shm 2>&1 | head -c 2000",
    ]
    tools: list[Step] = [
        ("read", {"file_path": str(target)}), ("read", {"file_path": "link/victim.txt"}),
        ("read", {"file_path": str(store)}), ("read", {"file_path": f"{home}/secret.txt"}),
        ("read", {"file_path": "../" + workspace.name + "/victim.txt"}),
        ("glob", {"pattern": "**/*", "path": str(data)}), ("glob", {"pattern": "link/*"}),
        ("glob", {"pattern": f"{data}/workspaces/*/victim.txt"}),
        ("grep", {"pattern": "VICTIM-SEC[R]ET", "path": str(data)}),
        ("grep", {"pattern": "VICTIM-SEC[R]ET", "path": "link"}),
        ("write", {"file_path": f"{workspace}/planted-by-write.txt", "content": "x"}),
        ("write", {"file_path": "link/planted-through-link.txt", "content": "x"}),
        ("edit", {"file_path": "link/victim.txt", "old_string": "VICTIM",
                  "new_string": "EDITED"}),
    ]
    return [("bash", {"command": c}) for c in bash] + tools + [
        ("bash", {"command": "echo mine > own.txt && cat own.txt"})]


def model_saw(model: ScriptedServer, prompt: str) -> str:
    return "\n".join(json.dumps(r.body) for r in model.requests
                     if isinstance(r.body, dict) and first_user_text(r.body) == prompt)


@pytest.mark.timeout(600)  # two sessions of 40 calls each, on a loaded 2-core machine
def test_no_session_reaches_another_the_store_or_the_host(
        tmp_path: Path, programs: tuple[Programs, ScriptedServer], served: Served) -> None:
    scripted, model = programs
    _, workspace = victim(served, scripted)
    steps = attacks(workspace, served, tmp_path / "home")
    for key, prompt in ((KEYS[0], "attack as a neighbour"), (KEYS[1], "attack as a stranger")):
        scripted.steps[prompt] = steps
        session_id = start_session(served, key, prompt)
        events = finished(served, key, session_id, timeout=240)
        seen = model_saw(model, prompt)
        for secret in (VICTIM_SECRET, HOME_SECRET, SERVICE_SECRET, "sk-test", *KEYS):
            at = seen.find(secret)
            assert at < 0, (prompt, secret, seen[max(0, at - 600):at + 200])
        assert "CONNECTED-TO-SERVICE" not in seen
        own = results(events)[-1]
        assert own["is_error"] is False and "mine" in text(own)
        mine = served.store.parent / "workspaces" / session_id
        assert (mine / "own.txt").read_text() == "mine\n"
        assert len(results(events)) == len(steps)
    assert sorted(p.name for p in workspace.iterdir()) == ["victim.txt"]
    assert (workspace / "victim.txt").read_text().strip() == VICTIM_SECRET


def test_the_file_tools_say_why_a_path_outside_is_refused(
        programs: tuple[Programs, ScriptedServer], served: Served) -> None:
    scripted, _ = programs
    scripted.steps["read outside"] = [("bash", {"command": "ln -s / root-link"}),
                                      ("read", {"file_path": "root-link/etc/hostname"}),
                                      ("read", {"file_path": "/etc/hostname"})]
    session_id = start_session(served, KEYS[0], "read outside")
    through_link, direct = results(finished(served, KEYS[0], session_id))[1:]
    hostname = Path("/etc/hostname").read_text().strip()
    for result in (through_link, direct):
        assert result["is_error"] is True
        assert "outside" in text(result) and "/etc/hostname" in text(result), text(result)
        assert hostname not in text(result).replace("/etc/hostname", "")


# Written out here, not imported: the oracle for what a session may see at the root.
SYSTEM_FOLDERS = {"bin", "sbin", "lib", "lib32", "lib64", "libx32", "usr", "etc", "opt",
                  "nix", "gnu", "snap", "var", "dev", "proc", "sys"}
# Each entry one level inside every real folder at the root and in /var.
LOOK_AROUND = ("for d in /* /var/*; do [ -d \"$d\" ] && [ ! -L \"$d\" ] || continue; "
               "for e in \"$d\"/* \"$d\"/.*; do case $e in */.|*/..) continue;; esac; "
               "[ -e \"$e\" ] || [ -L \"$e\" ] && echo \"SHOWN $e\"; done; done; true")


def test_of_the_hosts_folders_a_session_sees_only_the_systems(
        programs: tuple[Programs, ScriptedServer], served: Served) -> None:
    """Whatever the host keeps at its root (a checkout, a data disk, this test's own
    folders) and in /var, a session sees nothing of it but the way to the interpreter
    and the PATH folders it runs programs from."""
    scripted, _ = programs
    scripted.steps["look around"] = [("bash", {"command": LOOK_AROUND})]
    session_id = start_session(served, KEYS[0], "look around")
    (result,) = results(finished(served, KEYS[0], session_id))
    shown = [line.split(" ", 1)[1] for line in json.loads(text(result))[0]["text"].splitlines()
             if line.startswith("SHOWN ")]
    assert any(p.startswith("/usr/") for p in shown), shown  # the look-around worked
    programs_from = [os.path.realpath(p) for p in (sys.prefix, sys.base_prefix,
                                                   *served.env["PATH"].split(os.pathsep))]
    for path in shown:
        parts = path.split("/")
        if parts[1] == "var" and len(parts) > 3:
            pass  # inside a folder of /var: the host's data
        elif parts[1] in SYSTEM_FOLDERS or parts[1] == "tmp":
            continue  # /tmp: the session's own temp folder alone (the attack test's reach)
        assert any(p == path or p.startswith(path + "/") for p in programs_from), path


@pytest.mark.timeout(300)
def test_one_sessions_runaways_do_not_stall_another_sessions_turn(
        programs: tuple[Programs, ScriptedServer], served: Served) -> None:
    scripted, _ = programs
    scripted.steps["run away"] = [
        ("bash", {"command": "bomb() { bomb | bomb & }; bomb; sleep 20", "timeout_ms": 25000}),
        ("bash", {"command": "python3 -c 'while True: pass' & python3 -c 'while True: pass' & "
                             "sleep 20", "timeout_ms": 25000}),
        ("bash", {"command": "head -c 100000000 /dev/zero > big", "timeout_ms": 25000})]
    scripted.steps["quick"] = [("bash", {"command": "echo quick"})]
    runaway = start_session(served, KEYS[0], "run away")
    # The other session starts while the fork bomb presses on its limit (64 processes),
    # not merely once it was asked for: seen as the service's process tree filling up.
    assert served.proc is not None
    service = served.proc.pid
    wait_until(lambda: len(descendants(service)) >= 48,
               "the fork bomb to fill most of the session's 64 processes", timeout=60)
    started = time.monotonic()
    quick = start_session(served, KEYS[1], "quick")
    quick_events = finished(served, KEYS[1], quick, timeout=60)
    took = time.monotonic() - started
    runaway_events = [e.model_dump() for e in served.client(KEYS[0]).beta.sessions.events.list(
        runaway)]
    assert not idle_end_turn(runaway_events), "the runaway session ended before the check"
    assert results(quick_events)[0]["is_error"] is False
    assert "quick" in text(results(quick_events)[0])
    assert took < 30, took
    _bomb, _loops, write = results(finished(served, KEYS[0], runaway, timeout=180))
    assert write["is_error"] is True, text(write)  # stopped at the file size limit
    workspace = served.store.parent / "workspaces" / runaway
    assert (workspace / "big").stat().st_size <= 16 * 1024 * 1024
    assert not leftover_processes(workspace), "a runaway process outlived its command"


def leftover_processes(workspace: Path) -> list[str]:
    """Processes whose working folder is the session's workspace."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.readlink(f"/proc/{pid}/cwd") == str(workspace):
                found.append(pid)
        except OSError:
            continue
    return found


@pytest.mark.timeout(300)
@pytest.mark.parametrize(("networking", "proxied"), [
    ({"type": "limited", "allowed_hosts": []}, False),
    ({"type": "limited", "allowed_hosts": ["example.com"]}, True),
    ({"type": "unrestricted"}, True),
])
def test_the_environments_networking_decides_egress(
        programs: tuple[Programs, ScriptedServer], served: Served, networking: JSON,
        proxied: bool) -> None:
    scripted, model = programs
    prompt = f"reach out {json.dumps(networking)}"
    scripted.steps[prompt] = [
        ("bash", {"command": "printenv HTTPS_PROXY >/dev/null && echo proxied || echo direct"}),
        ("bash", {"command": f"python3 -c \"import urllib.request as u; "
                             f"print(u.urlopen('{model.url}/v1/models', timeout=5).status)\""}),
    ]
    session_id = start_session(served, KEYS[0], prompt,
                               config={"type": "cloud", "networking": networking})
    has_proxy, loopback = results(finished(served, KEYS[0], session_id))
    assert ("proxied" if proxied else "direct") in text(has_proxy), text(has_proxy)
    assert loopback["is_error"] is True, text(loopback)  # never the host's loopback
    assert "200" not in text(loopback).replace("HTTP/1", "")


def test_the_default_data_folder_takes_file_work(tmp_path: Path) -> None:
    """Started as the README starts it: no --store, no --data-dir."""
    scripted = Programs()
    scripted.steps["write"] = [("bash", {"command": "echo hello > f.txt && cat f.txt"}),
                               ("write", {"file_path": "g.txt", "content": "from write"})]
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "CLAUDE_", "WISP_", "XDG_"))}
    with ScriptedServer(default=reply.dynamic(scripted.reply)) as model:
        env.update({"HOME": str(home), "ANTHROPIC_BASE_URL": model.url,
                    "ANTHROPIC_API_KEY": "sk-test", "WISP_SERVE_API_KEYS": KEYS[0]})
        proc = subprocess.Popen([sys.executable, "-m", "wisp", "serve"], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True, cwd=tmp_path)
        try:
            assert proc.stdout is not None
            url = proc.stdout.readline().rsplit(" ", 1)[1].strip()
            import anthropic

            client = anthropic.Anthropic(base_url=url, api_key=KEYS[0], max_retries=0)
            agent, environment = cloud_setup(client)
            session = client.beta.sessions.create(agent=agent.id, environment_id=environment.id)
            client.beta.sessions.events.send(session.id, events=[user_message("write")])
            events = wait_for(client, session.id, idle_end_turn, timeout=60)
        finally:
            proc.terminate()
            proc.wait(20)
    assert [r["is_error"] for r in results(events)] == [False, False], results(events)
    workspace = home / ".local" / "share" / "wisp" / "serve" / "workspaces" / session.id
    assert (workspace / "f.txt").read_text() == "hello\n"
    assert (workspace / "g.txt").read_text() == "from write"

